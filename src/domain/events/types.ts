// The event types this service emits (the catalogue of the API conventions, "Events and
// webhooks"). Endpoints can subscribe only to these.
export const EVENT_TYPES = [
  'payment.created',
  'payment.succeeded',
  'payment.failed',
  'payment.cancelled',
  'payment.expired',
  'refund.created',
  'refund.succeeded',
  'refund.failed',
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'customer.balance_changed',
  'setup_intent.succeeded',
  'payment_method.attached',
  'payment_method.detached',
  'plan.created',
  'plan.archived',
  'subscription.created',
  'subscription.updated',
  'subscription.paused',
  'subscription.resumed',
  'subscription.cancelled',
  'subscription.reactivated',
  'subscription.trial_will_end',
  'invoice.created',
  'invoice.finalized',
  'invoice.paid',
  'invoice.payment_failed',
  'invoice.voided',
  'wallet.created',
  'wallet.frozen',
  'wallet.unfrozen',
  'wallet.closed',
  'wallet.debited',
  'wallet.credited',
  'wallet.topup.succeeded',
  'wallet.credit.expired',
  'webhook_endpoint.disabled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(t: string): t is EventType {
  return (EVENT_TYPES as readonly string[]).includes(t);
}

/** The job kind that sends the customer e-mail of one event (src/domain/emails; enqueued with the event, keyed by its id). */
export const EMAIL_JOB = 'email.send';

/** Event types that have a customer e-mail (docs/emails.md): recording one enqueues EMAIL_JOB in the event's statement. */
export const EMAIL_EVENT_TYPES: ReadonlySet<string> = new Set<EventType>(['payment.succeeded', 'invoice.paid', 'invoice.payment_failed', 'subscription.trial_will_end']);

/** The job kind that sends one webhook delivery attempt (the outbox enqueues it with the attempt). */
export const DELIVER_JOB = 'webhook.deliver';

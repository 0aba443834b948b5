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
  'account.updated',
  'setup_intent.succeeded',
  'payment_method.attached',
  'payment_method.detached',
  'plan.created',
  'plan.archived',
  'coupon.created',
  'coupon.deleted',
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
  'invoice.upcoming',
  'invoice.overdue',
  'invoice.marked_uncollectible',
  'credit_note.created',
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

/** The rule an unknown event type breaks: webhook endpoints' `events` and the events list's `type` filter. */
export const EVENT_TYPE_RULE = `must be an event type of the catalogue (${EVENT_TYPES.length} types; see docs/webhooks.md)`;

export function isEventType(t: string): t is EventType {
  return (EVENT_TYPES as readonly string[]).includes(t);
}

/** The job kind that sends the customer e-mail of one event (src/domain/emails; enqueued with the event, keyed by its id). */
export const EMAIL_JOB = 'email.send';

/** Event types that have a customer e-mail (docs/emails.md). */
export const EMAIL_EVENT_TYPES: ReadonlySet<string> = new Set<EventType>(['payment.succeeded', 'invoice.paid', 'invoice.payment_failed', 'subscription.trial_will_end', 'invoice.upcoming', 'invoice.finalized']);

/** The switches (email_settings columns) of the kinds that are off by default, by event type. */
const OPT_IN_EMAILS = { 'invoice.upcoming': 'upcoming_renewal' } as const satisfies Partial<Record<EventType, string>>;
export type OptInEmailSwitch = (typeof OPT_IN_EMAILS)[keyof typeof OPT_IN_EMAILS];

/**
 * Whether recording this event enqueues EMAIL_JOB in the event's statement, and for an opt-in
 * kind the switch that must be on (checked in the statement: no job for the merchants that left it
 * off, the default): its type has a
 * message, and the record does not already say there is nothing to tell (a $0 invoice paid — a
 * free plan's renewal, a trial's first invoice — has no receipt; a renewal that will charge
 * nothing has no notice). The job decides the rest.
 */
export function emailsAbout(type: string, object: { amount_paid?: unknown; amount_due?: unknown; collection_method?: unknown }): boolean | { optIn: OptInEmailSwitch } {
  if (!EMAIL_EVENT_TYPES.has(type)) return false;
  // The invoice to pay, e-mailed when a send_invoice invoice is finalised with something due.
  if (type === 'invoice.finalized') return object.collection_method === 'send_invoice' && typeof object.amount_due === 'number' && object.amount_due > 0;
  if (type === 'invoice.paid') return typeof object.amount_paid === 'number' && object.amount_paid > 0;
  if (type === 'invoice.upcoming') return typeof object.amount_due === 'number' && object.amount_due > 0 && { optIn: OPT_IN_EMAILS[type] };
  return true;
}

/** The job kind that sends one webhook delivery attempt (the outbox enqueues it with the attempt). */
export const DELIVER_JOB = 'webhook.deliver';

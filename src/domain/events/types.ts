// The event-type catalogue (API conventions, "Events and webhooks").
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
  'setup_intent.succeeded',
  'payment_method.attached',
  'payment_method.detached',
  'wallet.created',
  'wallet.frozen',
  'wallet.unfrozen',
  'wallet.closed',
  'wallet.debited',
  'wallet.credited',
  'wallet.topup.succeeded',
  'wallet.credit.expired',
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
  'webhook_endpoint.disabled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(t: string): t is EventType {
  return (EVENT_TYPES as readonly string[]).includes(t);
}

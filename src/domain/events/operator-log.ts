// What an operator is told about a change: one JSON log line for each event that an operator
// watches or alerts on (a charge that failed, a dunning step, a subscription that fell into
// past_due/unpaid or was cancelled while unpaid, a refund that failed, a webhook endpoint disabled),
// at the level it deserves, with the merchant and the ids involved. Derived from the event, so a
// change that records its event is logged with no second place to keep in step; written after the
// change commits (a rolled-back change tells nothing). Never a secret: only ids, amounts, codes.
import type { Logger } from '../../platform/logger.ts';

export interface OperatorLine {
  level: 'info' | 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown>;
}

type Obj = Record<string, unknown>;

const pick = (o: Obj, keys: string[]) => Object.fromEntries(keys.filter((k) => o[k] !== undefined && o[k] !== null).map((k) => [k, o[k]]));
const UNPAID = new Set(['past_due', 'unpaid']);

/** The line an event gives an operator, or null when it is not one an operator watches. */
export function operatorLine(type: string, object: Obj, previous?: Obj): OperatorLine | null {
  switch (type) {
    case 'payment.failed':
      return { level: 'warn', msg: 'payment failed', fields: { payment_id: object.id, ...pick(object, ['customer_id', 'amount', 'currency', 'failure_code']) } };
    case 'invoice.payment_failed':
      return {
        level: 'warn',
        msg: 'invoice payment failed (dunning step)',
        fields: { invoice_id: object.id, ...pick(object, ['subscription_id', 'customer_id', 'amount_due', 'currency', 'attempt_count', 'next_payment_attempt']) },
      };
    case 'subscription.updated': {
      const from = previous?.status;
      const to = object.status;
      if (typeof from !== 'string' || from === to) return null;
      const fields = { subscription_id: object.id, ...pick(object, ['customer_id']), from_status: from, status: to };
      if (typeof to === 'string' && UNPAID.has(to)) return { level: 'warn', msg: `subscription ${to}`, fields };
      if (to === 'incomplete_expired') return { level: 'warn', msg: 'subscription incomplete_expired', fields };
      if (to === 'active' && UNPAID.has(from)) return { level: 'info', msg: 'subscription recovered', fields };
      return null;
    }
    case 'subscription.cancelled': {
      const from = previous?.status;
      const fields = { subscription_id: object.id, ...pick(object, ['customer_id']), ...(typeof from === 'string' ? { from_status: from } : {}) };
      return typeof from === 'string' && UNPAID.has(from)
        ? { level: 'warn', msg: 'subscription cancelled while unpaid', fields }
        : { level: 'info', msg: 'subscription cancelled', fields };
    }
    case 'refund.failed':
      return { level: 'error', msg: 'refund failed', fields: { refund_id: object.id, ...pick(object, ['payment_id', 'amount', 'currency', 'failure_reason']) } };
    case 'webhook_endpoint.disabled':
      return { level: 'warn', msg: 'webhook endpoint disabled after repeated failures', fields: { webhook_endpoint_id: object.id } };
    default:
      return null;
  }
}

/** Writes an event's operator line to `log`, with the merchant and the event's id and type. */
export function writeOperatorLine(log: Logger | undefined, merchantId: string, e: { id: string; type: string }, line: OperatorLine): void {
  log?.[line.level]({ merchant_id: merchantId, event_id: e.id, event_type: e.type, ...line.fields }, line.msg);
}

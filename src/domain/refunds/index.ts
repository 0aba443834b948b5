// Refunds of succeeded payments. The payment row is locked while a refund is reserved, so the
// sum of non-failed refunds can never exceed the payment, however many requests race:
// `amount_refunded` counts pending and succeeded refunds and a CHECK constraint backs it up.
// The processor is called outside the reserving transaction; a failed refund releases its amount.
import type { Refund } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction } from '../../platform/db/tenant.ts';
import { NotFoundError, StateError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { formatMoney } from '../../platform/money.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { parse, z, amount, idOf, metadata, listQuery, currency, timestamp } from '../../platform/validation.ts';
import { recordEvent } from '../events/index.ts';
import { lockPayment, paymentLikeFilters } from '../payments/index.ts';
import { processorFor } from '../payments/processor.ts';

export const REFUND_REASONS = ['customer_request', 'duplicate', 'fraudulent', 'other'] as const;
export const REFUND_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const refundCreate = z.strictObject({
  payment_id: idOf('payment'),
  amount: amount().optional().meta({ description: 'Partial refund; omit to refund what remains.' }),
  reason: z.enum(REFUND_REASONS).optional(),
  metadata: metadata.optional(),
});
export type RefundCreateInput = z.input<typeof refundCreate>;

export const refundListQuery = z.strictObject({
  status: z.enum(REFUND_STATUSES).optional(),
  currency: currency.optional(),
  customer_id: z.string().max(64).optional().meta({ description: 'The customer of the refunded payment.' }),
  payment_id: z.string().max(64).optional(),
  created_after: timestamp.optional(),
  created_before: timestamp.optional(),
  ...listQuery,
});
export type RefundListQuery = z.output<typeof refundListQuery>;

export function refundToJSON(r: Refund) {
  return {
    id: r.id,
    object: 'refund' as const,
    payment_id: r.paymentId,
    amount: Number(r.amount),
    currency: r.currency,
    status: r.status,
    reason: r.reason,
    failure_code: r.failureCode,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

export async function createRefund(ctx: Ctx, input: RefundCreateInput): Promise<Refund> {
  const data = parse(refundCreate, input);
  const reserved = await inTransaction(ctx.db, async (tx) => {
    const p = await lockPayment(ctx, tx, data.payment_id, 'payment_id');
    if (p.status !== 'succeeded') {
      throw new StateError('payment_not_succeeded', `Only succeeded payments can be refunded; this payment is ${p.status}.`, 'payment_id');
    }
    const remaining = p.amount - p.amountRefunded;
    const amt = data.amount === undefined ? remaining : BigInt(data.amount);
    if (remaining <= 0n || amt > remaining) {
      throw new StateError(
        'refund_exceeds_payment',
        remaining <= 0n
          ? 'This payment has already been fully refunded.'
          : `The refund of ${formatMoney(amt, p.currency)} exceeds what remains refundable (${formatMoney(remaining, p.currency)}).`,
        'amount',
      );
    }
    await tx.payment.update({ where: { id: p.id }, data: { amountRefunded: { increment: amt } } });
    const refund = await tx.refund.create({
      data: {
        id: newId('refund'),
        merchantId: ctx.merchant.id,
        paymentId: p.id,
        customerId: p.customerId,
        amount: amt,
        currency: p.currency,
        reason: data.reason ?? null,
      },
    });
    await recordEvent(tx, ctx.merchant.id, 'refund.created', refundToJSON(refund));
    return { refund, chargeRef: p.processorRef };
  });

  let result;
  try {
    result = await processorFor(ctx.merchant).refund({
      reference: reserved.refund.id,
      chargeRef: reserved.chargeRef,
      amount: reserved.refund.amount,
      currency: reserved.refund.currency,
    });
  } catch (err) {
    ctx.log.error({ err, refund_id: reserved.refund.id }, 'processor refund failed');
    result = { status: 'failed' as const, code: 'processing_error' };
  }

  return inTransaction(ctx.db, async (tx) => {
    const r = reserved.refund;
    if (result.status === 'succeeded') {
      const done = await tx.refund.update({ where: { id: r.id }, data: { status: 'succeeded', processorRef: result.processorRef } });
      await recordEvent(tx, ctx.merchant.id, 'refund.succeeded', refundToJSON(done), { status: 'pending' });
      return done;
    }
    await lockPayment(ctx, tx, r.paymentId);
    await tx.payment.update({ where: { id: r.paymentId }, data: { amountRefunded: { decrement: r.amount } } });
    const failed = await tx.refund.update({ where: { id: r.id }, data: { status: 'failed', failureCode: result.code } });
    await recordEvent(tx, ctx.merchant.id, 'refund.failed', refundToJSON(failed), { status: 'pending' });
    return failed;
  });
}

export async function getRefund(ctx: Ctx, id: string): Promise<Refund> {
  const r = await ctx.db.refund.findUnique({ where: { id } });
  if (!r) throw new NotFoundError('refund', id);
  return r;
}

export async function listRefunds(ctx: Ctx, q: RefundListQuery): Promise<Page<Refund>> {
  return paginate(q, ({ where, ...page }) =>
    ctx.db.refund.findMany({
      where: {
        AND: [where, ...paymentLikeFilters(q), q.payment_id ? { paymentId: q.payment_id } : {}],
      },
      ...page,
    }),
  );
}

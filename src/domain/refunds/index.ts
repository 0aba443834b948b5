// Refunds of succeeded payments. The payment row is locked while a refund is reserved, so the
// sum of non-failed refunds can never exceed the payment, however many requests race:
// `amount_refunded` counts pending and succeeded refunds and a CHECK constraint backs it up.
// The processor is called outside any transaction; a failed refund releases its amount. A refund
// whose request died during the processor call is finished by a job (the refund id is the
// processor's idempotency key, so asking again never refunds twice).
import type { Refund } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction, type TenantTx } from '../../platform/db/tenant.ts';
import { NotFoundError, StateError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { formatMoney } from '../../platform/money.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { parse, z, amount, idOf, metadata, listQuery, currency, timestamp } from '../../platform/validation.ts';
import { cancelJobs, enqueueJob } from '../../platform/jobs.ts';
import { clockNow } from '../../platform/clock.ts';
import { recordEvent } from '../events/index.ts';
import { lockPayment, paymentLikeFilters, type PaymentWithCustomer } from '../payments/index.ts';
import { processorOf, type RefundResult } from '../../platform/processor.ts';
import * as store from './store.ts';

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
    status: r.status as (typeof REFUND_STATUSES)[number],
    reason: r.reason as (typeof REFUND_REASONS)[number] | null,
    failure_code: r.failureCode,
    metadata: r.metadata as Record<string, string>,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

/**
 * What a payment's purpose must do when the payment is refunded (a wallet top-up takes the money
 * back out of the wallet). `reserve` runs in the transaction that reserves the refund and may
 * refuse it (409); `reverse` runs in the transaction that records a refund the processor refused.
 */
export interface RefundHook {
  reserve(ctx: Ctx, tx: TenantTx, payment: PaymentWithCustomer, refund: Refund): Promise<void>;
  reverse(ctx: Ctx, tx: TenantTx, payment: PaymentWithCustomer, refund: Refund): Promise<void>;
}
const refundHooks = new Map<string, RefundHook>();
export function onRefund(purpose: string, hook: RefundHook): void {
  refundHooks.set(purpose, hook);
}

/** Finishes a refund left pending (the process died during the processor call); see settlePendingRefund. */
export const REFUND_SETTLE_JOB = 'refund.settle';
/** How long after its reservation a refund that is still pending is finished by the job. */
export const SETTLE_AFTER_MS = 10 * 60 * 1000;

/**
 * Reserves a refund of a locked, succeeded payment in the caller's transaction: the amount counts
 * against the payment at once, the purpose's hook runs, the refund.created event is recorded and
 * a job is scheduled that finishes the refund should this process die before it does.
 */
export async function reserveRefund(
  ctx: Ctx,
  tx: TenantTx,
  p: PaymentWithCustomer,
  req: { id?: string; amount?: bigint; reason?: string | null; metadata?: Record<string, string>; settleAt?: Date },
): Promise<Refund> {
  if (p.status !== 'succeeded') {
    throw new StateError('payment_not_succeeded', `Only succeeded payments can be refunded; this payment is ${p.status}.`, 'payment_id');
  }
  const remaining = p.amount - p.amountRefunded;
  const amt = req.amount ?? remaining;
  if (remaining <= 0n || amt > remaining) {
    throw new StateError(
      'refund_exceeds_payment',
      remaining <= 0n
        ? 'This payment has already been fully refunded.'
        : `The refund of ${formatMoney(amt, p.currency)} exceeds what remains refundable (${formatMoney(remaining, p.currency)}).`,
      'amount',
    );
  }
  await store.addAmountRefunded(tx, p.id, amt);
  const now = await clockNow({ ...ctx, db: tx });
  const refund = await store.insertRefund(tx, {
    id: req.id ?? newId('refund'),
    merchantId: ctx.merchant.id,
    paymentId: p.id,
    customerId: p.customerId,
    amount: amt,
    currency: p.currency,
    reason: req.reason ?? null,
    metadata: req.metadata ?? {},
    createdAt: now,
  });
  await recordEvent(tx, ctx, 'refund.created', refundToJSON(refund));
  await refundHooks.get(p.purpose)?.reserve({ ...ctx, db: tx }, tx, p, refund);
  await enqueueJob(tx, {
    merchantId: ctx.merchant.id,
    kind: REFUND_SETTLE_JOB,
    runAt: req.settleAt ?? new Date(now.getTime() + SETTLE_AFTER_MS),
    key: `settle:${refund.id}`,
    payload: { refund_id: refund.id },
  });
  return refund;
}

/** Asks the processor to refund (outside any transaction); a processor that throws is a failed refund. */
async function callProcessor(ctx: Ctx, refund: Refund, chargeRef: string | null): Promise<RefundResult> {
  try {
    // The refund id is the processor's idempotency key: asking twice refunds once.
    return await processorOf(ctx).refund({ reference: refund.id, chargeRef, amount: refund.amount, currency: refund.currency });
  } catch (err) {
    ctx.log.error({ err, refund_id: refund.id }, 'processor refund failed');
    return { status: 'failed', code: 'processing_error' };
  }
}

/** Records the processor's answer for a pending refund (a refund no longer pending is returned as it is). */
async function recordOutcome(ctx: Ctx, refundId: string, result: RefundResult): Promise<Refund> {
  return inTransaction(ctx.db, async (tx) => {
    const r0 = await store.findRefundOrThrow(tx, refundId);
    const p = await lockPayment(ctx, tx, r0.paymentId);
    const r = await store.findRefundOrThrow(tx, refundId);
    if (r.status !== 'pending') return r;
    await cancelJobs(tx, { kind: REFUND_SETTLE_JOB, key: `settle:${r.id}` });
    if (result.status === 'succeeded') {
      const done = await store.markRefundSucceeded(tx, r.id, result.processorRef);
      await recordEvent(tx, ctx, 'refund.succeeded', refundToJSON(done), { status: 'pending' });
      return done;
    }
    await store.releaseAmountRefunded(tx, r.paymentId, r.amount);
    const failed = await store.markRefundFailed(tx, r.id, result.code);
    await refundHooks.get(p.purpose)?.reverse({ ...ctx, db: tx }, tx, p, failed);
    await recordEvent(tx, ctx, 'refund.failed', refundToJSON(failed), { status: 'pending' });
    return failed;
  });
}

/**
 * POST /v1/refunds. Three steps, so that the processor is never called inside a transaction:
 * reserve (commits), ask the processor, record its answer (commits).
 */
export async function createRefund(ctx: Ctx, input: RefundCreateInput): Promise<Refund> {
  const data = parse(refundCreate, input);
  // A retry of an interrupted request with the same idempotency key: the refund it reserved is
  // asked of the processor again under the refund's id (refunded once), or its outcome returned.
  const resumed = ctx.idempotency?.resumed?.refund_id;
  if (typeof resumed === 'string') {
    await settlePendingRefund(ctx, resumed);
    return getRefund(ctx, resumed);
  }
  const id = newId('refund');
  ctx.idempotency?.checkpoint({ refund_id: id });
  const reserved = await inTransaction(ctx.db, async (tx) => {
    const p = await lockPayment(ctx, tx, data.payment_id, 'payment_id');
    const refund = await reserveRefund(ctx, tx, p, { id, amount: data.amount === undefined ? undefined : BigInt(data.amount), reason: data.reason, metadata: data.metadata });
    return { refund, chargeRef: p.processorRef };
  });
  const result = await callProcessor(ctx, reserved.refund, reserved.chargeRef);
  return recordOutcome(ctx, reserved.refund.id, result);
}

/** Job: finishes a refund that is still pending (its request died, or it was reserved by the system). */
export async function settlePendingRefund(ctx: Ctx, refundId: string): Promise<void> {
  const r = await store.findRefundWithChargeRef(ctx.db, refundId);
  if (!r || r.status !== 'pending') return;
  await recordOutcome(ctx, r.id, await callProcessor(ctx, r, r.payment.processorRef));
}

export async function getRefund(ctx: Ctx, id: string): Promise<Refund> {
  const r = await store.findRefund(ctx.db, id);
  if (!r) throw new NotFoundError('refund', id);
  return r;
}

export async function listRefunds(ctx: Ctx, q: RefundListQuery): Promise<Page<Refund>> {
  const filters = [...paymentLikeFilters(q), q.payment_id ? { paymentId: q.payment_id } : {}];
  return paginate(
    q,
    ({ where, ...page }) => store.listRefunds(ctx.db, { AND: [where, ...filters] }, page),
    () => store.countRefunds(ctx.db, { AND: filters }),
  );
}

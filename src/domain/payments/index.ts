// Payments and their hosted checkout.
//
// created → processing → succeeded | failed      (the customer pays at the checkout, or a saved
//                                                 method is charged off-session)
// failed → processing                            (another attempt at the checkout after a decline)
// created | failed → expired; created → cancelled (24 h on the merchant's clock; cancel link)
//
// Paying is done in three steps so that a processor call never runs inside a database
// transaction: (1) lock the payment and move it created → processing (only one of two concurrent
// submissions gets past this: the other sees `processing` and charges nothing; the area the
// payment is for — an invoice — may refuse the attempt under its own lock), (2) charge with the
// payment id as the processor's idempotency key, (3) record the outcome and its event. Step (1)
// also schedules the attempt's recovery: should the process die before (3), the `payment.recover`
// job asks the processor again under the same key once the attempt is stale — a saved method is
// charged again (the processor answers with the first outcome), a card typed at the checkout is
// looked up (`retrieve`) — whatever the payment is for.
import type { Customer, Payment, PaymentMethod } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { Prisma, inTransaction, type Db, type TenantTx } from '../../platform/db/tenant.ts';
import { lockRow } from '../../platform/db/raw.ts';
import { NotFoundError, StateError, ValidationError } from '../../platform/errors.ts';
import { newId, randomToken } from '../../platform/ids.ts';
import { countsByParent, pagesByParent } from '../../platform/db/pages-by-parent.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { parse } from '../../platform/validation.ts';
import { cancelWaitingJobs, DeferJob, enqueueJob, type NewJob } from '../../platform/jobs.ts';
import { requireTestMode } from '../clock/index.ts';
import { clockNow } from '../../platform/clock.ts';
import { getCustomer, createCustomer } from '../customers/index.ts';
import { recordEvent, type EventType } from '../events/index.ts';
import { attemptHooks, outcomeHooks, requireHooks } from './hooks.ts';
import * as store from './store.ts';
import { PAYMENT_METHODS, processorOf, ProcessorTimeout, type CardInput, type ChargeResult, type MethodDetails, type PaymentMethodType, type SavedDetails } from '../../platform/processor.ts';
import { chargeableMethod } from '../payment-methods/index.ts';
import {
  paymentCompleteBody,
  paymentCreate,
  paymentLikeFilters,
  type PaymentCompleteInput,
  type PaymentWithCustomer,
  type PaymentCreateInput,
  type PaymentListQuery,
  PAYMENT_STATUSES,
} from './schema.ts';

export * from './schema.ts';

export const CHECKOUT_TTL_MS = 24 * 60 * 60 * 1000;
export const EXPIRE_JOB = 'payment.expire';
/** Finishes an attempt whose process died between the charge and recording its outcome. */
export const RECOVER_JOB = 'payment.recover';
/** How long an attempt may stay `processing` (real time) before the recovery asks the processor again. */
export const ATTEMPT_RECOVERY_MS = 60_000;


export interface CheckoutOptions {
  title?: string;
  description?: string;
  locale?: 'en' | 'fr';
  payment_methods?: PaymentMethodType[];
}

export function checkoutUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/hosted/checkout/${token}`;
}

export function offeredMethods(p: Payment): PaymentMethodType[] {
  return (p.checkout as CheckoutOptions).payment_methods ?? [...PAYMENT_METHODS];
}

export function paymentToJSON(p: PaymentWithCustomer, baseUrl: string) {
  const c = p.customer;
  return {
    id: p.id,
    object: 'payment' as const,
    amount: Number(p.amount),
    currency: p.currency,
    status: p.status as (typeof PAYMENT_STATUSES)[number],
    checkout_url: checkoutUrl(baseUrl, p.checkoutToken),
    customer_id: p.customerId,
    customer: { id: c.id, email: c.email, name: c.name, phone: c.phone },
    redirect_url: p.redirectUrl,
    cancel_url: p.cancelUrl,
    payment_method_id: p.paymentMethodId,
    checkout: p.checkout as CheckoutOptions,
    metadata: p.metadata as Record<string, string>,
    amount_refunded: Number(p.amountRefunded),
    refunded: p.amountRefunded === p.amount,
    payment_method: (p.methodDetails as MethodDetails | null) ?? null,
    failure_code: p.failureCode,
    failure_message: p.failureMessage,
    expires_at: p.expiresAt.toISOString(),
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

export type PaymentJSON = ReturnType<typeof paymentToJSON>;

export async function getPayment(ctx: Ctx, id: string, db: Db = ctx.db, param = 'id'): Promise<PaymentWithCustomer> {
  const p = await store.findPayment(db, id);
  if (!p) throw new NotFoundError('payment', id, param);
  return p;
}

/** Locks the payment row for the rest of the transaction, then reads it. */
export async function lockPayment(ctx: Ctx, tx: TenantTx, id: string, param = 'id'): Promise<PaymentWithCustomer> {
  await lockRow(tx, 'payments', ctx.merchant.id, id);
  return getPayment(ctx, id, tx, param);
}

async function resolveCustomer(ctx: Ctx, tx: TenantTx, data: ReturnType<typeof parsePaymentCreate>, ownerId?: string): Promise<Customer> {
  if (!data.customer_id && ownerId) return getCustomer(ctx, ownerId, tx);
  if (data.customer_id) return getCustomer(ctx, data.customer_id, tx).catch(() => {
    throw new NotFoundError('customer', data.customer_id!, 'customer_id');
  });
  const inline = data.customer!;
  const existing = await store.findLatestCustomerByEmail(tx, inline.email);
  if (existing) return existing;
  return createCustomer({ ...ctx, db: tx }, { email: inline.email, name: inline.name, phone: inline.phone });
}

const parsePaymentCreate = (input: PaymentCreateInput) => parse(paymentCreate, input);

export { onPaymentOutcome, type PaymentOutcomeHook } from './hooks.ts';
const FINAL = new Set(['succeeded', 'failed', 'cancelled', 'expired']);
/** Statuses in which the checkout still takes a payment attempt. */
const PAYABLE = new Set(['created', 'failed']);

/** Records a status change of a payment and its event in the caller's transaction. */
async function transition(
  ctx: Ctx,
  tx: TenantTx,
  before: PaymentWithCustomer,
  data: Prisma.PaymentUpdateInput,
  event: EventType | null,
): Promise<PaymentWithCustomer> {
  const after = await store.updatePayment(tx, before.id, data);
  if (event) {
    // An invoice's payment has no receipt of its own: the invoice's is the one (docs/emails.md).
    const email = after.purpose === 'invoice' ? false : undefined;
    await recordEvent(tx, ctx, event, paymentToJSON(after, ctx.runtime.config.publicBaseUrl), { status: before.status }, { email });
  }
  if (FINAL.has(after.status) && after.status !== before.status) {
    // Its safety work that this outcome makes unnecessary is cancelled with it (else each would be
    // claimed and run to do nothing): the recovery of the attempt just recorded, and the expiry of
    // a checkout that can no longer be paid (a failed payment stays payable there until it expires).
    const done = [
      ...(before.status === 'processing' ? [{ kind: RECOVER_JOB, key: `recover:${after.id}:${after.attempts}` }] : []),
      ...(PAYABLE.has(after.status) ? [] : [{ kind: EXPIRE_JOB, key: `expire:${after.id}` }]),
    ];
    await cancelWaitingJobs(tx, done);
    requireHooks(after.purpose);
    await outcomeHooks.get(after.purpose)?.({ ...ctx, db: tx }, tx, after);
  }
  return after;
}

export interface NewPayment {
  /** generated when absent (a multi-step request names it in its recovery point first) */
  id?: string;
  customerId: string;
  amount: bigint;
  currency: string;
  redirectUrl: string | null;
  cancelUrl?: string | null;
  paymentMethodId?: string | null;
  checkout?: CheckoutOptions;
  metadata?: Record<string, string>;
  purpose?: string;
}

/**
 * The row of a new payment at `now` on the merchant's clock (insertPayment's, and a batch's that
 * writes many at once: src/domain/billing/renewals.ts): its checkout lasts CHECKOUT_TTL_MS.
 */
export function newPaymentRow(merchantId: string, p: NewPayment, now: Date): Prisma.PaymentUncheckedCreateInput & { id: string; expiresAt: Date } {
  return {
    id: p.id ?? newId('payment'),
    merchantId,
    customerId: p.customerId,
    amount: p.amount,
    currency: p.currency,
    purpose: p.purpose ?? 'payment',
    redirectUrl: p.redirectUrl,
    cancelUrl: p.cancelUrl ?? null,
    paymentMethodId: p.paymentMethodId ?? null,
    checkout: (p.checkout ?? {}) as Prisma.InputJsonValue,
    metadata: p.metadata ?? {},
    checkoutToken: randomToken(40),
    expiresAt: new Date(now.getTime() + CHECKOUT_TTL_MS),
    createdAt: now,
  };
}

/** The job that expires a payment's checkout when its time has come. */
export function expiryJob(merchantId: string, paymentId: string, expiresAt: Date): NewJob {
  return { merchantId, kind: EXPIRE_JOB, runAt: expiresAt, key: `expire:${paymentId}`, payload: { payment_id: paymentId } };
}

/** The job that finishes attempt number `attempts` of a payment should its process die before recording the outcome (due `at` + the recovery delay). */
export function attemptRecoveryJob(ctx: Ctx, paymentId: string, attempts: number, at: Date): NewJob {
  return {
    merchantId: ctx.merchant.id,
    kind: RECOVER_JOB,
    runAt: new Date(at.getTime() + (ctx.runtime.chargeRecoveryMs ?? ATTEMPT_RECOVERY_MS)),
    key: `recover:${paymentId}:${attempts}`,
    payload: { payment_id: paymentId },
  };
}

/** Creates a payment, its event and its expiry job in the caller's transaction (used by other areas too). */
export async function insertPayment(ctx: Ctx, tx: TenantTx, p: NewPayment): Promise<PaymentWithCustomer> {
  const now = await clockNow({ ...ctx, db: tx });
  const created = await store.insertPayment(tx, newPaymentRow(ctx.merchant.id, p, now));
  await recordEvent(tx, ctx, 'payment.created', paymentToJSON(created, ctx.runtime.config.publicBaseUrl));
  await enqueueJob(tx, expiryJob(ctx.merchant.id, created.id, created.expiresAt));
  return created;
}

export async function createPayment(ctx: Ctx, input: PaymentCreateInput): Promise<PaymentWithCustomer> {
  const data = parsePaymentCreate(input);
  // A retry of an interrupted request with the same idempotency key carries on with its payment.
  const resumed = ctx.idempotency?.resumed?.payment_id;
  if (typeof resumed === 'string') return resumePayment(ctx, resumed);
  const id = newId('payment');
  ctx.idempotency?.checkpoint({ payment_id: id });
  const created = await inTransaction(ctx.db, async (tx) => {
    const saved = data.payment_method_id ? await chargeableMethod(ctx, tx, data.payment_method_id, data.customer_id) : null;
    const customer = await resolveCustomer({ ...ctx, db: tx }, tx, data, saved?.customerId ?? undefined);
    const payment = await insertPayment(ctx, tx, {
      id,
      customerId: customer.id,
      amount: BigInt(data.amount),
      currency: data.currency,
      redirectUrl: data.redirect_url ?? null,
      cancelUrl: data.cancel_url,
      paymentMethodId: saved?.id ?? null,
      checkout: data.checkout,
      metadata: data.metadata,
    });
    return { payment, saved };
  });
  if (!created.saved) return created.payment;
  return chargeSavedMethod(ctx, created.payment.id, created.saved);
}

/**
 * Carries on with a payment whose request was interrupted (a retry with the same idempotency key):
 * a saved-method charge not made yet is made; an attempt still in flight is finished by asking the
 * processor again under its key. Anything else is returned as it is.
 */
export async function resumePayment(ctx: Ctx, id: string): Promise<PaymentWithCustomer> {
  const p = await getPayment(ctx, id);
  const charged = await chargeIfReserved(ctx, p);
  if (charged) return charged;
  if (p.status === 'processing') await finishAttempt(ctx, p);
  return getPayment(ctx, id);
}

/**
 * Charges a payment reserved for its saved method (`created`) whose charge was never made (the
 * request or job that reserved it died first); null when it is not such a payment.
 */
export async function chargeIfReserved(ctx: Ctx, p: Payment): Promise<PaymentWithCustomer | null> {
  if (p.status !== 'created' || !p.paymentMethodId) return null;
  const method = await store.findPaymentMethod(ctx.db, p.paymentMethodId);
  return method ? chargeSavedMethod(ctx, p.id, method) : null;
}

/**
 * Charges a saved method off-session (no customer present). A detached method, or one that no
 * longer belongs to the payment's customer, is not charged: the payment fails with
 * `payment_method_detached`.
 */
export async function chargeSavedMethod(ctx: Ctx, paymentId: string, method: PaymentMethod): Promise<PaymentWithCustomer> {
  return attemptPayment(ctx, paymentId, savedAttempt(method));
}

/** What a payment made with a saved method shows of it. */
function savedToPaymentDetails(d: SavedDetails): MethodDetails {
  return d.type === 'card' ? d : { type: 'mobile_money', mobile_money: { phone: `••••${d.mobile_money.phone_last4}` } };
}

export async function listPayments(ctx: Ctx, q: PaymentListQuery): Promise<Page<PaymentWithCustomer>> {
  const filters = paymentLikeFilters(q);
  return paginate(
    q,
    ({ where, ...page }) => store.listPayments(ctx.db, { AND: [where, ...filters] }, page),
    () => store.countPayments(ctx.db, { AND: filters }),
  );
}

const PAYMENTS_OF_CUSTOMER = { table: 'payments', parent: 'customer_id' };

/** One page of payments per customer (a customer's payments in GraphQL), in two queries for all of them. */
export function listPaymentsOfCustomers(ctx: Ctx, customerIds: readonly string[], q: Pick<PaymentListQuery, 'limit' | 'after' | 'status'>) {
  return pagesByParent(ctx, PAYMENTS_OF_CUSTOMER, customerIds, { ...q, filters: { status: q.status } }, (ids) =>
    store.findPaymentsByIds(ctx.db, ids),
  );
}

export function countPaymentsOfCustomers(ctx: Ctx, customerIds: readonly string[], q: Pick<PaymentListQuery, 'status'>) {
  return countsByParent(ctx, PAYMENTS_OF_CUSTOMER, customerIds, { status: q.status });
}

/** Expires the checkout when it is still open and its time has come. Returns the payment. */
export async function expireIfDue(ctx: Ctx, id: string): Promise<PaymentWithCustomer> {
  return inTransaction(ctx.db, async (tx) => {
    const p = await lockPayment(ctx, tx, id);
    if (!PAYABLE.has(p.status)) return p;
    const now = await clockNow({ ...ctx, db: tx });
    if (now.getTime() < p.expiresAt.getTime()) return p;
    return transition(ctx, tx, p, { status: 'expired', completedAt: now }, 'payment.expired');
  });
}

export interface CheckoutAttempt {
  method: PaymentMethodType;
  card?: CardInput;
  phone?: string;
  /** refuse (409 payment_attempts_exceeded) when the payment has had this many attempts (card testing at the hosted checkout) */
  maxAttempts?: number;
}

interface Attempt extends CheckoutAttempt {
  /** a saved method charged off-session */
  saved?: { id: string; token: string; details: MethodDetails };
}

/**
 * The customer pays at the checkout. Returns the payment after the attempt; a payment that is no
 * longer awaiting payment is returned unchanged (a second submission charges nothing). After a
 * decline (`failed`) the customer may try again until the checkout expires.
 */
export function payAtCheckout(ctx: Ctx, id: string, attempt: CheckoutAttempt): Promise<PaymentWithCustomer> {
  return attemptPayment(ctx, id, { method: attempt.method, card: attempt.card, phone: attempt.phone, maxAttempts: attempt.maxAttempts });
}

async function attemptPayment(ctx: Ctx, id: string, attempt: Attempt): Promise<PaymentWithCustomer> {
  const claimed = await inTransaction(ctx.db, async (tx) => {
    const p = await lockPayment(ctx, tx, id);
    if (!PAYABLE.has(p.status)) return { payment: p, claimed: false };
    if (attempt.saved) {
      // Still attached to the payment's customer? (It may have been detached since.)
      const pm = await store.findPaymentMethod(tx, attempt.saved.id);
      if (!pm || pm.customerId !== p.customerId) {
        const now = await clockNow({ ...ctx, db: tx });
        const failure = { failureCode: 'payment_method_detached', failureMessage: 'The saved payment method is no longer attached to the customer.' };
        return { payment: await transition(ctx, tx, p, { status: 'failed', method: attempt.method, ...failure, completedAt: now }, 'payment.failed'), claimed: false };
      }
    } else if (!offeredMethods(p).includes(attempt.method)) {
      throw new ValidationError('parameter_invalid', `Invalid method: this checkout accepts ${offeredMethods(p).join(', ')}.`, 'method');
    }
    // Decided under the payment's lock: concurrent submissions cannot get past the cap.
    if (attempt.maxAttempts !== undefined && p.attempts >= attempt.maxAttempts) {
      throw new StateError('payment_attempts_exceeded', `This payment has had ${p.attempts} attempts, the most its checkout takes.`, null);
    }
    const now = await clockNow({ ...ctx, db: tx });
    if (now.getTime() >= p.expiresAt.getTime()) {
      return { payment: await transition(ctx, tx, p, { status: 'expired', completedAt: now }, 'payment.expired'), claimed: false };
    }
    // The area the payment is for decides under its own lock whether it may still be paid (an
    // invoice: at most one charge in flight, and only while it is payable).
    requireHooks(p.purpose);
    const refusal = await attemptHooks.get(p.purpose)?.({ ...ctx, db: tx }, tx, p);
    if (refusal) {
      ctx.log.warn({ payment_id: p.id, reason: refusal }, 'payment attempt refused: the payment was cancelled');
      return { payment: await transition(ctx, tx, p, { status: 'cancelled', completedAt: now }, 'payment.cancelled'), claimed: false };
    }
    // The method this attempt charges: the saved one, or none for a card or number typed at the
    // checkout (an invoice's payment names the subscription's saved method until the customer
    // pays with another) — the recovery of an interrupted attempt goes by it.
    const data = { status: 'processing', method: attempt.method, paymentMethodId: attempt.saved?.id ?? null, attempts: { increment: 1 } } as const;
    const claimed = await transition(ctx, tx, p, data, null);
    // Should this process die before the outcome is recorded, the attempt is finished by this job.
    await enqueueJob(tx, attemptRecoveryJob(ctx, p.id, claimed.attempts, now));
    return { payment: claimed, claimed: true };
  });
  if (!claimed.claimed) return claimed.payment;
  return recordAttempt(ctx, claimed.payment, attempt);
}

/** Calls the processor for a claimed (`processing`) attempt, outside any transaction, and records the outcome. */
/** The processor's idempotency key of a payment's current attempt: the payment id, then one per further attempt. */
function attemptReference(p: Payment): string {
  return p.attempts <= 1 ? p.id : `${p.id}_${p.attempts}`;
}

async function recordAttempt(ctx: Ctx, p: PaymentWithCustomer, attempt: Attempt): Promise<PaymentWithCustomer> {
  const result = await callProcessor(ctx, p, attempt);
  return result ? recordOutcome(ctx, p, result) : p;
}

/**
 * The processor's answer for the attempt `p` was claimed with (outside any transaction), under the
 * attempt's idempotency key; null when the outcome is unknown (a timeout: the attempt stays
 * `processing` and its recovery job asks again). A processor error is a failed attempt.
 */
async function callProcessor(ctx: Ctx, p: Payment, attempt: Attempt): Promise<ChargeResult | null> {
  try {
    return await processorOf(ctx).charge({
      reference: attemptReference(p),
      amount: p.amount,
      currency: p.currency,
      method: attempt.method,
      card: attempt.card,
      phone: attempt.phone,
      token: attempt.saved?.token,
      savedDetails: attempt.saved?.details,
    });
  } catch (err) {
    if (err instanceof ProcessorTimeout) {
      ctx.log.warn({ payment_id: p.id, reference: attemptReference(p) }, 'processor charge timed out; the recovery job will finish the attempt');
      return null;
    }
    ctx.log.error({ err, payment_id: p.id }, 'processor charge failed');
    return { status: 'failed', code: 'processing_error', message: 'The payment could not be processed.', details: null };
  }
}

/** callProcessor for a saved method's attempt (a batch's: src/domain/billing/renewals.ts). */
export function chargeSavedAttempt(ctx: Ctx, p: Payment, method: PaymentMethod): Promise<ChargeResult | null> {
  return callProcessor(ctx, p, savedAttempt(method));
}

function savedAttempt(method: PaymentMethod): Attempt {
  return {
    method: method.type as PaymentMethodType,
    saved: { id: method.id, token: method.processorToken, details: savedToPaymentDetails(method.details as SavedDetails) },
  };
}

/** Records the processor's answer for the attempt `p` was claimed with (nothing when it was recorded already). */
export async function recordOutcome(ctx: Ctx, p: PaymentWithCustomer, result: ChargeResult): Promise<PaymentWithCustomer> {
  return inTransaction(ctx.db, async (tx) => {
    const current = await lockPayment(ctx, tx, p.id);
    if (current.status !== 'processing' || current.attempts !== p.attempts) return current;
    const now = await clockNow({ ...ctx, db: tx });
    const details = (result.details ?? Prisma.DbNull) as Prisma.InputJsonValue;
    if (result.status === 'succeeded') {
      const data = { status: 'succeeded', methodDetails: details, processorRef: result.processorRef, failureCode: null, failureMessage: null, completedAt: now };
      return transition(ctx, tx, current, data, 'payment.succeeded');
    }
    return transition(
      ctx,
      tx,
      current,
      { status: 'failed', methodDetails: details, failureCode: result.code, failureMessage: result.message, completedAt: now },
      'payment.failed',
    );
  });
}

/**
 * Finishes the attempt a payment is `processing`, whose process may have died before recording the
 * outcome: the processor is asked again under the attempt's idempotency key — a saved method is
 * charged again (the processor answers with the first outcome instead of charging twice), a card
 * typed at the checkout is looked up (it is not kept); a charge the processor does not know never
 * reached it, and the attempt fails with no money taken.
 */
async function finishAttempt(ctx: Ctx, p: PaymentWithCustomer): Promise<PaymentWithCustomer> {
  const saved = p.paymentMethodId ? await store.findPaymentMethod(ctx.db, p.paymentMethodId) : null;
  if (saved) {
    return recordAttempt(ctx, p, savedAttempt(saved));
  }
  let known: ChargeResult | null;
  try {
    known = await processorOf(ctx).retrieve(attemptReference(p));
  } catch (err) {
    ctx.log.error({ err, payment_id: p.id }, 'processor lookup failed; the attempt stays processing');
    throw err;
  }
  if (!known) ctx.log.warn({ payment_id: p.id, reference: attemptReference(p) }, 'the processor has no charge for an interrupted attempt: it failed without taking money');
  return recordOutcome(
    ctx,
    p,
    known ?? { status: 'failed', code: 'processing_error', message: 'The payment could not be confirmed with the processor; no money was taken. Try again.', details: null },
  );
}

/**
 * Job: finishes a payment still `processing` once its attempt is older than `staleMs` (real time;
 * until then its own process may still be at work, and the job is deferred). A no-op otherwise.
 */
export async function recoverPayment(ctx: Ctx, id: string, staleMs = ATTEMPT_RECOVERY_MS): Promise<void> {
  const p = await getPayment(ctx, id);
  if (p.status !== 'processing') return;
  const age = Date.now() - p.updatedAt.getTime();
  if (age < staleMs) throw new DeferJob(staleMs - age, 'the attempt is in flight');
  await finishAttempt(ctx, p);
}

/**
 * The customer cancels at the checkout (also after a declined attempt: failed → cancelled ends
 * the checkout). A payment no longer awaiting payment is returned unchanged.
 */
export async function cancelAtCheckout(ctx: Ctx, id: string): Promise<PaymentWithCustomer> {
  return inTransaction(ctx.db, async (tx) => {
    const p = await lockPayment(ctx, tx, id);
    if (!PAYABLE.has(p.status)) return p;
    const now = await clockNow({ ...ctx, db: tx });
    return transition(ctx, tx, p, { status: 'cancelled', completedAt: now }, 'payment.cancelled');
  });
}

// Inputs that make the test processor produce each outcome (test helper).
const HELPER_CARD = { succeeded: '4242424242424242', failed: '4000000000000002' } as const;
const HELPER_PHONE = { succeeded: '+15555550100', failed: '+15555550000' } as const;

/** POST /v1/test-helpers/payments/:id/complete: as if the customer finished the hosted checkout. */
export async function completeForTest(ctx: Ctx, id: string, input: PaymentCompleteInput): Promise<PaymentWithCustomer> {
  requireTestMode(ctx.merchant);
  const body = parse(paymentCompleteBody, input);
  const p = await getPayment(ctx, id);
  if (ctx.idempotency?.resumed?.payment_id === id) {
    // A retry of an interrupted request: its attempt is charged again under the same key (the
    // test card follows from the body), or its outcome is returned.
    if (p.status !== 'processing') return p;
    return recordAttempt(ctx, p, await helperAttempt(ctx, p, body));
  }
  ctx.idempotency?.checkpoint({ payment_id: id });
  if (!PAYABLE.has(p.status)) {
    throw new StateError('payment_not_pending', `This payment is ${p.status}; only a payment awaiting checkout (created, or failed and not yet expired) can be completed.`, null);
  }
  if (body.outcome === 'cancelled') return cancelAtCheckout(ctx, id);
  const after = await payAtCheckout(ctx, id, await helperAttempt(ctx, p, body));
  if (after.status === 'expired') throw new StateError('payment_not_pending', 'This payment’s checkout has expired.', null);
  return after;
}

/** The test card or phone number that gives the outcome the test helper was asked for. */
async function helperAttempt(ctx: Ctx, p: PaymentWithCustomer, body: ReturnType<typeof parse<typeof paymentCompleteBody>>): Promise<CheckoutAttempt> {
  const outcome = body.outcome === 'failed' ? 'failed' : 'succeeded';
  const method = body.method ?? 'card';
  if (method === 'card') {
    const year = (await clockNow(ctx)).getUTCFullYear();
    return { method, card: { number: HELPER_CARD[outcome], expMonth: 12, expYear: year + 2, cvc: '123' } };
  }
  return { method, phone: outcome === 'succeeded' ? (p.customer.phone && !p.customer.phone.endsWith('0000') ? p.customer.phone : HELPER_PHONE.succeeded) : HELPER_PHONE.failed };
}

/** The payment behind a checkout token, with its merchant; null for an unknown token. */
export async function findCheckout(prisma: Ctx['runtime']['prisma'], token: string) {
  if (!/^[0-9A-Za-z]{40}$/.test(token)) return null;
  return store.findPaymentByCheckoutToken(prisma, token);
}

/** The payment's status and attempt count as they are now (the hosted checkout reads them again before an attempt); null when there is no such payment. */
export function paymentAttempts(ctx: Ctx, id: string): Promise<{ status: string; attempts: number } | null> {
  return store.findPaymentAttempts(ctx.db, id);
}


// Saved payment methods and the setup intents that save them.
//
// Setup intent: requires_payment_method → succeeded | expired (24 h on the merchant's clock).
// Saving runs in steps so that the processor is never called inside a transaction: (1) a short
// transaction claims an attempt (`attempts` + 1; an intent takes at most SETUP_MAX_ATTEMPTS, a cap
// on card testing that holds across processes), (2) the processor checks the method and returns a
// token (its idempotency key is one per attempt: the intent id, then `<id>_<n>`), (3) one
// transaction locks the intent and, if it still awaits a method, creates the payment method,
// marks the intent succeeded, makes the method the customer's default when it has none, and
// records the events. A second submission finds the intent succeeded and saves nothing.
//
// Only what can be shown is stored (card brand, last 4, expiry; the phone's last 4 digits) and
// the processor's token: never a full card number, CVC or phone number.
import type { Customer, PaymentMethod, SetupIntent } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { rawQuery, lockRow } from '../../platform/db/raw.ts';
import { Prisma, inTransaction, type Db, type TenantTx } from '../../platform/db/tenant.ts';
import { countsByParent, pagesByParent } from '../../platform/db/pages-by-parent.ts';
import { NotFoundError, StateError, ValidationError } from '../../platform/errors.ts';
import { newId, randomToken } from '../../platform/ids.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { parse } from '../../platform/validation.ts';
import { enqueueJob } from '../../platform/jobs.ts';
import { requireTestMode } from '../clock/index.ts';
import { clockNow } from '../../platform/clock.ts';
import { customerJSON, getCustomer } from '../customers/index.ts';
import { findLiveCustomer, updateCustomerRow } from '../customers/store.ts';
import { recordEvent } from '../events/index.ts';
import { cardNumberValid, processorOf, type CardInput, type PaymentMethodType, type SavedDetails } from '../../platform/processor.ts';
import { PAYMENT_METHODS } from '../../platform/processor.ts';
import {
  setupIntentCompleteBody,
  setupIntentCreate,
  type PaymentMethodListQuery,
  type SetupIntentCompleteInput,
  type SetupIntentCreateInput,
  type SetupIntentStatus,
} from './schema.ts';
import {
  countPaymentMethodsOfCustomer,
  findNewestPaymentMethodOfCustomer,
  findPaymentMethod,
  findPaymentMethodsByIds,
  findPaymentMethodsOfCustomer,
  findSetupIntent,
  findSetupIntentByToken,
  incrementSetupAttempts,
  insertPaymentMethod,
  insertSetupIntent,
  listAllPaymentMethodsOfCustomer,
  listAttachedMethods,
  markPaymentMethodDetached,
  markSetupIntentExpired,
  markSetupIntentSucceeded,
} from './store.ts';

export * from './schema.ts';

export const SETUP_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * Attempts that reach the processor per setup intent (card testing: one link must not check dozens
 * of cards). Once they are spent without a saved method the intent refuses every further attempt
 * (`setup_intent_attempts_exceeded`); it still expires normally, and a new intent is needed.
 */
export const SETUP_MAX_ATTEMPTS = 5;
export const SETUP_EXPIRE_JOB = 'setup_intent.expire';

export function setupUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/hosted/setup/${token}`;
}

export function offeredSetupMethods(si: SetupIntent): PaymentMethodType[] {
  return (si.paymentMethodTypes as PaymentMethodType[] | null) ?? [...PAYMENT_METHODS];
}

export function setupIntentToJSON(si: SetupIntent, baseUrl: string) {
  return {
    id: si.id,
    object: 'setup_intent' as const,
    customer_id: si.customerId,
    status: si.status as SetupIntentStatus,
    setup_url: setupUrl(baseUrl, si.token),
    return_url: si.returnUrl,
    payment_method_types: offeredSetupMethods(si),
    payment_method_id: si.paymentMethodId,
    metadata: si.metadata as Record<string, string>,
    expires_at: si.expiresAt.toISOString(),
    completed_at: si.completedAt?.toISOString() ?? null,
    created_at: si.createdAt.toISOString(),
  };
}

export type PaymentMethodJSON = ReturnType<typeof paymentMethodToJSON>;

export function paymentMethodToJSON(pm: PaymentMethod) {
  const d = pm.details as SavedDetails;
  return {
    id: pm.id,
    object: 'payment_method' as const,
    customer_id: pm.customerId,
    type: pm.type as PaymentMethodType,
    card: d.type === 'card' ? d.card : null,
    mobile_money: d.type === 'mobile_money' ? d.mobile_money : null,
    created_at: pm.createdAt.toISOString(),
  };
}

// ---------------------------------------------------------------- setup intents

export interface SetupIntentOptions {
  /** the portal session that opens it (the page returns to the portal) */
  portalSessionId?: string;
}

export async function createSetupIntent(ctx: Ctx, input: SetupIntentCreateInput, opts: SetupIntentOptions = {}): Promise<SetupIntent> {
  const data = parse(setupIntentCreate, input);
  return inTransaction(ctx.db, async (tx) => {
    await getCustomer(ctx, data.customer_id, tx).catch(() => {
      throw new NotFoundError('customer', data.customer_id, 'customer_id');
    });
    const now = await clockNow({ ...ctx, db: tx });
    const si = await insertSetupIntent(tx, {
      id: newId('setup_intent'),
      merchantId: ctx.merchant.id,
      customerId: data.customer_id,
      returnUrl: data.return_url ?? null,
      paymentMethodTypes: data.payment_method_types ?? [...PAYMENT_METHODS],
      metadata: data.metadata ?? {},
      token: randomToken(40),
      portalSessionId: opts.portalSessionId ?? null,
      expiresAt: new Date(now.getTime() + SETUP_TTL_MS),
      createdAt: now,
    });
    await enqueueJob(tx, { merchantId: ctx.merchant.id, kind: SETUP_EXPIRE_JOB, runAt: si.expiresAt, key: `expire:${si.id}`, payload: { setup_intent_id: si.id } });
    return si;
  });
}

export async function getSetupIntent(ctx: Ctx, id: string, db: Db = ctx.db): Promise<SetupIntent> {
  const si = await findSetupIntent(db, id);
  if (!si) throw new NotFoundError('setup intent', id);
  return si;
}

async function lockSetupIntent(ctx: Ctx, tx: TenantTx, id: string): Promise<SetupIntent> {
  await lockRow(tx, 'setup_intents', ctx.merchant.id, id);
  return getSetupIntent(ctx, id, tx);
}

/** Expires the intent when it still awaits a method and its time has come. Returns the intent. */
export async function expireSetupIntentIfDue(ctx: Ctx, id: string): Promise<SetupIntent> {
  return inTransaction(ctx.db, async (tx) => {
    const si = await lockSetupIntent(ctx, tx, id);
    if (si.status !== 'requires_payment_method') return si;
    const now = await clockNow({ ...ctx, db: tx });
    if (now.getTime() < si.expiresAt.getTime()) return si;
    // No event: the contract's catalogue has none for an expired setup intent.
    return markSetupIntentExpired(tx, id);
  });
}

/** Whether the intent still awaits a method but has spent its attempts (the setup page says so). */
export function setupAttemptsSpent(si: SetupIntent): boolean {
  return si.status === 'requires_payment_method' && si.attempts >= SETUP_MAX_ATTEMPTS;
}

function attemptsExceeded(): StateError {
  return new StateError(
    'setup_intent_attempts_exceeded',
    `This setup intent refused ${SETUP_MAX_ATTEMPTS} payment methods and takes no more attempts; create a new setup intent.`,
    null,
  );
}

export interface SetupAttempt {
  method: PaymentMethodType;
  card?: CardInput;
  phone?: string;
}

export type SetupOutcome =
  | {
      intent: SetupIntent;
      paymentMethod: PaymentMethod | null;
      declined?: undefined;
      /** when it saved a method: the customer's default before (the first saved method becomes the default) */
      defaultBefore?: string | null;
    }
  | { intent: SetupIntent; paymentMethod: null; declined: { code: string; message: string } };

/**
 * The customer saves a method at the setup page (or the test helper does). A declined method
 * saves nothing and leaves the intent awaiting a method; an expired or finished intent is returned
 * unchanged. An intent whose attempts are spent (SETUP_MAX_ATTEMPTS) throws
 * `setup_intent_attempts_exceeded` without calling the processor.
 */
export async function completeSetup(ctx: Ctx, id: string, attempt: SetupAttempt): Promise<SetupOutcome> {
  const pending = await expireSetupIntentIfDue(ctx, id);
  if (pending.status !== 'requires_payment_method') return { intent: pending, paymentMethod: null };
  if (!offeredSetupMethods(pending).includes(attempt.method)) {
    throw new ValidationError('parameter_invalid', `Invalid method: this setup accepts ${offeredSetupMethods(pending).join(', ')}.`, 'method');
  }
  // Claim an attempt under the intent's lock: concurrent submissions (several processes) cannot
  // get past the cap, and each attempt has its own number, hence its own idempotency key.
  const claim = await inTransaction(ctx.db, async (tx) => {
    const si = await lockSetupIntent(ctx, tx, id);
    if (si.status !== 'requires_payment_method') return { intent: si, claimed: false };
    if (si.attempts >= SETUP_MAX_ATTEMPTS) throw attemptsExceeded();
    return { intent: await incrementSetupAttempts(tx, id), claimed: true };
  });
  if (!claim.claimed) return { intent: claim.intent, paymentMethod: null };
  const current = claim.intent;
  // The processor's idempotency key: the intent id, then one per further attempt (as payments do),
  // so a retry of one attempt is not doubled and a new card is not answered with an old decline.
  const reference = current.attempts <= 1 ? current.id : `${current.id}_${current.attempts}`;
  let saved;
  try {
    saved = await processorOf(ctx).save({ reference, method: attempt.method, card: attempt.card, phone: attempt.phone });
  } catch (err) {
    ctx.log.error({ err, setup_intent_id: current.id }, 'processor save failed');
    saved = { status: 'failed' as const, code: 'processing_error', message: 'The payment method could not be saved. Try again.' };
  }
  if (saved.status === 'failed') return { intent: current, paymentMethod: null, declined: { code: saved.code, message: saved.message } };
  const result = saved;

  return inTransaction(ctx.db, async (tx) => {
    const si = await lockSetupIntent(ctx, tx, id);
    if (si.status !== 'requires_payment_method') return { intent: si, paymentMethod: null };
    const now = await clockNow({ ...ctx, db: tx });
    if (now.getTime() >= si.expiresAt.getTime()) {
      return { intent: await markSetupIntentExpired(tx, id), paymentMethod: null };
    }
    const customer = await lockCustomer(ctx, tx, si.customerId);
    if (!customer) throw new StateError('customer_deleted', `Customer ${si.customerId} was deleted; nothing was saved.`, null);
    const pm = await insertPaymentMethod(tx, {
      id: newId('payment_method'),
      merchantId: ctx.merchant.id,
      customerId: customer.id,
      ownerId: customer.id,
      type: result.details.type,
      details: result.details as unknown as Prisma.InputJsonValue,
      processorToken: result.token,
      createdAt: now,
    });
    const done = await markSetupIntentSucceeded(tx, id, pm.id, now);
    const base = ctx.runtime.config.publicBaseUrl;
    await recordEvent(tx, ctx, 'payment_method.attached', paymentMethodToJSON(pm));
    await recordEvent(tx, ctx, 'setup_intent.succeeded', setupIntentToJSON(done, base), { status: si.status, payment_method_id: null });
    if (!customer.defaultPaymentMethodId) await setDefault(ctx, tx, customer, pm.id);
    return { intent: done, paymentMethod: pm, defaultBefore: customer.defaultPaymentMethodId };
  });
}

// Test cards for the helper: any valid number may be given; these are the documented ones.
const HELPER_DEFAULT_CARD = '4242424242424242';

/** POST /v1/test-helpers/setup-intents/:id/complete: as if the customer saved a card at the setup page. */
export async function completeSetupForTest(ctx: Ctx, id: string, input: SetupIntentCompleteInput): Promise<SetupIntent> {
  requireTestMode(ctx.merchant);
  const body = parse(setupIntentCompleteBody, input);
  const number = (body.card_number ?? HELPER_DEFAULT_CARD).replace(/ /g, '');
  const si = await getSetupIntent(ctx, id);
  // A retry of an interrupted request with the same idempotency key whose method was saved: its outcome.
  if (ctx.idempotency?.resumed?.setup_intent_id === id && si.status === 'succeeded') return si;
  ctx.idempotency?.checkpoint({ setup_intent_id: id });
  if (si.status !== 'requires_payment_method') {
    throw new StateError('setup_intent_not_pending', `This setup intent is ${si.status}; only one awaiting a payment method can be completed.`, null);
  }
  // The hosted pages' rule (one brands table): Luhn, and a length the number's brand has.
  if (!cardNumberValid(number)) {
    throw new ValidationError('parameter_invalid', 'Invalid card_number: fails the Luhn check, or is not a length its brand has (Amex 15 digits, Diners 14, 16 or 19…).', 'card_number');
  }
  const now = await clockNow(ctx);
  const out = await completeSetup(ctx, id, {
    method: 'card',
    card: { number, expMonth: 12, expYear: now.getUTCFullYear() + 3, cvc: '123' },
  });
  if (out.declined) throw new StateError(out.declined.code, `${out.declined.message} Nothing was saved.`, 'card_number');
  if (out.intent.status === 'expired') throw new StateError('setup_intent_not_pending', 'This setup intent has expired.', null);
  return out.intent;
}

/** The method a setup intent saved; null before it saved one. */
export async function savedMethodOf(ctx: Ctx, si: SetupIntent): Promise<PaymentMethod | null> {
  return si.paymentMethodId ? findPaymentMethod(ctx.db, si.paymentMethodId) : null;
}

/** The setup intent behind a setup_url token, with its merchant; null for an unknown token. */
export async function findSetup(prisma: Ctx['runtime']['prisma'], token: string) {
  if (!/^[0-9A-Za-z]{40}$/.test(token)) return null;
  return findSetupIntentByToken(prisma, token);
}

// ---------------------------------------------------------------- payment methods

/** Locks a live customer row for the rest of the transaction; null when deleted or unknown. */
async function lockCustomer(ctx: Ctx, tx: TenantTx, id: string): Promise<Customer | null> {
  await lockRow(tx, 'customers', ctx.merchant.id, id);
  return (await findLiveCustomer(tx, ctx.merchant.id, id)) ?? null;
}

/** Sets a customer's default method (the caller holds the customer's lock) and records customer.updated. */
async function setDefault(ctx: Ctx, tx: TenantTx, before: Customer, paymentMethodId: string | null): Promise<Customer> {
  if (before.defaultPaymentMethodId === paymentMethodId) return before;
  const after = await updateCustomerRow(tx, before.id, { defaultPaymentMethodId: paymentMethodId, updatedAt: await clockNow({ ...ctx, db: tx }) });
  await recordEvent(tx, ctx, 'customer.updated', await customerJSON(ctx, after, tx), { default_payment_method_id: before.defaultPaymentMethodId });
  return after;
}

export async function getPaymentMethod(ctx: Ctx, id: string, db: Db = ctx.db, param = 'id'): Promise<PaymentMethod> {
  const pm = await findPaymentMethod(db, id);
  if (!pm) throw new NotFoundError('payment method', id, param);
  return pm;
}

/** `q` is parsed by the surface (REST query string, GraphQL listArgs) with paymentMethodListQuery. */
export async function listPaymentMethods(ctx: Ctx, query: PaymentMethodListQuery): Promise<Page<PaymentMethod>> {
  await getCustomer(ctx, query.customer_id).catch(() => {
    throw new NotFoundError('customer', query.customer_id, 'customer_id');
  });
  return paginate(
    query,
    (page) => findPaymentMethodsOfCustomer(ctx.db, query.customer_id, page),
    () => countPaymentMethodsOfCustomer(ctx.db, query.customer_id),
  );
}

/** Every attached method of a customer, newest first (the customer record embeds them). */
export function attachedMethods(ctx: Ctx, customerId: string, db: Db = ctx.db): Promise<PaymentMethod[]> {
  return listAttachedMethods(rawQuery(db), ctx.merchant.id, customerId);
}

/** Saved methods by id (GraphQL's Customer.defaultPaymentMethod, batched); unknown ids are left out. */
export function paymentMethodsByIds(ctx: Ctx, ids: string[]): Promise<PaymentMethod[]> {
  return findPaymentMethodsByIds(ctx.db, ids);
}

const METHODS_OF_CUSTOMER = { table: 'payment_methods', parent: 'customer_id' };

/** One page of attached methods per customer (GraphQL's Customer.paymentMethods), in two queries for all. */
export function listPaymentMethodsOfCustomers(ctx: Ctx, customerIds: readonly string[], q: { limit?: number; after?: string }) {
  return pagesByParent(ctx, METHODS_OF_CUSTOMER, customerIds, q, (ids) => findPaymentMethodsByIds(ctx.db, ids));
}

export function countPaymentMethodsOfCustomers(ctx: Ctx, customerIds: readonly string[]) {
  return countsByParent(ctx, METHODS_OF_CUSTOMER, customerIds);
}

async function detachLocked(ctx: Ctx, tx: TenantTx, pm: PaymentMethod, customer: Customer | null): Promise<PaymentMethod> {
  const now = await clockNow({ ...ctx, db: tx });
  const after = await markPaymentMethodDetached(tx, pm.id, now);
  await recordEvent(tx, ctx, 'payment_method.detached', paymentMethodToJSON(after), { customer_id: pm.customerId });
  if (customer && customer.defaultPaymentMethodId === pm.id) {
    // The newest remaining method becomes the default (none: no default).
    const next = await findNewestPaymentMethodOfCustomer(tx, customer.id);
    await setDefault(ctx, tx, customer, next?.id ?? null);
  }
  return after;
}

/**
 * Detaches a method from its customer, in the caller's transaction: it can no longer be charged.
 * `customerId` restricts it to one customer's methods (the portal): another customer's method is
 * "not found". What it means for subscriptions is the caller's (src/services/payment-methods.ts).
 */
export async function detachPaymentMethodIn(ctx: Ctx, tx: TenantTx, id: string, opts: { customerId?: string } = {}): Promise<PaymentMethod> {
  const found = await getPaymentMethod(ctx, id, tx);
  if (opts.customerId !== undefined && found.ownerId !== opts.customerId) throw new NotFoundError('payment method', id);
  // Lock order: customer, then method (as saving does).
  const customer = found.customerId ? await lockCustomer(ctx, tx, found.customerId) : null;
  await lockRow(tx, 'payment_methods', ctx.merchant.id, id);
  const pm = await getPaymentMethod(ctx, id, tx);
  if (!pm.customerId) throw new StateError('payment_method_detached', `Payment method ${id} is not attached to a customer.`, null);
  return detachLocked(ctx, tx, pm, customer);
}

/** Detaches every method of a customer being deleted (in the deletion's transaction). */
export async function detachAllOfCustomer(ctx: Ctx, tx: TenantTx, customerId: string): Promise<void> {
  const methods = await listAllPaymentMethodsOfCustomer(tx, customerId);
  const now = await clockNow({ ...ctx, db: tx });
  for (const pm of methods) {
    const after = await markPaymentMethodDetached(tx, pm.id, now);
    await recordEvent(tx, ctx, 'payment_method.detached', paymentMethodToJSON(after), { customer_id: pm.customerId });
  }
  if (methods.length > 0) await updateCustomerRow(tx, customerId, { defaultPaymentMethodId: null, updatedAt: now });
}

/** Makes an attached method the customer's default. `param` names the input in errors. */
export async function setDefaultPaymentMethod(ctx: Ctx, customerId: string, paymentMethodId: string, param = 'payment_method_id'): Promise<Customer> {
  return inTransaction(ctx.db, (tx) => setDefaultPaymentMethodIn(ctx, tx, customerId, paymentMethodId, param));
}

/** The same, in the caller's transaction (src/services/customers.ts adds the retries a new default sets off). */
export async function setDefaultPaymentMethodIn(ctx: Ctx, tx: TenantTx, customerId: string, paymentMethodId: string, param = 'payment_method_id'): Promise<Customer> {
  const customer = await lockCustomer(ctx, tx, customerId);
  if (!customer) throw new NotFoundError('customer', customerId);
  return setDefaultLocked(ctx, tx, customer, paymentMethodId, param);
}

/** The same, for a caller that holds the customer's lock (PATCH /v1/customers/:id). */
export async function setDefaultLocked(ctx: Ctx, tx: TenantTx, customer: Customer, paymentMethodId: string | null, param: string): Promise<Customer> {
  if (paymentMethodId !== null) {
    const pm = await findPaymentMethod(tx, paymentMethodId);
    if (!pm) throw new NotFoundError('payment method', paymentMethodId, param);
    if (pm.customerId !== customer.id) {
      throw new ValidationError('parameter_invalid', `Invalid ${param}: payment method ${paymentMethodId} is not attached to customer ${customer.id}.`, param);
    }
  }
  return setDefault(ctx, tx, customer, paymentMethodId);
}

/**
 * The saved method a payment charges: attached to this customer (or, without a customer, to its
 * owner, who becomes the payment's customer). Detached methods cannot be charged.
 */
export async function chargeableMethod(ctx: Ctx, tx: TenantTx, id: string, customerId: string | undefined): Promise<PaymentMethod> {
  const pm = await getPaymentMethod(ctx, id, tx, 'payment_method_id');
  if (!pm.customerId) {
    throw new StateError('payment_method_detached', `Payment method ${id} is detached from its customer and cannot be charged.`, 'payment_method_id');
  }
  if (customerId !== undefined && pm.customerId !== customerId) {
    throw new ValidationError('parameter_invalid', `Invalid payment_method_id: payment method ${id} belongs to another customer.`, 'payment_method_id');
  }
  return pm;
}

// Customer actions that span areas: the record with its embedded payment methods and
// subscriptions (one statement); deletion, which cancels the customer's subscriptions and
// detaches its saved methods in the same transaction; and a new default method, which retries at
// once the invoices the customer's past_due/unpaid subscriptions owe (docs/billing.md, "Recovery"),
// including a method added in the portal, which becomes the default.
import type { Customer, PaymentMethod, Subscription } from '../generated/prisma/client.ts';
import type { Ctx } from '../platform/context.ts';
import { jsonRows, lockRow } from '../platform/db/raw.ts';
import { inTransaction, type TenantTx } from '../platform/db/tenant.ts';
import { NotFoundError } from '../platform/errors.ts';
import { cancelSubscriptionsOfCustomer, makeCharges, resumeCharges, retriesForNewDefault, type Charge } from '../domain/billing/subscriptions.ts';
import { clockNow } from '../platform/clock.ts';
import { customerJSON, getCustomer, updateCustomerIn, type CustomerUpdateInput } from '../domain/customers/index.ts';
import { updateCustomerRow } from '../domain/customers/store.ts';
import { recordEvent } from '../domain/events/index.ts';
import { completeSetup, detachAllOfCustomer, setDefaultPaymentMethodIn, type SetupAttempt, type SetupOutcome } from '../domain/payment-methods/index.ts';
import { portalDefaultCustomer } from '../domain/portal/index.ts';
import { findCustomerWithEmbeds } from './store.ts';

export interface CustomerWithEmbeds {
  customer: Customer;
  paymentMethods: PaymentMethod[];
  subscriptions: Subscription[];
  /** `{ "USD": 1250 }`: the customer's non-zero credit balances */
  creditBalance: Record<string, number>;
}

/** A live customer with its attached payment methods, its subscriptions and its credit balance, in one statement. */
export async function getCustomerWithEmbeds(ctx: Ctx, id: string): Promise<CustomerWithEmbeds> {
  const row = await findCustomerWithEmbeds(ctx.db, ctx.merchant.id, id);
  if (!row) throw new NotFoundError('customer', id);
  const { embeddedMethods, embeddedSubscriptions, creditBalance, ...customer } = row;
  return {
    customer,
    creditBalance: Object.fromEntries(Object.entries(creditBalance ?? {}).map(([c, v]) => [c, Number(v)])),
    paymentMethods: jsonRows<PaymentMethod>('PaymentMethod', embeddedMethods),
    subscriptions: jsonRows<Subscription>('Subscription', embeddedSubscriptions),
  };
}

export async function deleteCustomer(ctx: Ctx, id: string): Promise<Customer> {
  return inTransaction(ctx.db, async (tx) => {
    await lockRow(tx, 'customers', ctx.merchant.id, id);
    await getCustomer(ctx, id, tx);
    // Its subscriptions are cancelled at once and its saved methods detached (each with its
    // event), in this same transaction.
    await cancelSubscriptionsOfCustomer(ctx, tx, id);
    await detachAllOfCustomer(ctx, tx, id);
    const now = await clockNow({ ...ctx, db: tx });
    const c = await updateCustomerRow(tx, id, { deletedAt: now, updatedAt: now });
    await recordEvent(tx, ctx, 'customer.deleted', { ...(await customerJSON(ctx, c, tx)), deleted: true });
    return c;
  });
}

/**
 * PATCH /v1/customers/:id (and GraphQL updateCustomer). A new default method
 * (`default_payment_method_id`) retries the invoices waiting on a payment at once (below).
 */
export function updateCustomer(ctx: Ctx, id: string, input: CustomerUpdateInput): Promise<Customer> {
  return withRecovery(ctx, id, (tx) => updateCustomerIn(ctx, tx, id, input));
}

/** GraphQL setDefaultPaymentMethod: makes an attached method the default, with the same retries. */
export function setDefaultPaymentMethod(ctx: Ctx, customerId: string, paymentMethodId: string, param = 'payment_method_id'): Promise<Customer> {
  return withRecovery(ctx, customerId, (tx) => setDefaultPaymentMethodIn(ctx, tx, customerId, paymentMethodId, param));
}

/** The portal's "Make default": the same, for the portal session's customer (another's method is "not found"). */
export async function setPortalDefault(ctx: Ctx, paymentMethodId: string): Promise<Customer> {
  return setDefaultPaymentMethod(ctx, await portalDefaultCustomer(ctx, paymentMethodId), paymentMethodId);
}

/**
 * The setup page saves a method (completeSetup). One added from the portal becomes the customer's
 * default at once, as Stripe's portal does, through the same path as the portal's "Make default"
 * (so a past_due/unpaid subscription's open invoices are retried with it at once) — also when
 * saving it already made it the default (the customer's first method), which by itself retries
 * nothing. A method saved through an API setup intent becomes the default only when it is the
 * first (completeSetup's rule).
 */
export async function completeHostedSetup(ctx: Ctx, setupIntentId: string, attempt: SetupAttempt): Promise<SetupOutcome> {
  const out = await completeSetup(ctx, setupIntentId, attempt);
  if (!out.paymentMethod || !out.intent.portalSessionId) return out;
  const pm = out.paymentMethod;
  try {
    await withRecovery(ctx, out.intent.customerId, (tx) => setDefaultPaymentMethodIn(ctx, tx, out.intent.customerId, pm.id), out.defaultBefore);
  } catch (err) {
    // The method is saved (committed): the page says so; the portal shows the default as it is.
    ctx.log.error({ err, setup_intent_id: out.intent.id }, 'portal method saved, but making it the default failed');
  }
  return out;
}

/**
 * Recovery (docs/billing.md): a change that gives the customer a new default method retries at
 * once, after it commits (charges never run inside a transaction), the open or uncollectible
 * invoices of the customer's past_due/unpaid subscriptions that charge the default; a paid one
 * makes its subscription active (invoiceHooks.paid). Under an idempotency key the route is phased:
 * the recovery point names the retries, so a retry of an interrupted request makes or finishes
 * the same charges (same attempts, same processor keys) and does not change the customer again.
 */
async function withRecovery(
  ctx: Ctx,
  customerId: string,
  change: (tx: TenantTx) => Promise<Customer>,
  /** the default before an earlier transaction of the same action (setup: saving the first method made it the default) */
  since?: string | null,
): Promise<Customer> {
  const resumed = ctx.idempotency?.resumed;
  if (resumed?.customer_id === customerId && typeof resumed.recovery_charges === 'string') {
    await resumeCharges(ctx, JSON.parse(resumed.recovery_charges) as Charge[]);
    return getCustomer(ctx, customerId);
  }
  const r = await inTransaction(ctx.db, async (tx) => {
    const locked = await lockCustomerRow(ctx, tx, customerId);
    const before = since === undefined ? locked : since;
    const after = await change(tx);
    const newDefault = after.defaultPaymentMethodId !== null && after.defaultPaymentMethodId !== before;
    const retries = newDefault ? await retriesForNewDefault(ctx, tx, customerId) : [];
    ctx.idempotency?.checkpoint({ customer_id: customerId, recovery_charges: JSON.stringify(retries) });
    return { after, retries };
  });
  // The customer as this transaction left it: the charges change invoices and subscriptions, not
  // the customer, and a read after them could show another request's change of it.
  if (r.retries.length > 0) await makeCharges(ctx, r.retries);
  return r.after;
}

/** Locks the live customer (before the change: the change locks it again, a no-op) and returns its default method. */
async function lockCustomerRow(ctx: Ctx, tx: TenantTx, id: string): Promise<string | null> {
  await lockRow(tx, 'customers', ctx.merchant.id, id);
  return (await getCustomer(ctx, id, tx)).defaultPaymentMethodId;
}

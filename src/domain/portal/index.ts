// Customer portal sessions: an hour in the hosted portal for one customer.
//
// The portal acts for the merchant but only ever for the session's customer: `portalContext`
// gives it a Ctx whose `actor` is that customer, and every portal action goes through the
// functions below, which take the customer from the actor and never from the request. A portal
// request therefore cannot name another customer's records: a method or subscription id of
// another customer is "not found", exactly as one of another merchant is.
//
// The session's url (a bearer token) opens once: `openPortalLink` swaps it for a key the browser
// keeps in an HttpOnly cookie (only its hash is stored), and the portal's pages and the setup
// intents it creates use token-less addresses (/hosted/portal), so the token never lands in a
// return_url, an event or a webhook. A second open of the url gives nothing.
import { createHash } from 'node:crypto';
import type { PortalSession } from '../../generated/prisma/client.ts';
import type { Ctx, PortalActor } from '../../platform/context.ts';
import { inTransaction } from '../../platform/db/tenant.ts';
import { NotFoundError, StateError } from '../../platform/errors.ts';
import { isIdOf, z, httpUrl, idOf, parse } from '../../platform/validation.ts';
import { newId, randomToken } from '../../platform/ids.ts';
import { getInvoice, listInvoices, payInvoice, signingKey } from '../billing/invoices.ts';
import { signedPdfPath } from '../billing/pdf.ts';
import { cancelSubscription, reactivateSubscription, subscriptionsOfCustomer } from '../billing/subscriptions.ts';
import { clockNow } from '../../platform/clock.ts';
import { customerLocale, getCustomer, updateCustomer } from '../customers/index.ts';
import { attachedMethods, createSetupIntent } from '../payment-methods/index.ts';
import { findPaymentMethod, findSetupIntent } from '../payment-methods/store.ts';
import { CHECKOUT_LOCALES } from '../payments/schema.ts';
import {
  deleteExpiredPortalSessions,
  findPlansByIds,
  findPortalSession,
  findPortalSessionByBrowserKeyHash,
  findPortalSessionByToken,
  findSubscription,
  insertPortalSession,
  listLatestWalletTransactions,
  listOpenWalletsOfCustomer,
  markPortalSessionOpened,
  takePortalSetupLink,
} from './store.ts';

export const PORTAL_TTL_MS = 60 * 60 * 1000;
/** Setup links (setup intents) one portal session may create: card testing through the portal. */
export const PORTAL_MAX_SETUP_LINKS = 5;

export const portalSessionCreate = z.strictObject({
  customer_id: idOf('customer'),
  return_url: httpUrl.meta({ description: 'Where the portal’s “Return to …” link goes.' }),
  locale: z.enum(CHECKOUT_LOCALES).optional().meta({ description: 'Language of the portal (default: the customer’s `locale`, else en).' }),
});
export type PortalSessionCreateInput = z.input<typeof portalSessionCreate>;

export function portalUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/hosted/portal/${token}`;
}

export function portalSessionToJSON(s: PortalSession, baseUrl: string) {
  return {
    id: s.id,
    object: 'customer_portal_session' as const,
    customer_id: s.customerId,
    url: portalUrl(baseUrl, s.token),
    return_url: s.returnUrl,
    locale: s.locale as (typeof CHECKOUT_LOCALES)[number],
    expires_at: s.expiresAt.toISOString(),
    created_at: s.createdAt.toISOString(),
  };
}

export async function createPortalSession(ctx: Ctx, input: PortalSessionCreateInput): Promise<PortalSession> {
  const data = parse(portalSessionCreate, input);
  return inTransaction(ctx.db, async (tx) => {
    const customer = await getCustomer(ctx, data.customer_id, tx).catch(() => {
      throw new NotFoundError('customer', data.customer_id, 'customer_id');
    });
    const now = await clockNow({ ...ctx, db: tx });
    return insertPortalSession(tx, {
      id: newId('portal_session'),
      merchantId: ctx.merchant.id,
      customerId: data.customer_id,
      token: randomToken(40),
      returnUrl: data.return_url,
      // Not given: the customer's language (else en).
      locale: data.locale ?? customerLocale(customer),
      expiresAt: new Date(now.getTime() + PORTAL_TTL_MS),
      createdAt: now,
    });
  });
}

/**
 * Housekeeping: deletes the sessions that expired more than a day ago (their expiry is on the
 * merchant's clock, which never runs behind real time, so a session still open is never among
 * them), a batch at a time; how many.
 */
export async function purgeExpiredPortalSessions(prisma: Ctx['runtime']['prisma'], now = new Date(), batch = 5_000): Promise<number> {
  const before = new Date(now.getTime() - 86_400_000);
  let total = 0;
  for (;;) {
    const n = await deleteExpiredPortalSessions(prisma, before, batch);
    total += n;
    if (n < batch) return total;
  }
}

/** The session behind a portal token, with its merchant; null when unknown. Expiry is the caller's check (merchant clock). */
export async function findPortal(prisma: Ctx['runtime']['prisma'], token: string) {
  if (!/^[0-9A-Za-z]{40}$/.test(token)) return null;
  return findPortalSessionByToken(prisma, token);
}

/** The language of a portal session (a setup page started from the portal speaks it); undefined when unknown. */
export async function portalSessionLocale(ctx: Ctx, sessionId: string): Promise<string | undefined> {
  return (await findPortalSession(ctx.db, sessionId))?.locale;
}

/** The portal's token-less address: the browser's session cookie says which session it is. */
export function portalHomeUrl(baseUrl: string): string {
  return `${baseUrl}/hosted/portal`;
}

const BROWSER_KEY = /^[0-9A-Za-z]{40}$/;
const browserKeyHash = (key: string) => createHash('sha256').update(key).digest('hex');

/**
 * The first open of a session's url: marks it opened and returns the key for the browser's cookie
 * (only its hash is stored). Null when it was opened before (the url is single-use): the caller
 * shows that, and grants nothing.
 */
export async function openPortalLink(ctx: Ctx, sessionId: string): Promise<string | null> {
  const key = randomToken(40);
  const now = await clockNow(ctx);
  const { count } = await markPortalSessionOpened(ctx.db, sessionId, now, browserKeyHash(key));
  return count === 1 ? key : null;
}

/** Whether the browser's key is the one this session's url was exchanged for (the same browser opening the url again). */
export function holdsPortalKey(session: Pick<PortalSession, 'browserKeyHash'>, key: string | undefined): boolean {
  return !!key && BROWSER_KEY.test(key) && session.browserKeyHash !== null && session.browserKeyHash === browserKeyHash(key);
}

/** The session a browser's cookie key stands for, with its merchant; null when unknown. Expiry is the caller's check. */
export async function findPortalByBrowserKey(prisma: Ctx['runtime']['prisma'], key: string) {
  if (!BROWSER_KEY.test(key)) return null;
  return findPortalSessionByBrowserKeyHash(prisma, browserKeyHash(key));
}

function actorOf(ctx: Ctx): PortalActor {
  const a = ctx.actor;
  if (!a || a.kind !== 'portal') throw new Error('a portal action needs a portal actor on the context');
  return a;
}

/** The portal customer (a deleted customer's portal shows "not found"). */
export function portalCustomer(ctx: Ctx) {
  return getCustomer(ctx, actorOf(ctx).customerId);
}

export function portalMethods(ctx: Ctx) {
  return attachedMethods(ctx, actorOf(ctx).customerId);
}

export function portalWallets(ctx: Ctx) {
  return listOpenWalletsOfCustomer(ctx.db, actorOf(ctx).customerId);
}

/** The latest ledger entries of the portal customer's wallets. */
export function portalWalletActivity(ctx: Ctx, walletIds: string[]) {
  if (walletIds.length === 0) return Promise.resolve([]);
  return listLatestWalletTransactions(ctx.db, walletIds);
}

/** The customer edits their name, email and phone (same rules and event as PATCH /v1/customers/:id). */
export function updatePortalProfile(ctx: Ctx, input: { name: string | null; email: string; phone: string | null }) {
  return updateCustomer(ctx, actorOf(ctx).customerId, input);
}

/** The customer a portal session acts for. */
export function portalCustomerId(ctx: Ctx): string {
  return actorOf(ctx).customerId;
}

/**
 * The portal's "Make default" checks the method is the session customer's own (another customer's
 * is "not found" here, as it is to detach); the change itself, with the retries a new default sets
 * off, is src/services/customers.ts's setPortalDefault. Returns the customer's id.
 */
export async function portalDefaultCustomer(ctx: Ctx, paymentMethodId: string): Promise<string> {
  const { customerId } = actorOf(ctx);
  const pm = await findPaymentMethod(ctx.db, paymentMethodId);
  if (!pm || pm.ownerId !== customerId) throw new NotFoundError('payment method', paymentMethodId);
  return customerId;
}

/**
 * Adding a method from the portal: a setup intent whose page returns to the portal's token-less
 * address. A session creates at most PORTAL_MAX_SETUP_LINKS of them (counted on the session row,
 * in the intent's transaction): beyond, `portal_setup_links_exceeded`.
 */
export function portalSetupIntent(ctx: Ctx) {
  const { customerId, sessionId } = actorOf(ctx);
  return inTransaction(ctx.db, async (tx) => {
    const { count } = await takePortalSetupLink(tx, sessionId, PORTAL_MAX_SETUP_LINKS);
    if (count === 0) {
      throw new StateError('portal_setup_links_exceeded', `This portal session already created ${PORTAL_MAX_SETUP_LINKS} setup links; open a new portal session.`, null);
    }
    const returnUrl = portalHomeUrl(ctx.runtime.config.publicBaseUrl);
    return createSetupIntent({ ...ctx, db: tx }, { customer_id: customerId, return_url: returnUrl }, { portalSessionId: sessionId });
  });
}

/**
 * Whether the setup page returned here after really saving a method: the intent exists (this
 * merchant), succeeded, and is this customer's — then the method it saved and when (the merchant's
 * clock). The query string alone proves nothing.
 */
export async function portalMethodAdded(ctx: Ctx, setupIntentId: string): Promise<{ paymentMethodId: string; savedAt: Date } | null> {
  if (!isIdOf('setup_intent', setupIntentId)) return null;
  const si = await findSetupIntent(ctx.db, setupIntentId);
  if (si === null || si.customerId !== actorOf(ctx).customerId || si.status !== 'succeeded' || !si.paymentMethodId) return null;
  return { paymentMethodId: si.paymentMethodId, savedAt: si.completedAt ?? si.updatedAt };
}

/** The customer's subscriptions (newest first), each with its plan. */
export async function portalSubscriptions(ctx: Ctx) {
  const subs = await subscriptionsOfCustomer(ctx, actorOf(ctx).customerId);
  const plans = subs.length === 0 ? [] : await findPlansByIds(ctx.db, [...new Set(subs.map((s) => s.planId))]);
  const planOf = new Map(plans.map((p) => [p.id, p]));
  return subs.flatMap((sub) => {
    const plan = planOf.get(sub.planId);
    return plan ? [{ sub, plan }] : [];
  });
}

/**
 * The customer's latest invoices, each with a fresh signed link to its PDF (valid 5 minutes; the
 * same link `signedPdfUrl` gives, signed with one read of the merchant's key for all of them).
 */
export async function portalInvoices(ctx: Ctx) {
  const page = await listInvoices(ctx, { customer_id: actorOf(ctx).customerId, limit: 20 });
  // A draft (a one-off invoice not finalised yet) is the merchant's, not the customer's to see.
  page.data = page.data.filter((i) => i.status !== 'draft');
  if (page.data.length === 0) return [];
  const key = await signingKey(ctx);
  const now = new Date();
  return page.data.map((invoice) => ({ invoice, pdfUrl: `${ctx.runtime.config.publicBaseUrl}${signedPdfPath(key, invoice.id, now)}` }));
}

/**
 * "Pay now" on an open (or uncollectible) invoice: one charge of the customer's default method
 * through payInvoice (the API's rules and events; without a default, the method dunning would
 * use). Another customer's invoice is "not found"; a decline throws PaymentFailedError (402).
 */
export async function payPortalInvoice(ctx: Ctx, invoiceId: string) {
  const customerId = actorOf(ctx).customerId;
  const inv = isIdOf('invoice', invoiceId) ? await getInvoice(ctx, invoiceId).catch(() => null) : null;
  if (!inv || inv.customerId !== customerId) throw new NotFoundError('invoice', invoiceId);
  const customer = await getCustomer(ctx, customerId);
  return payInvoice(ctx, invoiceId, customer.defaultPaymentMethodId ? { payment_method_id: customer.defaultPaymentMethodId } : {});
}

/** One of the customer's subscriptions; another customer's (or merchant's) is "not found". */
async function ownSubscription(ctx: Ctx, subscriptionId: string) {
  const sub = isIdOf('subscription', subscriptionId) ? await findSubscription(ctx.db, subscriptionId) : null;
  if (!sub || sub.customerId !== actorOf(ctx).customerId) throw new NotFoundError('subscription', subscriptionId);
  return sub;
}

/** "Cancel at period end" (same rules and subscription.updated event as the API). */
export async function cancelPortalSubscription(ctx: Ctx, subscriptionId: string) {
  await ownSubscription(ctx, subscriptionId);
  return cancelSubscription(ctx, subscriptionId, { cancel_at_period_end: true });
}

/** "Keep my subscription": undoes cancel at period end (subscription.reactivated; 409 when not cancelling). */
export async function reactivatePortalSubscription(ctx: Ctx, subscriptionId: string) {
  await ownSubscription(ctx, subscriptionId);
  return reactivateSubscription(ctx, subscriptionId);
}

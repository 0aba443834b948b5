// Customer portal sessions: an hour in the hosted portal for one customer.
//
// The portal acts for the merchant but only ever for the session's customer: `portalContext`
// gives it a Ctx whose `actor` is that customer, and every portal action goes through the
// functions below, which take the customer from the actor and never from the request. A portal
// request therefore cannot name another customer's records: a method id of another customer is
// "not found", exactly as one of another merchant is.
import type { PortalSession } from '../../generated/prisma/client.ts';
import type { Ctx, PortalActor } from '../../platform/context.ts';
import { inTransaction } from '../../platform/db/tenant.ts';
import { NotFoundError } from '../../platform/errors.ts';
import { newId, randomToken } from '../../platform/ids.ts';
import { z, httpUrl, idOf, parse } from '../../platform/validation.ts';
import { clockNow } from '../clock/index.ts';
import { getCustomer, updateCustomer } from '../customers/index.ts';
import { attachedMethods, createSetupIntent, detachPaymentMethod, setDefaultPaymentMethod } from '../payment-methods/index.ts';
import { CHECKOUT_LOCALES } from '../payments/schema.ts';

export const PORTAL_TTL_MS = 60 * 60 * 1000;

export const portalSessionCreate = z.strictObject({
  customer_id: idOf('customer'),
  return_url: httpUrl.meta({ description: 'Where the portal’s “Return to …” link goes.' }),
  locale: z.enum(CHECKOUT_LOCALES).optional().meta({ description: 'Language of the portal (default en).' }),
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
    await getCustomer(ctx, data.customer_id, tx).catch(() => {
      throw new NotFoundError('customer', data.customer_id, 'customer_id');
    });
    const now = await clockNow({ ...ctx, db: tx });
    return tx.portalSession.create({
      data: {
        id: newId('portal_session'),
        merchantId: ctx.merchant.id,
        customerId: data.customer_id,
        token: randomToken(40),
        returnUrl: data.return_url,
        locale: data.locale ?? 'en',
        expiresAt: new Date(now.getTime() + PORTAL_TTL_MS),
      },
    });
  });
}

/** The session behind a portal token, with its merchant; null when unknown. Expiry is the caller's check (merchant clock). */
export async function findPortal(prisma: Ctx['runtime']['prisma'], token: string) {
  if (!/^[0-9A-Za-z]{40}$/.test(token)) return null;
  return prisma.portalSession.findUnique({ where: { token }, include: { merchant: true } });
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
  return ctx.db.wallet.findMany({ where: { customerId: actorOf(ctx).customerId, status: { not: 'closed' } }, orderBy: [{ createdAt: 'desc' }], take: 20 });
}

/** The latest ledger entries of the portal customer's wallets. */
export function portalWalletActivity(ctx: Ctx, walletIds: string[]) {
  if (walletIds.length === 0) return Promise.resolve([]);
  return ctx.db.walletTransaction.findMany({ where: { walletId: { in: walletIds } }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 10 });
}

/** The customer edits their name, email and phone (same rules and event as PATCH /v1/customers/:id). */
export function updatePortalProfile(ctx: Ctx, input: { name: string | null; email: string; phone: string | null }) {
  return updateCustomer(ctx, actorOf(ctx).customerId, input);
}

export function detachPortalMethod(ctx: Ctx, paymentMethodId: string) {
  const { customerId } = actorOf(ctx);
  return detachPaymentMethod(ctx, paymentMethodId, { customerId });
}

export async function setPortalDefault(ctx: Ctx, paymentMethodId: string) {
  const { customerId } = actorOf(ctx);
  // Another customer's method is "not found" here, as it is to detach.
  const pm = await ctx.db.paymentMethod.findUnique({ where: { id: paymentMethodId } });
  if (!pm || pm.ownerId !== customerId) throw new NotFoundError('payment method', paymentMethodId);
  return setDefaultPaymentMethod(ctx, customerId, paymentMethodId);
}

/** Adding a method from the portal: a setup intent whose page returns to the portal. */
export function portalSetupIntent(ctx: Ctx, returnUrl: string) {
  const { customerId, sessionId } = actorOf(ctx);
  return createSetupIntent(ctx, { customer_id: customerId, return_url: returnUrl }, { portalSessionId: sessionId });
}

// Statements about portal sessions, and the portal's reads of the wallets and billing areas'
// tables (each says whose table it reads). The rules are in index.ts.
import type { Plan, PortalSession, PrismaClient, Subscription, Wallet, WalletTransaction } from '../../generated/prisma/client.ts';
import type { Prisma, Db, TenantTx } from '../../platform/db/tenant.ts';

// ---------------------------------------------------------------- portal sessions

export function insertPortalSession(tx: TenantTx, data: Prisma.PortalSessionUncheckedCreateInput): Promise<PortalSession> {
  return tx.portalSession.create({ data });
}

export function findPortalSession(db: Db, id: string): Promise<PortalSession | null> {
  return db.portalSession.findUnique({ where: { id } });
}

/** The session behind a portal token, with its merchant (any merchant: the unscoped client). */
export function findPortalSessionByToken(prisma: PrismaClient, token: string) {
  return prisma.portalSession.findUnique({ where: { token }, include: { merchant: true } });
}

/** The session a browser key's hash stands for, with its merchant (any merchant: the unscoped client). */
export function findPortalSessionByBrowserKeyHash(prisma: PrismaClient, browserKeyHash: string) {
  return prisma.portalSession.findUnique({ where: { browserKeyHash }, include: { merchant: true } });
}

/** Marks the session opened with the browser key's hash, unless it was opened before (count 0). */
export function markPortalSessionOpened(db: Db, id: string, openedAt: Date, browserKeyHash: string): Promise<Prisma.BatchPayload> {
  return db.portalSession.updateMany({ where: { id, openedAt: null }, data: { openedAt, browserKeyHash } });
}

/** Counts one more setup link on the session, unless it has `max` already (count 0). */
export function takePortalSetupLink(tx: TenantTx, id: string, max: number): Promise<Prisma.BatchPayload> {
  return tx.portalSession.updateMany({
    where: { id, setupLinks: { lt: max } },
    data: { setupLinks: { increment: 1 } },
  });
}

/**
 * Deletes up to `limit` sessions that expired before `before` (every merchant's: the unscoped
 * client, housekeeping); how many.
 */
export async function deleteExpiredPortalSessions(prisma: PrismaClient, before: Date, limit: number): Promise<number> {
  const rows = await prisma.portalSession.findMany({ where: { expiresAt: { lt: before } }, select: { id: true }, take: limit });
  if (rows.length === 0) return 0;
  const r = await prisma.portalSession.deleteMany({ where: { id: { in: rows.map((x) => x.id) } } });
  return r.count;
}

// ---------------------------------------------------------------- other areas' tables

/** Reads wallets (wallets area): a customer's wallets that are not closed, newest first, at most 20. */
export function listOpenWalletsOfCustomer(db: Db, customerId: string): Promise<Wallet[]> {
  return db.wallet.findMany({ where: { customerId, status: { not: 'closed' } }, orderBy: [{ createdAt: 'desc' }], take: 20 });
}

/** Reads wallet_transactions (wallets area): the latest 10 entries of these wallets. */
export function listLatestWalletTransactions(db: Db, walletIds: string[]): Promise<WalletTransaction[]> {
  return db.walletTransaction.findMany({ where: { walletId: { in: walletIds } }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 10 });
}

/** Reads plans (billing area). */
export function findPlansByIds(db: Db, ids: string[]): Promise<Plan[]> {
  return db.plan.findMany({ where: { id: { in: ids } } });
}

/** Reads subscriptions (billing area). */
export function findSubscription(db: Db, id: string): Promise<Subscription | null> {
  return db.subscription.findUnique({ where: { id } });
}

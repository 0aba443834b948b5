// The merchants' statements: merchants and their API keys (creating, revoking, listing, the
// bootstrap's count). The rules are in index.ts. A key by client id is read through
// src/platform/auth.store.ts (authentication's statement, the same one).
import type { ApiKey, Merchant, Prisma } from '../../generated/prisma/client.ts';
import type { PrismaClient } from '../../platform/db/index.ts';

/** The client, or its transaction (creating a merchant with its first key). */
export type MerchantsDb = PrismaClient | Prisma.TransactionClient;

export function insertMerchant(db: MerchantsDb, data: { id: string; name: string; mode: string }): Promise<Merchant> {
  return db.merchant.create({ data });
}

export function insertApiKey(db: MerchantsDb, data: { id: string; merchantId: string; clientId: string; secretHash: string; secretLast4: string }): Promise<ApiKey> {
  return db.apiKey.create({ data });
}

/** A merchant and its first key, in one transaction (both or neither). */
export function insertMerchantWithKey(
  prisma: PrismaClient,
  merchant: { id: string; name: string; mode: string },
  key: { id: string; clientId: string; secretHash: string; secretLast4: string },
): Promise<Merchant> {
  return prisma.$transaction(async (tx) => {
    const m = await insertMerchant(tx, merchant);
    await insertApiKey(tx, { ...key, merchantId: m.id });
    return m;
  });
}

export function findMerchant(db: MerchantsDb, id: string): Promise<Merchant | null> {
  return db.merchant.findUnique({ where: { id } });
}

/** Revokes the active key of a client id at `revokedAt`; how many keys it revoked (0 or 1). */
export async function revokeActiveApiKey(db: MerchantsDb, clientId: string, revokedAt: Date): Promise<number> {
  const r = await db.apiKey.updateMany({ where: { clientId, revokedAt: null }, data: { revokedAt } });
  return r.count;
}

/** Every merchant with its keys, oldest first. */
export function listMerchantsWithKeys(db: MerchantsDb) {
  return db.merchant.findMany({
    orderBy: { createdAt: 'asc' },
    include: { apiKeys: { orderBy: { createdAt: 'asc' } } },
  });
}

export function countMerchants(db: MerchantsDb): Promise<number> {
  return db.merchant.count();
}

// ---- dashboard users and their sessions (dashboard.ts). Read across merchants on the unscoped
// client: sign-in has only an email, a request only its cookie's token hash.

export function insertDashboardUser(db: MerchantsDb, data: { id: string; merchantId: string; email: string; passwordHash: string }) {
  return db.dashboardUser.create({ data });
}

export function findDashboardUserByEmail(db: MerchantsDb, email: string) {
  return db.dashboardUser.findUnique({ where: { email }, include: { merchant: true } });
}

export function countDashboardUsers(db: MerchantsDb, merchantId: string): Promise<number> {
  return db.dashboardUser.count({ where: { merchantId } });
}

export function insertDashboardSession(db: MerchantsDb, data: { id: string; merchantId: string; userId: string; tokenHash: string; createdAt: Date; expiresAt: Date }) {
  return db.dashboardSession.create({ data });
}

/** The session of a token hash with its user and merchant (expired and revoked ones too: the caller decides). */
export function findDashboardSession(db: MerchantsDb, tokenHash: string) {
  return db.dashboardSession.findUnique({ where: { tokenHash }, include: { user: true, merchant: true } });
}

/** Ends the live session of a token hash; how many it ended (0 or 1). */
export async function revokeDashboardSession(db: MerchantsDb, tokenHash: string, revokedAt: Date): Promise<number> {
  const r = await db.dashboardSession.updateMany({ where: { tokenHash, revokedAt: null }, data: { revokedAt } });
  return r.count;
}

/** Deletes sessions that ended (expired or revoked) before `before`, up to `limit` of them; how many. */
export async function deleteEndedDashboardSessions(db: MerchantsDb, before: Date, limit: number): Promise<number> {
  const rows = await db.dashboardSession.findMany({
    where: { OR: [{ expiresAt: { lt: before } }, { revokedAt: { lt: before } }] },
    select: { id: true },
    take: limit,
  });
  if (rows.length === 0) return 0;
  const r = await db.dashboardSession.deleteMany({ where: { id: { in: rows.map((x) => x.id) } } });
  return r.count;
}

// The merchants' statements: merchants and their API keys (creating, revoking, listing, the
// bootstrap's count). The rules are in index.ts. A key by client id is read through
// src/platform/auth.store.ts (authentication's statement, the same one).
import type { ApiKey, Merchant, Prisma } from '../../generated/prisma/client.ts';
import type { PrismaClient } from '../../platform/db/index.ts';
import type { PageSlice } from '../../platform/pagination.ts';

/** The client, or its transaction (creating a merchant with its first key). */
export type MerchantsDb = PrismaClient | Prisma.TransactionClient;

export function insertMerchant(db: MerchantsDb, data: { id: string; name: string; mode: string }): Promise<Merchant> {
  return db.merchant.create({ data });
}

export function insertApiKey(db: MerchantsDb, data: { id: string; merchantId: string; clientId: string; secretHash: string; secretLast4: string }): Promise<ApiKey> {
  return db.apiKey.create({ data });
}

type NewMerchant = { id: string; name: string; mode: string };
type NewKey = { id: string; clientId: string; secretHash: string; secretLast4: string };

/** A merchant and its first key, in one transaction (both or neither). */
export function insertMerchantWithKey(prisma: PrismaClient, merchant: NewMerchant, key: NewKey): Promise<Merchant> {
  return prisma.$transaction((tx) => insertMerchantWithKeyIn(tx, merchant, key));
}

/** The same, in the caller's transaction. */
export async function insertMerchantWithKeyIn(tx: Prisma.TransactionClient, merchant: NewMerchant, key: NewKey): Promise<Merchant> {
  const m = await insertMerchant(tx, merchant);
  await insertApiKey(tx, { ...key, merchantId: m.id });
  return m;
}

/**
 * Runs fn in a transaction that holds the one lock of the bootstrap (an advisory lock until it
 * ends): instances starting at once on one database decide one after the other whether a
 * bootstrap merchant is needed.
 */
export function inBootstrapLock<T>(prisma: PrismaClient, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return prisma.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtext('billing.bootstrap'))`);
      return fn(tx);
    },
    { timeout: 60_000 },
  );
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
  return db.dashboardUser.findUnique({ where: { email }, include: { merchant: { omit: { logo: true } } } });
}

export function countDashboardUsers(db: MerchantsDb, merchantId: string): Promise<number> {
  return db.dashboardUser.count({ where: { merchantId } });
}

export function insertDashboardSession(db: MerchantsDb, data: { id: string; merchantId: string; userId: string; tokenHash: string; createdAt: Date; expiresAt: Date }) {
  return db.dashboardSession.create({ data });
}

/** The session of a token hash with its user and merchant (expired and revoked ones too: the caller decides). */
export function findDashboardSession(db: MerchantsDb, tokenHash: string) {
  // Not the merchant's logo (up to 128 KiB): read on every dashboard request.
  return db.dashboardSession.findUnique({ where: { tokenHash }, include: { user: true, merchant: { omit: { logo: true } } } });
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

// ---------------------------------------------------------------- one merchant's keys (GraphQL apiKeys)
// api_keys is read across merchants by authentication, so it is not a tenant model: every
// statement here filters on the merchant itself.

/** A page of the merchant's keys (`where`: the cursor's fragment; `page`: order and take). */
export function findApiKeysOfMerchant(db: MerchantsDb, merchantId: string, where: Prisma.ApiKeyWhereInput, page: PageSlice): Promise<ApiKey[]> {
  return db.apiKey.findMany({ where: { AND: [{ merchantId }, where] }, ...page });
}

export function countApiKeysOfMerchant(db: MerchantsDb, merchantId: string): Promise<number> {
  return db.apiKey.count({ where: { merchantId } });
}

export function findApiKeyOfMerchant(db: MerchantsDb, merchantId: string, clientId: string): Promise<ApiKey | null> {
  return db.apiKey.findFirst({ where: { merchantId, clientId } });
}

/**
 * Revokes one of the merchant's active keys unless it is its last active one, with the merchant's
 * row locked (in the caller's transaction) so that two revocations cannot together leave none:
 * 'revoked', 'last' or 'missing' (no such active key of this merchant).
 */
export async function revokeApiKeyOfMerchant(tx: Prisma.TransactionClient, merchantId: string, clientId: string, revokedAt: Date): Promise<{ outcome: 'revoked' | 'last' | 'missing'; key: ApiKey | null }> {
  await lockMerchant(tx, merchantId);
  const key = await tx.apiKey.findFirst({ where: { merchantId, clientId, revokedAt: null } });
  if (!key) return { outcome: 'missing', key: null };
  const active = await tx.apiKey.count({ where: { merchantId, revokedAt: null } });
  if (active <= 1) return { outcome: 'last', key };
  return { outcome: 'revoked', key: await tx.apiKey.update({ where: { id: key.id }, data: { revokedAt } }) };
}

// ---------------------------------------------------------------- the merchant's settings (account)

/** The merchant's row, locked (FOR UPDATE) in the caller's transaction, for a settings change. */
export async function lockMerchantRow(tx: Prisma.TransactionClient, id: string): Promise<Merchant | null> {
  await lockMerchant(tx, id);
  return tx.merchant.findUnique({ where: { id } });
}

/** Locks the merchant's row (FOR UPDATE) until the caller's transaction ends: changes to its keys or settings, one at a time. */
async function lockMerchant(tx: Prisma.TransactionClient, id: string): Promise<void> {
  await tx.$queryRawUnsafe(`SELECT id FROM merchants WHERE id = $1 FOR UPDATE`, id);
}

export function updateMerchantSettingsRow(
  db: MerchantsDb,
  id: string,
  data: { name?: string; accentColor?: string | null; logoType?: string | null; logo?: Uint8Array<ArrayBuffer> | null },
): Promise<Merchant> {
  return db.merchant.update({ where: { id }, data });
}

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
 * Holds, until the transaction ends, the one lock of the bootstrap: instances starting at once on
 * one database decide one after the other whether a bootstrap merchant is needed.
 */
export async function lockBootstrap(tx: Prisma.TransactionClient): Promise<void> {
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtext('billing.bootstrap'))`);
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

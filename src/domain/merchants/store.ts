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
 * row locked so that two revocations cannot together leave none: 'revoked', 'last' or 'missing'
 * (no such active key of this merchant).
 */
export function revokeApiKeyOfMerchant(prisma: PrismaClient, merchantId: string, clientId: string, revokedAt: Date): Promise<{ outcome: 'revoked' | 'last' | 'missing'; key: ApiKey | null }> {
  return prisma.$transaction(async (tx) => {
    await tx.$queryRawUnsafe(`SELECT id FROM merchants WHERE id = $1 FOR UPDATE`, merchantId);
    const key = await tx.apiKey.findFirst({ where: { merchantId, clientId, revokedAt: null } });
    if (!key) return { outcome: 'missing' as const, key: null };
    const active = await tx.apiKey.count({ where: { merchantId, revokedAt: null } });
    if (active <= 1) return { outcome: 'last' as const, key };
    return { outcome: 'revoked' as const, key: await tx.apiKey.update({ where: { id: key.id }, data: { revokedAt } }) };
  });
}

// ---------------------------------------------------------------- the merchant's settings (account)

/** The merchant's row, locked (FOR UPDATE) in the caller's transaction, for a settings change. */
export async function lockMerchantRow(tx: Prisma.TransactionClient, id: string): Promise<Merchant | null> {
  await tx.$queryRawUnsafe(`SELECT id FROM merchants WHERE id = $1 FOR UPDATE`, id);
  return tx.merchant.findUnique({ where: { id } });
}

export function updateMerchantSettingsRow(
  db: MerchantsDb,
  id: string,
  data: { name?: string; accentColor?: string | null; logoType?: string | null; logo?: Uint8Array<ArrayBuffer> | null },
): Promise<Merchant> {
  return db.merchant.update({ where: { id }, data });
}

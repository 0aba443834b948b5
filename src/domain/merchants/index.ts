// Merchants and their API keys. Used by the CLI, at start (bootstrap), and by GraphQL's apiKeys,
// createApiKey and revokeApiKey (the merchant's own keys only).
import type { PrismaClient } from '../../platform/db/index.ts';
import { hashSecret, verifySecret } from '../../platform/auth.ts';
import { findApiKeyWithMerchant } from '../../platform/auth.store.ts';
import { newId, randomToken } from '../../platform/ids.ts';
import { hasUnsafeText, UNSAFE_TEXT_MESSAGE } from '../../platform/validation.ts';
import type { ApiKey } from '../../generated/prisma/client.ts';
import { NotFoundError, StateError } from '../../platform/errors.ts';
import { inTransaction, type Db } from '../../platform/db/tenant.ts';
import { paginate, type Page, type PageArgs } from '../../platform/pagination.ts';
import {
  countApiKeysOfMerchant,
  findApiKeyOfMerchant,
  findApiKeysOfMerchant,
  revokeApiKeyOfMerchant,
  countMerchants,
  findMerchant,
  insertApiKey,
  insertMerchantWithKey,
  insertMerchantWithKeyIn,
  listMerchantsWithKeys,
  inBootstrapLock,
  revokeActiveApiKey,
} from './store.ts';

export type Mode = 'test' | 'live';

export interface IssuedCredentials {
  merchant_id: string;
  client_id: string;
  client_secret: string;
  mode: Mode;
}

export async function createMerchant(prisma: PrismaClient, input: { name: string; mode?: Mode }): Promise<IssuedCredentials> {
  const m = await newMerchant(input);
  await insertMerchantWithKey(prisma, m.merchant, m.key);
  return m.credentials;
}

/** A new merchant's rows and the credentials of its first key (nothing written yet). */
async function newMerchant(input: { name: string; mode?: Mode }) {
  const name = input.name.trim();
  if (!name || name.length > 200) throw new Error('merchant name must be 1 to 200 characters');
  // The one rule for free text shown to people (platform/validation.ts freeText), as PATCH /v1/account applies it.
  if (hasUnsafeText(name)) throw new Error(`merchant name ${UNSAFE_TEXT_MESSAGE}`);
  const mode = input.mode ?? 'test';
  const clientId = newId('client_id');
  const secret = `sk_${mode}_${randomToken(32)}`;
  const secretHash = await hashSecret(secret);
  const merchant = { id: newId('merchant'), name, mode };
  const credentials: IssuedCredentials = { merchant_id: merchant.id, client_id: clientId, client_secret: secret, mode };
  return { merchant, key: { id: newId('api_key'), clientId, secretHash, secretLast4: secret.slice(-4) }, credentials };
}

export async function createApiKey(prisma: PrismaClient, merchantId: string): Promise<IssuedCredentials> {
  const m = await findMerchant(prisma, merchantId);
  if (!m) throw new Error(`no such merchant: ${merchantId}`);
  const clientId = newId('client_id');
  const secret = `sk_${m.mode}_${randomToken(32)}`;
  await insertApiKey(prisma, { id: newId('api_key'), merchantId, clientId, secretHash: await hashSecret(secret), secretLast4: secret.slice(-4) });
  return { merchant_id: m.id, client_id: clientId, client_secret: secret, mode: m.mode as Mode };
}

/** Revokes a key by client id; returns false when there is no such active key. */
export async function revokeApiKey(prisma: PrismaClient, clientId: string): Promise<boolean> {
  return (await revokeActiveApiKey(prisma, clientId, new Date())) === 1;
}

export async function listMerchants(prisma: PrismaClient) {
  const rows = await listMerchantsWithKeys(prisma);
  return rows.map((m) => ({
    merchant_id: m.id,
    name: m.name,
    mode: m.mode,
    created_at: m.createdAt.toISOString(),
    keys: m.apiKeys.map((k) => ({
      client_id: k.clientId,
      secret_last4: k.secretLast4,
      created_at: k.createdAt.toISOString(),
      revoked_at: k.revokedAt?.toISOString() ?? null,
    })),
  }));
}

/** Where bootstrap reports what it left alone (the server's logger). */
export interface BootstrapLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * Start-up bootstrap.
 *
 * With explicit credentials (BILLING_BOOTSTRAP_CLIENT_ID/SECRET) a test-mode merchant holding
 * exactly those is created **only when the client id does not exist**. An existing key is never
 * changed: a revoked key stays revoked, its secret is never replaced, and no merchant's mode is
 * touched. When the existing key is revoked, belongs to a live-mode merchant, or does not match
 * the configured secret, a warning says so and the key is left alone (revoke or rotate keys with
 * the CLI instead).
 *
 * Without explicit credentials, a test merchant is created only when the database has no
 * merchant at all; the returned credentials are then printed once.
 */
export async function bootstrapMerchant(
  prisma: PrismaClient,
  explicit?: { clientId: string; clientSecret: string },
  log?: BootstrapLog,
): Promise<IssuedCredentials | null> {
  // One decision at a time across instances starting together on one database (an advisory lock
  // held by the transaction): the first creates, the others then find what it made.
  return inBootstrapLock(prisma, async (tx) => {
    if (explicit) {
      const clientId = explicit.clientId;
      const key = await findApiKeyWithMerchant(tx, clientId);
      if (!key) {
        const secretHash = await hashSecret(explicit.clientSecret);
        const { id: merchantId } = await insertMerchantWithKeyIn(
          tx,
          { id: newId('merchant'), name: 'Bootstrap merchant', mode: 'test' },
          { id: newId('api_key'), clientId, secretHash, secretLast4: explicit.clientSecret.slice(-4) },
        );
        log?.info({ client_id: clientId, merchant_id: merchantId }, 'bootstrap merchant created from BILLING_BOOTSTRAP_CLIENT_ID');
        return null;
      }
      const about = { client_id: clientId, merchant_id: key.merchantId };
      if (key.revokedAt) {
        log?.warn(about, 'BILLING_BOOTSTRAP_CLIENT_ID names a revoked key: it stays revoked and the bootstrap credentials do not work. Create a new key with the CLI, or unset the bootstrap variables.');
      } else if (key.merchant.mode !== 'test') {
        log?.warn(about, 'BILLING_BOOTSTRAP_CLIENT_ID names a key of a live-mode merchant: bootstrap only manages test-mode merchants, so the key is left unchanged.');
      } else if (!(await verifySecret(explicit.clientSecret, key.secretHash))) {
        log?.warn(about, 'BILLING_BOOTSTRAP_CLIENT_SECRET does not match the existing key: its secret is left unchanged and the configured secret does not work. Rotate keys with the CLI.');
      }
      return null;
    }
    if ((await countMerchants(tx)) > 0) return null;
    const m = await newMerchant({ name: 'Test merchant', mode: 'test' });
    await insertMerchantWithKeyIn(tx, m.merchant, m.key);
    return m.credentials;
  });
}

// ---------------------------------------------------------------- a merchant's own keys (GraphQL)

/** A key as the API shows it: never its secret or hash, only the secret's last four characters. */
export interface ApiKeyJSON {
  client_id: string;
  secret_last4: string;
  created_at: string;
  revoked_at: string | null;
}

export function apiKeyToJSON(k: ApiKey): ApiKeyJSON {
  return { client_id: k.clientId, secret_last4: k.secretLast4, created_at: k.createdAt.toISOString(), revoked_at: k.revokedAt?.toISOString() ?? null };
}

/** The merchant's keys, active and revoked, newest first. */
export function listApiKeysOfMerchant(prisma: PrismaClient, merchantId: string, q: PageArgs): Promise<Page<ApiKey>> {
  return paginate(
    q,
    ({ where, ...page }) => findApiKeysOfMerchant(prisma, merchantId, where, page),
    () => countApiKeysOfMerchant(prisma, merchantId),
  );
}

/** A new key for the merchant (createApiKey, as the CLI's `key create`): its secret is in the answer only. */
export async function createApiKeyOfMerchant(prisma: PrismaClient, merchantId: string): Promise<{ key: ApiKey; clientSecret: string }> {
  const c = await createApiKey(prisma, merchantId);
  const key = await findApiKeyOfMerchant(prisma, merchantId, c.client_id);
  return { key: key!, clientSecret: c.client_secret };
}

/**
 * Revokes one of the merchant's keys. The key the request itself uses may be revoked (its answer
 * still arrives; the next request with it gets 401 within the verified-key cache's seconds); the
 * merchant's last active key may not (409 last_api_key: create another first). Another merchant's
 * client id, or one already revoked, is 404.
 */
export async function revokeApiKeyOfMerchantById(db: Db, merchantId: string, clientId: string): Promise<ApiKey> {
  // In the caller's transaction when there is one (a GraphQL idempotency key's): a second one of
  // its own would wait for a connection the first holds (the embedded database has only one).
  const r = await inTransaction(db, (tx) => revokeApiKeyOfMerchant(tx as never, merchantId, clientId, new Date()));
  if (r.outcome === 'missing') throw new NotFoundError('active API key', clientId, 'clientId');
  if (r.outcome === 'last') throw new StateError('last_api_key', `API key ${clientId} is the merchant’s last active key: create another before revoking it.`, 'clientId');
  return r.key!;
}

/** A merchant by id, or null (the CLI's `merchant update`). */
export function getMerchantById(prisma: PrismaClient, id: string) {
  return findMerchant(prisma, id);
}

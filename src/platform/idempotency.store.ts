// The idempotency keys' statements (src/platform/idempotency.ts has the protocol: atomic runs,
// phased claims with leases and recovery points). Every statement but the purge runs on a
// RawQuery bound to the merchant ($1).
import type { PrismaClient } from './db/index.ts';
import type { RawQuery } from './db/raw.ts';

/** What a phased operation has created so far (ids), stored with its changes (the key's `recovery`). */
export type RecoveryPoint = Readonly<Record<string, string | number | boolean | null>>;

/** A key's row. */
export interface KeyRow {
  id: bigint;
  scope: string;
  fingerprint: string;
  status: string;
  lockedAt: Date;
  holder: string | null;
  recovery: RecoveryPoint | null;
  responseStatus: number | null;
  responseBody: unknown;
  expiresAt: Date;
}

const COLUMNS = 'id, scope, fingerprint, status, locked_at, holder, recovery, response_status, response_body, expires_at';

/** A new key's row (`responseBody`: JSON text). */
export interface NewKey {
  key: string;
  scope: string;
  fingerprint: string;
  status: 'in_progress' | 'completed';
  lockedAt: Date;
  holder: string | null;
  responseStatus: number | null;
  responseBody: string | null;
  expiresAt: Date;
}

/** INSERT … ON CONFLICT DO NOTHING: the new row's id, or none when the key exists (after waiting for an uncommitted holder). Created at `lockedAt`. */
export async function insertIdempotencyKey(q: RawQuery, k: NewKey): Promise<bigint | null> {
  const [r] = await q<{ id: bigint }>(
    `INSERT INTO idempotency_keys (merchant_id, key, scope, fingerprint, status, locked_at, holder, response_status, response_body, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::json, $6, $10)
     ON CONFLICT (merchant_id, key) DO NOTHING RETURNING id`,
    [k.key, k.scope, k.fingerprint, k.status, k.lockedAt, k.holder, k.responseStatus, k.responseBody, k.expiresAt],
  );
  return r?.id ?? null;
}

export async function findIdempotencyKey(q: RawQuery, key: string): Promise<KeyRow | null> {
  const [row] = await q<KeyRow>(`SELECT ${COLUMNS} FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`, [key]);
  return row ?? null;
}

/** Deletes a key unless it changed since `row` was read. */
export async function deleteIdempotencyKeyIfUnchanged(q: RawQuery, row: KeyRow): Promise<void> {
  await q(`DELETE FROM idempotency_keys WHERE merchant_id = $1 AND id = $2 AND status = $3 AND locked_at = $4 AND holder IS NOT DISTINCT FROM $5`, [
    row.id,
    row.status,
    row.lockedAt,
    row.holder,
  ]);
}

/** Stores the answer (`responseBody`: JSON text) of a key `holder` holds in progress: the key's id when it did. */
export function completeIdempotencyKey(q: RawQuery, id: bigint, holder: string | null, responseStatus: number, responseBody: string) {
  return q(
    `UPDATE idempotency_keys SET status = 'completed', response_status = $3, response_body = $4::json, recovery = NULL
     WHERE merchant_id = $1 AND id = $2 AND status = 'in_progress' AND holder IS NOT DISTINCT FROM $5 RETURNING id`,
    [id, responseStatus, responseBody, holder],
  );
}

/** Gives a claim in progress to `holder` (locked at `lockedAt`) unless it changed since `row` was read: the key's id when it did. */
export async function takeOverIdempotencyKey(q: RawQuery, row: KeyRow, holder: string, lockedAt: Date): Promise<{ id: bigint } | undefined> {
  const [taken] = await q<{ id: bigint }>(
    `UPDATE idempotency_keys SET holder = $3, locked_at = $4 WHERE merchant_id = $1 AND id = $2 AND status = 'in_progress' AND holder IS NOT DISTINCT FROM $5 AND locked_at = $6 RETURNING id`,
    [row.id, holder, lockedAt, row.holder, row.lockedAt],
  );
  return taken;
}

/** Renews `holder`'s claim (locked at `lockedAt`) and sets its recovery point when one is given (JSON text): the key's id while it still holds it. */
export async function renewIdempotencyClaim(q: RawQuery, id: bigint, holder: string, lockedAt: Date, recovery: string | null): Promise<{ id: bigint } | undefined> {
  const [mine] = await q<{ id: bigint }>(
    `UPDATE idempotency_keys SET locked_at = $4, recovery = coalesce($5::jsonb, recovery)
     WHERE merchant_id = $1 AND id = $2 AND holder = $3 AND status = 'in_progress' RETURNING id`,
    [id, holder, lockedAt, recovery],
  );
  return mine;
}

/** A heartbeat: `holder`'s claim is locked at `lockedAt`. */
export function touchIdempotencyClaim(q: RawQuery, id: bigint, holder: string, lockedAt: Date) {
  return q(`UPDATE idempotency_keys SET locked_at = $4 WHERE merchant_id = $1 AND id = $2 AND holder = $3 AND status = 'in_progress'`, [id, holder, lockedAt]);
}

/** Deletes `holder`'s claim in progress. */
export function deleteIdempotencyClaim(q: RawQuery, id: bigint, holder: string) {
  return q(`DELETE FROM idempotency_keys WHERE merchant_id = $1 AND id = $2 AND holder = $3 AND status = 'in_progress'`, [id, holder]);
}

/** Ends the lease of `holder`'s claim in progress at once (locked at the epoch). */
export function releaseIdempotencyClaim(q: RawQuery, id: bigint, holder: string) {
  return q(`UPDATE idempotency_keys SET locked_at = 'epoch' WHERE merchant_id = $1 AND id = $2 AND holder = $3 AND status = 'in_progress'`, [id, holder]);
}

/** Deletes every merchant's keys that expired before `now`; how many. */
export async function deleteExpiredIdempotencyKeys(prisma: PrismaClient, now: Date): Promise<number> {
  const r = await prisma.idempotencyKey.deleteMany({ where: { expiresAt: { lt: now } } });
  return r.count;
}

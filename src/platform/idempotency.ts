// Idempotency keys (REST `Idempotency-Key` header, GraphQL `idempotencyKey` input), 24 h.
//
// 1. The key is claimed by inserting an `in_progress` row (unique per merchant+key), committed at
//    once so that a concurrent duplicate sees it and gets 409 idempotency_key_in_use.
// 2. The work runs in one transaction that also stores the response on the claimed row, so the
//    state change and the stored response commit together: a retry can never redo committed work.
// 3. A request that fails with a 4xx stores that error response (replayed too, like Stripe);
//    a 5xx or a crash releases the key. A claim whose holder died (no commit) goes stale after
//    60 s and the next retry takes it over.
import { createHash } from 'node:crypto';
import { AppError, IdempotencyError, ValidationError } from './errors.ts';
import { inTransaction, Prisma, type Db, type TenantDb, type TenantTx } from './db/tenant.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const STALE_LOCK_MS = 60 * 1000;

export interface StoredResponse {
  status: number;
  body: unknown;
}

export interface IdempotentRequest {
  merchantId: string;
  key: string;
  /** "POST /v1/customers" or "graphql createCustomer" */
  scope: string;
  /** the request body (any JSON value); hashed canonically */
  payload: unknown;
}

export function validateKey(key: string, param = 'Idempotency-Key'): string {
  if (key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ValidationError('parameter_invalid', `Invalid ${param}: must be 1 to 255 printable ASCII characters without spaces.`, param);
  }
  return key;
}

function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v ?? null);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(',')}}`;
}

export function fingerprint(scope: string, payload: unknown): string {
  return createHash('sha256').update(scope).update('\n').update(canonical(payload)).digest('hex');
}

type Outcome = { replayed: true; response: StoredResponse } | { replayed: false; response: StoredResponse };

/**
 * Runs `work` at most once per (merchant, key). `work` receives the transaction in which it must
 * make all its changes. `errorResponse` turns a 4xx AppError into the response to store.
 */
export async function runIdempotent(
  db: TenantDb,
  req: IdempotentRequest,
  work: (db: TenantTx) => Promise<StoredResponse>,
  errorResponse: (err: AppError) => StoredResponse,
  opts: { atomic?: boolean; now?: () => Date } = {},
): Promise<Outcome> {
  const now = opts.now ?? (() => new Date());
  const fp = fingerprint(req.scope, req.payload);
  const claim = await claimKey(db, req, fp, now);
  if (claim.kind === 'replay') return { replayed: true, response: claim.response };

  const lockedAt = claim.lockedAt;
  try {
    const response =
      opts.atomic === false
        ? await work(db).then(async (res) => {
            await complete(db, claim.id, lockedAt, res);
            return res;
          })
        : await inTransaction(db, async (tx) => {
            const res = await work(tx);
            await complete(tx, claim.id, lockedAt, res);
            return res;
          });
    return { replayed: false, response };
  } catch (err) {
    if (err instanceof AppError && err.status < 500 && !(err instanceof IdempotencyError)) {
      const res = errorResponse(err);
      await complete(db, claim.id, lockedAt, res).catch(() => release(db, claim.id, lockedAt));
      throw err;
    }
    await release(db, claim.id, lockedAt).catch(() => {});
    throw err;
  }
}

async function complete(db: Db, id: bigint, lockedAt: Date, res: StoredResponse) {
  const r = await db.idempotencyKey.updateMany({
    where: { id, lockedAt, status: 'in_progress' },
    data: { status: 'completed', responseStatus: res.status, responseBody: (res.body ?? Prisma.JsonNull) as Prisma.InputJsonValue },
  });
  if (r.count !== 1) {
    // Our claim went stale and another request took the key over: do not commit our work.
    throw new IdempotencyError('idempotency_key_in_use', 'This idempotency key was taken over by a retry while the request was running.', null);
  }
}

async function release(db: Db, id: bigint, lockedAt: Date) {
  await db.idempotencyKey.deleteMany({ where: { id, lockedAt, status: 'in_progress' } });
}

type Claim = { kind: 'claimed'; id: bigint; lockedAt: Date } | { kind: 'replay'; response: StoredResponse };

async function claimKey(db: TenantDb, req: IdempotentRequest, fp: string, now: () => Date): Promise<Claim> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const t = now();
    const created = await db.idempotencyKey.createManyAndReturn({
      data: [{
        merchantId: req.merchantId,
        key: req.key,
        scope: req.scope,
        fingerprint: fp,
        status: 'in_progress',
        lockedAt: t,
        expiresAt: new Date(t.getTime() + IDEMPOTENCY_TTL_MS),
      }],
      skipDuplicates: true,
      select: { id: true, lockedAt: true },
    });
    if (created[0]) return { kind: 'claimed', id: created[0].id, lockedAt: created[0].lockedAt };

    const row = await db.idempotencyKey.findUnique({ where: { merchantId_key: { merchantId: req.merchantId, key: req.key } } });
    if (!row) continue; // released between our insert and read: try again
    const expired = row.expiresAt.getTime() <= t.getTime();
    // A claim whose holder died never produced an outcome, so it binds the key to nothing.
    const stale = row.status === 'in_progress' && t.getTime() - row.lockedAt.getTime() >= STALE_LOCK_MS;
    if (!expired && !stale) {
      if (row.fingerprint !== fp) {
        throw new IdempotencyError(
          'idempotency_key_reused',
          `Keys for idempotent requests can only be used with the same parameters they were first used with. This key was first used for ${row.scope}.`,
          null,
        );
      }
      if (row.status === 'completed') {
        return { kind: 'replay', response: { status: row.responseStatus ?? 200, body: row.responseBody } };
      }
      throw new IdempotencyError('idempotency_key_in_use', 'A request with this idempotency key is still being processed. Retry later.', null);
    }
    // Expired, or a stale claim whose holder never finished: take it over.
    const taken = await db.idempotencyKey.updateMany({
      where: { id: row.id, lockedAt: row.lockedAt, status: row.status },
      data: {
        scope: req.scope,
        fingerprint: fp,
        status: 'in_progress',
        lockedAt: t,
        responseStatus: null,
        responseBody: Prisma.DbNull,
        createdAt: t,
        expiresAt: new Date(t.getTime() + IDEMPOTENCY_TTL_MS),
      },
    });
    if (taken.count === 1) return { kind: 'claimed', id: row.id, lockedAt: t };
  }
  throw new IdempotencyError('idempotency_key_in_use', 'A request with this idempotency key is still being processed. Retry later.', null);
}

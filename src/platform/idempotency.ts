// Idempotency keys (REST `Idempotency-Key` header, GraphQL `idempotencyKey` input), 24 h.
//
// 1. The key is claimed by inserting an `in_progress` row (unique per merchant+key), committed at
//    once so that a concurrent duplicate sees it and gets 409 idempotency_key_in_use.
// 2. The operation runs as it would without a key: it commits its own steps (a refund reserves
//    the amount, calls the processor outside any transaction, then records the outcome). Every
//    transaction it commits also bumps the claim's `phases` counter, inside that transaction, after
//    checking the claim is still ours. So the key row knows whether the request changed anything.
// 3. The response is stored right after the operation returns. A 4xx is stored too (replayed like
//    Stripe does). A 5xx or a crash releases the key only when nothing was committed (phases = 0);
//    once something was, the outcome is stored (a 5xx as a 500) or, if the process died, the
//    claim stays: a stale claim is taken over (after 60 s) only when it changed nothing, so a
//    retry can never repeat committed work such as a refund.
import { createHash } from 'node:crypto';
import { AppError, IdempotencyError, toAppError, ValidationError } from './errors.ts';
import { guardTransactions, Prisma, type Db, type TenantDb, type TenantTx } from './db/tenant.ts';

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
  if (typeof v === 'bigint') return `${v}n`;
  // A date (GraphQL DateTime inputs) by its instant, not as an empty object.
  if (v instanceof Date) return JSON.stringify(Number.isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString());
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

type Outcome = { replayed: boolean; response: StoredResponse };

export interface IdempotencyOptions {
  now?: () => Date;
  /** how old an unfinished claim that changed nothing must be before a retry takes it over */
  staleMs?: number;
}

/**
 * Runs `work` at most once per (merchant, key). `db` must be a client of this request alone:
 * every transaction `inTransaction` opens on it is bound to the claim. `work` receives it and
 * commits its own steps. `errorResponse` turns an AppError into the response to store.
 */
export async function runIdempotent(
  db: TenantDb,
  req: IdempotentRequest,
  work: (db: TenantDb) => Promise<StoredResponse>,
  errorResponse: (err: AppError) => StoredResponse,
  opts: IdempotencyOptions = {},
): Promise<Outcome> {
  const now = opts.now ?? (() => new Date());
  const fp = fingerprint(req.scope, req.payload);
  const claim = await claimKey(db, req, fp, now, opts.staleMs ?? STALE_LOCK_MS);
  if (claim.kind === 'replay') return { replayed: true, response: claim.response };

  const { id, lockedAt } = claim;
  guardTransactions(db, async (tx) => {
    const r = await tx.idempotencyKey.updateMany({ where: { id, lockedAt, status: 'in_progress' }, data: { phases: { increment: 1 } } });
    if (r.count !== 1) {
      // Another request took the key over (only possible while we had committed nothing).
      throw new IdempotencyError('idempotency_key_in_use', 'This idempotency key was taken over by a retry while the request was running.', null);
    }
  });

  let response: StoredResponse;
  try {
    response = await work(db);
  } catch (err) {
    if (err instanceof IdempotencyError) throw err; // not our key (any more): store nothing
    const appErr = toAppError(err);
    if (appErr.status < 500) {
      await complete(db, id, lockedAt, errorResponse(appErr)).catch(() => release(db, id, lockedAt));
      throw err;
    }
    // Release the key if nothing was committed; otherwise keep the outcome (a 500), like Stripe.
    const released = await release(db, id, lockedAt).catch(() => 0);
    if (released === 0) await complete(db, id, lockedAt, errorResponse(appErr)).catch(() => {});
    throw err;
  }
  await complete(db, id, lockedAt, response);
  return { replayed: false, response };
}

async function complete(db: Db, id: bigint, lockedAt: Date, res: StoredResponse) {
  await db.idempotencyKey.updateMany({
    where: { id, lockedAt, status: 'in_progress' },
    data: { status: 'completed', responseStatus: res.status, responseBody: (res.body ?? Prisma.JsonNull) as Prisma.InputJsonValue },
  });
}

/** Deletes the claim when it committed nothing; returns how many rows went (0 or 1). */
async function release(db: Db, id: bigint, lockedAt: Date): Promise<number> {
  return (await db.idempotencyKey.deleteMany({ where: { id, lockedAt, status: 'in_progress', phases: 0 } })).count;
}

type Claim = { kind: 'claimed'; id: bigint; lockedAt: Date } | { kind: 'replay'; response: StoredResponse };

const inUse = () => new IdempotencyError('idempotency_key_in_use', 'A request with this idempotency key is still being processed. Retry later.', null);

async function claimKey(db: TenantDb, req: IdempotentRequest, fp: string, now: () => Date, staleMs: number): Promise<Claim> {
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
    // A claim whose holder died before committing anything binds the key to nothing.
    const abandoned = row.status === 'in_progress' && row.phases === 0 && t.getTime() - row.lockedAt.getTime() >= staleMs;
    if (!expired && !abandoned) {
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
      if (row.phases > 0) {
        throw new IdempotencyError(
          'idempotency_key_in_use',
          'A request with this idempotency key has changed data and not finished (it is still running, or it was interrupted). ' +
            'Its outcome cannot be replayed yet: retry later, or look up the records it affects.',
          null,
        );
      }
      throw inUse();
    }
    // Expired, or a stale claim that never changed anything: take it over.
    const taken = await db.idempotencyKey.updateMany({
      where: { id: row.id, lockedAt: row.lockedAt, status: row.status, ...(expired ? {} : { phases: 0 }) },
      data: {
        scope: req.scope,
        fingerprint: fp,
        status: 'in_progress',
        lockedAt: t,
        phases: 0,
        responseStatus: null,
        responseBody: Prisma.DbNull,
        createdAt: t,
        expiresAt: new Date(t.getTime() + IDEMPOTENCY_TTL_MS),
      },
    });
    if (taken.count === 1) return { kind: 'claimed', id: row.id, lockedAt: t };
  }
  throw inUse();
}

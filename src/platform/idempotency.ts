// Idempotency keys (REST `Idempotency-Key` header, GraphQL `idempotencyKey` input), kept 24 h.
//
// Atomic phases with recovery points, as in Stripe's published design for idempotency keys in
// PostgreSQL. The response is stored in the same transaction as the last change it reports, so a
// crash can never leave "the work happened" without "the answer is stored".
//
// - An **atomic** operation (everything the request changes fits in one database transaction:
//   creating a customer, a debit, closing a wallet …) runs as ONE transaction: the work, then the
//   key with its stored answer (INSERT … ON CONFLICT DO NOTHING), then COMMIT. Killed at any point,
//   PostgreSQL rolls all of it back and a retry is processed anew at once. A repeat, or a duplicate
//   sent while the first runs (it waits on the key's unique index until the first commits), finds
//   the key there, rolls its own work back and answers with the stored answer. The transaction is
//   a raw one on a pg connection when the work is all raw SQL (the hot paths), else Prisma's.
//
// - A **phased** operation (a charge or refund around a processor call, a subscription that
//   charges its first invoice, a clock advance) cannot be one transaction: the processor call must
//   never run inside one. Its claim is committed first, with a lease the running request keeps
//   alive (heartbeats). Every transaction the operation then commits runs a guard that checks the
//   claim is still this run's, renews the lease and writes the operation's **recovery point** (what
//   it has created so far, e.g. `{payment_id}`); the first commit must carry one. When the request
//   dies, its lease runs out (LEASE_MS) and a retry with the same key takes the claim over and runs
//   the operation again with `resumed` set to that point: it carries on from there (asks the
//   processor again under the same processor key, records the outcome) instead of starting over —
//   never a second charge, and never 409 for longer than the lease. A 4xx outcome is stored and
//   replayed; a 5xx after a change releases the lease at once so the retry resumes.
import { createHash } from 'node:crypto';
import type { PrismaClient } from './db/index.ts';
import { merchantSql, rawQuery, rawQueryOf, tryRawTransaction, type RawQuery } from './db/raw.ts';
import { afterCommit, forMerchant, freshForMerchant, guardTransactions, inTransaction, NeedsPrisma, type Db, type TenantDb } from './db/tenant.ts';
import { AppError, IdempotencyError, toAppError, ValidationError } from './errors.ts';
import { randomToken } from './ids.ts';
import type { Logger } from './logger.ts';
import {
  completeIdempotencyKey,
  deleteIdempotencyClaim,
  deleteIdempotencyKeyIfUnchanged,
  findIdempotencyKey,
  insertIdempotencyKey,
  releaseIdempotencyClaim,
  renewIdempotencyClaim,
  takeOverIdempotencyKey,
  touchIdempotencyClaim,
  type KeyRow,
  type RecoveryPoint,
} from './idempotency.store.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a phased request's claim lasts without a heartbeat before a retry may take it over. */
export const LEASE_MS = 30 * 1000;

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
  /** the operation (a route's operationId, a mutation's name): what is learnt about how it runs is kept per operation */
  operation: string;
}

/** `atomic`: the operation commits once (the default); `phased`: it commits several steps around a processor call. */
export type IdempotencyMode = 'atomic' | 'phased';

/** What a phased operation has created so far (ids), stored with its changes. */
export type { RecoveryPoint };

/** What a phased operation sees of its idempotency key (ctx.idempotency). */
export interface IdempotentRun {
  /** The recovery point an interrupted earlier run of this same request reached: carry on from it. Null on a first run. */
  readonly resumed: RecoveryPoint | null;
  /**
   * Sets the recovery point stored with the next change this run commits (its first commit must
   * have one). Ids are generated before the transaction that creates them, so the point can name them.
   */
  checkpoint(point: RecoveryPoint): void;
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

export type Outcome = { replayed: boolean; response: StoredResponse };

export interface IdempotencyOptions {
  mode?: IdempotencyMode;
  /** the lease of a phased claim (default LEASE_MS; tests shorten it) */
  leaseMs?: number;
  log?: Logger;
}

/**
 * Runs `work` at most once per (merchant, key) and returns its response, or the stored response of
 * an earlier run with the same key. `work` gets the database handle to use (atomic: the one
 * transaction; phased: a client of this request alone whose transactions are bound to the claim)
 * and, when phased, the run (recovery points). `errorResponse` turns an AppError into the response
 * to store.
 */
export async function runIdempotent(
  prisma: PrismaClient,
  req: IdempotentRequest,
  work: (db: Db, run: IdempotentRun | undefined) => Promise<StoredResponse>,
  errorResponse: (err: AppError) => StoredResponse,
  opts: IdempotencyOptions = {},
): Promise<Outcome> {
  const fp = fingerprint(req.scope, req.payload);
  return opts.mode === 'phased'
    ? runPhased(prisma, req, fp, work, errorResponse, opts.leaseMs ?? LEASE_MS)
    : runAtomic(prisma, req, fp, work, errorResponse, opts.leaseMs ?? LEASE_MS, opts.log);
}

// ---------------------------------------------------------------- the key's row

/** INSERT … ON CONFLICT DO NOTHING: the new row, or none when the key exists (after waiting for an uncommitted holder). */
async function insertKey(
  q: RawQuery,
  req: IdempotentRequest,
  fp: string,
  row: { status: 'in_progress' | 'completed'; holder: string | null; response?: StoredResponse },
): Promise<bigint | null> {
  const now = new Date();
  return insertIdempotencyKey(q, {
    key: req.key,
    scope: req.scope,
    fingerprint: fp,
    status: row.status,
    lockedAt: now,
    holder: row.holder,
    responseStatus: row.response?.status ?? null,
    responseBody: row.response ? JSON.stringify(row.response.body ?? null) : null,
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
  });
}

/** Deletes a key that binds nothing (expired, or abandoned without a change) unless it changed meanwhile, so the request is processed anew. */
async function deleteVoid(q: RawQuery, row: KeyRow): Promise<void> {
  await deleteIdempotencyKeyIfUnchanged(q, row);
}

/** Stores `res` as the answer of the claim `holder` holds. */
function complete(q: RawQuery, id: bigint, holder: string | null, res: StoredResponse) {
  return completeIdempotencyKey(q, id, holder, res.status, JSON.stringify(res.body ?? null));
}

const reused = (row: KeyRow) =>
  new IdempotencyError(
    'idempotency_key_reused',
    `Keys for idempotent requests can only be used with the same parameters they were first used with. This key was first used for ${row.scope}.`,
    null,
  );

const inUse = () => new IdempotencyError('idempotency_key_in_use', 'A request with this idempotency key is still being processed. Retry later.', null);

const replay = (row: KeyRow): Outcome => ({ replayed: true, response: { status: row.responseStatus ?? 200, body: row.responseBody } });

type Existing =
  | { kind: 'replay'; outcome: Outcome }
  /** the key binds nothing any more: expired, or claimed by a run that died before committing anything */
  | { kind: 'void' }
  /** claimed by a run that died after committing a step: a retry resumes from its recovery point */
  | { kind: 'stale'; row: KeyRow }
  | { kind: 'error'; error: IdempotencyError };

/** What an existing key means for a new request with fingerprint fp. */
function judge(row: KeyRow, fp: string, leaseMs: number): Existing {
  const now = Date.now();
  if (row.expiresAt.getTime() <= now) return { kind: 'void' };
  const lapsed = row.status === 'in_progress' && now - row.lockedAt.getTime() >= leaseMs;
  if (lapsed && row.recovery === null) return { kind: 'void' };
  if (row.fingerprint !== fp) return { kind: 'error', error: reused(row) };
  if (row.status === 'completed') return { kind: 'replay', outcome: replay(row) };
  if (lapsed) return { kind: 'stale', row };
  return { kind: 'error', error: inUse() };
}

// ---------------------------------------------------------------- atomic: one transaction

class KeyExists extends Error {
  constructor(readonly row: KeyRow | null) {
    super('idempotency key exists');
  }
}

/**
 * Operations whose work needs Prisma: their one transaction is a Prisma transaction. The others
 * (all raw SQL, e.g. creating a customer, a debit) run on a bare pg connection, about five times
 * cheaper; an operation is moved here the first time its work turns out to need Prisma (that
 * attempt is rolled back and run again, so nothing depends on knowing it in advance).
 */
const needsPrisma = new Set<string>();

/** The one transaction of an atomic run: a raw one when the operation allows it, else Prisma's. */
async function oneTransaction<T>(db: TenantDb, operation: string, fn: (tx: Db) => Promise<T>, log?: Logger): Promise<T> {
  if (!needsPrisma.has(operation)) {
    try {
      return await tryRawTransaction(db, fn);
    } catch (err) {
      if (!(err instanceof NeedsPrisma)) throw err;
      needsPrisma.add(operation);
      log?.debug({ operation, reason: err.message }, 'idempotent operation runs in a Prisma transaction');
    }
  }
  return inTransaction(db, fn);
}

async function runAtomic(
  prisma: PrismaClient,
  req: IdempotentRequest,
  fp: string,
  work: (db: Db, run: undefined) => Promise<StoredResponse>,
  errorResponse: (err: AppError) => StoredResponse,
  leaseMs: number,
  log?: Logger,
): Promise<Outcome> {
  const db = forMerchant(prisma, req.merchantId);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const response = await oneTransaction(db, req.operation, async (tx) => {
        const res = await work(tx, undefined);
        // The key goes in last, with the answer, in the work's transaction: one statement. A
        // duplicate running at the same time waits here on the key's unique index until this
        // commits, then finds the key and rolls its own work back.
        const q = merchantSql(rawQuery(tx), req.merchantId);
        if ((await insertKey(q, req, fp, { status: 'completed', holder: null, response: res })) === null) {
          const row = await findIdempotencyKey(q, req.key);
          // An expired key, or a claim abandoned before it changed anything, binds nothing: replace it.
          if (!row || judge(row, fp, leaseMs).kind !== 'void') throw new KeyExists(row);
          await deleteVoid(q, row);
          if ((await insertKey(q, req, fp, { status: 'completed', holder: null, response: res })) === null) throw new KeyExists(null);
        }
        return res;
      }, log);
      return { replayed: false, response };
    } catch (err) {
      if (err instanceof KeyExists) {
        const existing = await settleExisting(db, req, fp, leaseMs, err.row);
        if (existing) return existing;
        continue; // gone meanwhile: run again
      }
      if (err instanceof IdempotencyError) throw err;
      const appErr = toAppError(err);
      // A 4xx: the work rolled back; its answer is stored (and replayed) like Stripe does — unless
      // the key has an answer already (this was a repeat, or a duplicate that lost the race): that one.
      // A 5xx rolled back with the work: nothing is stored, but a key answered before still answers.
      const existing = await storeOutcome(db, req, fp, leaseMs, appErr.status < 500 ? errorResponse(appErr) : null);
      if (existing) return existing;
      throw err;
    }
  }
  throw inUse();
}

/** The answer for a request whose key exists (replay, or 409), or null when it is gone and the request should run. */
async function settleExisting(db: TenantDb, req: IdempotentRequest, fp: string, leaseMs: number, row: KeyRow | null): Promise<Outcome | null> {
  if (!row) return null;
  const verdict = judge(row, fp, leaseMs);
  if (verdict.kind === 'replay') return verdict.outcome;
  if (verdict.kind === 'error') throw verdict.error;
  if (verdict.kind === 'void') {
    await deleteVoid(merchantSql(rawQueryOf(db), req.merchantId), row);
    return null;
  }
  // A stale phased claim with a recovery point: only a phased run of the same request can resume it.
  throw inUse();
}

/**
 * After the work failed and rolled back: the answer an earlier run with this key stored (a repeat
 * whose work now fails because the first one's change is there, e.g. a replayed close of a wallet
 * now closed), or null when there is none — then `res`, a 4xx, is stored as the key's answer.
 */
async function storeOutcome(db: TenantDb, req: IdempotentRequest, fp: string, leaseMs: number, res: StoredResponse | null): Promise<Outcome | null> {
  const q = merchantSql(rawQueryOf(db), req.merchantId);
  for (let attempt = 0; attempt < 3; attempt++) {
    if (res && (await insertKey(q, req, fp, { status: 'completed', holder: null, response: res })) !== null) return null;
    // The key is there (or was a moment ago): its answer, its error, or it is gone or void now.
    const existing = await settleExisting(db, req, fp, leaseMs, await findIdempotencyKey(q, req.key));
    if (existing) return existing;
    if (!res) return null;
  }
  return null;
}

// ---------------------------------------------------------------- phased: a claim with a lease and recovery points

type PhasedClaim = { kind: 'claimed'; id: bigint; resumed: RecoveryPoint | null } | { kind: 'replay'; outcome: Outcome };

async function claimPhased(db: TenantDb, req: IdempotentRequest, fp: string, holder: string, leaseMs: number): Promise<PhasedClaim> {
  const q = merchantSql(rawQueryOf(db), req.merchantId);
  for (let attempt = 0; attempt < 3; attempt++) {
    const id = await insertKey(q, req, fp, { status: 'in_progress', holder });
    if (id !== null) return { kind: 'claimed', id, resumed: null };
    const row = await findIdempotencyKey(q, req.key);
    if (!row) continue; // released between the insert and the read
    const verdict = judge(row, fp, leaseMs);
    if (verdict.kind === 'replay') return verdict;
    if (verdict.kind === 'error') throw verdict.error;
    if (verdict.kind === 'void') {
      await deleteVoid(q, row);
      continue;
    }
    // The holder's lease ran out (it died): take the claim over and carry on from its recovery point.
    const taken = await takeOverIdempotencyKey(q, row, holder, new Date());
    if (taken) return { kind: 'claimed', id: row.id, resumed: row.recovery };
  }
  throw inUse();
}

async function runPhased(
  prisma: PrismaClient,
  req: IdempotentRequest,
  fp: string,
  work: (db: Db, run: IdempotentRun) => Promise<StoredResponse>,
  errorResponse: (err: AppError) => StoredResponse,
  leaseMs: number,
): Promise<Outcome> {
  // A client of this request alone: the guard below binds every transaction opened on it to the claim.
  const db = freshForMerchant(prisma, req.merchantId);
  const holder = randomToken(22);
  const claim = await claimPhased(db, req, fp, holder, leaseMs);
  if (claim.kind === 'replay') return claim.outcome;
  const { id } = claim;
  const pool = merchantSql(rawQueryOf(db), req.merchantId);

  let stored: RecoveryPoint | null = claim.resumed;
  let pending: RecoveryPoint | null = null;
  const run: IdempotentRun = {
    resumed: claim.resumed,
    checkpoint(point) {
      pending = point;
    },
  };
  guardTransactions(db, async (tx) => {
    const point = pending;
    if (stored === null && point === null) {
      throw new Error(`${req.scope}: a multi-step operation committed a change before its first recovery point (call ctx.idempotency.checkpoint first)`);
    }
    const mine = await renewIdempotencyClaim(merchantSql(rawQuery(tx), req.merchantId), id, holder, new Date(), point === null ? null : JSON.stringify(point));
    // Taken over by a retry after our lease ran out (this process stalled): the retry carries on.
    if (!mine) throw new IdempotencyError('idempotency_key_in_use', 'This request was taken over by a retry with the same idempotency key.', null);
    afterCommit(tx, () => {
      if (point !== null) {
        stored = point;
        if (pending === point) pending = null;
      }
    });
  });
  // Heartbeats keep the claim while the request runs (a processor call, a long clock advance).
  const beat = setInterval(() => {
    void touchIdempotencyClaim(pool, id, holder, new Date()).catch(() => {});
  }, Math.max(50, Math.floor(leaseMs / 3)));
  beat.unref();

  let response: StoredResponse;
  try {
    response = await work(db, run);
  } catch (err) {
    clearInterval(beat);
    if (err instanceof IdempotencyError) throw err; // not our key (any more): store nothing
    const appErr = toAppError(err);
    if (appErr.status < 500) {
      await complete(pool, id, holder, errorResponse(appErr)).catch(() => {});
      throw err;
    }
    if (stored === null) {
      // Nothing was committed: the key binds nothing.
      await deleteIdempotencyClaim(pool, id, holder).catch(() => {});
    } else {
      // Something was: the lease ends now, so a retry resumes from the recovery point at once.
      await releaseIdempotencyClaim(pool, id, holder).catch(() => {});
    }
    throw err;
  }
  clearInterval(beat);
  await complete(pool, id, holder, response);
  return { replayed: false, response };
}

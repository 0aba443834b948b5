// The jobs table's statements: enqueueing and cancelling (src/platform/jobs.ts), the runner's
// claim and outcomes (src/jobs/runner.ts) and the purge of finished jobs (src/jobs/maintenance.ts).
// The claim is tuned (docs/performance.md "Fair claims", docs/jobs.md): its text is kept as it is.
import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';
import { billingNowSql } from './clock.store.ts';
import { insertRows, merchantSql, rawQuery, rawQueryOf, type RawQuery } from './db/raw.ts';
import type { Db, TenantDb } from './db/tenant.ts';

const JOB_COLUMNS = [
  ['merchant_id', 'text'],
  ['kind', 'text'],
  ['key', 'text'],
  ['ref', 'text'],
  ['payload', 'jsonb'],
  ['run_at', 'timestamptz'],
  ['trace_parent', 'text'],
  ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
] as const;

/**
 * Inserts jobs, skipping any whose (kind, key) exists already, in one statement of db (its
 * transaction when it is one) whatever their number; how many it inserted.
 */
export async function insertJobs(
  q: RawQuery,
  data: { merchantId: string; kind: string; key: string | null; ref: string | null; payload: unknown; runAt: Date; traceParent: string | null }[],
): Promise<number> {
  if (data.length === 0) return 0;
  const now = new Date();
  const rows = await insertRows(
    q,
    'jobs',
    JOB_COLUMNS,
    data.map((j) => [j.merchantId, j.kind, j.key, j.ref, j.payload ?? {}, j.runAt, j.traceParent, now, now]),
    'ON CONFLICT (kind, key) DO NOTHING RETURNING 1 AS one',
  );
  return rows.length;
}

/** Cancels the unfinished (pending or running) jobs that match (`key`: one key, or any of several); how many. */
export async function cancelOpenJobs(db: Db, where: { kind?: string; ref?: string; key?: string | string[] }): Promise<number> {
  const key = Array.isArray(where.key) ? { in: where.key } : where.key;
  const r = await db.job.updateMany({
    where: { status: { in: ['pending', 'running'] }, kind: where.kind, ref: where.ref, key },
    data: { status: 'cancelled', lockedUntil: null },
  });
  return r.count;
}

/**
 * Cancels the jobs named by (kind, key) that are still waiting (pending): safety work made
 * unnecessary by the change the caller commits (a settled charge's recovery, a paid payment's
 * expiry). One statement (the unique (kind, key) index, one probe per pair); a job running right
 * now is left to finish (it finds nothing to do). How many it cancelled.
 */
export async function cancelPendingJobsByKey(q: RawQuery, jobs: { kind: string; key: string }[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const rows = await q<{ one: number }>(
    `UPDATE jobs j SET status = 'cancelled', updated_at = now()
     FROM unnest($1::text[], $2::text[]) AS v(kind, key)
     WHERE j.kind = v.kind AND j.key = v.key AND j.status = 'pending'
     RETURNING 1 AS one`,
    [jobs.map((j) => j.kind), jobs.map((j) => j.key)],
  );
  return rows.length;
}

/**
 * Deletes up to `limit` finished jobs (done or cancelled) last changed before `before`, oldest
 * first (through the partial index jobs_finished_updated_at_idx); returns how many.
 */
export function deleteFinishedJobs(prisma: PrismaClient, before: Date, limit: number): Promise<number> {
  return prisma.$executeRawUnsafe(
    `DELETE FROM jobs WHERE id IN (
       SELECT id FROM jobs WHERE status IN ('done', 'cancelled') AND updated_at < $1 ORDER BY updated_at LIMIT $2)`,
    before,
    limit,
  );
}

// ---- the runner's claim

const DEFAULT_LEASE_MS = 60_000;

/** A claimed job's row (what its handler gets: src/platform/jobs.ts). */
export interface JobRow {
  id: bigint;
  merchantId: string;
  kind: string;
  payload: Record<string, unknown>;
  runAt: Date;
  attempts: number;
  /** the W3C traceparent of the request that enqueued it, when tracing was on (src/platform/tracing.ts) */
  traceParent?: string | null;
}

/** A claimed job's row with its merchant's mode and clock (offset and park, read with it). */
export interface ClaimedRow extends JobRow {
  mode: string;
  clockOffsetMs: bigint;
  clockParkedUntil: Date | null;
}

export interface ClaimOptions {
  limit: number;
  kinds: string[];
  /** one merchant only, due up to `asOf` on its clock (clock advance) */
  merchantId?: string;
  /** only these merchants' jobs (a worker serving a subset of merchants, e.g. one test app's) */
  merchantIds?: string[];
  asOf?: Date;
  leaseMs?: number;
  /** at most this many jobs in flight per merchant (default: no cap but `limit`) */
  perMerchant?: number;
  /** jobs in flight in this process per merchant (they count against its share) */
  inFlight?: ReadonlyMap<string, number>;
  /**
   * The lane's slots (the worker's): with it, a merchant's share is
   * min(perMerchant, max(1, floor(concurrency / (merchants with work + 1)))), and one share of
   * the free slots is kept for merchants with nothing in flight. Without it: `perMerchant`.
   */
  concurrency?: number;
}

/** The claim's statement and its parameters (claimJobRows runs it; a test reads its plan). */
export function claimStatement(opts: ClaimOptions): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const $ = (v: unknown) => `$${params.push(v)}`;
  const open = `j.status IN ('pending', 'running')`;
  const first = (merchant: string) =>
    `CROSS JOIN LATERAL (SELECT j.kind, j.merchant_id, j.run_at FROM jobs j WHERE j.kind = k.kind AND j.merchant_id = ${merchant} AND ${open} ORDER BY j.run_at LIMIT 1) f`;
  const kinds = $(opts.kinds);
  const pairs = opts.merchantId
    ? `SELECT f.kind, f.merchant_id, f.run_at FROM unnest((SELECT ${kinds}::text[])) AS k(kind) ${first(`${$(opts.merchantId)}::text`)}`
    : opts.merchantIds
      ? `SELECT f.kind, f.merchant_id, f.run_at FROM unnest((SELECT ${kinds}::text[])) AS k(kind) CROSS JOIN unnest((SELECT ${$(opts.merchantIds)}::text[])) AS s(merchant_id) ${first('s.merchant_id')}`
      : // a skip scan: each step one probe, jumping to the next merchant with open jobs of the
        // kind (and its earliest), however many jobs the last one has queued
        `SELECT f.kind, f.merchant_id, f.run_at FROM unnest((SELECT ${kinds}::text[])) AS k(kind)
           CROSS JOIN LATERAL (SELECT j.kind, j.merchant_id, j.run_at FROM jobs j WHERE j.kind = k.kind AND ${open} ORDER BY j.merchant_id, j.run_at LIMIT 1) f
         UNION ALL
         SELECT f.kind, f.merchant_id, f.run_at FROM pairs p
           CROSS JOIN LATERAL (SELECT j.kind, j.merchant_id, j.run_at FROM jobs j WHERE j.kind = p.kind AND j.merchant_id > p.merchant_id AND ${open}
             ORDER BY j.merchant_id, j.run_at LIMIT 1) f`;
  const inFlight = [...(opts.inFlight ?? new Map<string, number>())].filter(([, n]) => n > 0);
  const cap = $(opts.perMerchant ?? opts.limit);
  const concurrency = $(opts.concurrency ?? null);
  const limit = $(opts.limit);
  const text = `WITH RECURSIVE pairs AS (
      ${pairs}
    ), busy AS (
      SELECT b.merchant_id, b.n FROM unnest((SELECT ${$(inFlight.map(([id]) => id))}::text[]), (SELECT ${$(inFlight.map(([, n]) => n))}::int[])) AS b(merchant_id, n)
    ), ready AS (
      SELECT p.kind, p.merchant_id, m.mode, m.clock_offset_ms, m.clock_parked_until, d.due_at
      FROM pairs p JOIN merchants m ON m.id = p.merchant_id
        CROSS JOIN LATERAL (SELECT coalesce(${$(opts.asOf ?? null)}::timestamptz, ${billingNowSql('m')}) AS due_at) d
      WHERE p.run_at <= d.due_at
    ), share AS (
      SELECT CASE WHEN ${concurrency}::int IS NULL THEN ${cap}::int ELSE least(${cap}::int, greatest(1, ${concurrency}::int / (count(*) + 1)))::int END AS s,
        ${concurrency}::int IS NOT NULL AS keep
      FROM (SELECT merchant_id FROM ready UNION SELECT merchant_id FROM busy) w
    ), cand AS (
      SELECT c.id, c.run_at, r.merchant_id, r.mode, r.clock_offset_ms, r.clock_parked_until, coalesce(b.n, 0) AS n
      FROM ready r CROSS JOIN share LEFT JOIN busy b ON b.merchant_id = r.merchant_id
      CROSS JOIN LATERAL (
        SELECT j.id, j.run_at FROM jobs j
        WHERE j.kind = r.kind AND j.merchant_id = r.merchant_id AND ${open} AND j.run_at <= r.due_at
          AND (j.status = 'pending' OR j.locked_until < now())
        ORDER BY j.run_at, j.id
        LIMIT least(greatest(share.s - coalesce(b.n, 0), 0), ${limit}::int)
        FOR UPDATE OF j SKIP LOCKED
      ) c
    ), leveled AS (
      SELECT cand.*, cand.n + row_number() OVER (PARTITION BY cand.merchant_id ORDER BY cand.run_at, cand.id) AS lvl FROM cand
    ), ranked AS (
      SELECT leveled.*, row_number() OVER (ORDER BY leveled.lvl, leveled.id) AS k FROM leveled
    ), picked AS (
      SELECT ranked.id, ranked.mode, ranked.clock_offset_ms, ranked.clock_parked_until FROM ranked CROSS JOIN share
      WHERE ranked.lvl <= share.s
        AND ranked.k <= ${limit}::int - CASE WHEN share.keep AND ranked.lvl > 1 THEN share.s ELSE 0 END
    )
    UPDATE jobs SET status = 'running', locked_until = now() + make_interval(secs => ${$((opts.leaseMs ?? DEFAULT_LEASE_MS) / 1000)}::float8),
      attempts = jobs.attempts + 1, updated_at = now()
    FROM picked WHERE jobs.id = picked.id
    RETURNING jobs.id, jobs.merchant_id, jobs.kind, jobs.payload, jobs.run_at, jobs.attempts, jobs.trace_parent, picked.mode, picked.clock_offset_ms, picked.clock_parked_until`;
  return { text, params };
}

/**
 * Claims up to `limit` due jobs (all merchants, or one merchant up to `asOf` on its clock): their
 * rows, in no particular order.
 *
 * Fairly, whatever the merchants' backlogs and clocks. One statement:
 *  1. the (kind, merchant) pairs with unfinished jobs, by a skip scan of the partial index on
 *     (kind, merchant_id, run_at, id) of pending and running jobs: one probe per pair, each giving
 *     the pair's earliest job; a merchant has due work when that job is due on its own clock
 *     (`run_at <= now() + its clock offset`, or `asOf`; a parked clock stands still, so what an
 *     unfinished clock advance still has to run is not due: billingNowSql);
 *  2. the share: the merchants with due work or jobs in flight here are `n`, a merchant's share is
 *     min(perMerchant, max(1, floor(concurrency / (n + 1)))) — it shrinks as more merchants wait,
 *     and n shares leave one free for the next merchant;
 *  3. each merchant's first due jobs up to its room (share − in flight), from its own index range
 *     (FOR UPDATE SKIP LOCKED): a merchant with one due job is always seen, however many jobs
 *     others have queued before it;
 *  4. round-robin, least loaded first: a job's level is its merchant's jobs in flight + its rank
 *     among them; lower levels first (ties by job id: creation order, the same for every clock). The
 *     claim leaves one share of the free slots unclaimed except for merchants' first job when they
 *     have nothing in flight, so a merchant that starts having work always finds a slot.
 */
export function claimJobRows(prisma: PrismaClient, opts: ClaimOptions): Promise<ClaimedRow[]> {
  // One raw statement (it runs before every batch of deliveries); its text varies only with the
  // merchant scope, so each variant is prepared once per connection. Status values are literals:
  // the partial index's predicate must be provable from the statement, also in a generic plan.
  // Arrays are read through sub-selects, so a plan's estimates do not depend on their lengths:
  // PostgreSQL then keeps the cached generic plan (~0.2 ms a claim) instead of planning each
  // claim anew (~0.7 ms), which it did while a custom plan looked cheaper for a 1-kind array.
  const { text, params } = claimStatement(opts);
  return rawQueryOf(prisma)<ClaimedRow>(text, params);
}

// ---- a claimed job's outcome

/** Finished jobs of one merchant that this runner holds (status running), in one statement of the caller's transaction (a batch marks its jobs done with its work). */
export async function markJobsDone(q: RawQuery, merchantId: string, ids: bigint[]): Promise<bigint[]> {
  if (ids.length === 0) return [];
  const rows = await merchantSql(q, merchantId)<{ id: bigint }>(
    `UPDATE jobs SET status = 'done', locked_until = NULL, last_error = NULL, updated_at = now() WHERE merchant_id = $1 AND id = ANY($2::bigint[]) AND status = 'running' RETURNING id`,
    [ids],
  );
  return rows.map((r) => BigInt(r.id));
}

/**
 * Marks a running job done in the caller's transaction, locking its row until the caller commits:
 * true when it was running, false when it is not (finished by another run, cancelled). A handler
 * that writes its work in the same transaction does it once, whatever the number of runs.
 */
export async function completeRunningJobIn(db: Db, merchantId: string, id: bigint): Promise<boolean> {
  const rows = await merchantSql(rawQuery(db), merchantId)(
    `UPDATE jobs SET status = 'done', locked_until = NULL, last_error = NULL, updated_at = now() WHERE merchant_id = $1 AND id = $2 AND status = 'running' RETURNING id`,
    [id],
  );
  return rows.length === 1;
}

/** A finished job: one raw statement (the hot path of every webhook delivery), on `db`'s pool. */
export function markJobDone(db: TenantDb, merchantId: string, id: bigint) {
  return merchantSql(rawQueryOf(db), merchantId)(
    `UPDATE jobs SET status = 'done', locked_until = NULL, last_error = NULL, updated_at = now() WHERE merchant_id = $1 AND id = $2 AND status = 'running'`,
    [id],
  );
}

/** A running job back to pending at `runAt`, its attempt not counted (deferred). */
export async function deferRunningJob(prisma: PrismaClient, id: bigint, runAt: Date): Promise<void> {
  await prisma.job.updateMany({
    where: { id, status: 'running' },
    data: { status: 'pending', runAt, lockedUntil: null, attempts: { decrement: 1 } },
  });
}

/** Claimed jobs that were not run after all back to pending, as they were (a clock advance that stopped part-way through a batch's leftovers). */
export async function releaseClaimedJobs(prisma: PrismaClient, ids: bigint[]): Promise<void> {
  if (ids.length === 0) return;
  await prisma.job.updateMany({ where: { id: { in: ids }, status: 'running' }, data: { status: 'pending', lockedUntil: null, attempts: { decrement: 1 } } });
}

/** A running job back to pending at `runAt` after a failure. */
export async function retryRunningJob(prisma: PrismaClient, id: bigint, runAt: Date, lastError: string): Promise<void> {
  await prisma.job.updateMany({ where: { id, status: 'running' }, data: { status: 'pending', runAt, lockedUntil: null, lastError } });
}

/** A job that failed for good, pending again at `runAt` with its attempts reset (jobs.ts rerunFailedJob); how many (0 or 1). */
export async function rerunFailed(db: Db, job: { kind: string; key: string }, runAt: Date): Promise<number> {
  const r = await db.job.updateMany({ where: { kind: job.kind, key: job.key, status: 'failed' }, data: { status: 'pending', runAt, attempts: 0, lockedUntil: null } });
  return r.count;
}

/** A running job failed for good. */
export async function failRunningJob(prisma: PrismaClient, id: bigint, lastError: string): Promise<void> {
  await prisma.job.updateMany({ where: { id, status: 'running' }, data: { status: 'failed', lockedUntil: null, lastError } });
}

// ---- a merchant's due work (the clock advance)

/** A merchant's jobs of `kinds` not run yet (pending, or running somewhere) that are due by asOf. */
function dueWhere(merchantId: string, asOf: Date, kinds: string[]) {
  return { merchantId, status: { in: ['running', 'pending'] }, runAt: { lte: asOf }, kind: { in: kinds } };
}

export function countDueJobs(prisma: PrismaClient, merchantId: string, asOf: Date, kinds: string[]): Promise<number> {
  return prisma.job.count({ where: dueWhere(merchantId, asOf, kinds) });
}

/** The earliest of them: its due time. */
export function findEarliestDueJob(prisma: PrismaClient, merchantId: string, asOf: Date, kinds: string[]): Promise<{ runAt: Date } | null> {
  return prisma.job.findFirst({ where: dueWhere(merchantId, asOf, kinds), orderBy: { runAt: 'asc' }, select: { runAt: true } });
}

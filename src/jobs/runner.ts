// Claims due jobs with FOR UPDATE SKIP LOCKED, runs their handlers, and records the outcome.
// A claim is a lease: a job whose runner died is claimed again when the lease expires, so every
// job runs at least once; handlers are written to be idempotent.
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { Ctx, Runtime } from '../platform/context.ts';
import type { Logger } from '../platform/logger.ts';
import { forMerchant } from '../platform/db/tenant.ts';
import { billingNowSql, billingTime, Clock, readClock } from '../platform/clock.ts';
import { merchantSql, rawQueryOf } from '../platform/db/raw.ts';
import { DeferJob, JOB_COMPLETED, type JobRegistry, type JobRow } from '../platform/jobs.ts';

const DEFAULT_RETRIES = [5_000, 30_000, 300_000];
const DEFAULT_LEASE_MS = 60_000;

interface ClaimedRow extends JobRow {
  mode: string;
  clockOffsetMs: bigint;
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

/** The claim's statement and its parameters (claimDueJobs runs it; a test reads its plan). */
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
      SELECT p.kind, p.merchant_id, m.mode, m.clock_offset_ms, d.due_at
      FROM pairs p JOIN merchants m ON m.id = p.merchant_id
        CROSS JOIN LATERAL (SELECT coalesce(${$(opts.asOf ?? null)}::timestamptz, ${billingNowSql('m')}) AS due_at) d
      WHERE p.run_at <= d.due_at
    ), share AS (
      SELECT CASE WHEN ${concurrency}::int IS NULL THEN ${cap}::int ELSE least(${cap}::int, greatest(1, ${concurrency}::int / (count(*) + 1)))::int END AS s,
        ${concurrency}::int IS NOT NULL AS keep
      FROM (SELECT merchant_id FROM ready UNION SELECT merchant_id FROM busy) w
    ), cand AS (
      SELECT c.id, c.run_at, r.merchant_id, r.mode, r.clock_offset_ms, coalesce(b.n, 0) AS n
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
      SELECT ranked.id, ranked.mode, ranked.clock_offset_ms FROM ranked CROSS JOIN share
      WHERE ranked.lvl <= share.s
        AND ranked.k <= ${limit}::int - CASE WHEN share.keep AND ranked.lvl > 1 THEN share.s ELSE 0 END
    )
    UPDATE jobs SET status = 'running', locked_until = now() + make_interval(secs => ${$((opts.leaseMs ?? DEFAULT_LEASE_MS) / 1000)}::float8),
      attempts = jobs.attempts + 1, updated_at = now()
    FROM picked WHERE jobs.id = picked.id
    RETURNING jobs.id, jobs.merchant_id, jobs.kind, jobs.payload, jobs.run_at, jobs.attempts, picked.mode, picked.clock_offset_ms`;
  return { text, params };
}

/**
 * Claims up to `limit` due jobs (all merchants, or one merchant up to `asOf` on its clock).
 *
 * Fairly, whatever the merchants' backlogs and clocks. One statement:
 *  1. the (kind, merchant) pairs with unfinished jobs, by a skip scan of the partial index on
 *     (kind, merchant_id, run_at, id) of pending and running jobs: one probe per pair, each giving
 *     the pair's earliest job; a merchant has due work when that job is due on its own clock
 *     (`run_at <= now() + its clock offset`, or `asOf`);
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
export async function claimDueJobs(prisma: PrismaClient, opts: ClaimOptions): Promise<(JobRow & { mode: 'test' | 'live'; clockOffsetMs?: bigint })[]> {
  if (opts.kinds.length === 0 || opts.limit <= 0) return [];
  // One raw statement (it runs before every batch of deliveries); its text varies only with the
  // merchant scope, so each variant is prepared once per connection. Status values are literals:
  // the partial index's predicate must be provable from the statement, also in a generic plan.
  // Arrays are read through sub-selects, so a plan's estimates do not depend on their lengths:
  // PostgreSQL then keeps the cached generic plan (~0.2 ms a claim) instead of planning each
  // claim anew (~0.7 ms), which it did while a custom plan looked cheaper for a 1-kind array.
  const { text, params } = claimStatement(opts);
  const rows = await rawQueryOf(prisma)<ClaimedRow>(text, params);
  return rows
    .map((r) => ({
      id: r.id,
      merchantId: r.merchantId,
      kind: r.kind,
      payload: r.payload,
      runAt: r.runAt,
      attempts: r.attempts,
      mode: (r.mode === 'live' ? 'live' : 'test') as 'test' | 'live',
      clockOffsetMs: r.clockOffsetMs,
    }))
    .sort((a, b) => a.runAt.getTime() - b.runAt.getTime() || (a.id < b.id ? -1 : 1));
}

/** A finished job: one raw statement (the hot path of every webhook delivery). */
function markDone(runtime: Runtime, job: JobRow) {
  // On the merchant's client, like the job's own statements: the raw pool's connection keeps
  // serving that merchant (row-level security) instead of switching back to system work.
  return merchantSql(rawQueryOf(forMerchant(runtime.prisma, job.merchantId)), job.merchantId)(
    `UPDATE jobs SET status = 'done', locked_until = NULL, last_error = NULL, updated_at = now() WHERE merchant_id = $1 AND id = $2 AND status = 'running'`,
    [job.id],
  );
}

/** Runs one claimed job and records done / retry / failed. Throws only when the outcome cannot be recorded (the database is gone); the lease then brings the job back. */
export async function runJob(
  runtime: Runtime,
  log: Logger,
  job: JobRow & { mode: 'test' | 'live'; clockOffsetMs?: bigint },
  simulatedNow?: Date,
): Promise<'done' | 'retry' | 'failed' | 'deferred'> {
  const { prisma, jobs: registry } = runtime;
  const def = registry.get(job.kind);
  const merchant = { id: job.merchantId, mode: job.mode };
  const jlog = log.child({ job_id: String(job.id), job_kind: job.kind, merchant_id: job.merchantId });
  // The claim read the merchant's clock offset with the job: no query for the time.
  // Inside a job the clock is frozen at the time it runs at: its due time when a clock advance runs
  // it, the clock's now at the claim otherwise.
  const now = simulatedNow ?? (job.clockOffsetMs !== undefined ? billingTime(job.mode, job.clockOffsetMs) : await readClock(prisma, merchant));
  try {
    if (!def) throw new Error(`no handler for job kind ${job.kind}`);
    const ctx = { merchant, db: forMerchant(prisma, job.merchantId), requestId: `job_${job.id}`, log: jlog, runtime, clock: Clock.frozen(merchant, now) };
    if ((await def.run(ctx, job)) !== JOB_COMPLETED) await markDone(runtime, job);
    return 'done';
  } catch (err) {
    if (err instanceof DeferJob) {
      await prisma.job.updateMany({
        where: { id: job.id, status: 'running' },
        data: { status: 'pending', runAt: new Date(now.getTime() + err.delayMs), lockedUntil: null, attempts: { decrement: 1 } },
      });
      return 'deferred';
    }
    const delays = def?.retryDelaysMs ?? DEFAULT_RETRIES;
    const message = err instanceof Error ? err.message : String(err);
    if (def && job.attempts <= delays.length) {
      const runAt = new Date(now.getTime() + delays[job.attempts - 1]!);
      await prisma.job.updateMany({ where: { id: job.id, status: 'running' }, data: { status: 'pending', runAt, lockedUntil: null, lastError: message.slice(0, 2000) } });
      jlog.warn({ err: message, attempts: job.attempts, retry_at: runAt.toISOString() }, 'job failed; will retry');
      return 'retry';
    }
    await prisma.job.updateMany({ where: { id: job.id, status: 'running' }, data: { status: 'failed', lockedUntil: null, lastError: message.slice(0, 2000) } });
    jlog.error({ err: message, attempts: job.attempts }, 'job failed for good');
    return 'failed';
  }
}

/**
 * Runs, in due order, every job of one merchant that is due at `asOf` on its clock, including
 * jobs that the work itself makes due by then (a renewal scheduling the next one, a retry).
 * Each job runs at its own due time, as if the clock had passed through it.
 */
export async function runDueJobsFor(
  runtime: Runtime,
  log: Logger,
  merchantId: string,
  asOf: Date,
  opts: {
    maxJobs?: number;
    budgetMs?: number;
    /** at most this many jobs a second (a second's worth at once, then paced); default: no limit */
    jobsPerSecond?: number;
    /** checked before each job: true stops the run (e.g. the advance lost its lease) */
    stop?: () => boolean;
  } = {},
): Promise<{ ran: number; complete: boolean }> {
  const maxJobs = opts.maxJobs ?? 10_000;
  let ran = 0;
  // Bounded: an advance stops after two minutes (or the job limit) rather than hanging the request.
  const waitUntil = Date.now() + (opts.budgetMs ?? 120_000);
  const pace = pacer(opts.jobsPerSecond);
  while (ran < maxJobs && Date.now() <= waitUntil && !opts.stop?.()) {
    const batch = await claimDueJobs(runtime.prisma, { limit: 1, kinds: runtime.jobs.names(), merchantId, asOf });
    const job = batch[0];
    if (job) {
      const outcome = await runJob(runtime, log, job, job.runAt.getTime() <= asOf.getTime() ? job.runAt : asOf);
      if (outcome === 'deferred') await new Promise((r) => setTimeout(r, 50));
      else ran++;
      await pace();
      continue;
    }
    // Due work that a background worker is running right now: wait for it, since it may retry
    // or make more work due before asOf. Pending due work counts too: a job released between the
    // claim above and this count (running → pending) must be claimed on the next turn, not left.
    if ((await dueJobs(runtime, merchantId, asOf)) === 0) return { ran, complete: true };
    await new Promise((r) => setTimeout(r, 25));
  }
  const complete = (await dueJobs(runtime, merchantId, asOf)) === 0;
  if (!complete) log.warn({ merchant_id: merchantId, ran }, 'clock advance stopped before all due work ran (time or job limit)');
  return { ran, complete };
}

/**
 * Between two jobs of a clock advance: waits as long as `perSecond` requires (a token bucket that
 * holds one second's worth, so a small advance is not slowed at all), and otherwise still lets the
 * event loop take its turn (setImmediate), so other requests are served between jobs.
 */
function pacer(perSecond: number | undefined): () => Promise<void> {
  const rate = perSecond && Number.isFinite(perSecond) && perSecond > 0 ? perSecond : Infinity;
  let tokens = rate;
  let at = Date.now();
  return async () => {
    const now = Date.now();
    tokens = Math.min(rate, tokens + ((now - at) * rate) / 1000) - 1;
    at = now;
    const wait = tokens >= 0 ? 0 : Math.ceil((-tokens * 1000) / rate);
    if (wait <= 0) return new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, wait));
  };
}

/** A merchant's jobs not run yet (pending, or running somewhere) that are due by asOf. */
function dueWhere(runtime: Runtime, merchantId: string, asOf: Date) {
  return { merchantId, status: { in: ['running', 'pending'] }, runAt: { lte: asOf }, kind: { in: runtime.jobs.names() } };
}

function dueJobs(runtime: Runtime, merchantId: string, asOf: Date): Promise<number> {
  return runtime.prisma.job.count({ where: dueWhere(runtime, merchantId, asOf) });
}

/** The due time of the earliest job of a merchant not run yet (pending or running), up to asOf. */
export async function earliestDue(runtime: Runtime, merchantId: string, asOf: Date): Promise<Date | null> {
  const j = await runtime.prisma.job.findFirst({ where: dueWhere(runtime, merchantId, asOf), orderBy: { runAt: 'asc' }, select: { runAt: true } });
  return j?.runAt ?? null;
}

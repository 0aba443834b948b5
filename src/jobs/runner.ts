// Claims due jobs with FOR UPDATE SKIP LOCKED, runs their handlers, and records the outcome.
// A claim is a lease: a job whose runner died is claimed again when the lease expires, so every
// job runs at least once; handlers are written to be idempotent.
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { Ctx, Runtime } from '../platform/context.ts';
import type { Logger } from '../platform/logger.ts';
import { forMerchant } from '../platform/db/tenant.ts';
import { billingTime, merchantNow } from '../domain/clock/index.ts';
import { merchantSql, rawQueryOf } from '../platform/db/raw.ts';
import { DeferJob } from './queue.ts';

export interface JobRow {
  id: bigint;
  merchantId: string;
  kind: string;
  payload: Record<string, unknown>;
  runAt: Date;
  attempts: number;
}

/** What a handler returns when its own last statement already marked the job done. */
export const JOB_COMPLETED = 'completed' as const;

export interface JobKind {
  /**
   * Does the work. `ctx.at` is the time it happens at on the merchant's clock (the job's due
   * time during a clock advance, the clock's now otherwise).
   */
  run(ctx: Ctx & { at: Date }, job: JobRow): Promise<void | typeof JOB_COMPLETED>;
  /** delays before retrying after a failure; the job fails for good after the last */
  retryDelaysMs?: number[];
  /** how long a claim lasts before another runner may take the job over */
  leaseMs?: number;
  /**
   * The worker lane that runs it: `internal` (expiries, refunds settling … the default) or
   * `deliveries` (webhook sends: slow I/O that must never hold up internal work).
   */
  lane?: Lane;
}

export type Lane = 'internal' | 'deliveries';

const DEFAULT_RETRIES = [5_000, 30_000, 300_000];
const DEFAULT_LEASE_MS = 60_000;

export class JobRegistry {
  private kinds = new Map<string, JobKind>();
  register(kind: string, def: JobKind) {
    this.kinds.set(kind, def);
    return this;
  }
  get(kind: string) {
    return this.kinds.get(kind);
  }
  /** The kinds this process can run: it never claims others (e.g. during a rolling upgrade). */
  names(): string[] {
    return [...this.kinds.keys()];
  }
  /** The kinds run by one lane of the worker. */
  namesIn(lane: Lane): string[] {
    return [...this.kinds].filter(([, def]) => (def.lane ?? 'internal') === lane).map(([name]) => name);
  }
}

interface ClaimedRow {
  id: bigint;
  merchantId: string;
  kind: string;
  payload: Record<string, unknown>;
  runAt: Date;
  attempts: number;
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
  /** at most this many jobs per merchant in one claim (fair claiming; default: no cap) */
  perMerchant?: number;
  /** merchants that may get fewer than `perMerchant` (jobs already in flight here); 0 = none */
  room?: Map<string, number>;
}

/**
 * Claims up to `limit` due jobs (all merchants, or one merchant up to `asOf` on its clock).
 *
 * Fairly: the due jobs are taken oldest first from a bounded window (FOR UPDATE SKIP LOCKED),
 * merchants with no room left are skipped in the scan, and within the window each merchant's jobs
 * are ranked (row_number per merchant); the claim takes every merchant's first job, then every
 * merchant's second, and so on, each merchant up to its room. So one merchant's backlog cannot fill
 * a batch, and a merchant at its cap cannot occupy the window.
 */
export async function claimDueJobs(prisma: PrismaClient, opts: ClaimOptions): Promise<(JobRow & { mode: 'test' | 'live'; clockOffsetMs?: bigint })[]> {
  if (opts.kinds.length === 0 || opts.limit <= 0) return [];
  // One raw statement (it runs before every batch of deliveries); its text varies only with which
  // optional filters are present, so each variant is prepared once per connection.
  const params: unknown[] = [];
  const $ = (v: unknown) => `$${params.push(v)}`;
  const due = opts.asOf ? `j.run_at <= ${$(opts.asOf)}` : `j.run_at <= now() + m.clock_offset_ms * interval '1 millisecond'`;
  const scope = opts.merchantId ? `AND j.merchant_id = ${$(opts.merchantId)}` : opts.merchantIds ? `AND j.merchant_id = ANY(${$(opts.merchantIds)}::text[])` : '';
  const room = [...(opts.room ?? new Map<string, number>())];
  const full = room.filter(([, r]) => r <= 0).map(([id]) => id);
  const partial = room.filter(([, r]) => r > 0);
  const skip = full.length > 0 ? `AND NOT (j.merchant_id = ANY(${$(full)}::text[]))` : '';
  const cap = opts.perMerchant ?? opts.limit;
  const lease = (opts.leaseMs ?? DEFAULT_LEASE_MS) / 1000;
  const window = Math.max(opts.limit * 4, 100);
  const rows = await rawQueryOf(prisma)<ClaimedRow>(
    `WITH cand AS (
      SELECT j.id, j.merchant_id, j.run_at, m.mode, m.clock_offset_ms FROM jobs j JOIN merchants m ON m.id = j.merchant_id
      WHERE ((j.status = 'pending' AND ${due}) OR (j.status = 'running' AND j.locked_until < now() AND ${due}))
        AND j.kind = ANY(${$(opts.kinds)}::text[]) ${scope} ${skip}
      ORDER BY j.run_at, j.id
      LIMIT ${$(window)}::int
      FOR UPDATE OF j SKIP LOCKED
    ), ranked AS (
      SELECT c.id, c.mode, c.clock_offset_ms, c.run_at, row_number() OVER (PARTITION BY c.merchant_id ORDER BY c.run_at, c.id) AS rn,
        coalesce(r.room, ${$(cap)}::int) AS room
      FROM cand c LEFT JOIN unnest(${$(partial.map(([id]) => id))}::text[], ${$(partial.map(([, r]) => r))}::int[]) AS r(merchant_id, room)
        ON r.merchant_id = c.merchant_id
    ), picked AS (
      SELECT id, mode, clock_offset_ms FROM ranked WHERE rn <= room ORDER BY rn, run_at, id LIMIT ${$(opts.limit)}::int
    )
    UPDATE jobs SET status = 'running', locked_until = now() + make_interval(secs => ${$(lease)}::float8),
      attempts = jobs.attempts + 1, updated_at = now()
    FROM picked WHERE jobs.id = picked.id
    RETURNING jobs.id, jobs.merchant_id, jobs.kind, jobs.payload, jobs.run_at, jobs.attempts, picked.mode, picked.clock_offset_ms`,
    params,
  );
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
  return merchantSql(rawQueryOf(runtime.prisma), job.merchantId)(
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
  const now = simulatedNow ?? (job.clockOffsetMs !== undefined ? billingTime(job.mode, job.clockOffsetMs) : await merchantNow(prisma, merchant));
  try {
    if (!def) throw new Error(`no handler for job kind ${job.kind}`);
    const ctx = { merchant, db: forMerchant(prisma, job.merchantId), requestId: `job_${job.id}`, log: jlog, runtime, at: now };
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
  opts: { maxJobs?: number; budgetMs?: number } = {},
): Promise<{ ran: number; complete: boolean }> {
  const maxJobs = opts.maxJobs ?? 10_000;
  let ran = 0;
  // Bounded: an advance stops after two minutes (or the job limit) rather than hanging the request.
  const waitUntil = Date.now() + (opts.budgetMs ?? 120_000);
  while (ran < maxJobs && Date.now() <= waitUntil) {
    const batch = await claimDueJobs(runtime.prisma, { limit: 1, kinds: runtime.jobs.names(), merchantId, asOf });
    const job = batch[0];
    if (job) {
      const outcome = await runJob(runtime, log, job, job.runAt.getTime() <= asOf.getTime() ? job.runAt : asOf);
      if (outcome === 'deferred') await new Promise((r) => setTimeout(r, 50));
      else ran++;
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

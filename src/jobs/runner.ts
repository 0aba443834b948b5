// Claims due jobs with FOR UPDATE SKIP LOCKED, runs their handlers, and records the outcome.
// A claim is a lease: a job whose runner died is claimed again when the lease expires, so every
// job runs at least once; handlers are written to be idempotent.
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { Ctx, Runtime } from '../platform/context.ts';
import type { Logger } from '../platform/logger.ts';
import { inSpan, linkTo, SpanKind, SpanStatusCode, tracingEnabled } from '../platform/tracing.ts';
import { forMerchant } from '../platform/db/tenant.ts';
import { billingTime, Clock, readClock } from '../platform/clock.ts';
import { DeferJob, JOB_COMPLETED, JobCannotRun, type JobRegistry, type JobRow } from '../platform/jobs.ts';
import {
  claimJobRows,
  countDueJobs,
  deferRunningJob,
  failRunningJob,
  findEarliestDueJob,
  markJobDone,
  releaseClaimedJobs,
  retryRunningJob,
  type ClaimOptions,
} from '../platform/jobs.store.ts';

export type { ClaimOptions };

const DEFAULT_RETRIES = [5_000, 30_000, 300_000];

/**
 * Claims up to `limit` due jobs (all merchants, or one merchant up to `asOf` on its clock), fairly
 * whatever the merchants' backlogs and clocks (one statement: claimJobRows, src/platform/jobs.store.ts),
 * in due order.
 */
export async function claimDueJobs(prisma: PrismaClient, opts: ClaimOptions): Promise<(JobRow & { mode: 'test' | 'live'; clockOffsetMs?: bigint; clockParkedUntil?: Date | null })[]> {
  if (opts.kinds.length === 0 || opts.limit <= 0) return [];
  const rows = await claimJobRows(prisma, opts);
  return rows
    .map((r) => ({
      id: r.id,
      merchantId: r.merchantId,
      kind: r.kind,
      payload: r.payload,
      runAt: r.runAt,
      attempts: r.attempts,
      traceParent: r.traceParent,
      mode: (r.mode === 'live' ? 'live' : 'test') as 'test' | 'live',
      clockOffsetMs: r.clockOffsetMs,
      clockParkedUntil: r.clockParkedUntil,
    }))
    .sort((a, b) => a.runAt.getTime() - b.runAt.getTime() || (a.id < b.id ? -1 : 1));
}

/** The merchant's clock when a claimed job runs in the worker: from the clock the claim read with it (no query), else read. */
async function claimTime(runtime: Runtime, job: Claimed): Promise<Date> {
  return job.clockOffsetMs !== undefined
    ? billingTime(job.mode, job.clockOffsetMs, undefined, Date.now(), job.clockParkedUntil)
    : readClock(runtime.prisma, { id: job.merchantId, mode: job.mode });
}

/** A finished job: one raw statement (the hot path of every webhook delivery). */
function markDone(runtime: Runtime, job: JobRow) {
  // On the merchant's client, like the job's own statements: the raw pool's connection keeps
  // serving that merchant (row-level security) instead of switching back to system work.
  return markJobDone(forMerchant(runtime.prisma, job.merchantId), job.merchantId, job.id);
}

/** Runs one claimed job and records done / retry / failed. Throws only when the outcome cannot be recorded (the database is gone); the lease then brings the job back. */
export function runJob(
  runtime: Runtime,
  log: Logger,
  job: JobRow & { mode: 'test' | 'live'; clockOffsetMs?: bigint; clockParkedUntil?: Date | null },
  simulatedNow?: Date,
): Promise<'done' | 'retry' | 'failed' | 'deferred'> {
  if (!tracingEnabled()) return runJobAlone(runtime, log, job, simulatedNow);
  // A trace of its own, linked to the request that enqueued the job (src/platform/tracing.ts).
  return inSpan(
    `job ${job.kind}`,
    { 'billing.job.kind': job.kind, 'billing.job.id': String(job.id), 'billing.merchant_id': job.merchantId, 'billing.job.attempt': job.attempts },
    async (span) => {
      const outcome = await runJobAlone(runtime, log, job, simulatedNow);
      span?.setAttribute('billing.job.outcome', outcome);
      if (outcome === 'failed' || outcome === 'retry') span?.setStatus({ code: SpanStatusCode.ERROR });
      return outcome;
    },
    { root: true, kind: SpanKind.CONSUMER, links: linkTo(job.traceParent) },
  );
}

async function runJobAlone(
  runtime: Runtime,
  log: Logger,
  job: JobRow & { mode: 'test' | 'live'; clockOffsetMs?: bigint; clockParkedUntil?: Date | null },
  simulatedNow?: Date,
): Promise<'done' | 'retry' | 'failed' | 'deferred'> {
  const { prisma, jobs: registry } = runtime;
  const def = registry.get(job.kind);
  const merchant = { id: job.merchantId, mode: job.mode };
  const jlog = log.child({ job_id: String(job.id), job_kind: job.kind, merchant_id: job.merchantId });
  // The claim read the merchant's clock offset with the job: no query for the time.
  // Inside a job the clock is frozen at the time it runs at: its due time when a clock advance runs
  // it, the clock's now at the claim otherwise.
  const now = simulatedNow ?? (await claimTime(runtime, job));
  try {
    if (!def) throw new Error(`no handler for job kind ${job.kind}`);
    const ctx = { merchant, db: forMerchant(prisma, job.merchantId), requestId: `job_${job.id}`, log: jlog, runtime, clock: Clock.frozen(merchant, now) };
    if ((await def.run(ctx, job)) !== JOB_COMPLETED) await markDone(runtime, job);
    return 'done';
  } catch (err) {
    if (err instanceof DeferJob) {
      await deferRunningJob(prisma, job.id, new Date(now.getTime() + err.delayMs));
      return 'deferred';
    }
    const delays = def?.retryDelaysMs ?? DEFAULT_RETRIES;
    const message = err instanceof Error ? err.message : String(err);
    if (def && job.attempts <= delays.length && !(err instanceof JobCannotRun)) {
      const runAt = new Date(now.getTime() + delays[job.attempts - 1]!);
      await retryRunningJob(prisma, job.id, runAt, message.slice(0, 2000));
      jlog.warn({ err: message, attempts: job.attempts, retry_at: runAt.toISOString() }, 'job failed; will retry');
      return 'retry';
    }
    await failRunningJob(prisma, job.id, message.slice(0, 2000));
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
    if (job && runtime.jobs.get(job.kind)?.batch) {
      // The jobs a batch leaves run alone, each paced and checked like any (stopped: the rest go back).
      const next = async () => {
        if (opts.stop?.() || Date.now() > waitUntil) return false;
        await pace();
        return true;
      };
      ran += await runBatchFrom(runtime, log, job, merchantId, asOf, next);
      await pace();
      continue;
    }
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
 * A clock advance's run of jobs of a kind that batches (JobKind.batch), from its earliest due job
 * (claimed): the jobs of that kind due up to `size` at once, within `spanMs` of the first and
 * before the earliest open job of any other internal kind (deliveries do not order billing work),
 * so that they run where they would have run one by one; each at its own due time. What the
 * batch leaves runs alone, the first of it at a time, and the rest goes back to the batch. If
 * the batch fails (its transaction rolled back), every job runs alone. How many jobs ran.
 */
async function runBatchFrom(runtime: Runtime, log: Logger, first: Claimed, merchantId: string, asOf: Date, next: () => Promise<boolean>): Promise<number> {
  const def = runtime.jobs.get(first.kind)!;
  const batch = def.batch!;
  const others = runtime.jobs.namesIn('internal').filter((k) => k !== first.kind);
  const earliest = others.length > 0 ? await findEarliestDueJob(runtime.prisma, merchantId, asOf, others) : null;
  const upTo = Math.min(asOf.getTime(), first.runAt.getTime() + batch.spanMs, earliest ? earliest.runAt.getTime() - 1 : Infinity);
  const more = batch.size > 1 && upTo >= first.runAt.getTime()
    ? await claimDueJobs(runtime.prisma, { limit: batch.size - 1, kinds: [first.kind], merchantId, asOf: new Date(upTo) })
    : [];
  return runBatch(runtime, log, [first, ...more], (j) => (j.runAt.getTime() <= asOf.getTime() ? j.runAt : asOf), next);
}

/**
 * The background worker's run of a job of a kind that batches (JobKind.batch): the merchant's due
 * jobs of that kind, up to `size` with this one, run together at the time of the claim (as each
 * would run alone: the worker runs a due job at the clock's now). How many jobs ran.
 */
export async function runWorkerBatch(runtime: Runtime, log: Logger, first: Claimed, leaseMs?: number, stopping: () => boolean = () => false): Promise<number> {
  const batch = runtime.jobs.get(first.kind)!.batch!;
  const now = await claimTime(runtime, first);
  const more = batch.size > 1 && !stopping() ? await claimDueJobs(runtime.prisma, { limit: batch.size - 1, kinds: [first.kind], merchantIds: [first.merchantId], leaseMs }) : [];
  // A worker stopping (graceful shutdown) runs no further leftovers one by one: they go back to pending.
  return runBatch(runtime, log, [first, ...more], () => now, async () => !stopping());
}

/**
 * Runs claimed jobs of one kind and merchant through their batch, each at `at(job)`; what the batch
 * leaves runs alone (JobKind.batch), each once `next` allows it (a clock advance's pace, its lease
 * and budget): when it says stop, the jobs not run go back to pending.
 */
async function runBatch(runtime: Runtime, log: Logger, jobs: Claimed[], at: (j: JobRow) => Date, next: () => Promise<boolean> = async () => true): Promise<number> {
  let ran = 0;
  const alone = async (list: Claimed[]): Promise<boolean> => {
    for (const [k, j] of list.entries()) {
      if (!(await next())) {
        await releaseClaimedJobs(runtime.prisma, list.slice(k).map((x) => x.id));
        return false;
      }
      await runJob(runtime, log, j, at(j));
      ran++;
    }
    return true;
  };
  const batch = runtime.jobs.get(jobs[0]!.kind)!.batch!;
  const merchantId = jobs[0]!.merchantId;
  let left: Claimed[] = jobs;
  while (left.length > 0) {
    if (left !== jobs && !(await next())) {
      await releaseClaimedJobs(runtime.prisma, left.map((x) => x.id));
      return ran;
    }
    const head = left[0]!;
    const merchant = { id: merchantId, mode: head.mode };
    const ctx = {
      merchant,
      db: forMerchant(runtime.prisma, merchantId),
      requestId: `job_${head.id}`,
      log: log.child({ job_id: String(head.id), job_kind: head.kind, merchant_id: merchantId, batch: left.length }),
      runtime,
      clock: Clock.frozen(merchant, at(head)),
    };
    let rest: Claimed[];
    try {
      const returned = new Set((await batch.run(ctx, left, at)).map((j) => j.id));
      rest = left.filter((j) => returned.has(j.id));
    } catch (err) {
      log.warn({ merchant_id: merchantId, err: err instanceof Error ? err.message : String(err), jobs: left.length }, 'job batch failed; running its jobs one by one');
      await alone(left);
      return ran;
    }
    ran += left.length - rest.length;
    if (rest.length === 0) break;
    if (batch.ordered === false) {
      await alone(rest);
      return ran;
    }
    // In due order: the first one left alone, then the rest back to the batch.
    if (!(await alone(rest.slice(0, 1)))) {
      await releaseClaimedJobs(runtime.prisma, rest.slice(1).map((x) => x.id));
      return ran;
    }
    left = rest.slice(1);
  }
  return ran;
}

type Claimed = Awaited<ReturnType<typeof claimDueJobs>>[number];

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

/** A merchant's jobs not run yet (pending, or running somewhere) that are due by asOf: of the kinds this process runs. */
function dueJobs(runtime: Runtime, merchantId: string, asOf: Date): Promise<number> {
  return countDueJobs(runtime.prisma, merchantId, asOf, runtime.jobs.names());
}

/** The due time of the earliest job of a merchant not run yet (pending or running), up to asOf. */
export async function earliestDue(runtime: Runtime, merchantId: string, asOf: Date): Promise<Date | null> {
  const j = await findEarliestDueJob(runtime.prisma, merchantId, asOf, runtime.jobs.names());
  return j?.runAt ?? null;
}

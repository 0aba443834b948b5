// The background worker: polls for due jobs (and wakes at once when this process enqueues one)
// and runs them in two lanes, each with its own slots, so slow webhook deliveries can never hold up
// internal work (checkout and credit expiry, refund settling):
//   - `internal`:   every kind registered without a lane, JOBS_CONCURRENCY slots;
//   - `deliveries`: webhook sends, WEBHOOK_CONCURRENCY slots (I/O: many can be in flight cheaply).
// Within a lane each merchant has a share of the slots that shrinks as more merchants have work
// (min(perMerchant, max(1, floor(concurrency / (merchants with work + 1))))), one share of the
// free slots is kept for merchants with nothing in flight, and claims are round-robin across
// merchants, least loaded first (claimDueJobs): any number of merchants with black-holed endpoints
// or backlogs cannot take every slot. The shares are per process. Several processes may run
// workers; SKIP LOCKED keeps them from taking the same job.
import type { Config } from '../platform/config.ts';
import type { Runtime } from '../platform/context.ts';
import type { Logger } from '../platform/logger.ts';
import { onWake } from '../platform/jobs.ts';
import type { Lane } from '../platform/jobs.ts';
import { releaseClaimedJobs } from '../platform/jobs.store.ts';
import { claimDueJobs, runJob, runWorkerBatch } from './runner.ts';

export interface LaneOptions {
  /** jobs of this lane in flight at once */
  concurrency: number;
  /** jobs of one merchant in flight at once in this lane, at most (its share is smaller when others have work) */
  perMerchant: number;
}

export interface WorkerOptions {
  pollMs?: number;
  leaseMs?: number;
  /** the internal lane (default 16 slots, 8 per merchant) */
  concurrency?: number;
  perMerchant?: number;
  /** the deliveries lane (default 64 slots, 32 per merchant) */
  deliveries?: Partial<LaneOptions>;
  /** serve only these merchants (read at every claim); default: all */
  merchants?: () => string[];
}

interface LaneState {
  name: Lane;
  opts: LaneOptions;
  running: number;
  byMerchant: Map<string, number>;
  ticking: boolean;
  again: boolean;
  /** asked for again by a job that finished (a slot is free): not held back by idleUntil */
  againNow: boolean;
  /** after a claim that found nothing: no claim before this (performance.now()) unless a slot was freed */
  idleUntil: number;
  /** the claim deferred until idleUntil */
  later?: NodeJS.Timeout;
}

/**
 * After a claim that found nothing, the lane's next claim for a wake or a poll waits this many
 * times as long as that claim took (a job finishing, which frees a slot, claims at once). A claim
 * walks every merchant with open jobs of the lane's kinds (one index probe each), and every
 * enqueue wakes both lanes: with many merchants, a lane with nothing to do would otherwise claim
 * back to back while the API writes. This keeps it to a fifth of one connection at most; with few
 * merchants a claim takes ~0.2 ms and the wait is under a millisecond.
 */
const IDLE_WAIT_FACTOR = 4;

/** The worker's options from the service configuration. */
export function workerOptions(config: Config): WorkerOptions {
  return {
    pollMs: config.JOBS_POLL_MS,
    leaseMs: config.JOBS_LEASE_MS,
    concurrency: config.JOBS_CONCURRENCY,
    perMerchant: config.JOBS_MERCHANT_CONCURRENCY,
    deliveries: { concurrency: config.WEBHOOK_CONCURRENCY, perMerchant: config.WEBHOOK_MERCHANT_CONCURRENCY },
  };
}

export function startWorker(runtime: Runtime, log: Logger, opts: WorkerOptions = {}) {
  const pollMs = opts.pollMs ?? 500;
  let stopped = false;
  /** the jobs running here, by the promise of their run */
  const inflight = new Map<Promise<unknown>, bigint>();
  const lanes: LaneState[] = (
    [
      ['internal', { concurrency: opts.concurrency ?? 16, perMerchant: opts.perMerchant ?? 8 }],
      ['deliveries', { concurrency: opts.deliveries?.concurrency ?? 64, perMerchant: opts.deliveries?.perMerchant ?? 32 }],
    ] as const
  ).map(([name, o]) => ({ name, opts: o, running: 0, byMerchant: new Map(), ticking: false, again: false, againNow: false, idleUntil: 0 }));

  const tick = async (lane: LaneState, slotFreed: boolean) => {
    // Read at every claim: kinds registered after the start are run too.
    const kinds = runtime.jobs.namesIn(lane.name);
    if (stopped || kinds.length === 0) return;
    if (lane.ticking) {
      lane.again = true;
      lane.againNow ||= slotFreed;
      return;
    }
    lane.ticking = true;
    try {
      do {
        lane.again = false;
        lane.againNow = false;
        const free = lane.opts.concurrency - lane.running;
        if (free <= 0) break;
        const started = performance.now();
        const jobs = await claimDueJobs(runtime.prisma, {
          limit: free,
          kinds,
          leaseMs: opts.leaseMs,
          perMerchant: lane.opts.perMerchant,
          concurrency: lane.opts.concurrency,
          inFlight: lane.byMerchant,
          merchantIds: opts.merchants?.(),
        });
        const now = performance.now();
        lane.idleUntil = jobs.length > 0 ? 0 : now + IDLE_WAIT_FACTOR * (now - started);
        for (const job of jobs) {
          lane.running++;
          lane.byMerchant.set(job.merchantId, (lane.byMerchant.get(job.merchantId) ?? 0) + 1);
          // A kind that batches takes the merchant's other due jobs of that kind along (JobKind.batch).
          const p = (runtime.jobs.get(job.kind)?.batch ? runWorkerBatch(runtime, log, job, opts.leaseMs, () => stopped) : runJob(runtime, log, job))
            .catch((err) => log.error({ err: err instanceof Error ? err.message : String(err), job_id: String(job.id) }, 'job outcome not recorded'))
            .finally(() => {
            lane.running--;
            const n = (lane.byMerchant.get(job.merchantId) ?? 1) - 1;
            if (n <= 0) lane.byMerchant.delete(job.merchantId);
            else lane.byMerchant.set(job.merchantId, n);
            inflight.delete(p);
            if (!stopped) tickLane(lane, true);
          });
          inflight.set(p, job.id);
        }
        // One claim sees every merchant with due work and takes all it may: the next one is due
        // when a job finishes, work is enqueued here (wake) or at the next poll.
      } while (lane.again && !stopped && (lane.idleUntil === 0 || lane.againNow));
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err), lane: lane.name }, 'job poll failed');
      // The database is unreachable or the claim failed: the next try at the next poll.
      lane.idleUntil = performance.now() + pollMs;
    } finally {
      lane.ticking = false;
    }
    // Asked for again during an empty (or failed) claim: after the wait, unless a slot was freed.
    if (lane.again && !stopped) tickLane(lane, lane.againNow);
  };
  const ticks = new Set<Promise<void>>();
  const tickLane = (lane: LaneState, slotFreed = false) => {
    const wait = lane.idleUntil - performance.now();
    if (wait > 0 && !slotFreed) {
      lane.later ??= setTimeout(() => {
        lane.later = undefined;
        if (!stopped) tickLane(lane);
      }, Math.ceil(wait)).unref();
      return;
    }
    const t = tick(lane, slotFreed);
    ticks.add(t);
    void t.finally(() => ticks.delete(t));
  };
  const tickAll = () => lanes.forEach((lane) => tickLane(lane));

  const timer = setInterval(tickAll, pollMs);
  timer.unref();
  const unsubscribe = onWake(tickAll);
  tickAll();

  return {
    /**
     * Stops claiming and waits for the running jobs to finish (a batch runs no further leftovers:
     * they go back to pending). With `timeoutMs`, waits that long at most, then gives the jobs
     * still running back (pending, lease released) so another process runs them at once instead
     * of after their lease; returns the ids given back.
     */
    async stop(timeoutMs?: number): Promise<bigint[]> {
      stopped = true;
      clearInterval(timer);
      for (const lane of lanes) clearTimeout(lane.later);
      unsubscribe();
      let timedOut = false;
      const deadline =
        timeoutMs === undefined
          ? undefined
          : new Promise<void>((resolve) => setTimeout(() => ((timedOut = true), resolve()), timeoutMs).unref());
      const drain = async () => {
        // A claim in progress may still start jobs: wait for it, then for every job it started.
        await Promise.allSettled([...ticks]);
        while (inflight.size > 0 && !timedOut) await Promise.allSettled([...inflight.keys()]);
      };
      await (deadline ? Promise.race([drain(), deadline]) : drain());
      if (!timedOut || inflight.size === 0) return [];
      const left = [...inflight.values()];
      await releaseClaimedJobs(runtime.prisma, left);
      log.warn({ jobs: left.map(String) }, 'shutdown: jobs still running given back to pending');
      return left;
    },
  };
}

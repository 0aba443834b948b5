// The background worker: polls for due jobs (and wakes at once when this process enqueues one)
// and runs them in two lanes, each with its own slots, so slow webhook deliveries can never hold up
// internal work (checkout and credit expiry, refund settling):
//   - `internal`:   every kind registered without a lane, JOBS_CONCURRENCY slots;
//   - `deliveries`: webhook sends, WEBHOOK_CONCURRENCY slots (I/O: many can be in flight cheaply).
// Within a lane each merchant has at most `perMerchant` jobs in flight in this process, and
// claims are round-robin across merchants (claimDueJobs), so one merchant's black-holed endpoints
// or backlog cannot take every slot. The caps are per process. Several processes may run workers;
// SKIP LOCKED keeps them from taking the same job.
import type { Config } from '../platform/config.ts';
import type { Runtime } from '../platform/context.ts';
import type { Logger } from '../platform/logger.ts';
import { onWake } from './queue.ts';
import { claimDueJobs, runJob, type Lane } from './runner.ts';

export interface LaneOptions {
  /** jobs of this lane in flight at once */
  concurrency: number;
  /** jobs of one merchant in flight at once in this lane */
  perMerchant: number;
}

export interface WorkerOptions {
  pollMs?: number;
  leaseMs?: number;
  /** the internal lane (default 16 slots, 8 per merchant) */
  concurrency?: number;
  perMerchant?: number;
  /** the deliveries lane (default 64 slots, 16 per merchant) */
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
}

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
  const inflight = new Set<Promise<unknown>>();
  const lanes: LaneState[] = (
    [
      ['internal', { concurrency: opts.concurrency ?? 16, perMerchant: opts.perMerchant ?? 8 }],
      ['deliveries', { concurrency: opts.deliveries?.concurrency ?? 64, perMerchant: opts.deliveries?.perMerchant ?? 32 }],
    ] as const
  ).map(([name, o]) => ({ name, opts: o, running: 0, byMerchant: new Map(), ticking: false, again: false }));

  const tick = async (lane: LaneState) => {
    // Read at every claim: kinds registered after the start are run too.
    const kinds = runtime.jobs.namesIn(lane.name);
    if (stopped || kinds.length === 0) return;
    if (lane.ticking) {
      lane.again = true;
      return;
    }
    lane.ticking = true;
    try {
      do {
        lane.again = false;
        const free = lane.opts.concurrency - lane.running;
        if (free <= 0) break;
        const room = new Map([...lane.byMerchant].map(([m, n]) => [m, lane.opts.perMerchant - n]));
        const jobs = await claimDueJobs(runtime.prisma, {
          limit: free,
          kinds,
          leaseMs: opts.leaseMs,
          perMerchant: lane.opts.perMerchant,
          room,
          merchantIds: opts.merchants?.(),
        });
        for (const job of jobs) {
          lane.running++;
          lane.byMerchant.set(job.merchantId, (lane.byMerchant.get(job.merchantId) ?? 0) + 1);
          const p = runJob(runtime, log, job)
            .catch((err) => log.error({ err: err instanceof Error ? err.message : String(err), job_id: String(job.id) }, 'job outcome not recorded'))
            .finally(() => {
            lane.running--;
            const n = (lane.byMerchant.get(job.merchantId) ?? 1) - 1;
            if (n <= 0) lane.byMerchant.delete(job.merchantId);
            else lane.byMerchant.set(job.merchantId, n);
            inflight.delete(p);
            if (!stopped) tickLane(lane);
          });
          inflight.add(p);
        }
        // Claim again while slots are free and the last claim found work: merchants that just
        // reached their cap are skipped next time, which lets the others' jobs into the window.
        if (jobs.length > 0) lane.again = true;
      } while (lane.again && !stopped);
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err), lane: lane.name }, 'job poll failed');
    } finally {
      lane.ticking = false;
    }
  };
  const ticks = new Set<Promise<void>>();
  const tickLane = (lane: LaneState) => {
    const t = tick(lane);
    ticks.add(t);
    void t.finally(() => ticks.delete(t));
  };
  const tickAll = () => lanes.forEach(tickLane);

  const timer = setInterval(tickAll, pollMs);
  timer.unref();
  const unsubscribe = onWake(tickAll);
  tickAll();

  return {
    /** Stops polling and waits for running jobs to finish. */
    async stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe();
      // A claim in progress may still start jobs: wait for it, then for every job it started.
      await Promise.allSettled([...ticks]);
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
    },
  };
}

// The background worker: polls for due jobs (and wakes at once when this process enqueues one),
// runs up to `concurrency` at a time. Several processes may run workers; SKIP LOCKED keeps them
// from taking the same job.
import type { Runtime } from '../platform/context.ts';
import type { Logger } from '../platform/logger.ts';
import { onWake } from './queue.ts';
import { claimDueJobs, runJob } from './runner.ts';

export interface WorkerOptions {
  pollMs?: number;
  concurrency?: number;
  leaseMs?: number;
}

export function startWorker(runtime: Runtime, log: Logger, opts: WorkerOptions = {}) {
  const pollMs = opts.pollMs ?? 500;
  const concurrency = opts.concurrency ?? 8;
  let running = 0;
  let stopped = false;
  let ticking = false;
  let again = false;
  const inflight = new Set<Promise<unknown>>();

  const tick = async () => {
    if (stopped) return;
    if (ticking) {
      again = true;
      return;
    }
    ticking = true;
    try {
      do {
        again = false;
        const free = concurrency - running;
        if (free <= 0) break;
        const jobs = await claimDueJobs(runtime.prisma, { limit: free, kinds: runtime.jobs.names(), leaseMs: opts.leaseMs });
        for (const job of jobs) {
          running++;
          const p = runJob(runtime, log, job).finally(() => {
            running--;
            inflight.delete(p);
            if (!stopped) void tick();
          });
          inflight.add(p);
        }
        if (jobs.length === free) again = true;
      } while (again && !stopped);
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'job poll failed');
    } finally {
      ticking = false;
    }
  };

  const timer = setInterval(() => void tick(), pollMs);
  timer.unref();
  const unsubscribe = onWake(() => void tick());
  void tick();

  return {
    /** Stops polling and waits for running jobs to finish. */
    async stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe();
      await Promise.allSettled([...inflight]);
    },
  };
}

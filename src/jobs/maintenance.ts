// Periodic housekeeping: expired idempotency keys are deleted (they are kept 24 h), and finished
// jobs (done or cancelled) once they are JOBS_RETENTION_DAYS old, so the table does not grow
// without bound. Failed jobs stay (they are what an operator investigates). Dashboard sessions
// that ended (expired or signed out) more than a day ago are deleted too.
import { purgeEndedDashboardSessions } from '../domain/merchants/dashboard.ts';
import type { Services } from '../platform/env.ts';
import { deleteExpiredIdempotencyKeys } from '../platform/idempotency.store.ts';
import { deleteFinishedJobs } from '../platform/jobs.store.ts';

/** Rows deleted per statement: short transactions, short locks. */
const PURGE_BATCH = 5_000;

/** Deletes finished jobs last changed before `before` (real time), a batch at a time; returns how many. */
export async function purgeFinishedJobs(services: Services, before: Date, batch = PURGE_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await deleteFinishedJobs(services.db.prisma, before, batch);
    total += n;
    if (n < batch) return total;
  }
}

export async function purgeExpiredIdempotencyKeys(services: Services, now = new Date()): Promise<number> {
  return deleteExpiredIdempotencyKeys(services.db.prisma, now);
}

/** Starts the housekeeping loop; returns a function that stops it. */
export function startMaintenance(services: Services, everyMs = 15 * 60 * 1000): () => void {
  const tick = async () => {
    try {
      const n = await purgeExpiredIdempotencyKeys(services);
      if (n > 0) services.log.info({ deleted: n }, 'expired idempotency keys purged');
      const sessions = await purgeEndedDashboardSessions(services.db.prisma);
      if (sessions > 0) services.log.info({ deleted: sessions }, 'ended dashboard sessions purged');
      const days = services.config.JOBS_RETENTION_DAYS;
      if (days > 0) {
        const jobs = await purgeFinishedJobs(services, new Date(Date.now() - days * 86_400_000));
        if (jobs > 0) services.log.info({ deleted: jobs }, 'finished jobs purged');
      }
    } catch (err) {
      services.log.warn({ err }, 'maintenance tick failed');
    }
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

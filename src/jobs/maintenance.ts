// Periodic housekeeping, so that no table grows without bound (docs/operations.md "Retention"):
//   - expired idempotency keys (they are kept 24 h);
//   - finished jobs (done or cancelled) once JOBS_RETENTION_DAYS old; failed jobs stay (they are
//     what an operator investigates);
//   - finished webhook delivery attempts (succeeded or failed) once RETENTION_DELIVERY_ATTEMPTS_DAYS
//     old; pending ones are work still to do;
//   - dashboard sessions that ended (expired or signed out) more than a day ago, and customer
//     portal sessions that expired more than a day ago;
//   - rate-limit windows (table rate_limits, the limits shared by instances) ended a minute ago.
// And, every LEDGER_CHECK_INTERVAL_MINUTES, the ledger invariant check (src/services/ledger-check.ts).
// Every process runs it (a first pass a minute after the start, then every 15 minutes): each pass
// deletes in batches of short statements, and several processes doing so at once only share the work.
import { purgeEndedDashboardSessions } from '../domain/merchants/dashboard.ts';
import { purgeExpiredPortalSessions } from '../domain/portal/index.ts';
import type { Services } from '../platform/env.ts';
import { deleteExpiredIdempotencyKeys } from '../platform/idempotency.store.ts';
import { deleteFinishedJobs } from '../platform/jobs.store.ts';
import { purgeOldDeliveryAttempts } from '../domain/webhooks/index.ts';
import { rawQueryOf } from '../platform/db/raw.ts';
import { deleteEndedWindows } from '../platform/rate-limit.store.ts';
import { checkLedgers } from '../services/ledger-check.ts';

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

/** Deletes the rate-limit windows that ended (a minute ago or more), a batch at a time; how many. */
export async function purgeEndedRateLimitWindows(services: Services, batch = PURGE_BATCH): Promise<number> {
  const q = rawQueryOf(services.db.prisma);
  let total = 0;
  for (;;) {
    const n = await deleteEndedWindows(q, batch);
    total += n;
    if (n < batch) return total;
  }
}

/** Starts the housekeeping loop; returns a function that stops it. */
export function startMaintenance(services: Services, everyMs = 15 * 60 * 1000, firstAfterMs = 60_000): () => void {
  const tick = async () => {
    try {
      const n = await purgeExpiredIdempotencyKeys(services);
      if (n > 0) services.log.info({ deleted: n }, 'expired idempotency keys purged');
      const sessions = await purgeEndedDashboardSessions(services.db.prisma);
      if (sessions > 0) services.log.info({ deleted: sessions }, 'ended dashboard sessions purged');
      const portal = await purgeExpiredPortalSessions(services.db.prisma);
      if (portal > 0) services.log.info({ deleted: portal }, 'expired customer portal sessions purged');
      const windows = await purgeEndedRateLimitWindows(services);
      if (windows > 0) services.log.info({ deleted: windows }, 'ended rate-limit windows purged');
      const days = services.config.JOBS_RETENTION_DAYS;
      if (days > 0) {
        const jobs = await purgeFinishedJobs(services, new Date(Date.now() - days * 86_400_000));
        if (jobs > 0) services.log.info({ deleted: jobs }, 'finished jobs purged');
      }
      const attemptDays = services.config.RETENTION_DELIVERY_ATTEMPTS_DAYS;
      if (attemptDays > 0) {
        const attempts = await purgeOldDeliveryAttempts(services.db.prisma, new Date(Date.now() - attemptDays * 86_400_000));
        if (attempts > 0) services.log.info({ deleted: attempts }, 'old webhook delivery attempts purged');
      }
    } catch (err) {
      services.log.warn({ err }, 'maintenance tick failed');
    }
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();
  // A process restarted more often than every 15 minutes still purges.
  const first = setTimeout(tick, Math.min(everyMs, firstAfterMs));
  first.unref();
  const stopLedgerChecks = startLedgerChecks(services, services.config.LEDGER_CHECK_INTERVAL_MINUTES * 60_000);
  return () => {
    clearInterval(timer);
    clearTimeout(first);
    stopLedgerChecks();
  };
}

/** Runs the ledger invariant check every `everyMs` (0 = never), the first one `firstAfterMs` after the start. */
export function startLedgerChecks(services: Services, everyMs: number, firstAfterMs = 120_000): () => void {
  if (everyMs <= 0) return () => {};
  let running = false;
  const check = async () => {
    if (running) return;
    running = true;
    try {
      const r = await checkLedgers(services.db, services.log);
      services.log.info({ wallets: r.checked.wallet, customer_balances: r.checked.customer_balance, mismatches: r.mismatches.length }, 'ledger invariant checked');
    } catch (err) {
      services.log.warn({ err }, 'ledger invariant check failed');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(check, everyMs);
  timer.unref();
  const first = setTimeout(check, Math.min(everyMs, firstAfterMs));
  first.unref();
  return () => {
    clearInterval(timer);
    clearTimeout(first);
  };
}

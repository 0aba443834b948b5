// Periodic housekeeping: expired idempotency keys are deleted (they are kept 24 h).
import type { Services } from '../platform/env.ts';

export async function purgeExpiredIdempotencyKeys(services: Services, now = new Date()): Promise<number> {
  const r = await services.db.prisma.idempotencyKey.deleteMany({ where: { expiresAt: { lt: now } } });
  return r.count;
}

/** Starts the housekeeping loop; returns a function that stops it. */
export function startMaintenance(services: Services, everyMs = 15 * 60 * 1000): () => void {
  const tick = async () => {
    try {
      const n = await purgeExpiredIdempotencyKeys(services);
      if (n > 0) services.log.info({ deleted: n }, 'expired idempotency keys purged');
    } catch (err) {
      services.log.warn({ err }, 'maintenance tick failed');
    }
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

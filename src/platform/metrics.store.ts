// The statements behind the scrape-time metrics (src/platform/metrics.ts): each one query per
// scrape, never per request. Jobs due use the (status, run_at) index: pending jobs whose run_at
// is at or before the wall clock (a test merchant whose clock was advanced has later jobs due on
// its own clock; those are run by the advance itself and are not counted here).
import type { PrismaClient } from '../generated/prisma/client.ts';

export interface DueJobs {
  kind: string;
  due: number;
  oldestAgeSeconds: number;
}

export function dueJobsByKind(prisma: PrismaClient): Promise<DueJobs[]> {
  return prisma.$queryRawUnsafe<DueJobs[]>(
    `SELECT kind, count(*)::int AS due, extract(epoch FROM (clock_timestamp() - min(run_at)))::float8 AS "oldestAgeSeconds"
       FROM jobs WHERE status = 'pending' AND run_at <= clock_timestamp() GROUP BY kind`,
  );
}

export function invoiceCountsByStatus(prisma: PrismaClient): Promise<{ status: string; n: number }[]> {
  return prisma.$queryRawUnsafe<{ status: string; n: number }[]>(`SELECT status, count(*)::int AS n FROM invoices GROUP BY status`);
}

// Enqueueing due work. Called by domain code inside the transaction of the change that makes the
// work due (an outbox): the job exists exactly when the change committed.
import { Prisma } from '../generated/prisma/client.ts';
import { afterCommit, type Db } from '../platform/db/tenant.ts';

export interface NewJob {
  merchantId: string;
  kind: string;
  /** when it is due, on the merchant's billing clock */
  runAt: Date;
  payload?: Record<string, unknown>;
  /** one job per (kind, key): a second enqueue with the same key is ignored */
  key?: string;
  /** groups jobs for cancellation */
  ref?: string;
}

export async function enqueueJobs(db: Db, jobs: NewJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const r = await db.job.createMany({
    data: jobs.map((j) => ({
      merchantId: j.merchantId,
      kind: j.kind,
      runAt: j.runAt,
      payload: (j.payload ?? {}) as Prisma.InputJsonValue,
      key: j.key ?? null,
      ref: j.ref ?? null,
    })),
    skipDuplicates: true,
  });
  // Wake this process's worker once the jobs are visible, i.e. after the transaction commits.
  afterCommit(db, wake);
  return r.count;
}

export const enqueueJob = (db: Db, job: NewJob) => enqueueJobs(db, [job]);

/** Cancels pending jobs of a kind for a ref (e.g. all deliveries to a deleted endpoint). */
export async function cancelJobs(db: Db, where: { kind?: string; ref?: string; key?: string }): Promise<number> {
  const r = await db.job.updateMany({
    where: { status: { in: ['pending', 'running'] }, kind: where.kind, ref: where.ref, key: where.key },
    data: { status: 'cancelled', lockedUntil: null },
  });
  return r.count;
}

/** Thrown by a job handler that cannot run yet (e.g. a concurrency cap): it runs again after delayMs, without counting an attempt. */
export class DeferJob extends Error {
  constructor(
    readonly delayMs: number,
    message = 'deferred',
  ) {
    super(message);
  }
}

// In-process wake-up so a worker in this process picks new work at once instead of at its next
// poll. Other processes find it at their next poll.
const listeners = new Set<() => void>();
export function onWake(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
/** Wakes this process's workers (call after the transaction that enqueued work has committed). */
export function wake() {
  for (const fn of listeners) queueMicrotask(fn);
}

// Enqueueing due work. Called by domain code inside the transaction of the change that makes the
// work due (an outbox): the job exists exactly when the change committed.
import { Prisma } from '../generated/prisma/client.ts';
import type { Ctx } from './context.ts';
import type { Clock } from './clock.ts';
import { afterCommit, type Db } from './db/tenant.ts';
import { cancelOpenJobs, cancelPendingJobsByKey, completeRunningJobIn, insertJobs, markJobsDone, rerunFailed, type JobRow } from './jobs.store.ts';
import { asRawTx, rawQuery, type RawTx } from './db/raw.ts';
import { currentTraceparent } from './tracing.ts';

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

export async function enqueueJobs(db: Db | RawTx, jobs: NewJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const tx = asRawTx(db);
  const count = await insertJobs(
    tx.raw,
    jobs.map((j) => ({
      merchantId: j.merchantId,
      kind: j.kind,
      runAt: j.runAt,
      payload: j.payload ?? {},
      key: j.key ?? null,
      ref: j.ref ?? null,
      traceParent: currentTraceparent(),
    })),
  );
  // Wake this process's worker once the jobs are visible, i.e. after the transaction commits.
  tx.afterCommit(wake);
  return count;
}

export const enqueueJob = (db: Db, job: NewJob) => enqueueJobs(db, [job]);

/**
 * Marks claimed jobs of a merchant done in the caller's transaction, with the work they did (a
 * batch handler's: JobKind.batch): the ids of those still running (the rows stay locked until the
 * caller commits; a job finished by another run meanwhile is not among them).
 */
export function finishClaimedJobs(db: Db | RawTx, merchantId: string, ids: bigint[]): Promise<bigint[]> {
  return markJobsDone(asRawTx(db).raw, merchantId, ids);
}

/** Cancels pending jobs of a kind for a ref (e.g. all deliveries to a deleted endpoint), or by key (one, or any of several). */
export function cancelJobs(db: Db, where: { kind?: string; ref?: string; key?: string | string[] }): Promise<number> {
  return cancelOpenJobs(db, where);
}

/**
 * Cancels waiting (pending) jobs by (kind, key), in the caller's transaction: safety work that the
 * change being committed makes unnecessary (a charge that settled needs no recovery, a paid payment
 * no expiry). Without it each would still be claimed and run, to do nothing (issue 23, section 5).
 */
export function cancelWaitingJobs(db: Db | RawTx, jobs: { kind: string; key: string }[]): Promise<number> {
  return cancelPendingJobsByKey(asRawTx(db).raw, jobs);
}

/**
 * Marks the running job `id` done in the caller's transaction (its row stays locked until the
 * commit): false when it is not running any more (another run finished it, or it was cancelled),
 * and then the caller writes nothing. A handler returns JOB_COMPLETED after it.
 */
export function completeRunningJob(tx: Db, merchantId: string, id: bigint): Promise<boolean> {
  return completeRunningJobIn(tx, merchantId, id);
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

/**
 * Thrown by a job handler whose work cannot succeed by running it again (a rule refuses it): the
 * job is marked `failed` at once with the message as `last_error`, without the retries a
 * transient failure gets. The handler logs what an operator needs to act on it.
 */
export class JobCannotRun extends Error {}

/**
 * Puts a job that failed for good back to run at `runAt` (attempts from zero), in the caller's
 * transaction: the change that removed the reason it failed (e.g. a subscription's price lowered
 * after its renewal could not be invoiced). Whether there was one.
 */
export async function rerunFailedJob(db: Db, job: { kind: string; key: string }, runAt: Date): Promise<boolean> {
  const n = await rerunFailed(db, job, runAt);
  if (n > 0) afterCommit(db, wake);
  return n > 0;
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

// ---- what a kind of job is (the registry is filled by src/jobs; the runner runs it)

/** A claimed job, as its handler gets it. */
export type { JobRow };

/** What a handler returns when its own last statement already marked the job done. */
export const JOB_COMPLETED = 'completed' as const;

/** What a job handler gets: a Ctx whose clock is frozen at the time the job runs at. */
export type JobCtx = Ctx & { clock: Clock & { readonly at: Date } };

export interface JobKind {
  /**
   * Does the work. `ctx.clock.at` is the time it happens at on the merchant's clock (the job's
   * due time during a clock advance, the clock's now when claimed otherwise); every business time
   * the job writes is that one.
   */
  run(ctx: JobCtx, job: JobRow): Promise<void | typeof JOB_COMPLETED>;
  /** delays before retrying after a failure; the job fails for good after the last */
  retryDelaysMs?: number[];
  /** how long a claim lasts before another runner may take the job over */
  leaseMs?: number;
  /**
   * The worker lane that runs it: `internal` (expiries, refunds settling … the default) or
   * `deliveries` (webhook sends: slow I/O that must never hold up internal work).
   */
  lane?: Lane;
  /**
   * Runs a run of claimed jobs of this kind of one merchant at once (a clock advance claims up to
   * `size` due within `spanMs` of the first, before any other internal job; the worker up to
   * `size` of the merchant's due ones): it marks the jobs
   * it did done in its own transaction and returns the others in due order; the runner runs the
   * first of those alone (`run`) and hands the rest back to it (unless `ordered` is false: then
   * each of them runs alone).
   */
  batch?: {
    size: number;
    spanMs: number;
    /** false: the jobs it returns need no order (each runs alone, none goes back to the batch) */
    ordered?: boolean;
    /** `at(job)`: the time the job happens at on the merchant's clock (its due time in a clock advance, the claim's now in the worker) */
    run(ctx: JobCtx, jobs: JobRow[], at: (job: JobRow) => Date): Promise<JobRow[]>;
  };
}

export type Lane = 'internal' | 'deliveries';


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

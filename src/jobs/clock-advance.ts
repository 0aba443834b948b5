// POST /v1/test-helpers/clock/advance and the advanceTestClock mutation.
//
// The work that becomes due is run first, in due order and each at its own due time, while the
// clock still shows the old time; only then does the clock move. So the background worker never
// sees these jobs as due and cannot run them early or out of order.
//
// An advance over more work than fits in its time budget (two minutes) moves the clock only to
// just before the first job it did not run, and answers 409 clock_advance_incomplete saying so:
// the same request with `to` carries on from there. The clock never passes work that has not run.
//
// While an advance is unfinished the merchant's clock is parked (merchants.clock_parked_until):
// while it runs, at the time it started from; after a 409 clock_advance_incomplete, at its stop
// point until the repeat takes it over (PARK_MS at most, then it runs on from there). The work the
// advance is to run at its own due times is therefore never due to the background worker, which
// would run it late (issue 23, defect 4: the clock used to tick on from the stop point, 1 ms
// before the next renewal, and the worker ran that renewal 50–100 ms late, at the time of its claim).
//
// One advance per merchant at a time, across processes (issue 21: concurrent advances left
// renewals unpaid, and 100 parallel advances slowed every merchant down). An advance first takes
// its merchant's turn in this process (the others wait in line, at most MAX_WAITING of them, up to
// CLOCK_ADVANCE_WAIT_MS), then the merchant's lease in the database (merchants.clock_advance_token
// and clock_advance_lease_until: valid for CLOCK_ADVANCE_LEASE_MS, 30 s by default, renewed while
// the advance runs, so a process that dies mid-advance holds it up for at most that long). An advance that does not get
// both in time answers 409 clock_advance_in_progress with Retry-After. The target is fixed when
// the request arrives: an advance that waited behind one that went further finds its work done and
// answers with the clock as it is. While it runs, an advance does at most
// CLOCK_ADVANCE_JOBS_PER_SECOND jobs a second, one at a time (one pool connection, plus a moment for
// the lease's renewal), and lets the event loop turn between jobs.
import { randomUUID } from 'node:crypto';
import {
  advanceTarget,
  checkClockAdvance,
  releaseAdvanceLease,
  renewAdvanceLease,
  setClock,
  LeaseLost,
  takeAdvanceLease,
  type ClockAdvanceInput,
} from '../domain/clock/index.ts';
import type { Ctx, Runtime } from '../platform/context.ts';
import { StateError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { earliestDue, runDueJobsFor } from './runner.ts';

/** How long an advance's lease lasts unless renewed (it is renewed every third of this while the advance runs). */
const leaseMs = (runtime: Runtime) => runtime.config.CLOCK_ADVANCE_LEASE_MS;
/** How long the clock stays parked at the stop point of an advance that stopped part-way, for its repeat (Runtime.clockParkMs). */
export const PARK_MS = 30_000;
/** Advances of one merchant that may wait in one process behind the running one; more are refused at once. */
export const MAX_WAITING = 16;
/** How often an advance waiting for another process's lease looks again. */
const LEASE_POLL_MS = 100;

function inProgress(detail = 'Another clock advance of this merchant is running.') {
  const err = new StateError('clock_advance_in_progress', `${detail} Advances of one merchant run one at a time: retry when it has finished.`, null);
  err.headers = { 'Retry-After': '1' };
  return err;
}

// ---- this process's turns: per merchant, the running advance and a bounded line of waiters.
type Waiter = (granted: boolean) => boolean;
const turns = new Map<string, Waiter[]>();

function roomInLine(merchantId: string): boolean {
  return (turns.get(merchantId)?.length ?? 0) < MAX_WAITING;
}

/** Resolves true when this request holds the merchant's turn in this process, false when the deadline passed first. */
function takeTurn(merchantId: string, deadline: number): Promise<boolean> {
  const line = turns.get(merchantId);
  if (!line) {
    turns.set(merchantId, []);
    return Promise.resolve(true);
  }
  const wait = deadline - Date.now();
  if (wait <= 0 || line.length >= MAX_WAITING) return Promise.resolve(false);
  return new Promise((resolve) => {
    let settled = false;
    const waiter: Waiter = (granted) => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      resolve(granted);
      return true;
    };
    const timer = setTimeout(() => {
      const i = line.indexOf(waiter);
      if (i >= 0) line.splice(i, 1);
      waiter(false);
    }, wait);
    line.push(waiter);
  });
}

function passTurn(merchantId: string): void {
  const line = turns.get(merchantId);
  if (!line) return;
  for (let next = line.shift(); next; next = line.shift()) if (next(true)) return;
  turns.delete(merchantId);
}

// ---- the merchant's lease in the database (every process sees it).
class AdvanceLease {
  /** Set when a renewal found the lease taken over (it had run out): the advance must stop. */
  lost = false;
  /** Set when the advance stopped part-way and parked the clock at its stop point: the release leaves it parked. */
  keepParked = false;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly runtime: Runtime,
    private readonly log: Logger,
    private readonly merchantId: string,
    readonly token: string,
  ) {
    this.timer = setInterval(() => void this.renew(), leaseMs(runtime) / 3);
    this.timer.unref();
  }

  /** Takes the merchant's lease, waiting (polling) for a holder elsewhere until the deadline; null when it could not. */
  static async take(runtime: Runtime, log: Logger, merchantId: string, deadline: number): Promise<AdvanceLease | null> {
    const token = randomUUID();
    for (;;) {
      if (await takeAdvanceLease(runtime.prisma, merchantId, token, leaseMs(runtime))) return new AdvanceLease(runtime, log, merchantId, token);
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise((r) => setTimeout(r, Math.min(LEASE_POLL_MS, left)));
    }
  }

  private async renew(): Promise<void> {
    try {
      if (!(await renewAdvanceLease(this.runtime.prisma, this.merchantId, this.token, leaseMs(this.runtime)))) {
        this.lost = true;
        clearInterval(this.timer);
        this.log.warn({ merchant_id: this.merchantId }, 'clock advance lost its lease (it ran out and another advance took it over); stopping');
      }
    } catch (err) {
      // The database is unreachable for now: the next renewal tries again (the lease outlives two misses).
      this.log.warn({ merchant_id: this.merchantId, err: err instanceof Error ? err.message : String(err) }, 'clock advance lease renewal failed');
    }
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    if (this.lost) return;
    await releaseAdvanceLease(this.runtime.prisma, this.merchantId, this.token, { keepParked: this.keepParked }).catch((err: unknown) =>
      // It runs out by itself within CLOCK_ADVANCE_LEASE_MS, and the clock's park with it.
      this.log.warn({ merchant_id: this.merchantId, err: err instanceof Error ? err.message : String(err) }, 'clock advance lease release failed'),
    );
  }
}

export async function advanceClockAndRunDueWork(ctx: Ctx, input: ClockAdvanceInput, opts: { budgetMs?: number; waitMs?: number } = {}): Promise<Date> {
  const { runtime, merchant } = ctx;
  checkClockAdvance(merchant, input); // 404 / 400 whatever else is running
  // A full line is refused before anything is read: a flood of advances costs almost nothing.
  if (!roomInLine(merchant.id)) throw inProgress(`Another clock advance of this merchant is running and ${MAX_WAITING} more are waiting for it.`);
  // A retry of an interrupted advance with the same idempotency key goes to the same time (a
  // `seconds` advance is not counted twice).
  const resumed = ctx.idempotency?.resumed?.target;
  const target = typeof resumed === 'string' ? new Date(resumed) : await advanceTarget(runtime.prisma, merchant, input);
  ctx.idempotency?.checkpoint({ target: target.toISOString() });
  const deadline = Date.now() + (opts.waitMs ?? runtime.config.CLOCK_ADVANCE_WAIT_MS);
  if (!(await takeTurn(merchant.id, deadline))) throw inProgress();
  try {
    const lease = await AdvanceLease.take(runtime, ctx.log, merchant.id, deadline);
    if (!lease) throw inProgress('Another clock advance of this merchant is running (in another process).');
    try {
      return await advanceHoldingLease(ctx, target, lease, opts);
    } finally {
      await lease.release();
    }
  } finally {
    passTurn(merchant.id);
  }
}

async function advanceHoldingLease(ctx: Ctx, target: Date, lease: AdvanceLease, opts: { budgetMs?: number }): Promise<Date> {
  const { runtime, merchant } = ctx;
  const { ran, complete } = await runDueJobsFor(runtime, ctx.log, merchant.id, target, {
    budgetMs: opts.budgetMs ?? runtime.clockAdvanceBudgetMs,
    jobsPerSecond: runtime.config.CLOCK_ADVANCE_JOBS_PER_SECOND,
    stop: () => lease.lost,
  });
  const lostMessage = `This advance ran ${ran} due jobs, then lost its hold on the clock to another advance and stopped; the clock was not moved by it.`;
  if (lease.lost) throw inProgress(lostMessage);
  // The clock is placed only while this advance still holds the lease (a renewal may not have
  // noticed yet that another advance took it over): the other advance's park stands.
  const place = async (at: Date, parkMs?: number) => {
    try {
      return await setClock(ctx, at, { parkMs, leaseToken: lease.token });
    } catch (err) {
      if (err instanceof LeaseLost) {
        lease.lost = true;
        throw inProgress(lostMessage);
      }
      throw err;
    }
  };
  // The clock runs on from the target (or from where an advance that went further left it).
  if (complete) {
    const at = await place(target);
    ctx.log.info({ merchant_id: merchant.id, to: at.toISOString(), jobs_run: ran }, 'clock advanced');
    return at;
  }
  const next = await earliestDue(runtime, merchant.id, target);
  const reached = next ? new Date(next.getTime() - 1) : target;
  // Parked at the stop point (or where it stands, if that is later): the jobs due just after it
  // are not due to the background worker, and the repeat runs each at its own time.
  const parkMs = runtime.clockParkMs ?? PARK_MS;
  const stopped = await place(reached, parkMs);
  lease.keepParked = true;
  throw new StateError(
    'clock_advance_incomplete',
    `The advance ran ${ran} due jobs and stopped at ${stopped.toISOString()} before reaching ${target.toISOString()} (too much work for one request). Repeat it with {"to": "${target.toISOString()}"} to carry on; the clock stands still at ${stopped.toISOString()} until then (for ${parkMs / 1000} s at most, then it runs on from there).`,
    null,
  );
}

// The one clock: "now" on a merchant's billing clock, for every business time (docs/database.md,
// "Which clock each column uses").
//
// - live merchant: real time;
// - test merchant: real time plus its test clock's offset (merchants.clock_offset_ms; the clock only
//   moves forward: POST /v1/test-helpers/clock/advance) — except while the clock is parked
//   (merchants.clock_parked_until, a real time): then it stands still at clock_parked_until + offset,
//   and afterwards runs on from there. An advance parks it while it runs, and at its stop point when
//   it stops part-way (409 clock_advance_incomplete) until it is repeated, so that nothing the
//   advance still has to run at its own time becomes due meanwhile (docs/jobs.md);
// - inside a job: the time the job runs at — its due time when a clock advance runs it, the clock's
//   now when it was claimed otherwise — frozen for the whole job.
//
// One Clock per request or job (Ctx.clock, made where the Ctx is made). A test merchant's offset is
// read at most once per Clock — on its first `now()`, or learnt from a statement that read it
// anyway (the wallet lock) — so a request costs at most one read of it, and a live merchant's or a
// job's none. In SQL the same rule is `billingNowSql` (statements that need billing time without a
// value from JavaScript: the job claim, recordEvent's statement on the create-customer hot path).
//
// It lives in platform because Ctx carries it (and the job runner makes it); the test clock's own
// rules (advancing, its lease) are domain/clock.
import { findClockOffset, type ClockState, type OffsetReader } from './clock.store.ts';

export interface ClockMerchant {
  id: string;
  mode: 'test' | 'live';
}

/** The rule, given what it depends on (unit-tested; everything else goes through Clock). */
export function billingTime(
  mode: 'test' | 'live',
  offsetMs: bigint | number | null | undefined,
  at?: Date,
  realNow = Date.now(),
  /** a parked test clock stands at parkedUntil + offset until real time reaches parkedUntil */
  parkedUntil?: Date | null,
): Date {
  if (at) return new Date(at.getTime());
  if (mode !== 'test') return new Date(realNow);
  return new Date(Math.max(realNow, parkedUntil?.getTime() ?? -Infinity) + Number(offsetMs ?? 0));
}

// The rule in SQL (`billingNowSql`) is in clock.store.ts, with the clock's statement.
export { billingNowSql } from './clock.store.ts';

export class Clock {
  private offsetMs: number | undefined;
  private parkedUntil: Date | null = null;

  constructor(
    readonly merchant: ClockMerchant,
    /** Inside a job: the time it runs at (frozen). */
    readonly at?: Date,
  ) {
    if (merchant.mode === 'live') this.offsetMs = 0;
  }

  /** A job's clock: frozen at `at`. */
  static frozen(merchant: ClockMerchant, at: Date): Clock & { readonly at: Date } {
    return new Clock(merchant, at) as Clock & { readonly at: Date };
  }

  /**
   * Now, when it is known without reading the database (live merchant, inside a job, or a test
   * merchant whose offset this clock has read already); null otherwise.
   */
  peek(): Date | null {
    if (this.at) return new Date(this.at.getTime());
    return this.offsetMs === undefined ? null : billingTime(this.merchant.mode, this.offsetMs, undefined, Date.now(), this.parkedUntil);
  }

  /**
   * Now on the billing clock. Reads the test merchant's offset through `db` the first time (pass
   * the transaction when inside one: on PGlite a second connection would wait for it forever).
   */
  async now(db: OffsetReader): Promise<Date> {
    const known = this.peek();
    if (known) return known;
    const m = await findClockOffset(db, this.merchant.id);
    this.learn(m?.clockOffsetMs ?? 0, m?.clockParkedUntil);
    return this.peek()!;
  }

  /** The offset (and park) a statement read anyway (e.g. with the wallet's lock), or the ones an advance just set. */
  learn(offsetMs: bigint | number, parkedUntil?: ClockState['clockParkedUntil']): void {
    if (this.merchant.mode !== 'test') return;
    this.offsetMs = Number(offsetMs);
    this.parkedUntil = parkedUntil ?? null;
  }
}

/** The request's or job's clock; a fresh one (not shared) for a Ctx made without one (tests). */
export function clockOf(ctx: { merchant: ClockMerchant; clock?: Clock | undefined }): Clock {
  return ctx.clock ?? new Clock(ctx.merchant);
}

/** Now on the clock of `ctx`, reading through `ctx.db` (its transaction when it is one). */
export function clockNow(ctx: { merchant: ClockMerchant; clock?: Clock | undefined; db: OffsetReader }): Promise<Date> {
  return clockOf(ctx).now(ctx.db);
}

/** Now on a merchant's clock, read afresh (the clock advance, the test clock's GET). */
export function readClock(db: OffsetReader, merchant: ClockMerchant): Promise<Date> {
  return new Clock(merchant).now(db);
}

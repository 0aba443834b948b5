// Billing periods and proration: pure calendar arithmetic in UTC (no time zones, no DST), shared
// by every billing rule. Periods are computed from the subscription's anchor, never by adding to
// the previous period's end, so a month-end anchor comes back: Jan 31 → Feb 28 (29 in leap years)
// → Mar 31 → Apr 30 …
export const INTERVALS = ['day', 'week', 'month', 'year'] as const;
export type Interval = (typeof INTERVALS)[number];

/** interval_count limits: at most one year per period. */
export const MAX_INTERVAL_COUNT: Record<Interval, number> = { day: 365, week: 52, month: 12, year: 1 };

const DAY_MS = 86_400_000;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/**
 * `anchor` moved forward by `n × count` intervals. Months and years keep the anchor's day of the
 * month (clamped to the month's length) and its time of day; days and weeks are exact multiples of
 * 24 h (UTC has no DST).
 */
export function addIntervals(anchor: Date, interval: Interval, count: number, n: number): Date {
  if (!Number.isInteger(count) || count < 1) throw new RangeError('count must be a positive integer');
  if (!Number.isInteger(n) || n < 0) throw new RangeError('n must be a non-negative integer');
  const steps = count * n;
  if (interval === 'day') return new Date(anchor.getTime() + steps * DAY_MS);
  if (interval === 'week') return new Date(anchor.getTime() + steps * 7 * DAY_MS);
  const months = interval === 'month' ? steps : steps * 12;
  const total = anchor.getUTCMonth() + months;
  const year = anchor.getUTCFullYear() + Math.floor(total / 12);
  const month = ((total % 12) + 12) % 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  return new Date(
    Date.UTC(year, month, day, anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()),
  );
}

export interface Period {
  /** 0 for the first period */
  index: number;
  start: Date;
  end: Date;
}

/** The n-th period of a schedule anchored at `anchor`. */
export function periodAt(anchor: Date, interval: Interval, count: number, n: number): Period {
  return { index: n, start: addIntervals(anchor, interval, count, n), end: addIntervals(anchor, interval, count, n + 1) };
}

/** The period containing `at` (`at` on a boundary belongs to the period it starts). */
export function periodContaining(anchor: Date, interval: Interval, count: number, at: Date): Period {
  if (at.getTime() < anchor.getTime()) throw new RangeError('at is before the anchor');
  // Estimate from the average length, then correct by at most a step or two.
  const avg = { day: DAY_MS, week: 7 * DAY_MS, month: 30.436875 * DAY_MS, year: 365.2425 * DAY_MS }[interval] * count;
  let n = Math.max(0, Math.floor((at.getTime() - anchor.getTime()) / avg));
  while (n > 0 && addIntervals(anchor, interval, count, n).getTime() > at.getTime()) n--;
  while (addIntervals(anchor, interval, count, n + 1).getTime() <= at.getTime()) n++;
  return periodAt(anchor, interval, count, n);
}

/**
 * The part of `amount` (minor units) for `part` of a period of `whole`, both in milliseconds,
 * computed to the second and rounded half away from zero to the minor unit. Proration credits the
 * unused part of the old price and charges the remaining part of the new one with this same rule,
 * so an immediate change back and forth nets to zero.
 */
export function prorate(amount: bigint, partMs: number, wholeMs: number): bigint {
  if (wholeMs <= 0) throw new RangeError('the period must be longer than zero');
  const part = BigInt(Math.max(0, Math.min(Math.floor(partMs / 1000), Math.floor(wholeMs / 1000))));
  const whole = BigInt(Math.floor(wholeMs / 1000));
  if (whole === 0n) return 0n;
  const neg = amount < 0n;
  const abs = neg ? -amount : amount;
  const q = (abs * part * 2n + whole) / (whole * 2n); // half away from zero
  return neg ? -q : q;
}

import { describe, expect, it } from 'vitest';
import { addIntervals, periodAt, periodContaining, prorate } from '../../src/domain/billing/periods.ts';

const d = (s: string) => new Date(s);
const iso = (x: Date) => x.toISOString();

describe('addIntervals', () => {
  it('keeps a month-end anchor across short months and leap years', () => {
    const jan31 = d('2027-01-31T10:00:00.000Z');
    const ends = Array.from({ length: 13 }, (_, n) => iso(addIntervals(jan31, 'month', 1, n)).slice(0, 10));
    expect(ends).toEqual(['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31', '2027-06-30', '2027-07-31', '2027-08-31', '2027-09-30', '2027-10-31', '2027-11-30', '2027-12-31', '2028-01-31']);
    expect(iso(addIntervals(d('2028-01-31T00:00:00Z'), 'month', 1, 1))).toBe('2028-02-29T00:00:00.000Z');
    expect(iso(addIntervals(jan31, 'month', 1, 1))).toBe('2027-02-28T10:00:00.000Z'); // time of day kept
  });
  it('handles interval_count, years and Feb 29 anchors', () => {
    expect(iso(addIntervals(d('2027-01-31T00:00:00Z'), 'month', 3, 1))).toBe('2027-04-30T00:00:00.000Z');
    expect(iso(addIntervals(d('2027-11-30T00:00:00Z'), 'month', 3, 1))).toBe('2028-02-29T00:00:00.000Z');
    expect(iso(addIntervals(d('2028-02-29T12:00:00Z'), 'year', 1, 1))).toBe('2029-02-28T12:00:00.000Z');
    expect(iso(addIntervals(d('2028-02-29T12:00:00Z'), 'year', 1, 4))).toBe('2032-02-29T12:00:00.000Z');
    expect(iso(addIntervals(d('2027-12-15T00:00:00Z'), 'month', 1, 1))).toBe('2028-01-15T00:00:00.000Z');
  });
  it('days and weeks are exact multiples of 24 h in UTC (no DST)', () => {
    expect(iso(addIntervals(d('2027-03-27T12:00:00Z'), 'day', 1, 2))).toBe('2027-03-29T12:00:00.000Z');
    expect(iso(addIntervals(d('2027-10-25T00:00:00Z'), 'week', 2, 1))).toBe('2027-11-08T00:00:00.000Z');
    expect(iso(addIntervals(d('2027-01-01T00:00:00Z'), 'day', 365, 1))).toBe('2028-01-01T00:00:00.000Z');
  });
  it('refuses nonsense', () => {
    expect(() => addIntervals(d('2027-01-01T00:00:00Z'), 'month', 0, 1)).toThrow(RangeError);
    expect(() => addIntervals(d('2027-01-01T00:00:00Z'), 'month', 1, -1)).toThrow(RangeError);
  });
});

describe('periods', () => {
  it('period n runs from anchor + n to anchor + n + 1', () => {
    expect(periodAt(d('2027-01-31T00:00:00Z'), 'month', 1, 1)).toEqual({ index: 1, start: d('2027-02-28T00:00:00Z'), end: d('2027-03-31T00:00:00Z') });
  });
  it('finds the period containing a time; a boundary starts the next period', () => {
    const a = d('2027-01-31T00:00:00Z');
    expect(periodContaining(a, 'month', 1, d('2027-03-01T00:00:00Z')).index).toBe(1);
    expect(periodContaining(a, 'month', 1, d('2027-03-31T00:00:00Z')).index).toBe(2);
    expect(periodContaining(a, 'month', 1, a).index).toBe(0);
    expect(periodContaining(a, 'month', 1, d('2037-01-30T23:59:59Z')).index).toBe(119);
    expect(periodContaining(a, 'day', 7, d('2027-02-14T00:00:00Z')).index).toBe(2);
  });
});

describe('prorate', () => {
  const month = 30 * 86_400_000;
  it('charges the part of the period to the second, rounded half away from zero', () => {
    expect(prorate(3000n, 15 * 86_400_000, month)).toBe(1500n);
    expect(prorate(1000n, month / 3, month)).toBe(333n);
    expect(prorate(1000n, (2 * month) / 3, month)).toBe(667n);
    expect(prorate(1n, month / 2, month)).toBe(1n); // 0.5 → 1
    expect(prorate(-1000n, month / 3, month)).toBe(-333n);
    expect(prorate(999n, 1_500_000, 3_000_000)).toBe(500n); // 499.5 → 500
    expect(prorate(999n, 1_500, 3_000)).toBe(333n); // to the second: 1 s of 3 s
  });
  it('clamps to the period and refuses an empty one', () => {
    expect(prorate(1000n, -5, month)).toBe(0n);
    expect(prorate(1000n, month * 2, month)).toBe(1000n);
    expect(() => prorate(1000n, 1, 0)).toThrow(RangeError);
  });
});

describe('prorationLines (a plan change mid-period)', () => {
  it('credits the unused time of the old price and charges the rest of the new, to the second', async () => {
    const { prorationLines } = await import('../../src/domain/billing/subscriptions.ts');
    const plan = (name: string, amount: bigint) => ({ name, amount }) as Parameters<typeof prorationLines>[0];
    const start = d('2027-03-01T00:00:00Z');
    const end = d('2027-03-31T00:00:00Z'); // 30 days
    const now = d('2027-03-21T00:00:00Z'); // 10 days left
    const lines = prorationLines(plan('Basic', 3000n), plan('Pro', 9000n), start, end, now);
    expect(lines.map((l) => [l.amount, l.proration, l.periodStart.toISOString(), l.periodEnd.toISOString()])).toEqual([
      [-1000n, true, '2027-03-21T00:00:00.000Z', '2027-03-31T00:00:00.000Z'],
      [3000n, true, '2027-03-21T00:00:00.000Z', '2027-03-31T00:00:00.000Z'],
    ]);
    // Back and forth at the same instant nets to zero.
    const back = prorationLines(plan('Pro', 9000n), plan('Basic', 3000n), start, end, now);
    expect([...lines, ...back].reduce((s, l) => s + l.amount, 0n)).toBe(0n);
    // Odd amounts round half away from zero, each line on its own.
    const odd = prorationLines(plan('A', 1000n), plan('B', 1001n), start, end, d('2027-03-11T00:00:00Z')); // 20 of 30 days left
    expect(odd.map((l) => l.amount)).toEqual([-667n, 667n]);
    // A free plan, or a change at the very end, makes no zero lines.
    expect(prorationLines(plan('Free', 0n), plan('Pro', 9000n), start, end, now).map((l) => l.amount)).toEqual([3000n]);
    expect(prorationLines(plan('Basic', 3000n), plan('Pro', 9000n), start, end, end)).toEqual([]);
  });
});

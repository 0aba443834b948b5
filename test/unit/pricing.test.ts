// The money rules of discounts and taxes (src/domain/pricing/rules.ts; docs/billing.md
// "Discounts and taxes"), and proration with quantity (prorationLines).
import { describe, expect, it } from 'vitest';
import { discountOf, divRound, priceInvoice, shareDiscount, taxesOf, type PricingCoupon, type PricingTaxRate } from '../../src/domain/pricing/rules.ts';
import { prorationLines } from '../../src/domain/billing/subscriptions.ts';
import type { Plan } from '../../src/generated/prisma/client.ts';

const pct = (p: number): PricingCoupon => ({ id: 'P', percentOffBp: Math.round(p * 100), amountOff: null });
const off = (a: bigint): PricingCoupon => ({ id: 'A', percentOffBp: null, amountOff: a });
const rate = (id: string, percent: number, inclusive = false): PricingTaxRate => ({ id, percentage: Math.round(percent * 10_000), inclusive });

describe('divRound: half away from zero', () => {
  it('rounds halves away from zero on both signs', () => {
    expect(divRound(5n, 2n)).toBe(3n);
    expect(divRound(-5n, 2n)).toBe(-3n);
    expect(divRound(4n, 3n)).toBe(1n);
    expect(divRound(-4n, 3n)).toBe(-1n);
    expect(divRound(7n, 2n)).toBe(4n);
    expect(divRound(0n, 7n)).toBe(0n);
  });
});

describe('percent discount', () => {
  it('is rounded half away from zero on the positive subtotal', () => {
    expect(discountOf(pct(25), 2900n)).toBe(725n);
    expect(discountOf(pct(10), 1005n)).toBe(101n); // 100.5 → 101
    expect(discountOf(pct(10), 1004n)).toBe(100n); // 100.4 → 100
    expect(discountOf(pct(33.33), 100n)).toBe(33n); // 33.33
    expect(discountOf(pct(12.5), 4n)).toBe(1n); // 0.5 → 1
    expect(discountOf(pct(100), 2900n)).toBe(2900n);
  });
  it('is nothing on a subtotal of zero', () => {
    expect(discountOf(pct(50), 0n)).toBe(0n);
  });
  it('is negative on a negative subtotal (a credit is credited at the discounted price), rounded half away from zero', () => {
    expect(discountOf(pct(50), -1000n)).toBe(-500n);
    expect(discountOf(pct(10), -1005n)).toBe(-101n); // −100.5 → −101
    expect(discountOf(pct(100), -297000n)).toBe(-297000n);
  });
  it('is nothing on a negative subtotal for a once coupon (one invoice\'s discount: a credit does not take it)', () => {
    expect(discountOf({ ...pct(50), once: true }, -1000n)).toBe(0n);
    expect(discountOf({ ...pct(50), once: true }, 1000n)).toBe(500n);
  });
  it('makes a change and its reversal net to zero: the credit keeps the discount the charge had, tax included', () => {
    // 20 % forever with 19 % exclusive tax: +9000 charged then −9000 credited at once.
    const up = priceInvoice([{ amount: 9000n }], pct(20), [rate('vat', 19)]);
    const down = priceInvoice([{ amount: -9000n }], pct(20), [rate('vat', 19)]);
    expect(up.total).toBe(8568n);
    expect(down.total).toBe(-8568n);
    expect(down.discountAmount).toBe(-1800n);
    expect(down.lines[0]!.discountAmount).toBe(-1800n);
    expect(down.lines[0]!.taxAmounts[0]!.amount).toBe(-1368);
    // 100 % off: a credit for free time is worth nothing.
    expect(priceInvoice([{ amount: -297000n }, { amount: 2970n }], pct(100), []).total).toBe(0n);
  });
});

describe('amount_off', () => {
  it('is at most the subtotal', () => {
    expect(discountOf(off(500n), 2900n)).toBe(500n);
    expect(discountOf(off(5000n), 2900n)).toBe(2900n);
    expect(discountOf(off(500n), -100n)).toBe(0n);
    expect(priceInvoice([{ amount: 300n }], off(500n), []).total).toBe(0n);
  });
});

describe('sharing the discount across lines', () => {
  it('is proportional to the positive lines, remainders to the largest remainders (earlier line on ties)', () => {
    // 100 over 1:1:1 → 33.33 each → 33, 33, 33 + 1 to the first (ties: earlier line).
    expect(shareDiscount([1000n, 1000n, 1000n], 100n)).toEqual([34n, 33n, 33n]);
    // 10 over 3:7 → 3, 7 exactly.
    expect(shareDiscount([300n, 700n], 10n)).toEqual([3n, 7n]);
    // 5 over 1:1:2 → 1.25, 1.25, 2.5 → 1, 1, 2 + 1 to the largest remainder (the third: .5).
    expect(shareDiscount([100n, 100n, 200n], 5n)).toEqual([1n, 1n, 3n]);
  });
  it('shares a negative discount across the credits only, with their sign', () => {
    const shares = shareDiscount([1000n, -3000n, -1000n, -500n], -900n, [true, true, true, false]);
    expect(shares).toEqual([0n, -675n, -225n, 0n]);
    // Σ = the discount; never more than a line's amount.
    expect(shareDiscount([-1n, -1n, -1n], -3n)).toEqual([-1n, -1n, -1n]);
    expect(shareDiscount([-1000n, -1000n, -1000n], -100n)).toEqual([-34n, -33n, -33n]);
  });
  it('gives credits and ineligible lines nothing of a positive discount, and the shares add up to the discount', () => {
    const shares = shareDiscount([2900n, -1450n, 1450n, 700n], 1000n, [true, true, true, false]);
    expect(shares[1]).toBe(0n);
    expect(shares[3]).toBe(0n);
    expect(shares.reduce((s, x) => s + x, 0n)).toBe(1000n);
    expect(shares).toEqual([667n, 0n, 333n, 0n]);
  });
  it('never gives a line more than its amount', () => {
    for (let n = 1n; n <= 50n; n++) {
      const amounts = [n, 3n * n + 1n, 1n];
      const total = amounts.reduce((s, a) => s + a, 0n);
      const shares = shareDiscount(amounts, total);
      shares.forEach((s, i) => expect(s <= amounts[i]!).toBe(true));
      expect(shares.reduce((s, x) => s + x, 0n)).toBe(total);
    }
  });
});

describe('exclusive tax', () => {
  it('is computed per line on the amount after its discount share, rounded half away from zero', () => {
    // 20 % of 1005 = 201; of 1003 = 200.6 → 201; of 1002 = 200.4 → 200.
    expect(taxesOf(1005n, [rate('t', 20)])[0]!.amount).toBe(201);
    expect(taxesOf(1003n, [rate('t', 20)])[0]!.amount).toBe(201);
    expect(taxesOf(1002n, [rate('t', 20)])[0]!.amount).toBe(200);
    // 4 decimals: 8.8750 % of 1000 = 88.75 → 89.
    expect(taxesOf(1000n, [rate('t', 8.875)])[0]!.amount).toBe(89);
    // A credit's tax is credited, rounded away from zero too.
    expect(taxesOf(-1003n, [rate('t', 20)])[0]!.amount).toBe(-201);
  });
  it('rounds per line, not on the sum', () => {
    // Two lines of 1003 at 20 %: 200.6 + 200.6 → 201 + 201 = 402 (on the sum it would be 401).
    const p = priceInvoice([{ amount: 1003n }, { amount: 1003n }], null, [rate('t', 20)]);
    expect(p.taxAmount).toBe(402n);
    expect(p.total).toBe(2006n + 402n);
  });
  it('totals: total = subtotal − discount + exclusive tax', () => {
    const p = priceInvoice([{ amount: 2900n }, { amount: 1000n }], pct(10), [rate('vat', 20)]);
    // discount 390: shares 290 (2900) and 100 (1000); taxes 20 % of 2610 = 522, of 900 = 180.
    expect(p.discountAmount).toBe(390n);
    expect(p.lines.map((l) => l.discountAmount)).toEqual([290n, 100n]);
    expect(p.lines.map((l) => l.taxAmounts[0]!.amount)).toEqual([522, 180]);
    expect(p.taxAmount).toBe(702n);
    expect(p.total).toBe(3900n - 390n + 702n);
  });
});

describe('inclusive tax', () => {
  it('is extracted from the line, not added', () => {
    // 1200 with 20 % included: 1200 × 0.2 / 1.2 = 200.
    const p = priceInvoice([{ amount: 1200n }], null, [rate('vat', 20, true)]);
    expect(p.lines[0]!.taxAmounts).toEqual([{ tax_rate: 'vat', amount: 200, inclusive: true }]);
    expect(p.taxAmount).toBe(200n);
    expect(p.total).toBe(1200n);
  });
  it('rounds half away from zero per line', () => {
    // 1000 with 20 % included: 166.666… → 167; 1001 → 166.83 → 167; 999 → 166.5 → 167; 998 → 166.33 → 166.
    const tax = (a: bigint) => taxesOf(a, [rate('vat', 20, true)])[0]!.amount;
    expect(tax(1000n)).toBe(167);
    expect(tax(999n)).toBe(167);
    expect(tax(998n)).toBe(166);
    expect(tax(-999n)).toBe(-167);
  });
  it('with an exclusive rate besides: the exclusive one is on the net amount', () => {
    // 1100 containing 10 %: net 1000; an exclusive 5 % on the net: 50.
    const p = priceInvoice([{ amount: 1100n }], null, [rate('vat', 10, true), rate('city', 5)]);
    expect(p.lines[0]!.taxAmounts.map((t) => t.amount)).toEqual([100, 50]);
    expect(p.taxAmount).toBe(150n);
    expect(p.total).toBe(1150n);
  });
});

describe('credits carried over (taxable false)', () => {
  it('take no discount share and no tax, and do not enlarge the discount base', () => {
    const p = priceInvoice([{ amount: -500n, taxable: false }, { amount: 2000n }], pct(50), [rate('vat', 20)]);
    expect(p.discountAmount).toBe(1000n);
    expect(p.lines[0]).toEqual({ discountAmount: 0n, taxAmounts: [] });
    expect(p.lines[1]!.taxAmounts[0]!.amount).toBe(200);
    expect(p.total).toBe(1500n - 1000n + 200n);
  });
});

describe('proration with quantity', () => {
  const plan = (id: string, amount: bigint) => ({ id, name: id, amount }) as Plan;
  const start = new Date('2027-01-01T00:00:00Z');
  const end = new Date('2027-01-31T00:00:00Z'); // 30 days
  const half = new Date('2027-01-16T00:00:00Z');

  it('credits old unit × old quantity and charges new unit × new quantity for the rest of the period', () => {
    const lines = prorationLines(plan('Pro', 1000n), plan('Pro', 1000n), start, end, half, 2, 5);
    expect(lines.map((l) => [l.amount, l.quantity])).toEqual([
      [-1000n, 2],
      [2500n, 5],
    ]);
  });
  it('prorates the whole line amount (rounded once, half away from zero), so back and forth nets to zero', () => {
    const third = new Date(start.getTime() + 10 * 86_400_000); // 20 of 30 days remain
    const up = prorationLines(plan('Pro', 999n), plan('Pro', 999n), start, end, third, 1, 3);
    // 999 × 20/30 = 666; 2997 × 20/30 = 1998.
    expect(up.map((l) => l.amount)).toEqual([-666n, 1998n]);
    const down = prorationLines(plan('Pro', 999n), plan('Pro', 999n), start, end, third, 3, 1);
    expect([...up, ...down].reduce((s, l) => s + l.amount, 0n)).toBe(0n);
    // 1001 × 3 × 1/3 = 1001 exactly, where per-unit rounding (333.67 → 334) × 3 = 1002 would not.
    const oneThird = new Date(start.getTime() + 20 * 86_400_000);
    expect(prorationLines(plan('Pro', 1001n), plan('Pro', 1001n), start, end, oneThird, 1, 3)[1]!.amount).toBe(1001n);
  });
});

// Plan, quantity and interval changes (src/domain/billing/changes.ts; docs/billing.md "Plan
// changes and proration", "Interval changes"): the money of each — the unused-time credit of an
// interval change above all — and how the subscription moves.
import { describe, expect, it } from 'vitest';
import type { Plan, Subscription } from '../../src/generated/prisma/client.ts';
import { changeTime, planChange, type PlanChangeArgs } from '../../src/domain/billing/changes.ts';
import { StateError, ValidationError } from '../../src/platform/errors.ts';

const d = (s: string) => new Date(s);
const plan = (id: string, amount: bigint, interval = 'month', intervalCount = 1, currency = 'USD') => ({ id, name: id, amount, interval, intervalCount, currency }) as unknown as Plan;
const sub = (over: Partial<Subscription> = {}) =>
  ({
    id: 'sub_1',
    status: 'active',
    planId: 'monthly',
    quantity: 1,
    billingAnchor: d('2029-01-10T00:00:00Z'),
    anchorGeneration: 0,
    periodIndex: 0,
    currentPeriodStart: d('2029-01-10T00:00:00Z'),
    currentPeriodEnd: d('2029-02-10T00:00:00Z'), // 31 days
    cancelAtPeriodEnd: false,
    cancelAt: null,
    ...over,
  }) as unknown as Subscription;
const args = (over: Partial<PlanChangeArgs>): PlanChangeArgs => ({
  sub: sub(),
  oldPlan: plan('monthly', 3100n),
  newPlan: plan('yearly', 31000n, 'year'),
  quantity: 1,
  behavior: 'create_prorations',
  at: d('2029-01-20T00:00:00Z'), // 10 of 31 days used, 21 left
  waiting: 0n,
  waitingLines: 0,
  param: 'plan_id',
  ...over,
});

describe('an interval change credits the unused time and invoices the new period at once', () => {
  it('monthly → yearly: credit for 21 of 31 days of the old price, the full year of the new, the anchor reset to the change', () => {
    const c = planChange(args({}));
    expect(c.interval).toBe(true);
    expect(c.invoiceNow).toBe(true);
    expect(c.waitLines).toBe(false);
    expect(c.lines.map((l) => [l.description, l.amount, l.proration ?? false, l.periodStart.toISOString(), l.periodEnd.toISOString()])).toEqual([
      ['Unused time on monthly', -2100n, true, '2029-01-20T00:00:00.000Z', '2029-02-10T00:00:00.000Z'],
      ['yearly (2029-01-20 – 2030-01-20)', 31000n, false, '2029-01-20T00:00:00.000Z', '2030-01-20T00:00:00.000Z'],
    ]);
    expect(c.patch).toEqual({
      planId: 'yearly',
      quantity: 1,
      billingAnchor: d('2029-01-20T00:00:00Z'),
      anchorGeneration: 1,
      periodIndex: 0,
      currentPeriodStart: d('2029-01-20T00:00:00Z'),
      currentPeriodEnd: d('2030-01-20T00:00:00Z'),
      cancelAt: null,
    });
    expect([c.periodStart.toISOString(), c.periodEnd.toISOString()]).toEqual(['2029-01-20T00:00:00.000Z', '2030-01-20T00:00:00.000Z']);
  });

  it('the credit is the old plan × the old quantity, to the second, rounded half away from zero', () => {
    // 1001 × 3 over 31 days, 21 days and 1 second left: 3003 × 1,814,401 / 2,678,400 = 2034.3… → 2034.
    const c = planChange(args({ sub: sub({ quantity: 3 }), oldPlan: plan('monthly', 1001n), quantity: 2, at: d('2029-01-19T23:59:59Z') }));
    expect(c.lines[0]).toMatchObject({ description: 'Unused time on 3 × monthly', amount: -2034n, quantity: 3 });
    expect(c.lines[1]).toMatchObject({ description: '2 × yearly (2029-01-19 – 2030-01-19)', amount: 62000n, quantity: 2, unitAmount: 31000n });
    // Exactly half a cent rounds away from zero: 1 over a period of 2 s, 1 s left → 0.5 → 1.
    const tiny = planChange(
      args({
        sub: sub({ currentPeriodStart: d('2029-01-10T00:00:00Z'), currentPeriodEnd: d('2029-01-10T00:00:02Z') }),
        oldPlan: plan('monthly', 1n),
        at: d('2029-01-10T00:00:01Z'),
      }),
    );
    expect(tiny.lines[0]!.amount).toBe(-1n);
  });

  it('yearly → monthly, interval_count 1 → 3, and at the very end of the period (nothing left to credit)', () => {
    const down = planChange(
      args({
        sub: sub({ planId: 'yearly', currentPeriodStart: d('2029-06-01T00:00:00Z'), currentPeriodEnd: d('2030-06-01T00:00:00Z') }),
        oldPlan: plan('yearly', 120000n, 'year'),
        newPlan: plan('monthly', 12000n),
        at: d('2029-07-01T00:00:00Z'), // 335 of 365 days left
      }),
    );
    expect(down.lines.map((l) => l.amount)).toEqual([-110137n, 12000n]); // 120000 × 335 / 365 = 110136.98…
    expect(down.patch.currentPeriodEnd).toEqual(d('2029-08-01T00:00:00Z'));
    const quarterly = planChange(args({ newPlan: plan('quarterly', 9000n, 'month', 3) }));
    expect(quarterly.interval).toBe(true);
    expect(quarterly.patch.currentPeriodEnd).toEqual(d('2029-04-20T00:00:00Z'));
    const atEnd = planChange(args({ at: d('2029-02-10T00:00:00Z') }));
    expect(atEnd.lines.map((l) => l.amount)).toEqual([31000n]);
  });

  it('proration_behavior none: no credit, the new period still invoiced at once; always_invoice: the same as create_prorations', () => {
    const none = planChange(args({ behavior: 'none' }));
    expect(none.lines.map((l) => l.amount)).toEqual([31000n]);
    expect(none.invoiceNow).toBe(true);
    expect(planChange(args({ behavior: 'always_invoice' })).lines).toEqual(planChange(args({})).lines);
  });

  it('cancel_at_period_end follows the new period; the anchor generation moves on (the new periods bill under new keys)', () => {
    const c = planChange(args({ sub: sub({ cancelAtPeriodEnd: true, cancelAt: d('2029-02-10T00:00:00Z'), anchorGeneration: 4 }) }));
    expect(c.patch).toMatchObject({ cancelAt: d('2030-01-20T00:00:00Z'), anchorGeneration: 5 });
  });

  it('during a trial the plan just changes; incomplete, paused and unpaid refuse (409 subscription_not_active); another currency is 400 on plan_id', () => {
    const trial = planChange(args({ sub: sub({ status: 'trialing' }) }));
    expect(trial).toMatchObject({ interval: false, lines: [], invoiceNow: false, waitLines: false, patch: { planId: 'yearly', quantity: 1 } });
    for (const status of ['incomplete', 'paused', 'unpaid']) {
      const e = (() => {
        try {
          planChange(args({ sub: sub({ status }) }));
        } catch (err) {
          return err;
        }
      })();
      expect(e).toBeInstanceOf(StateError);
      expect(e).toMatchObject({ code: 'subscription_not_active', param: 'plan_id' });
    }
    expect(() => planChange(args({ newPlan: plan('eur', 31000n, 'year', 1, 'EUR') }))).toThrow(ValidationError);
  });

  it('an invoice larger than one payment may charge is refused before anything is made', () => {
    expect(() => planChange(args({ newPlan: plan('big', 99_999_999_999n, 'year'), quantity: 2 }))).toThrow(expect.objectContaining({ code: 'amount_too_large', param: 'plan_id' }));
    expect(() => planChange(args({ newPlan: plan('big', 99_999_999_000n, 'year'), waiting: 5000n }))).toThrow(expect.objectContaining({ code: 'amount_too_large' }));
  });

  it('an invoice of more than 250 lines is refused before anything is made (MAX_INVOICE_LINES)', () => {
    // An interval change invoices the credit, the new plan line and everything waiting now.
    expect(planChange(args({ waitingLines: 248 })).lines).toHaveLength(2);
    expect(() => planChange(args({ waitingLines: 249 }))).toThrow(expect.objectContaining({ code: 'invoice_too_many_lines', param: 'plan_id' }));
    // Within the interval: create_prorations adds two lines to the renewal, which adds its plan line.
    const within = { newPlan: plan('bigger', 6200n), param: 'quantity' };
    expect(planChange(args({ ...within, waitingLines: 247 })).waitLines).toBe(true);
    expect(() => planChange(args({ ...within, waitingLines: 248 }))).toThrow(expect.objectContaining({ code: 'invoice_too_many_lines', param: 'quantity' }));
    // always_invoice: the two lines and what waits, now.
    expect(planChange(args({ ...within, behavior: 'always_invoice', waitingLines: 248 })).invoiceNow).toBe(true);
    expect(() => planChange(args({ ...within, behavior: 'always_invoice', waitingLines: 249 }))).toThrow(expect.objectContaining({ code: 'invoice_too_many_lines' }));
    // none makes no line: never refused for it.
    expect(planChange(args({ ...within, behavior: 'none', waitingLines: 400 })).lines).toEqual([]);
  });
});

describe('a change within the interval', () => {
  it('create_prorations waits, always_invoice invoices now, none makes nothing; the period stays', () => {
    const pro = plan('pro', 9300n);
    const wait = planChange(args({ newPlan: pro }));
    expect(wait).toMatchObject({ interval: false, invoiceNow: false, waitLines: true, patch: { planId: 'pro', quantity: 1 } });
    expect(wait.lines.map((l) => [l.description, l.amount])).toEqual([
      ['Unused time on monthly', -2100n],
      ['Remaining time on pro', 6300n],
    ]);
    expect(wait.patch.billingAnchor).toBeUndefined();
    expect(planChange(args({ newPlan: pro, behavior: 'always_invoice' }))).toMatchObject({ invoiceNow: true, waitLines: false, periodEnd: d('2029-02-10T00:00:00Z') });
    expect(planChange(args({ newPlan: pro, behavior: 'none' }))).toMatchObject({ lines: [], invoiceNow: false, waitLines: false });
  });
});

describe('proration_date (changeTime)', () => {
  const s = sub();
  const now = d('2029-01-25T12:00:00Z');
  it('defaults to now; in the current period and not after now it is taken in whole seconds', () => {
    expect(changeTime(s, undefined, now)).toBe(now);
    expect(changeTime(s, d('2029-01-20T00:00:00.900Z'), now)).toEqual(d('2029-01-20T00:00:00Z'));
    expect(changeTime(s, d('2029-01-10T00:00:00Z'), now)).toEqual(d('2029-01-10T00:00:00Z'));
    expect(changeTime(s, now, now)).toEqual(now);
  });
  it('before the period or after now is 400 parameter_invalid on proration_date', () => {
    for (const bad of ['2029-01-09T23:59:59Z', '2029-01-25T12:00:01Z']) {
      expect(() => changeTime(s, d(bad), now)).toThrow(expect.objectContaining({ code: 'parameter_invalid', param: 'proration_date' }));
    }
  });
});

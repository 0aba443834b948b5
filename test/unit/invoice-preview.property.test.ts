// The upcoming-invoice guarantee (issue 25, item 4), as a property over 10,000 seeded random
// subscriptions, in process: plans in USD, JPY and KWD of every interval, quantities, coupons
// (once, repeating, forever; percent and amount off), inclusive and exclusive tax rates, trials,
// credit balances, wallets, one-off items, and a random walk of plan / quantity / interval /
// coupon changes with every proration behaviour and clock steps across renewals. Before every
// invoice the walk makes, it takes the service's preview (src/domain/billing/upcoming.ts
// previewUpcoming: the pure core of GET /v1/invoices/upcoming, on the state the database would
// hold) and asserts the invoice equals it line for line, cent for cent; a change's preview also
// predicts the renewal after it, checked when nothing else happened in between.
//
// The invoices are made by the reference model (test/helpers/billing-model.ts: the engine's rules
// written from docs/billing.md, independent of the service's composition code); the end-to-end
// property test (test/invoice-preview.property.test.ts) runs the same scenarios through HTTP on
// the database and holds the real invoices to the same preview and the same model.
//
// A failure names its seed; PREVIEW_SEED=<n> runs that one case, PREVIEW_CASES=<n> changes the count.
import { describe, expect, it } from 'vitest';
import type { Coupon, Plan, Subscription } from '../../src/generated/prisma/client.ts';
import { previewUpcoming, type BillingState, type UpcomingChange } from '../../src/domain/billing/upcoming.ts';
import type { PricingTaxRate } from '../../src/domain/pricing/rules.ts';
import { addIntervals } from '../../src/domain/billing/periods.ts';
import { BillingModel, catalogue, describeScenario, modelMoney, moneyOf, scenario, startOf, type MCoupon, type MInvoice } from '../helpers/billing-model.ts';

const CASES = Number(process.env.PREVIEW_CASES ?? 10_000);
const ONE = process.env.PREVIEW_SEED === undefined ? null : Number(process.env.PREVIEW_SEED);

const couponRow = (c: MCoupon) => ({ ...c, currency: null, deletedAt: null }) as unknown as Coupon;

/** What the database would hold for the model's subscription now (loadBillingState's answer). */
function stateOf(m: BillingModel, rates: PricingTaxRate[]): BillingState {
  const sub = {
    id: 'sub_model',
    merchantId: 'mer_model',
    customerId: 'cus_model',
    status: m.status,
    planId: m.plan.id,
    quantity: m.quantity,
    billingAnchor: m.anchor,
    anchorGeneration: 0,
    periodIndex: m.periodIndex,
    currentPeriodStart: m.periodStart,
    currentPeriodEnd: m.periodEnd,
    cancelAtPeriodEnd: false,
    cancelAt: null,
    resumesAt: null,
    couponId: m.discount?.coupon.id ?? null,
    discountStart: m.discount?.start ?? null,
    discountEnd: m.discount?.end ?? null,
    defaultTaxRates: rates.map((r) => r.id),
    applyWalletBalance: m.applyWallet,
  } as unknown as Subscription;
  return {
    sub,
    plan: m.plan as unknown as Plan,
    coupon: m.discount ? couponRow(m.discount.coupon) : null,
    taxRates: rates,
    pending: m.pending.map((l) => ({ ...l })),
    items: m.items.map((i) => ({
      id: null,
      itemId: i.id,
      description: i.description,
      periodStart: i.createdAt,
      periodEnd: i.createdAt,
      amount: i.amount,
      proration: false,
      // The model's items are of one unit: their line carries it (invoice-items.ts itemLine).
      quantity: 1,
      unitAmount: i.amount,
      taxable: true,
      createdAt: i.createdAt,
    })),
    creditBalance: m.credit,
    walletBalance: m.wallet,
  };
}

interface Outcome {
  invoices: number;
  predicted: number;
  changesNow: number;
  intervalChanges: number;
  /** invoices that got a discount, taxes, had a total below zero (credited to the balance), drew credit balance or wallet, left an item waiting for lack of room */
  discounted: number;
  taxed: number;
  negative: number;
  /** invoices that drew credit a negative invoice before them had put in the balance */
  drewNegative: number;
  credited: number;
  fromWallet: number;
  itemsDeferred: number;
}

/** Runs one case; throws (naming the seed and step) at the first invoice that differs from its preview. */
function runCase(seed: number): Outcome {
  const s = scenario(seed);
  const { plans, coupons, rates } = catalogue(s);
  let now = startOf(seed);
  const trialEnd = s.sub.trialDays > 0 ? new Date(now.getTime() + s.sub.trialDays * 86_400_000) : null;
  const m = new BillingModel(s.currency, rates, s.sub.applyWallet, BigInt(s.credit), BigInt(s.wallet), 0, {
    plan: plans[s.sub.plan]!,
    quantity: s.sub.quantity,
    coupon: s.sub.coupon === null ? null : coupons[s.sub.coupon]!,
    now,
    trialEnd,
    // Items the customer had waiting, added a minute before the subscription.
    items: s.itemsBefore.map((i, k) => ({ id: `ii_before_${k}`, description: i.description, amount: BigInt(i.amount), createdAt: new Date(now.getTime() - 60_000 + k * 1000) })),
  });
  const out: Outcome = { invoices: m.invoices.length, predicted: 0, changesNow: 0, intervalChanges: 0, discounted: 0, taxed: 0, negative: 0, drewNegative: 0, credited: 0, fromWallet: 0, itemsDeferred: 0 };
  let sawNegative = false;
  /** A change's prediction of the next renewal (kept while nothing else happens). */
  let expected: unknown = null;
  const check = (what: string, preview: unknown, real: MInvoice) => {
    const [p, r] = [moneyOf(preview), modelMoney(real, s.currency)];
    // Compared as JSON first (both built key by key in one order): expect's deep diff only on a difference.
    if (JSON.stringify(p) !== JSON.stringify(r)) expect(p, `${describeScenario(s)} — ${what} (${real.number} at ${real.at.toISOString()})`).toEqual(r);
    if (what.includes('predicted')) return;
    if (real.discountAmount > 0n) out.discounted++;
    if (real.taxAmount !== 0n) out.taxed++;
    if (real.total < 0n) out.negative++;
    if (real.creditApplied > 0n) out.credited++;
    if (real.creditApplied > 0n && sawNegative) out.drewNegative++;
    if (real.total < 0n) sawNegative = true;
    if (real.fromWallet > 0n) out.fromWallet++;
    if (m.items.length > 0) out.itemsDeferred++;
  };
  for (const [n, step] of s.steps.entries()) {
    const target = new Date(now.getTime() + step.advance * 1000);
    while (m.periodEnd.getTime() <= target.getTime()) {
      // Before the renewal: the preview, at the clock's time then.
      const preview = previewUpcoming(stateOf(m, rates), null, now).invoice;
      const real = m.renew();
      out.invoices++;
      check(`step ${n}: the renewal's preview`, preview, real);
      if (expected) {
        check(`step ${n}: the renewal predicted by the change before`, expected, real);
        out.predicted++;
      }
      expected = null;
      now = real.at;
    }
    now = target;
    const a = step.action;
    if (a.kind === 'item') {
      m.addItem(BigInt(a.amount), a.description, now, `ii_${n}`);
      expected = null;
    } else if (a.kind === 'credit') {
      m.credit += BigInt(a.amount);
      expected = null;
    } else if (a.kind === 'change') {
      const plan = a.plan === undefined ? undefined : plans[a.plan]!;
      const coupon = a.coupon === undefined ? undefined : a.coupon === null ? null : coupons[a.coupon]!;
      const change: UpcomingChange = {
        plan: plan as unknown as Plan | undefined,
        quantity: a.quantity,
        coupon: coupon === undefined ? undefined : coupon === null ? null : couponRow(coupon),
        behavior: a.behavior,
        at: now,
      };
      const before = m.plan;
      const preview = previewUpcoming(stateOf(m, rates), change, now);
      const real = m.change({ plan, quantity: a.quantity, coupon, behavior: a.behavior }, now);
      if (real) {
        out.invoices++;
        out.changesNow++;
        if (before.interval !== m.plan.interval || before.intervalCount !== m.plan.intervalCount) out.intervalChanges++;
        check(`step ${n}: the change's invoice`, preview.invoice, real);
        expected = preview.next;
      } else {
        expect(preview.next, `${describeScenario(s)} — step ${n}: no invoice now, no next_invoice`).toBeNull();
        expected = preview.invoice;
      }
    }
  }
  return out;
}

describe('the upcoming invoice equals the real one (property, in process)', () => {
  it(`${ONE === null ? CASES : 1} seeded random subscriptions, changes and clock steps: every invoice equals its preview line for line, cent for cent`, () => {
    const began = Date.now();
    const seeds = ONE === null ? Array.from({ length: CASES }, (_, i) => i + 1) : [ONE];
    const total: Outcome = { invoices: 0, predicted: 0, changesNow: 0, intervalChanges: 0, discounted: 0, taxed: 0, negative: 0, drewNegative: 0, credited: 0, fromWallet: 0, itemsDeferred: 0 };
    for (const seed of seeds) {
      let o: Outcome;
      try {
        o = runCase(seed);
      } catch (e) {
        // The seed is in the message; this line makes it impossible to miss.
        console.error(`invoice preview property failed for seed ${seed} (rerun: PREVIEW_SEED=${seed} npx vitest run test/unit/invoice-preview.property.test.ts)`);
        throw e;
      }
      for (const k of Object.keys(total) as (keyof Outcome)[]) total[k] += o[k];
    }
    // The walk reaches every kind of invoice, many times.
    if (ONE === null && CASES >= 1000) {
      expect(total.invoices).toBeGreaterThan(CASES * 3);
      expect(total.changesNow).toBeGreaterThan(CASES / 4);
      expect(total.intervalChanges).toBeGreaterThan(CASES / 20);
      expect(total.predicted).toBeGreaterThan(CASES / 4);
      for (const k of ['discounted', 'taxed', 'negative', 'drewNegative', 'credited', 'fromWallet'] as const) expect(total[k], k).toBeGreaterThan(CASES / 100);
      expect(total.itemsDeferred, 'itemsDeferred').toBeGreaterThan(CASES / 1000);
    }
    console.log(`invoice preview property: ${seeds.length} cases in ${Date.now() - began} ms: ${JSON.stringify(total)}`);
    // The budget is 10,000 cases in under a minute: about 6 s alone on a 2-core machine. The
    // timeout leaves room for a machine busy with the rest of the suite (it once took over 60 s then).
  }, 180_000);

  it('the generator is seeded: the same seed, the same scenario', () => {
    expect(scenario(42)).toEqual(scenario(42));
    expect(startOf(42)).toEqual(startOf(42));
    expect(addIntervals(startOf(1), 'month', 1, 1).getTime()).toBeGreaterThan(startOf(1).getTime());
  });
});

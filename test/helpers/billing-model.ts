// A reference model of the subscription engine's invoicing, written from docs/billing.md and
// independent of the service's own composition code (src/domain/billing/compose.ts, changes.ts,
// upcoming.ts): it walks one subscription through time step by step — its first invoice or trial,
// renewals, plan / quantity / interval / coupon changes with each proration behaviour, one-off
// items, credit balance, wallet — and makes each invoice as the engine does at that moment. It
// shares only the lowest money primitives, themselves unit-tested: priceInvoice (discount shares,
// taxes), prorate and the calendar (periodAt, addIntervals).
//
// The preview property tests (test/unit/invoice-preview.property.test.ts in process,
// test/invoice-preview.property.test.ts through HTTP on the database) drive it with the seeded
// scenarios below and compare: the service's preview taken before each real invoice = the model's
// invoice (and, end to end, = the real invoice the database made).
import { addIntervals, periodAt, prorate, type Interval } from '../../src/domain/billing/periods.ts';
import { priceInvoice, type LineTax, type PricingCoupon, type PricingTaxRate } from '../../src/domain/pricing/rules.ts';
import { formatMoney, MAX_AMOUNT } from '../../src/platform/money.ts';

// ---------------------------------------------------------------- a seeded generator

/** mulberry32: a small seeded PRNG (the same seed gives the same scenario everywhere). */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}

export type Cur = 'USD' | 'JPY' | 'KWD';
export const CURRENCIES: Cur[] = ['USD', 'JPY', 'KWD'];
/** Plausible prices per currency, in minor units. */
const PRICE_RANGE: Record<Cur, [number, number]> = { USD: [99, 250_000], JPY: [100, 300_000], KWD: [900, 900_000] };
const INTERVALS: [Interval, number][] = [
  ['month', 1],
  ['month', 1],
  ['month', 3],
  ['month', 6],
  ['year', 1],
  ['week', 1],
  ['week', 2],
  ['day', 10],
];
export const BEHAVIORS = ['create_prorations', 'always_invoice', 'none'] as const;
export type Behavior = (typeof BEHAVIORS)[number];

export interface PlanSpec {
  name: string;
  amount: number;
  interval: Interval;
  intervalCount: number;
}
export interface CouponSpec {
  id: string;
  percentOff: number | null;
  amountOff: number | null;
  duration: 'once' | 'repeating' | 'forever';
  months: number | null;
}
export interface TaxSpec {
  name: string;
  percentage: number;
  inclusive: boolean;
}
export type Action =
  | { kind: 'wait' }
  | { kind: 'change'; plan?: number; quantity?: number; coupon?: number | null; behavior: Behavior }
  | { kind: 'item'; amount: number; description: string }
  | { kind: 'credit'; amount: number };
export interface Step {
  /** seconds the clock moves before the action (crossing renewals on the way) */
  advance: number;
  action: Action;
}
export interface Scenario {
  seed: number;
  currency: Cur;
  plans: PlanSpec[];
  coupons: CouponSpec[];
  taxes: TaxSpec[];
  sub: { plan: number; quantity: number; coupon: number | null; taxes: number[]; trialDays: number; applyWallet: boolean };
  /** credit balance and wallet before the subscription */
  credit: number;
  wallet: number;
  /** one-off items the customer has waiting before the subscription is made (its first invoice takes those that fit) */
  itemsBefore: { amount: number; description: string }[];
  steps: Step[];
}

const approxSeconds = (p: Pick<PlanSpec, 'interval' | 'intervalCount'>) => ({ day: 86_400, week: 604_800, month: 2_629_746, year: 31_556_952 })[p.interval] * p.intervalCount;

/** A random subscription with its catalogue and a random walk of changes and clock steps. */
export function scenario(seed: number, opts: { steps?: [number, number]; wallet?: boolean; hugeItems?: boolean } = {}): Scenario {
  const r = rng(seed);
  const currency = r.pick(CURRENCIES);
  const [lo, hi] = PRICE_RANGE[currency];
  const price = () => (r.chance(0.1) ? lo : r.int(lo, hi));
  const plans: PlanSpec[] = Array.from({ length: r.int(2, 4) }, (_, i) => {
    const [interval, intervalCount] = r.chance(0.6) && i > 0 ? [(['month', 1] as const)[0], 1] : r.pick(INTERVALS);
    return { name: `Plan ${String.fromCharCode(65 + i)}`, amount: price(), interval, intervalCount };
  });
  const coupons: CouponSpec[] = Array.from({ length: r.int(1, 3) }, (_, i) => {
    const duration = r.pick(['once', 'repeating', 'forever'] as const);
    const percent = r.chance(0.7);
    return {
      id: `C${seed}x${i}`,
      percentOff: percent ? r.pick([5, 10, 12.5, 15, 20, 25, 33.33, 50, 99.99, 100, Math.max(0.01, r.int(1, 10_000) / 100)]) : null,
      amountOff: percent ? null : r.int(1, Math.floor(hi / 4)),
      duration,
      months: duration === 'repeating' ? r.int(1, 14) : null,
    };
  });
  const taxes: TaxSpec[] = Array.from({ length: r.int(0, 3) }, (_, i) => ({
    name: `Tax ${i}`,
    percentage: r.pick([0, 5, 7.5, 8.875, 19.6, 20, 21, 25.5, r.int(0, 300_000) / 10_000]),
    inclusive: r.chance(0.4),
  }));
  const sub = {
    plan: 0,
    quantity: r.chance(0.5) ? 1 : r.int(2, 40),
    coupon: r.chance(0.6) ? r.int(0, coupons.length - 1) : null,
    taxes: taxes.map((_, i) => i).filter(() => r.chance(0.7)),
    trialDays: r.chance(0.25) ? r.pick([3, 7, 14, 30]) : 0,
    applyWallet: (opts.wallet ?? true) && r.chance(0.2),
  };
  const [minSteps, maxSteps] = opts.steps ?? [3, 10];
  const steps: Step[] = [];
  let period = approxSeconds(plans[0]!);
  for (let i = r.int(minSteps, maxSteps); i > 0; i--) {
    // Usually within the period, sometimes across one or two renewals; never on a whole minute.
    const advance = Math.max(61, Math.floor(r.next() * (r.chance(0.3) ? 2.2 : 0.8) * period)) + r.int(1, 59);
    const roll = r.next();
    let action: Action;
    if (roll < 0.45) {
      const change: Extract<Action, { kind: 'change' }> = { kind: 'change', behavior: r.pick(BEHAVIORS) };
      if (r.chance(0.6)) change.plan = r.int(0, plans.length - 1);
      if (r.chance(0.5)) change.quantity = r.chance(0.3) ? 1 : r.int(1, 50);
      if (r.chance(0.25)) change.coupon = r.chance(0.3) ? null : r.int(0, coupons.length - 1);
      if (change.plan === undefined && change.quantity === undefined && change.coupon === undefined) change.quantity = r.int(1, 50);
      // Now and then a downgrade invoiced at once (the cheapest plan, one unit, always_invoice): on
      // a live subscription its invoice's total is usually below zero, and the credit goes to the
      // customer's credit balance for the invoices after it (issue 25, item 6).
      if (r.chance(0.12)) {
        change.plan = plans.reduce((best, p, k) => (p.amount < plans[best]!.amount ? k : best), 0);
        change.quantity = 1;
        change.behavior = 'always_invoice';
      }
      if (change.plan !== undefined) period = approxSeconds(plans[change.plan]!);
      action = change;
    } else if (roll < 0.6) {
      // Now and then an item so large that the next invoice has no room for another (it waits for
      // the one after: the item budget, counted with the invoice's exclusive taxes).
      const huge = opts.hugeItems !== false && r.chance(0.35);
      action = { kind: 'item', amount: huge ? r.int(Math.floor(MAX_AMOUNT * 0.55), Math.floor(MAX_AMOUNT * 0.9)) : r.int(1, Math.floor(hi / 2)), description: `Extra ${i}` };
    }
    else if (roll < 0.7) action = { kind: 'credit', amount: r.int(1, hi) };
    else action = { kind: 'wait' };
    steps.push({ advance, action });
  }
  return {
    seed,
    currency,
    plans,
    coupons,
    taxes,
    sub,
    credit: r.chance(0.3) ? r.int(1, hi) : 0,
    wallet: sub.applyWallet ? r.int(1, hi * 2) : 0,
    // Drawn last, so the rest of a seed's scenario is what it was before items could wait for a
    // first invoice; now and then one so large that the first invoice has no room for the next.
    itemsBefore: r.chance(0.3)
      ? Array.from({ length: r.int(1, 3) }, (_, k) => ({
          amount: opts.hugeItems !== false && r.chance(0.25) ? r.int(Math.floor(MAX_AMOUNT * 0.55), Math.floor(MAX_AMOUNT * 0.9)) : r.int(1, Math.floor(hi / 2)),
          description: `Waiting ${k}`,
        }))
      : [],
    steps,
  };
}

// ---------------------------------------------------------------- the model

export interface MPlan {
  id: string;
  name: string;
  amount: bigint;
  currency: string;
  interval: Interval;
  intervalCount: number;
}
export interface MCoupon {
  id: string;
  percentOffBp: number | null;
  amountOff: bigint | null;
  duration: 'once' | 'repeating' | 'forever';
  durationInMonths: number | null;
}
export interface MLine {
  id: string | null;
  description: string;
  periodStart: Date;
  periodEnd: Date;
  amount: bigint;
  proration: boolean;
  quantity: number | null;
  unitAmount: bigint | null;
  taxable: boolean;
  createdAt: Date;
}
export interface MItem {
  id: string;
  description: string;
  amount: bigint;
  createdAt: Date;
}
export interface MInvoice {
  number: string;
  reason: 'subscription_create' | 'subscription_cycle' | 'subscription_update';
  at: Date;
  periodStart: Date;
  periodEnd: Date;
  lines: (MLine & { discountAmount: bigint; taxAmounts: LineTax[] })[];
  subtotal: bigint;
  discountAmount: bigint;
  couponId: string | null;
  taxAmount: bigint;
  total: bigint;
  creditApplied: bigint;
  fromWallet: bigint;
  amountDue: bigint;
  /** a total below zero, as the credit it added to the customer's credit balance (else 0) */
  creditedToBalance: bigint;
}

/** The most lines one invoice holds (docs/billing.md, "Lines per invoice"). */
const INVOICE_LINES = 250;
const iso = (d: Date) => d.toISOString().slice(0, 10);
const named = (p: MPlan, q: number) => (q === 1 ? p.name : `${q} × ${p.name}`);
const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** The order an invoice lists its lines in: plan lines and items, then prorations; each by creation, amount, then id (a line not made yet last). */
function lineOrder(a: MLine, b: MLine): number {
  if (a.proration !== b.proration) return a.proration ? 1 : -1;
  if (a.createdAt.getTime() !== b.createdAt.getTime()) return a.createdAt.getTime() - b.createdAt.getTime();
  if (a.amount !== b.amount) return a.amount < b.amount ? -1 : 1;
  if (a.id === b.id) return 0;
  return a.id === null ? 1 : b.id === null ? -1 : a.id < b.id ? -1 : 1;
}

export class BillingModel {
  status: 'trialing' | 'active';
  plan: MPlan;
  quantity: number;
  anchor: Date;
  periodIndex: number;
  periodStart: Date;
  periodEnd: Date;
  discount: { coupon: MCoupon; start: Date; end: Date | null } | null = null;
  pending: MLine[] = [];
  items: MItem[] = [];
  invoices: MInvoice[] = [];
  private lineSeq = 0;

  constructor(
    readonly currency: string,
    readonly rates: PricingTaxRate[],
    readonly applyWallet: boolean,
    public credit: bigint,
    public wallet: bigint,
    /** the merchant's last invoice number */
    public seq: number,
    s: { plan: MPlan; quantity: number; coupon: MCoupon | null; now: Date; trialEnd: Date | null; discountStart?: Date; items?: MItem[] },
  ) {
    this.plan = s.plan;
    // The customer's one-off items already waiting in the currency (oldest first) wait for the
    // subscription's first invoice like any later one.
    this.items = [...(s.items ?? [])];
    this.quantity = s.quantity;
    if (s.coupon) this.applyCoupon(s.coupon, s.discountStart ?? s.now);
    if (s.trialEnd) {
      this.status = 'trialing';
      this.anchor = s.trialEnd;
      this.periodIndex = -1;
      this.periodStart = s.now;
      this.periodEnd = s.trialEnd;
    } else {
      this.status = 'active';
      this.anchor = s.now;
      this.periodIndex = 0;
      this.periodStart = s.now;
      this.periodEnd = addIntervals(s.now, s.plan.interval, s.plan.intervalCount, 1);
      // The first invoice: its plan line, and the items the customer had waiting that fit (no
      // proration of it waits yet) — docs/billing.md, "One-off invoices": the first invoice takes them.
      this.invoice('subscription_create', s.now, this.periodStart, this.periodEnd, [this.planLine(this.periodStart, this.periodEnd, s.now)], true);
    }
  }

  private applyCoupon(c: MCoupon, start: Date) {
    this.discount = { coupon: c, start, end: c.duration === 'repeating' ? addIntervals(start, 'month', c.durationInMonths!, 1) : null };
  }

  private planLine(start: Date, end: Date, at: Date): MLine {
    return {
      id: null,
      description: `${named(this.plan, this.quantity)} (${iso(start)} – ${iso(end)})`,
      periodStart: start,
      periodEnd: end,
      amount: this.plan.amount * BigInt(this.quantity),
      proration: false,
      quantity: this.quantity,
      unitAmount: this.plan.amount,
      taxable: true,
      createdAt: at,
    };
  }

  private proration(description: string, amount: bigint, quantity: number, from: Date, at: Date): MLine {
    return { id: null, description, periodStart: from, periodEnd: this.periodEnd, amount, proration: true, quantity, unitAmount: null, taxable: true, createdAt: at };
  }

  private stored(l: MLine): MLine {
    return { ...l, id: `il_model_${String(++this.lineSeq).padStart(6, '0')}` };
  }

  /** Makes an invoice at `at` (docs/billing.md "Invoices", "Discounts and taxes", "The customer credit balance"). */
  private invoice(reason: MInvoice['reason'], at: Date, periodStart: Date, periodEnd: Date, lines: MLine[], takeWaiting: boolean): MInvoice {
    const waiting = takeWaiting ? this.pending : [];
    const billed = [...lines, ...waiting].reduce((s, l) => s + l.amount, 0n);
    let room = BigInt(MAX_AMOUNT) - (billed > 0n ? billed : 0n);
    const taken: MLine[] = [];
    // An item fits when the amounts stay under the maximum and, with exclusive taxes, so does the
    // invoice's total with its taxes before any discount (docs/billing.md, "One-off invoices").
    const taxedTotal = (extra: bigint) => priceInvoice([...lines, ...waiting, ...taken, { amount: extra }], null, this.rates).total;
    const exclusive = this.rates.some((r) => !r.inclusive);
    if (takeWaiting) {
      const left: MItem[] = [];
      // At most 250 lines per invoice: the candidates are the oldest 250 waiting items, taken while
      // the invoice's lines stay within 250 (docs/billing.md, "Lines per invoice").
      for (const [k, i] of this.items.entries()) {
        if (k < INVOICE_LINES && lines.length + waiting.length + taken.length < INVOICE_LINES && i.amount <= room && (!exclusive || taxedTotal(i.amount) <= BigInt(MAX_AMOUNT))) {
          room -= i.amount;
          taken.push({ id: null, description: i.description, periodStart: i.createdAt, periodEnd: i.createdAt, amount: i.amount, proration: false, quantity: 1, unitAmount: i.amount, taxable: true, createdAt: i.createdAt });
        } else left.push(i);
      }
      this.items = left;
      this.pending = [];
    }
    const all = [...lines, ...waiting, ...taken].sort(lineOrder);
    const d = this.discount;
    const active = d !== null && d.start.getTime() <= at.getTime() && (d.end === null || at.getTime() < d.end.getTime());
    const coupon: PricingCoupon | null = active ? { id: d!.coupon.id, percentOffBp: d!.coupon.percentOffBp, amountOff: d!.coupon.amountOff, once: d!.coupon.duration === 'once' } : null;
    const priced = priceInvoice(all, coupon, this.rates);
    const number = `INV-${String(++this.seq).padStart(6, '0')}`;
    const total = priced.total;
    // A once discount is the first invoice's that it discounts (docs/billing.md, Coupons: "removed
    // once an invoice got it"); an invoice with nothing to discount leaves it.
    if (active && d!.coupon.duration === 'once' && priced.discountAmount !== 0n) this.discount = null;
    const due = total > 0n ? total : 0n;
    const creditApplied = this.credit > 0n ? min(this.credit, due) : 0n;
    this.credit -= creditApplied;
    const fromWallet = this.applyWallet && this.wallet > 0n ? min(this.wallet, due - creditApplied) : 0n;
    this.wallet -= fromWallet;
    // The issue's rule (item 6, as Stripe's): a total below zero is owed to the customer and lands
    // in their credit balance, which their next invoices draw before anything else.
    const creditedToBalance = total < 0n ? -total : 0n;
    this.credit += creditedToBalance;
    const inv: MInvoice = {
      number,
      reason,
      at,
      periodStart,
      periodEnd,
      lines: all.map((l, i) => ({ ...l, discountAmount: priced.lines[i]!.discountAmount, taxAmounts: priced.lines[i]!.taxAmounts })),
      subtotal: priced.subtotal,
      discountAmount: priced.discountAmount,
      couponId: priced.discountAmount !== 0n ? coupon!.id : null,
      taxAmount: priced.taxAmount,
      total,
      creditApplied,
      fromWallet,
      amountDue: due - creditApplied - fromWallet,
      creditedToBalance,
    };
    this.invoices.push(inv);
    return inv;
  }

  /** The renewal at the end of the current period (the first invoice, at a trial's end). */
  renew(): MInvoice {
    const at = this.periodEnd;
    const reason = this.status === 'trialing' ? 'subscription_create' : 'subscription_cycle';
    this.status = 'active';
    this.periodIndex += 1;
    const p = periodAt(this.anchor, this.plan.interval, this.plan.intervalCount, this.periodIndex);
    this.periodStart = p.start;
    this.periodEnd = p.end;
    return this.invoice(reason, at, p.start, p.end, [this.planLine(p.start, p.end, at)], true);
  }

  addItem(amount: bigint, description: string, at: Date, id = `ii_model_${this.items.length}`): void {
    this.items.push({ id, description, amount, createdAt: at });
  }

  /**
   * A PATCH with proration date `at`: the coupon first, then plan and quantity. Returns the invoice
   * made now, or null. `discountStart`: when the real PATCH (a moment after `at`) started a new
   * discount; an invoice it makes is made then too.
   */
  change(c: { plan?: MPlan; quantity?: number; coupon?: MCoupon | null; behavior: Behavior }, at: Date, discountStart = at): MInvoice | null {
    const made = discountStart.getTime() > at.getTime() ? discountStart : at;
    if (c.coupon === null) this.discount = null;
    else if (c.coupon && c.coupon.id !== this.discount?.coupon.id) this.applyCoupon(c.coupon, discountStart);
    const newPlan = c.plan ?? this.plan;
    const newQuantity = c.quantity ?? this.quantity;
    if (newPlan.id === this.plan.id && newQuantity === this.quantity) return null;
    const oldPlan = this.plan;
    const oldQuantity = this.quantity;
    const whole = this.periodEnd.getTime() - this.periodStart.getTime();
    const left = this.periodEnd.getTime() - at.getTime();
    this.plan = newPlan;
    this.quantity = newQuantity;
    if (this.status === 'trialing') return null; // the plan just changes: the first invoice bills it
    const interval = newPlan.interval !== oldPlan.interval || newPlan.intervalCount !== oldPlan.intervalCount;
    const unused = -prorate(oldPlan.amount * BigInt(oldQuantity), left, whole);
    if (interval) {
      // Anchor reset to `at`, the unused time credited (not with none), the new period invoiced now.
      const credit = c.behavior !== 'none' && unused !== 0n ? [this.proration(`Unused time on ${named(oldPlan, oldQuantity)}`, unused, oldQuantity, at, at)] : [];
      this.anchor = at;
      this.periodIndex = 0;
      this.periodStart = at;
      this.periodEnd = addIntervals(at, newPlan.interval, newPlan.intervalCount, 1);
      return this.invoice('subscription_update', made, at, this.periodEnd, [...credit, this.planLine(at, this.periodEnd, made)], true);
    }
    if (c.behavior === 'none') return null;
    const lines = [
      this.proration(`Unused time on ${named(oldPlan, oldQuantity)}`, unused, oldQuantity, at, at),
      this.proration(`Remaining time on ${named(newPlan, newQuantity)}`, prorate(newPlan.amount * BigInt(newQuantity), left, whole), newQuantity, at, at),
    ].filter((l) => l.amount !== 0n);
    if (lines.length === 0) return null;
    if (c.behavior === 'create_prorations') {
      this.pending.push(...lines.map((l) => this.stored(l)));
      return null;
    }
    return this.invoice('subscription_update', made, at, this.periodEnd, lines, true);
  }
}

/** The scenario's plans, coupons and the subscription's tax rates, as the model (and the pricing rules) take them. */
export function catalogue(s: Scenario) {
  const plans: MPlan[] = s.plans.map((p, i) => ({ id: `plan_${i}`, name: p.name, amount: BigInt(p.amount), currency: s.currency, interval: p.interval, intervalCount: p.intervalCount }));
  const coupons: MCoupon[] = s.coupons.map((c) => ({
    id: c.id,
    percentOffBp: c.percentOff === null ? null : Math.round(c.percentOff * 100),
    amountOff: c.amountOff === null ? null : BigInt(c.amountOff),
    duration: c.duration,
    durationInMonths: c.months,
  }));
  const rates: PricingTaxRate[] = s.sub.taxes.map((i) => ({ id: `txr_${i}`, percentage: Math.round(s.taxes[i]!.percentage * 10_000), inclusive: s.taxes[i]!.inclusive }));
  return { plans, coupons, rates };
}

/** The start of case `seed`: a spread of days (month ends and leap days included) and times of day, in whole seconds. */
export function startOf(seed: number): Date {
  const days = (seed * 7919) % (4 * 365);
  const seconds = (seed * 104_729) % 86_400;
  return new Date(Date.UTC(2027, 0, 1) + days * 86_400_000 + seconds * 1000);
}

// ---------------------------------------------------------------- comparing

/** What a preview and its real invoice must share, as the API shows it: every line's money and the totals. */
export function moneyOf(x: any) {
  return {
    billing_reason: x.billing_reason,
    currency: x.currency,
    period_start: x.period_start,
    period_end: x.period_end,
    lines: x.lines.map((l: any) => ({
      description: l.description,
      period: l.period,
      proration: l.proration,
      amount: l.amount,
      quantity: l.quantity,
      unit_amount: l.unit_amount,
      discount_amount: l.discount_amount,
      tax_amounts: l.tax_amounts,
    })),
    subtotal: x.subtotal,
    discount_amount: x.discount_amount,
    coupon_id: x.coupon_id,
    tax_amount: x.tax_amount,
    total: x.total,
    credit_applied: x.credit_applied,
    amount_from_wallet: x.amount_from_wallet,
    amount_due: x.amount_due,
    credited_to_balance: x.credited_to_balance,
  };
}

/** The model's invoice as moneyOf shows an API invoice. */
export function modelMoney(inv: MInvoice, currency: string) {
  return moneyOf({
    billing_reason: inv.reason,
    currency,
    period_start: inv.periodStart.toISOString(),
    period_end: inv.periodEnd.toISOString(),
    lines: inv.lines.map((l) => ({
      description: l.description,
      period: { start: l.periodStart.toISOString(), end: l.periodEnd.toISOString() },
      proration: l.proration,
      amount: Number(l.amount),
      quantity: l.quantity,
      unit_amount: l.unitAmount === null ? null : Number(l.unitAmount),
      discount_amount: Number(l.discountAmount),
      tax_amounts: l.taxAmounts.map((t) => ({ tax_rate: t.tax_rate, amount: t.amount, inclusive: t.inclusive })),
    })),
    subtotal: Number(inv.subtotal),
    discount_amount: Number(inv.discountAmount),
    coupon_id: inv.couponId,
    tax_amount: Number(inv.taxAmount),
    total: Number(inv.total),
    credit_applied: Number(inv.creditApplied),
    amount_from_wallet: Number(inv.fromWallet),
    amount_due: Number(inv.amountDue),
    credited_to_balance: Number(inv.creditedToBalance),
  });
}

export const describeScenario = (s: Scenario) => `seed ${s.seed}: ${s.currency}, ${s.plans.map((p) => `${p.name} ${formatMoney(p.amount, s.currency)}/${p.intervalCount} ${p.interval}`).join(', ')}`;

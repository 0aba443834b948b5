// The upcoming invoice (issue 25, item 4; docs/billing.md, "Previews"): what a subscription's next
// invoice will bill — or what a change of plan, quantity, coupon, proration behaviour and date
// would bill now and next — computed by the code that makes the real invoices (changes.ts
// planChange, compose.ts composeSubscriptionInvoice, periods.ts) on what the database holds now,
// writing nothing. GET /v1/invoices/upcoming, GraphQL upcomingInvoice and the invoice.upcoming
// notice all use it.
//
// previewUpcoming is pure: it takes the subscription's billing state (BillingState, read by
// loadBillingState) and walks it through the change and the renewal as the engine will — the
// change's invoice now (always_invoice, an interval change) takes everything waiting, credits a
// negative total to the credit balance, ends a `once` discount, uses up credit and wallet; the
// renewal then bills the next period from the anchor with what is left — so the preview of each invoice is that invoice.
import type { Coupon, Plan, Subscription } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import type { Db } from '../../platform/db/tenant.ts';
import { NotFoundError, StateError } from '../../platform/errors.ts';
import { clockNow } from '../../platform/clock.ts';
import { creditBalanceOf } from '../customers/balance.ts';
import { findCouponAny, redeemableCoupon } from '../pricing/coupons.ts';
import type { PricingTaxRate } from '../pricing/rules.ts';
import { checkTaxRates, taxRatesForPricing } from '../pricing/tax-rates.ts';
import { changeTime, discountColumns, NO_DISCOUNT, planChange, planLine, type PlanChange } from './changes.ts';
import { checkInvoiceTotal, checkPlanFits, compareLines, composeSubscriptionInvoice, MAX_INVOICE_LINES, pricingAt, type DraftLine, type ItemLine } from './compose.ts';
import { itemLine } from './invoice-items.ts';
import { invoicePreviewToJSON, type InvoicePreviewJSON, type NewLine } from './invoices.ts';
import { periodAt, type Interval } from './periods.ts';
import { subscribablePlan } from './plans.ts';
import type { InvoiceUpcomingQuery, ProrationBehavior } from './schema.ts';
import * as store from './store.ts';

/** What a subscription's next invoices are made of, as the database holds it now. */
export interface BillingState {
  sub: Subscription;
  /** its plan */
  plan: Plan;
  /** the coupon of its discount (`sub.couponId`; a deleted one too), null without one */
  coupon: Coupon | null;
  /** its default tax rates, in order */
  taxRates: PricingTaxRate[];
  /** its lines waiting for the next invoice (prorations; a credit carried over before negative totals went to the balance), in the invoice's order */
  pending: DraftLine[];
  /** the customer's one-off items waiting in the plan's currency, oldest first */
  items: ItemLine[];
  /** the customer's credit balance in the plan's currency */
  creditBalance: bigint;
  /** the customer's active wallet in the plan's currency (drawn only when the subscription applies it) */
  walletBalance: bigint;
}

/** A change to preview (the PATCH it stands for: planChange's arguments). */
export interface UpcomingChange {
  plan?: Plan;
  quantity?: number;
  /** a coupon to apply, null to remove the discount, undefined to keep it */
  coupon?: Coupon | null;
  behavior: ProrationBehavior;
  /** proration_date, else now (changeTime) */
  at: Date;
  /** new default tax rates (for pricing, in order), undefined to keep them */
  taxRates?: PricingTaxRate[];
}

export interface UpcomingPreview {
  /** the first invoice: the change's, made now, or the next renewal's */
  invoice: InvoicePreviewJSON;
  /** after a change invoiced now: the renewal that follows it (null when the subscription will not renew) */
  next: InvoicePreviewJSON | null;
}

const draft = (l: NewLine, createdAt: Date): DraftLine => ({
  id: null,
  description: l.description,
  periodStart: l.periodStart,
  periodEnd: l.periodEnd,
  amount: l.amount,
  proration: l.proration ?? false,
  quantity: l.quantity ?? null,
  unitAmount: l.unitAmount ?? null,
  taxable: true,
  createdAt,
});

/**
 * Whether the renewal at `periodEnd` will happen and bill: the subscription is still in that
 * period, not set to cancel at its end, and trialing (its first invoice), active or past_due — or
 * paused with an automatic resume by then, which the renewal applies first (cycleSubscription).
 */
export function renewsAt(sub: Subscription, periodEnd: number): boolean {
  if (sub.currentPeriodEnd.getTime() !== periodEnd || sub.cancelAtPeriodEnd) return false;
  if (sub.status === 'active' || sub.status === 'past_due' || sub.status === 'trialing') return true;
  return sub.status === 'paused' && sub.resumesAt !== null && sub.resumesAt.getTime() <= periodEnd;
}

/**
 * The invoice the renewal at the end of the current period will make (cycleSubscription): the next
 * period from the anchor (periodAt) with its plan line (planLine) made then, the lines waiting and
 * the items that fit, priced with the discount active at the period end, paid by the balances.
 */
export function renewalInvoice(state: BillingState, createdAt: Date) {
  const { sub, plan } = state;
  const at = sub.currentPeriodEnd;
  const period = periodAt(sub.billingAnchor, plan.interval as Interval, plan.intervalCount, sub.periodIndex + 1);
  const composed = composeSubscriptionInvoice({
    newLines: [draft(planLine(plan, period.start, period.end, sub.quantity), at)],
    pending: state.pending,
    items: state.items,
    pricing: pricingAt(sub, at, state.coupon, state.taxRates),
    subscriptionCouponId: sub.couponId,
    creditBalance: state.creditBalance,
    walletBalance: sub.applyWalletBalance ? state.walletBalance : 0n,
  });
  return invoicePreviewToJSON({
    customerId: sub.customerId,
    subscriptionId: sub.id,
    currency: plan.currency,
    reason: sub.status === 'trialing' ? 'subscription_create' : 'subscription_cycle',
    periodStart: period.start,
    periodEnd: period.end,
    composed,
    at,
    createdAt,
  });
}

/**
 * The upcoming invoice of `state`'s subscription, with `change` made at `change.at` (null: none),
 * seen at `now`. A change that invoices now (always_invoice with prorations, an interval change)
 * gives that invoice and the renewal after it; any other gives the next renewal, with the change's
 * waiting prorations and new price. 409 invoice_upcoming_none when nothing will be invoiced (the
 * subscription will not renew: cancelled, set to cancel at its period end, paused with no resume
 * by then, unpaid or incomplete). planChange's refusals are the PATCH's.
 */
export function previewUpcoming(state: BillingState, change: UpcomingChange | null, now: Date, param: string | null = null): UpcomingPreview {
  const preview = walkChange(state, change, now, change ? param : undefined);
  if (!preview) {
    const { sub } = state;
    throw new StateError('invoice_upcoming_none', `Subscription ${sub.id} is ${sub.status}${sub.cancelAtPeriodEnd ? ' and set to cancel at its period end' : ''}: it has no upcoming invoice.`, 'subscription_id');
  }
  return preview;
}

/**
 * Whether a change of a subscription's price (plan, quantity, coupon, tax rates, interval) leaves
 * every invoice it will make writable: the plan line with its exclusive taxes and no discount
 * (checkPlanFits: every renewal, after a discount ends), the invoice the change makes now, and the
 * next renewal — composed by the functions that make them, with the lines waiting, the items that
 * fit and the discount they will get — each at most what one invoice may bill (400
 * amount_too_large naming `param`, before anything is written). PATCH /v1/subscriptions/:id and
 * its preview refuse with it alike; a renewal then never meets an invoice it cannot write.
 */
export function checkChange(state: BillingState, change: UpcomingChange, now: Date, param: string | null): void {
  walkChange(state, change, now, param);
}

/**
 * The param an amount refusal names: the first of the fields the request changes, in the order
 * plan_id, quantity, default_tax_rates, coupon (create: plan_id).
 */
export function amountParam(changes: { plan?: boolean; quantity?: boolean; taxRates?: boolean; coupon?: boolean }): string {
  if (changes.plan) return 'plan_id';
  if (changes.quantity) return 'quantity';
  if (changes.taxRates) return 'default_tax_rates';
  if (changes.coupon) return 'coupon';
  return 'plan_id';
}

/** previewUpcoming's walk; null when nothing will be invoiced. With `param` (not undefined), every invoice is checked to fit (checkChange). */
function walkChange(state: BillingState, change: UpcomingChange | null, now: Date, param: string | null | undefined): UpcomingPreview | null {
  const check = param !== undefined;
  const fits = (total: number | bigint) => check && checkInvoiceTotal(BigInt(total), param);
  if (change?.taxRates) state = { ...state, taxRates: change.taxRates };
  let sub = state.sub;
  let plan = state.plan;
  let coupon = state.coupon;
  if (change?.coupon === null) {
    sub = { ...sub, ...NO_DISCOUNT };
    coupon = null;
  } else if (change?.coupon && change.coupon.id !== sub.couponId) {
    sub = { ...sub, ...discountColumns(change.coupon, now) };
    coupon = change.coupon;
  }
  let effect: PlanChange | null = null;
  const planChanges = change?.plan !== undefined && change.plan.id !== sub.planId;
  const quantityChanges = change?.quantity !== undefined && change.quantity !== sub.quantity;
  if (change && (planChanges || quantityChanges)) {
    const newPlan = change.plan ?? plan;
    effect = planChange({
      sub,
      oldPlan: plan,
      newPlan,
      quantity: change.quantity ?? sub.quantity,
      behavior: change.behavior,
      at: change.at,
      waiting: state.pending.reduce((s, l) => s + l.amount, 0n),
      waitingLines: state.pending.length,
      param: planChanges ? 'plan_id' : 'quantity',
    });
    sub = { ...sub, ...effect.patch };
    plan = newPlan;
  }
  if (check) checkPlanFits(plan.amount, sub.quantity, state.taxRates, param);
  if (effect?.invoiceNow) {
    const composed = composeSubscriptionInvoice({
      newLines: effect.lines.map((l) => draft(l, now)),
      pending: state.pending,
      items: state.items,
      pricing: pricingAt(sub, now, coupon, state.taxRates),
      subscriptionCouponId: sub.couponId,
      creditBalance: state.creditBalance,
      walletBalance: sub.applyWalletBalance ? state.walletBalance : 0n,
    });
    const invoice = invoicePreviewToJSON({
      customerId: sub.customerId,
      subscriptionId: sub.id,
      currency: plan.currency,
      reason: 'subscription_update',
      periodStart: effect.periodStart,
      periodEnd: effect.periodEnd,
      composed,
      at: now,
      createdAt: now,
    });
    // What the renewal after it finds: nothing waiting (it took it all), the items it left, the
    // balances it left — its negative total credited to the credit balance —, its discount ended.
    const after: BillingState = {
      sub: composed.discountEnded ? { ...sub, ...NO_DISCOUNT } : sub,
      plan,
      coupon: composed.discountEnded ? null : coupon,
      taxRates: state.taxRates,
      pending: [],
      items: composed.itemsLeft,
      creditBalance: state.creditBalance - composed.creditApplied + composed.creditedToBalance,
      walletBalance: sub.applyWalletBalance ? state.walletBalance - composed.fromWallet : state.walletBalance,
    };
    fits(composed.total);
    const next = renewsAt(after.sub, after.sub.currentPeriodEnd.getTime()) ? renewalInvoice(after, now) : null;
    if (next) fits(next.total);
    return { invoice, next };
  }
  if (!renewsAt(sub, sub.currentPeriodEnd.getTime())) return null;
  const pending = effect?.waitLines ? [...state.pending, ...effect.lines.map((l) => draft(l, now))].sort(compareLines) : state.pending;
  const invoice = renewalInvoice({ ...state, sub, plan, coupon, pending }, now);
  fits(invoice.total);
  return { invoice, next: null };
}

/** The subscription's billing state as the database holds it now (reads only). */
export async function loadBillingState(ctx: Ctx, sub: Subscription, db: Db = ctx.db): Promise<BillingState> {
  const plan = (await store.findPlan(db, sub.planId))!;
  const [pending, items, balances, wallet, taxRates, coupon] = await Promise.all([
    store.listPendingLines(db, sub.id),
    store.listWaitingItems(db, sub.customerId, plan.currency, MAX_INVOICE_LINES),
    creditBalanceOf(ctx, sub.customerId, db),
    store.findActiveWallet(db, sub.customerId, plan.currency),
    taxRatesForPricing(db, sub.defaultTaxRates ?? []),
    sub.couponId ? findCouponAny(ctx, sub.couponId, db).catch(() => null) : null,
  ]);
  return {
    sub,
    plan,
    coupon,
    taxRates,
    pending,
    items: items.map(itemLine),
    creditBalance: BigInt(balances[plan.currency] ?? 0),
    walletBalance: wallet?.balance ?? 0n,
  };
}

/**
 * The invoice the renewal at the end of the subscription's current period will make (the
 * invoice.upcoming notice's), as the database holds things now. Reads only.
 */
export async function upcomingInvoice(ctx: Ctx, sub: Subscription, db: Db = ctx.db) {
  return renewalInvoice(await loadBillingState(ctx, sub, db), await clockNow({ ...ctx, db }));
}

/**
 * GET /v1/invoices/upcoming (GraphQL upcomingInvoice): the subscription's next invoice, or what the
 * change in the query would bill now and next. The change is checked as PATCH
 * /v1/subscriptions/:id checks it — the same errors — and the coupon is not redeemed: nothing is
 * written. `next_invoice` is the renewal after a change invoiced now (else null).
 */
/**
 * The moment a change counts from (changeTime), for the PATCH and its preview alike: a
 * proration_date is checked against the period and against the subscription's last prorated
 * change in it (read only when a proration_date is given).
 */
export async function prorationTime(db: Db, sub: Subscription, prorationDate: Date | undefined, now: Date): Promise<Date> {
  const lastChange = prorationDate === undefined ? null : await store.latestProrationStart(db, sub.id, sub.currentPeriodStart);
  return changeTime(sub, prorationDate, now, lastChange);
}

export async function previewInvoice(ctx: Ctx, q: InvoiceUpcomingQuery) {
  const db = ctx.db;
  const sub = await store.findSubscription(db, q.subscription_id);
  if (!sub) throw new NotFoundError('subscription', q.subscription_id, 'subscription_id');
  const changes = q.plan_id !== undefined || q.quantity !== undefined || q.coupon !== undefined || q.default_tax_rates !== undefined;
  if (changes && sub.status === 'cancelled') throw new StateError('subscription_cancelled', `Subscription ${sub.id} is cancelled; it can no longer change.`, null);
  const at = await clockNow(ctx);
  const now = new Date(Math.floor(at.getTime() / 1000) * 1000);
  // In PATCH's order: the tax rates, the coupon (for the currency of the plan it will bill), proration_date, the plan.
  const taxRates = q.default_tax_rates === undefined ? undefined : await taxRatesForPricing(db, await checkTaxRates(ctx, db, q.default_tax_rates));
  let coupon: Coupon | null | undefined;
  if (q.coupon === '') coupon = null;
  else if (q.coupon !== undefined && q.coupon !== sub.couponId) {
    const billing = (q.plan_id ? await store.findPlan(db, q.plan_id) : null) ?? (await store.findPlan(db, sub.planId))!;
    coupon = await redeemableCoupon(ctx, db, q.coupon, billing.currency, now);
  }
  const prorationAt = await prorationTime(db, sub, q.proration_date, now);
  const plan = q.plan_id !== undefined && q.plan_id !== sub.planId ? await subscribablePlan(ctx, q.plan_id, db) : undefined;
  const state = await loadBillingState(ctx, sub, db);
  // New tax rates price every invoice from now on, the change's own too (the PATCH sets them first).
  const change: UpcomingChange | null = changes ? { plan, quantity: q.quantity, coupon, behavior: q.proration_behavior ?? 'create_prorations', at: prorationAt, taxRates } : null;
  const param = amountParam({
    plan: plan !== undefined,
    quantity: q.quantity !== undefined && q.quantity !== sub.quantity,
    taxRates: q.default_tax_rates !== undefined,
    coupon: q.coupon !== undefined,
  });
  const { invoice, next } = previewUpcoming(state, change, now, param);
  // Stripe's subscription_proration_date: the moment the change counts from, for the PATCH to be billed exactly this.
  return { ...invoice, subscription_proration_date: change ? prorationAt.toISOString() : null, next_invoice: next };
}
export type UpcomingInvoicePreviewJSON = Awaited<ReturnType<typeof previewInvoice>>;

// Subscriptions: a customer's plan, billed per period on the merchant's billing clock.
//
//   create ─┬─ trial ──────────► trialing ──(trial end: first invoice)──► active
//           └─ no trial: first invoice charged at once ─► active (paid) | incomplete (not paid)
//   incomplete ──(paid within 23 h)──► active;  ──(23 h)──► cancelled (its invoice voided)
//   active ──(renewal charge fails)──► past_due ──(retry paid)──► active
//   past_due ──(retries 1, 3, 5 days after the first failure all fail)──► unpaid (invoice uncollectible)
//   past_due | unpaid ──(its open/uncollectible invoice voided, nothing else owed)──► active (same period)
//   active ──pause──► paused ──resume / resumes_at──► active
//   any but cancelled ──cancel──► cancelled (final);  cancel_at_period_end ⇄ reactivate
//
// Every time-based step is a job (src/jobs) keyed by what it acts on and checking, under the
// subscription's row lock, that its moment is still current (the period end, the trial end, the
// resume time): run twice or in two processes at once, the second run finds the work done. One
// invoice per (subscription, billing key) is enforced by a unique index besides.
import type { Coupon, Plan, Prisma, Subscription } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { rawQuery, lockRow } from '../../platform/db/raw.ts';
import { inTransaction, type Db, type TenantTx } from '../../platform/db/tenant.ts';
import { countsByParent, pagesByParent } from '../../platform/db/pages-by-parent.ts';
import { NotFoundError, StateError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { parse } from '../../platform/validation.ts';
import { cancelJobs, completeRunningJob, DeferJob, enqueueJob, enqueueJobs, JobCannotRun, rerunFailedJob, type NewJob } from '../../platform/jobs.ts';
import { Clock, clockNow } from '../../platform/clock.ts';
import { recordEvent, previousAttributes } from '../events/index.ts';
import { invoiceHooks } from './hooks.ts';
import {
  attachedMethod,
  chargeInvoice,
  issueInvoice,
  lockOpenInvoicesOf,
  openInvoicesOf,
  resumeInvoiceCharge,
  stopCollection,
  voidInvoice,
} from './invoices.ts';
import { periodAt, type Interval } from './periods.ts';
import { redeemCoupon } from '../pricing/coupons.ts';
import { checkTaxRates, taxRatesForPricing } from '../pricing/tax-rates.ts';
import { MAX_TRIAL_DAYS, subscribablePlan } from './plans.ts';
import { addCredit } from '../customers/balance.ts';
import * as store from './store.ts';
import { discountColumns, NO_DISCOUNT, planChange, planLine } from './changes.ts';
import { checkPlanFits } from './compose.ts';
import { amountParam, checkChange, loadBillingState, prorationTime, renewsAt, upcomingInvoice } from './upcoming.ts';
import {
  subscriptionCancel,
  subscriptionCreate,
  subscriptionPause,
  subscriptionUpdate,
  type SubscriptionCancelInput,
  type SubscriptionCreateInput,
  type SubscriptionListQuery,
  type SubscriptionPauseInput,
  type SubscriptionStatus,
  type SubscriptionUpdateInput,
} from './schema.ts';

// Pure pieces other modules and tests take from here.
export { planLine, prorationLines } from './changes.ts';
export { renewsAt } from './upcoming.ts';

export const SUB_CYCLE_JOB = 'subscription.cycle';
export const SUB_TRIAL_NOTICE_JOB = 'subscription.trial_will_end';
export const SUB_RESUME_JOB = 'subscription.resume';
export const SUB_INCOMPLETE_JOB = 'subscription.incomplete_expire';
export const SUB_UPCOMING_JOB = 'invoice.upcoming';

const DAY_MS = 86_400_000;
/** subscription.trial_will_end is sent this long before the trial ends (at once for shorter trials). */
export const TRIAL_NOTICE_MS = 3 * DAY_MS;
/** invoice.upcoming is sent this long before a renewal (none when the period is this long or shorter). */
export const UPCOMING_NOTICE_MS = 3 * DAY_MS;
/** An incomplete subscription (first invoice not paid) is cancelled after this long. */
export const INCOMPLETE_TTL_MS = 23 * 3600 * 1000;

export function subscriptionToJSON(s: Subscription) {
  return {
    id: s.id,
    object: 'subscription' as const,
    customer_id: s.customerId,
    plan_id: s.planId,
    status: s.status as SubscriptionStatus,
    current_period_start: s.currentPeriodStart.toISOString(),
    current_period_end: s.currentPeriodEnd.toISOString(),
    billing_cycle_anchor: s.billingAnchor.toISOString(),
    trial_start: s.trialStart?.toISOString() ?? null,
    trial_end: s.trialEnd?.toISOString() ?? null,
    cancel_at_period_end: s.cancelAtPeriodEnd,
    cancel_at: s.cancelAt?.toISOString() ?? null,
    cancelled_at: s.cancelledAt?.toISOString() ?? null,
    pause_collection: s.status === 'paused' ? { resumes_at: s.resumesAt?.toISOString() ?? null } : null,
    paused_at: s.pausedAt?.toISOString() ?? null,
    resumes_at: s.resumesAt?.toISOString() ?? null,
    payment_method_id: s.paymentMethodId,
    latest_invoice_id: s.latestInvoiceId,
    apply_wallet_balance: s.applyWalletBalance,
    quantity: s.quantity,
    discount: s.couponId && s.discountStart ? { coupon: s.couponId, start: s.discountStart.toISOString(), end: s.discountEnd?.toISOString() ?? null } : null,
    default_tax_rates: [...(s.defaultTaxRates ?? [])],
    metadata: s.metadata as Record<string, string>,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}
export type SubscriptionJSON = ReturnType<typeof subscriptionToJSON>;

export async function getSubscription(ctx: Ctx, id: string, db: Db = ctx.db, param = 'id'): Promise<Subscription> {
  const s = await store.findSubscription(db, id);
  if (!s) throw new NotFoundError('subscription', id, param);
  return s;
}

async function lockSubscription(ctx: Ctx, tx: TenantTx, id: string): Promise<Subscription> {
  await lockRow(tx, 'subscriptions', ctx.merchant.id, id);
  return getSubscription(ctx, id, tx);
}

export async function listSubscriptions(ctx: Ctx, q: SubscriptionListQuery): Promise<Page<Subscription>> {
  const filter = {
    ...(q.customer_id ? { customerId: q.customer_id } : {}),
    ...(q.plan_id ? { planId: q.plan_id } : {}),
    ...(q.status ? { status: q.status } : {}),
  };
  return paginate(
    q,
    ({ where, ...page }) => store.listSubscriptions(ctx.db, { AND: [where, filter] }, page),
    () => store.countSubscriptions(ctx.db, filter),
  );
}

// The SQL of a customer's subscriptions is the store's; the customer embed (src/services/customers.ts) takes it from here.

/** A customer's subscriptions, newest first (the customer embed and the portal). */
export function subscriptionsOfCustomer(ctx: Ctx, customerId: string, db: Db = ctx.db): Promise<Subscription[]> {
  return store.listSubscriptionsOfCustomer(rawQuery(db), ctx.merchant.id, customerId);
}

const SUBSCRIPTIONS_OF_CUSTOMER = { table: 'subscriptions', parent: 'customer_id' };

export function listSubscriptionsOfCustomers(ctx: Ctx, ids: readonly string[], q: Pick<SubscriptionListQuery, 'limit' | 'after' | 'status'>) {
  return pagesByParent(ctx, SUBSCRIPTIONS_OF_CUSTOMER, ids, { ...q, filters: { status: q.status } }, (rows) =>
    store.listSubscriptionsById(ctx.db, rows),
  );
}

export function countSubscriptionsOfCustomers(ctx: Ctx, ids: readonly string[], q: Pick<SubscriptionListQuery, 'status'>) {
  return countsByParent(ctx, SUBSCRIPTIONS_OF_CUSTOMER, ids, { status: q.status });
}

// ---------------------------------------------------------------- helpers

const wholeSecond = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);

async function event(ctx: Ctx, tx: TenantTx, type: Parameters<typeof recordEvent>[2], before: Subscription | null, after: Subscription) {
  const a = subscriptionToJSON(after);
  if (!before) return recordEvent(tx, ctx, type, a);
  const { updated_at: _u, ...prev } = previousAttributes(subscriptionToJSON(before) as any, a as any);
  return recordEvent(tx, ctx, type, a, prev);
}

/** Jobs of a subscription carry its id as ref, so cancelling it cancels them all. */
function job(sub: { id: string; merchantId: string }, kind: string, runAt: Date, key: string, payload: Record<string, unknown>): NewJob {
  return { merchantId: sub.merchantId, kind, runAt, key, ref: sub.id, payload: { subscription_id: sub.id, ...payload } };
}

/** The billing key of period n from the subscription's current anchor (one invoice per key). */
export function periodKey(sub: Pick<Subscription, 'anchorGeneration'>, n: number): string {
  return sub.anchorGeneration === 0 ? `period:${n}` : `period:${sub.anchorGeneration}:${n}`;
}

export function cycleJob(sub: Subscription): NewJob {
  return job(sub, SUB_CYCLE_JOB, sub.currentPeriodEnd, `cycle:${sub.id}:${sub.currentPeriodEnd.getTime()}`, { period_end: sub.currentPeriodEnd.getTime() });
}

/**
 * The invoice.upcoming notice of the renewal at the end of the subscription's current period, due
 * UPCOMING_NOTICE_MS before it (docs/billing.md, "Upcoming renewal notice"); pure, so a caller
 * renewing many subscriptions at once can build all their jobs without a query. Null when there is
 * nothing to announce: the current period is a trial (its end is announced by
 * subscription.trial_will_end), the subscription is cancelled, or the plan's period is 3 days or
 * shorter (the notice would fall at or before the period's start; as Stripe, no notice then).
 * Everything else — cancel_at_period_end, paused, past_due, unpaid, still incomplete — is decided
 * when the job runs (noticeUpcomingRenewal), so a reactivation or resume before then needs no new
 * job. Keyed by the period end: enqueued twice, it exists once.
 */
export function upcomingNoticeJob(sub: Subscription, plan: Pick<Plan, 'interval' | 'intervalCount'>): NewJob | null {
  if (sub.status === 'cancelled' || sub.status === 'trialing' || sub.periodIndex < 0) return null;
  if (plan.interval === 'day' && plan.intervalCount * DAY_MS <= UPCOMING_NOTICE_MS) return null;
  const end = sub.currentPeriodEnd.getTime();
  const at = end - UPCOMING_NOTICE_MS;
  if (at <= sub.currentPeriodStart.getTime()) return null;
  return job(sub, SUB_UPCOMING_JOB, new Date(at), `upcoming:${sub.id}:${end}`, { period_end: end });
}

/** The jobs of a period that renews at its end: the renewal, and its notice when there is one. */
export function renewalJobs(sub: Subscription, plan: Pick<Plan, 'interval' | 'intervalCount'>): NewJob[] {
  const notice = upcomingNoticeJob(sub, plan);
  return notice ? [cycleJob(sub), notice] : [cycleJob(sub)];
}

function trialJobs(sub: Subscription, now: Date): NewJob[] {
  const end = sub.trialEnd!;
  const notice = new Date(Math.max(now.getTime(), end.getTime() - TRIAL_NOTICE_MS));
  return [cycleJob(sub), job(sub, SUB_TRIAL_NOTICE_JOB, notice, `trial_notice:${sub.id}:${end.getTime()}`, { trial_end: end.getTime() })];
}

/** A time in the future on the billing clock, at most 730 days ahead (trial ends, automatic resumes). */
function checkFuture(end: Date, now: Date, param: string): void {
  if (end.getTime() <= now.getTime()) throw new ValidationError('parameter_invalid', `Invalid ${param}: must be in the future (now is ${now.toISOString()} on the billing clock).`, param);
  if (end.getTime() > now.getTime() + MAX_TRIAL_DAYS * DAY_MS) throw new ValidationError('parameter_invalid', `Invalid ${param}: at most ${MAX_TRIAL_DAYS} days ahead.`, param);
}


function notCancelled(sub: Subscription): void {
  if (sub.status === 'cancelled') throw new StateError('subscription_cancelled', `Subscription ${sub.id} is cancelled; it can no longer change.`, null);
}

// ---------------------------------------------------------------- create

export async function createSubscription(ctx: Ctx, input: SubscriptionCreateInput): Promise<Subscription> {
  const data = parse(subscriptionCreate, input);
  // A retry of an interrupted request with the same idempotency key: its first invoice's charge
  // is made or finished (same processor key), never made twice.
  const resumed = ctx.idempotency?.resumed?.subscription_id;
  if (typeof resumed === 'string') {
    const sub = await getSubscription(ctx, resumed);
    if (sub.latestInvoiceId) await resumeInvoiceCharge(ctx, sub.latestInvoiceId, 1);
    return getSubscription(ctx, resumed);
  }
  const subscriptionId = newId('subscription');
  ctx.idempotency?.checkpoint({ subscription_id: subscriptionId });
  const r = await inTransaction(ctx.db, async (tx) => {
    await lockRow(tx, 'customers', ctx.merchant.id, data.customer_id);
    const customer = await store.findCustomer(tx, data.customer_id);
    if (!customer || customer.deletedAt) throw new NotFoundError('customer', data.customer_id, 'customer_id');
    const plan = await subscribablePlan(ctx, data.plan_id, tx);
    if (data.payment_method_id) await attachedMethod(tx, customer.id, data.payment_method_id);
    // Periods run in whole seconds (proration is computed to the second); the record's created_at
    // is the clock's time itself.
    const at = await clockNow({ ...ctx, db: tx });
    const now = wholeSecond(at);
    let trialEnd: Date | null = null;
    if (data.trial_end) {
      checkFuture(data.trial_end, now, 'trial_end');
      trialEnd = wholeSecond(data.trial_end);
    } else {
      const days = data.trial_period_days ?? plan.trialPeriodDays;
      if (days > 0) trialEnd = new Date(now.getTime() + days * DAY_MS);
    }
    const interval = plan.interval as Interval;
    const taxRates = data.default_tax_rates ? await checkTaxRates(ctx, tx, data.default_tax_rates) : [];
    // Its plan line with its taxes must fit one invoice (every invoice bills it: compose.ts checkPlanFits).
    checkPlanFits(plan.amount, data.quantity ?? 1, await taxRatesForPricing(tx, taxRates), 'plan_id');
    const coupon = data.coupon ? await redeemCoupon(ctx, tx, data.coupon, plan.currency, now) : null;
    const base = {
      id: subscriptionId,
      merchantId: ctx.merchant.id,
      customerId: customer.id,
      planId: plan.id,
      cancelAtPeriodEnd: data.cancel_at_period_end ?? false,
      paymentMethodId: data.payment_method_id ?? null,
      applyWalletBalance: data.apply_wallet_balance ?? plan.applyWalletBalance,
      quantity: data.quantity ?? 1,
      ...(coupon ? discountColumns(coupon, now) : NO_DISCOUNT),
      defaultTaxRates: taxRates,
      metadata: data.metadata ?? {},
      createdAt: at,
    };
    if (trialEnd) {
      const sub = await store.insertSubscription(tx, {
        ...base,
        status: 'trialing',
        billingAnchor: trialEnd,
        periodIndex: -1,
        currentPeriodStart: now,
        currentPeriodEnd: trialEnd,
        trialStart: now,
        trialEnd,
        cancelAt: base.cancelAtPeriodEnd ? trialEnd : null,
      });
      await event(ctx, tx, 'subscription.created', null, sub);
      await enqueueJobs(tx, trialJobs(sub, now));
      return { sub, charge: null };
    }
    const first = periodAt(now, interval, plan.intervalCount, 0);
    const sub = await store.insertSubscription(tx, {
      ...base,
      status: 'incomplete',
      billingAnchor: now,
      periodIndex: 0,
      currentPeriodStart: first.start,
      currentPeriodEnd: first.end,
      cancelAt: base.cancelAtPeriodEnd ? first.end : null,
    });
    await event(ctx, tx, 'subscription.created', null, sub);
    const { invoice } = await issueInvoice(ctx, tx, {
      subscription: sub,
      currency: plan.currency,
      reason: 'subscription_create',
      key: 'period:0',
      periodStart: first.start,
      periodEnd: first.end,
      lines: [planLine(plan, first.start, first.end, sub.quantity)],
      // Nothing of the subscription waits yet, but the customer's one-off items in the plan's
      // currency do: the first invoice takes them (as Stripe's), by the renewals' rule (the oldest
      // that fit under the maximum and within 250 lines), in this transaction — under the
      // customer's lock, so an item created meanwhile waits or is seen.
      takePending: true,
    });
    const withInvoice = await store.updateSubscription(tx, sub.id, { latestInvoiceId: invoice.id });
    await enqueueJobs(tx, [
      ...renewalJobs(withInvoice, plan),
      job(sub, SUB_INCOMPLETE_JOB, new Date(now.getTime() + INCOMPLETE_TTL_MS), `incomplete:${sub.id}`, {}),
    ]);
    if (invoice.status === 'paid') await activate(ctx, tx, withInvoice);
    return { sub: withInvoice, charge: invoice.status === 'open' ? invoice.id : null };
  });
  if (r.charge) await chargeInvoice(ctx, r.charge, 1, { automatic: true });
  return getSubscription(ctx, r.sub.id);
}

/** incomplete | past_due | unpaid → active, once an invoice of it is paid. */
async function activate(ctx: Ctx, tx: TenantTx, locked: Subscription): Promise<void> {
  if (!['incomplete', 'past_due', 'unpaid'].includes(locked.status)) return;
  const after = await store.updateSubscription(tx, locked.id, { status: 'active' });
  await event(ctx, tx, 'subscription.updated', locked, after);
  if (locked.status === 'incomplete') await cancelJobs(tx, { kind: SUB_INCOMPLETE_JOB, key: `incomplete:${locked.id}` });
}

/**
 * Whether the subscription still owes on an invoice other than `invoiceId` (open or uncollectible,
 * something left to pay). Read under the subscription's lock: a renewal issuing an invoice
 * meanwhile is seen (or waits).
 */
async function owesBesides(tx: TenantTx, subscriptionId: string, invoiceId: string): Promise<boolean> {
  const unsettled = await store.listUnsettledInvoicesOfSubscription(tx, subscriptionId);
  return unsettled.some((i) => i.id !== invoiceId && i.amountDue - i.amountPaid > 0n);
}

invoiceHooks.paid = async (ctx, tx, inv) => {
  if (!inv.subscriptionId) return;
  const sub = await lockSubscription(ctx, tx, inv.subscriptionId);
  if (sub.status === 'unpaid' && !(await currentPeriodInvoiced(tx, sub)) && !sub.cancelAtPeriodEnd) await restartPeriod(ctx, tx, sub, inv.id);
  else await activate(ctx, tx, sub);
};

/**
 * Whether the subscription's current period was invoiced: its latest invoice covers it to its
 * end. Dunning runs out 5 days after the first failure, usually inside the period the failed
 * invoice bills — an unpaid subscription paid then is active in that period (it was billed), as a
 * past_due one; only one whose unbilled periods began starts a new one.
 */
async function currentPeriodInvoiced(tx: TenantTx, sub: Subscription): Promise<boolean> {
  const latest = sub.latestInvoiceId ? await store.findInvoiceHeader(tx, sub.latestInvoiceId) : null;
  return latest !== null && latest.periodEnd.getTime() >= sub.currentPeriodEnd.getTime();
}

/**
 * A paid unpaid subscription whose current period was not invoiced (docs/billing.md, "Recovery";
 * one set to cancel at its period end is only made active: it ends then, nothing more billed):
 * rather than give the rest of the current period away it starts a new period now —
 * billing_cycle_anchor = now, invoiced at once (charged by its first attempt's job, due now) —
 * and is active. While anything else of it is still owed (another open or uncollectible invoice)
 * it stays unpaid; the last one paid restarts it. In the paying payment's transaction, the
 * subscription locked.
 */
async function restartPeriod(ctx: Ctx, tx: TenantTx, sub: Subscription, paidInvoiceId: string): Promise<void> {
  if (await owesBesides(tx, sub.id, paidInvoiceId)) return;
  const plan = (await store.findPlan(tx, sub.planId))!;
  const now = wholeSecond(await clockNow({ ...ctx, db: tx }));
  const period = periodAt(now, plan.interval as Interval, plan.intervalCount, 0);
  await cancelJobs(tx, { kind: SUB_CYCLE_JOB, key: `cycle:${sub.id}:${sub.currentPeriodEnd.getTime()}` });
  let next = await store.updateSubscription(tx, sub.id, {
    status: 'active',
    billingAnchor: now,
    anchorGeneration: sub.anchorGeneration + 1,
    periodIndex: 0,
    currentPeriodStart: period.start,
    currentPeriodEnd: period.end,
    cancelAt: sub.cancelAtPeriodEnd ? period.end : sub.cancelAt,
  });
  const { invoice } = await issueInvoice(ctx, tx, {
    subscription: next,
    currency: plan.currency,
    reason: 'subscription_cycle',
    key: periodKey(next, 0),
    periodStart: period.start,
    periodEnd: period.end,
    lines: [planLine(plan, period.start, period.end, next.quantity)],
    takePending: true,
    chargeNow: true,
  });
  next = await store.updateSubscription(tx, sub.id, { latestInvoiceId: invoice.id });
  await event(ctx, tx, 'subscription.updated', sub, next);
  await enqueueJobs(tx, renewalJobs(next, plan));
}

/**
 * An invoice of it voided (forgiven): a past_due or unpaid subscription that owes nothing else (no
 * other open or uncollectible invoice) is active again, in its current period — the void bills
 * nothing — as Stripe's. Any other status is left as it is (an incomplete subscription's first
 * invoice is voided by its expiry, which then cancels it).
 */
invoiceHooks.voided = async (ctx, tx, inv) => {
  if (!inv.subscriptionId) return;
  const sub = await lockSubscription(ctx, tx, inv.subscriptionId);
  if (sub.status !== 'past_due' && sub.status !== 'unpaid') return;
  if (await owesBesides(tx, sub.id, inv.id)) return;
  const after = await store.updateSubscription(tx, sub.id, { status: 'active' });
  await event(ctx, tx, 'subscription.updated', sub, after);
};

invoiceHooks.failed = async (ctx, tx, inv, { exhausted }) => {
  if (!inv.subscriptionId) return;
  const sub = await lockSubscription(ctx, tx, inv.subscriptionId);
  const status = exhausted ? (sub.status === 'active' || sub.status === 'past_due' ? 'unpaid' : null) : sub.status === 'active' ? 'past_due' : null;
  if (!status) return;
  const after = await store.updateSubscription(tx, sub.id, { status });
  await event(ctx, tx, 'subscription.updated', sub, after);
};

// ---------------------------------------------------------------- the engine's jobs

/**
 * The end of the current period (or of the trial): cancels when set to cancel at period end,
 * otherwise moves to the next period and invoices it (not while paused or unpaid), then charges.
 */
export async function cycleSubscription(ctx: Ctx, id: string, periodEnd: number): Promise<void> {
  const charge = await renewOrCannot(ctx, id, periodEnd, () => inTransaction(ctx.db, async (tx) => {
    // The common case in one statement: the subscription locked and read, unless it is set to
    // cancel at period end. One that ends here stops collecting its open invoices
    // (endSubscription): those are taken first, each payment then its invoice, the order a
    // payment's outcome locks them in before the subscription.
    let sub = await store.lockSubscriptionUnlessCancelling(rawQuery(tx), ctx.merchant.id, id);
    if (!sub) {
      if ((await getSubscription(ctx, id, tx)).cancelAtPeriodEnd) await lockOpenInvoicesOf(ctx, tx, id);
      sub = await lockSubscription(ctx, tx, id);
    }
    if (sub.currentPeriodEnd.getTime() !== periodEnd) return null; // done already, or the period moved (trial_end changed)
    if (sub.status === 'cancelled' || sub.status === 'incomplete') return null;
    const now = await clockNow({ ...ctx, db: tx });
    if (now.getTime() < periodEnd) return null;
    if (sub.cancelAtPeriodEnd) {
      // The prorations waiting for the next invoice go on a final invoice, charged like any.
      return (await endSubscription(ctx, tx, sub, sub.currentPeriodEnd, { atPeriodEnd: true })).charges;
    }
    // An automatic resume due by this period end counts first, so the period it starts is billed
    // (docs/billing.md, "Pause"). Its own job is due at the same instant (resumes_at on the
    // boundary) or earlier, but jobs due together run in creation order on one runner and in any
    // order on two: a resume scheduled after this renewal was would run second and find the
    // period already passed over. So the renewal applies it itself, as of resumes_at, under the
    // same lock; the resume job then finds nothing to do.
    if (sub.status === 'paused' && sub.resumesAt && sub.resumesAt.getTime() <= periodEnd) {
      sub = await resume({ ...ctx, clock: Clock.frozen(ctx.merchant, sub.resumesAt) }, tx, sub);
    }
    const plan = (await store.findPlan(tx, sub.planId))!;
    const n = sub.periodIndex + 1;
    const period = periodAt(sub.billingAnchor, plan.interval as Interval, plan.intervalCount, n);
    const billing = sub.status !== 'paused' && sub.status !== 'unpaid';
    // The subscription is written once, with its new period and (when it bills) the invoice.
    const moved = {
      periodIndex: n,
      currentPeriodStart: period.start,
      currentPeriodEnd: period.end,
      status: sub.status === 'trialing' ? 'active' : sub.status,
    };
    let invoice = null;
    if (billing) {
      ({ invoice } = await issueInvoice(ctx, tx, {
        subscription: { ...sub, ...moved },
        currency: plan.currency,
        reason: sub.status === 'trialing' ? 'subscription_create' : 'subscription_cycle',
        key: periodKey(sub, n),
        periodStart: period.start,
        periodEnd: period.end,
        lines: [planLine(plan, period.start, period.end, sub.quantity)],
        takePending: true,
      }));
    }
    const next = await store.updateSubscription(tx, id, { ...moved, ...(invoice ? { latestInvoiceId: invoice.id } : {}) });
    await event(ctx, tx, 'subscription.updated', sub, next);
    await enqueueJobs(tx, renewalJobs(next, plan));
    return invoice?.status === 'open' ? [{ invoiceId: invoice.id, attempt: 1 }] : null;
  }));
  await makeCharges(ctx, charge ?? [], { automatic: true });
}

/**
 * A renewal whose invoice cannot be written — it would bill more than one invoice may
 * (amount_too_large), which the requests that set a price refuse (upcoming.ts checkChange) — fails
 * visibly rather than being retried to no end: nothing of it is written (the subscription keeps its
 * status and its ended period, no invoice, no event), the log has an error line
 * `subscription renewal cannot be invoiced` with the subscription, the period end and the reason,
 * and its job is `failed` at once (no retries: running it again cannot succeed). Lowering the price
 * with a PATCH (quantity, plan, tax rates) runs it again (docs/billing.md, "Amounts").
 */
async function renewOrCannot<T>(ctx: Ctx, id: string, periodEnd: number, renew: () => Promise<T>): Promise<T> {
  try {
    return await renew();
  } catch (err) {
    if (!(err instanceof ValidationError && err.code === 'amount_too_large')) throw err;
    ctx.log.error(
      { subscription_id: id, period_end: new Date(periodEnd).toISOString(), code: err.code, err: err.message },
      'subscription renewal cannot be invoiced',
    );
    throw new JobCannotRun(`subscription ${id}: the renewal at ${new Date(periodEnd).toISOString()} cannot be invoiced: ${err.message}`);
  }
}

export async function noticeTrialEnd(ctx: Ctx, id: string, trialEnd: number): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    const sub = await lockSubscription(ctx, tx, id);
    if (sub.status !== 'trialing' || sub.trialEnd?.getTime() !== trialEnd) return;
    await recordEvent(tx, ctx, 'subscription.trial_will_end', subscriptionToJSON(sub));
  });
}

/**
 * The invoice.upcoming job (upcomingNoticeJob), UPCOMING_NOTICE_MS before the renewal at
 * `periodEnd`: when the subscription will still renew then (renewsAt), the event carries the
 * invoice that renewal will make (upcomingInvoice). A plain read of the subscription — nothing of
 * it changes — and the event commits with this job's completion (completeRunningJob: the job's row
 * is the lock), so a second run of the job (another runner once the lease ran out, a retry after a
 * crash) or a cancel of the subscription meanwhile (which cancels the job) records nothing. True
 * when the job was marked done here.
 */
export async function noticeUpcomingRenewal(ctx: Ctx, id: string, periodEnd: number, jobId: bigint): Promise<boolean> {
  const sub = await store.findSubscription(ctx.db, id);
  if (!sub || !renewsAt(sub, periodEnd)) return false;
  if ((await clockNow(ctx)).getTime() >= periodEnd) return false; // late: the renewal itself is due
  const preview = await upcomingInvoice(ctx, sub);
  return inTransaction(ctx.db, async (tx) => {
    if (!(await completeRunningJob(tx, ctx.merchant.id, jobId))) return true;
    await recordEvent(tx, ctx, 'invoice.upcoming', preview);
    return true;
  });
}

export async function resumeIfDue(ctx: Ctx, id: string, resumesAt: number): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    const sub = await lockSubscription(ctx, tx, id);
    // Resumed already: by hand, or by the renewal due at the same time (cycleSubscription).
    if (sub.status !== 'paused' || sub.resumesAt?.getTime() !== resumesAt) return;
    await resume(ctx, tx, sub);
  });
}

/** paused → active (the locked subscription): subscription.resumed at `ctx`'s clock. */
async function resume(ctx: Ctx, tx: TenantTx, sub: Subscription): Promise<Subscription> {
  const after = await store.updateSubscription(tx, sub.id, { status: 'active', pausedAt: null, resumesAt: null });
  await event(ctx, tx, 'subscription.resumed', sub, after);
  return after;
}

/** How long an expiry waits for a charge of the first invoice that is in flight. */
const EXPIRY_WAIT_MS = 60_000;

/**
 * An incomplete subscription whose first invoice was not paid in 23 h: its invoice voided and the
 * subscription cancelled, in one transaction. The void takes the invoice's payment and the invoice
 * first — the order a payment's outcome locks them in, before the subscription — so the expiry
 * and a charge cannot cross: a charge in flight defers the expiry (the job runs again later), a
 * charge that succeeded first made the subscription active, and once voided the invoice's checkout
 * is closed (money that still arrived would be refunded).
 */
export async function expireIncomplete(ctx: Ctx, id: string): Promise<void> {
  try {
    await inTransaction(ctx.db, async (tx) => {
      const seen = await getSubscription(ctx, id, tx);
      if (seen.status !== 'incomplete') return;
      if (seen.latestInvoiceId) await voidIfOpen({ ...ctx, db: tx }, seen.latestInvoiceId);
      const sub = await lockSubscription(ctx, tx, id);
      if (sub.status !== 'incomplete') return;
      await endSubscription(ctx, tx, sub, await clockNow({ ...ctx, db: tx }));
    });
  } catch (err) {
    if (err instanceof StateError && err.code === 'invoice_payment_in_progress') throw new DeferJob(EXPIRY_WAIT_MS, 'the first invoice is being charged');
    throw err;
  }
}

/** Voids an incomplete subscription's first invoice; one paid meanwhile (the subscription is active now) or voided already is left as it is. */
async function voidIfOpen(ctx: Ctx, invoiceId: string): Promise<void> {
  try {
    await voidInvoice(ctx, invoiceId);
  } catch (err) {
    if (!(err instanceof StateError && err.code === 'invoice_not_open')) throw err;
  }
}

/**
 * A charge decided in a transaction, made once it commits (makeCharges): attempt `attempt` at the
 * invoice, an uncollectible one when `uncollectible`.
 */
export interface Charge {
  invoiceId: string;
  attempt: number;
  uncollectible?: boolean;
}

/**
 * Makes charges decided by a committed transaction, each once, now (never inside a transaction):
 * one whose invoice was paid, or is being charged, meanwhile is left as it is (chargeInvoice).
 * `automatic`: the engine's own attempts, not made once the invoice's collection stopped.
 */
export async function makeCharges(ctx: Ctx, charges: readonly Charge[], opts: { automatic?: boolean } = {}): Promise<void> {
  for (const c of charges) await chargeInvoice(ctx, c.invoiceId, c.attempt, { uncollectible: c.uncollectible, automatic: opts.automatic });
}

/** The same for a retry of an interrupted request (same idempotency key): made, or finished under the same processor key. */
export async function resumeCharges(ctx: Ctx, charges: readonly Charge[]): Promise<void> {
  for (const c of charges) await resumeInvoiceCharge(ctx, c.invoiceId, c.attempt, { uncollectible: c.uncollectible });
}

/**
 * → cancelled (final), in the caller's transaction (the subscription locked): its jobs cancelled,
 * subscription.cancelled, and (docs/billing.md, "Cancel"):
 * - its open invoices: automatic collection stops (they stay open) — or, with `invoiceNow`, each
 *   is to be charged once at once (returned in `charges`) and then follows the retry schedule;
 * - the prorations waiting for the next invoice: at the period end (`atPeriodEnd`) or with
 *   `invoiceNow` they go on a final invoice (charged like any: it is in `charges` when it is open;
 *   a credit larger than the charges goes to the credit balance as any invoice's); otherwise, as Stripe's
 *   immediate cancel, they are dropped when they net to a charge;
 * - a credit still waiting then (owed to the customer) goes to the customer's credit balance.
 */
async function endSubscription(
  ctx: Ctx,
  tx: TenantTx,
  sub: Subscription,
  at: Date,
  opts: { atPeriodEnd?: boolean; invoiceNow?: boolean } = {},
): Promise<{ sub: Subscription; charges: Charge[] }> {
  const charges: Charge[] = [];
  // Before the final invoice exists: that one is collected as usual.
  if (opts.invoiceNow) {
    for (const inv of await openInvoicesOf(tx, sub.id)) charges.push({ invoiceId: inv.id, attempt: inv.attemptCount + 1 });
  } else {
    await stopCollection(ctx, tx, sub.id);
  }
  let latestInvoiceId = sub.latestInvoiceId;
  const waiting = await store.sumPendingLines(tx, sub.id);
  if (waiting !== null) {
    if (opts.atPeriodEnd || opts.invoiceNow) {
      const plan = (await store.findPlan(tx, sub.planId))!;
      const { invoice } = await issueInvoice(ctx, tx, {
        subscription: sub,
        currency: plan.currency,
        reason: opts.atPeriodEnd ? 'subscription_cycle' : 'subscription_update',
        key: 'final',
        periodStart: sub.currentPeriodStart,
        periodEnd: opts.atPeriodEnd ? sub.currentPeriodEnd : at,
        lines: [],
        takePending: true,
      });
      latestInvoiceId = invoice.id;
      if (invoice.status === 'open') charges.push({ invoiceId: invoice.id, attempt: 1 });
    } else if (waiting > 0n) {
      await store.deletePendingLines(tx, sub.id);
    }
    // What is still waiting is a credit owed to the customer (lines netting to a credit with no
    // final invoice — prorations, or a "Credit carried over" line made before negative totals went
    // to the balance; a final invoice's own negative total was credited when it was finalised): it
    // goes to the customer's credit balance, which pays their later invoices — never left on a
    // subscription that bills no more.
    const credit = await store.sumPendingLines(tx, sub.id);
    if (credit !== null && credit < 0n) {
      const plan = (await store.findPlan(tx, sub.planId))!;
      await store.deletePendingLines(tx, sub.id);
      await addCredit(ctx, tx, {
        customerId: sub.customerId,
        currency: plan.currency,
        amount: -credit,
        type: 'subscription_credit',
        subscriptionId: sub.id,
        description: `Unused time and credits of subscription ${sub.id}`,
      });
    }
  }
  const after = await store.updateSubscription(tx, sub.id, {
    status: 'cancelled',
    cancelledAt: at,
    cancelAt: at,
    cancelAtPeriodEnd: opts.atPeriodEnd ?? false,
    pausedAt: null,
    resumesAt: null,
    latestInvoiceId,
  });
  await cancelJobs(tx, { ref: sub.id });
  await event(ctx, tx, 'subscription.cancelled', sub, after);
  return { sub: after, charges };
}

// ---------------------------------------------------------------- lifecycle actions

/**
 * POST /v1/subscriptions/:id/cancel: now (default) or at the end of the period. Now: automatic
 * collection of its open invoices stops, or with `invoice_now` they (and a final invoice of the
 * waiting prorations) are charged once at once, after the cancel commits.
 */
export async function cancelSubscription(ctx: Ctx, id: string, input: SubscriptionCancelInput = {}): Promise<Subscription> {
  const data = parse(subscriptionCancel, input);
  // A retry of an interrupted request with the same idempotency key: the cancel committed; the
  // invoice_now charges it decided on are made or finished (same attempts, same processor keys).
  const resumed = ctx.idempotency?.resumed;
  if (resumed?.subscription_id === id && typeof resumed.cancel_charges === 'string') {
    await resumeCharges(ctx, JSON.parse(resumed.cancel_charges) as Charge[]);
    return getSubscription(ctx, id);
  }
  const r = await inTransaction(ctx.db, async (tx) => {
    if (!data.cancel_at_period_end) {
      // A subscription that never started (incomplete) leaves nothing to collect: its first invoice
      // is voided, as its expiry would (invoice_now charges nothing for it).
      const seen = await getSubscription(ctx, id, tx);
      if (seen.status === 'incomplete' && seen.latestInvoiceId) await voidIfOpen({ ...ctx, db: tx }, seen.latestInvoiceId);
      await lockOpenInvoicesOf(ctx, tx, id);
    }
    const sub = await lockSubscription(ctx, tx, id);
    notCancelled(sub);
    if (data.cancel_at_period_end) {
      ctx.idempotency?.checkpoint({ subscription_id: id, cancel_charges: '[]' });
      if (sub.cancelAtPeriodEnd) return { sub, charges: [] };
      const after = await store.updateSubscription(tx, id, { cancelAtPeriodEnd: true, cancelAt: sub.currentPeriodEnd });
      await event(ctx, tx, 'subscription.updated', sub, after);
      return { sub: after, charges: [] };
    }
    const ended = await endSubscription(ctx, tx, sub, await clockNow({ ...ctx, db: tx }), { invoiceNow: data.invoice_now === true && sub.status !== 'incomplete' });
    // The charges are made after this commits (never inside a transaction): the recovery point names them.
    ctx.idempotency?.checkpoint({ subscription_id: id, cancel_charges: JSON.stringify(ended.charges) });
    return ended;
  });
  if (r.charges.length === 0) return r.sub;
  await makeCharges(ctx, r.charges);
  return getSubscription(ctx, id);
}

/** Cancels every subscription of a customer being deleted, in the deletion's transaction. */
export async function cancelSubscriptionsOfCustomer(ctx: Ctx, tx: TenantTx, customerId: string): Promise<void> {
  const subs = await store.listUncancelledSubscriptionIds(tx, customerId);
  const now = await clockNow({ ...ctx, db: tx });
  for (const { id } of subs) {
    // Its open invoices (and their payments) before the subscription: a payment's outcome's order.
    await lockOpenInvoicesOf(ctx, tx, id);
    await endSubscription(ctx, tx, await lockSubscription(ctx, tx, id), now);
  }
}

/**
 * A payment method leaving its customer (detached, in the caller's transaction) is no longer any
 * subscription's pin: each subscription that charged it falls back to the customer's default
 * (payment_method_id becomes null, with subscription.updated), as Stripe unsets it.
 */
export async function releasePaymentMethodPins(ctx: Ctx, tx: TenantTx, paymentMethodId: string): Promise<void> {
  for (const { id } of await store.listSubscriptionIdsPinnedTo(tx, paymentMethodId)) {
    const sub = await lockSubscription(ctx, tx, id);
    if (sub.paymentMethodId !== paymentMethodId) continue;
    const after = await store.updateSubscription(tx, id, { paymentMethodId: null });
    await event(ctx, tx, 'subscription.updated', sub, after);
  }
}

/** Undoes cancel_at_period_end before the period ends (else 409 subscription_not_cancelling). */
export async function reactivateSubscription(ctx: Ctx, id: string): Promise<Subscription> {
  return inTransaction(ctx.db, async (tx) => {
    const sub = await lockSubscription(ctx, tx, id);
    notCancelled(sub);
    if (!sub.cancelAtPeriodEnd) throw new StateError('subscription_not_cancelling', `Subscription ${id} is not set to cancel at the end of its period.`, null);
    const after = await store.updateSubscription(tx, id, { cancelAtPeriodEnd: false, cancelAt: null });
    await event(ctx, tx, 'subscription.reactivated', sub, after);
    return after;
  });
}

/** active → paused: no invoices until resumed (periods go on); optional automatic resume. */
export async function pauseSubscription(ctx: Ctx, id: string, input: SubscriptionPauseInput = {}): Promise<Subscription> {
  const data = parse(subscriptionPause, input);
  return inTransaction(ctx.db, async (tx) => {
    const sub = await lockSubscription(ctx, tx, id);
    notCancelled(sub);
    if (sub.status !== 'active') throw new StateError('subscription_not_active', `Subscription ${id} is ${sub.status}; only an active subscription can be paused.`, null);
    const now = await clockNow({ ...ctx, db: tx });
    if (data.resumes_at) checkFuture(data.resumes_at, now, 'resumes_at');
    const after = await store.updateSubscription(tx, id, { status: 'paused', pausedAt: now, resumesAt: data.resumes_at ?? null });
    await event(ctx, tx, 'subscription.paused', sub, after);
    if (data.resumes_at) {
      await enqueueJob(tx, job(sub, SUB_RESUME_JOB, data.resumes_at, `resume:${id}:${data.resumes_at.getTime()}`, { resumes_at: data.resumes_at.getTime() }));
    }
    return after;
  });
}

/** paused → active (else 409 subscription_not_paused). */
export async function resumeSubscription(ctx: Ctx, id: string): Promise<Subscription> {
  return inTransaction(ctx.db, async (tx) => {
    const sub = await lockSubscription(ctx, tx, id);
    notCancelled(sub);
    if (sub.status !== 'paused') throw new StateError('subscription_not_paused', `Subscription ${id} is ${sub.status}, not paused.`, null);
    return resume(ctx, tx, sub);
  });
}

/** PATCH /v1/subscriptions/:id. */
export async function updateSubscription(ctx: Ctx, id: string, input: SubscriptionUpdateInput): Promise<Subscription> {
  const data = parse(subscriptionUpdate, input);
  // A retry of an interrupted request with the same idempotency key: the charges it decided on are
  // made or finished (same attempt numbers, same processor keys), the change is not made again.
  const resumed = ctx.idempotency?.resumed;
  if (resumed?.subscription_id === id) {
    if (typeof resumed.charge === 'string') await resumeInvoiceCharge(ctx, resumed.charge, 1);
    if (typeof resumed.retry_invoice === 'string') {
      await resumeInvoiceCharge(ctx, resumed.retry_invoice, Number(resumed.retry_attempt), { uncollectible: resumed.retry_uncollectible === true });
    }
    return getSubscription(ctx, id);
  }
  const r = await inTransaction(ctx.db, async (tx) => {
    const sub = await lockSubscription(ctx, tx, id);
    notCancelled(sub);
    const now = wholeSecond(await clockNow({ ...ctx, db: tx }));
    const trialEnd = data.trial_end ? wholeSecond(data.trial_end) : undefined;
    const patch: Prisma.SubscriptionUncheckedUpdateInput = {};
    const jobs: NewJob[] = [];
    let charge: string | null = null;

    if (data.metadata) {
      const merged = { ...(sub.metadata as Record<string, string>), ...data.metadata };
      patch.metadata = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== ''));
    }
    let retry: Charge | null = null;
    if (data.payment_method_id !== undefined) {
      if (data.payment_method_id !== null) await attachedMethod(tx, sub.customerId, data.payment_method_id);
      patch.paymentMethodId = data.payment_method_id;
      // A new method for a subscription waiting on a payment: its invoice is tried again at once.
      if (data.payment_method_id && ['incomplete', 'past_due', 'unpaid'].includes(sub.status) && sub.latestInvoiceId) {
        const inv = await store.findInvoiceHeader(tx, sub.latestInvoiceId);
        retry = inv ? retryOf(inv) : null;
      }
    }
    if (data.apply_wallet_balance !== undefined) patch.applyWalletBalance = data.apply_wallet_balance;
    if (data.cancel_at_period_end !== undefined) {
      patch.cancelAtPeriodEnd = data.cancel_at_period_end;
      patch.cancelAt = data.cancel_at_period_end ? (trialEnd ?? sub.currentPeriodEnd) : null;
    }
    if (trialEnd) {
      if (sub.status !== 'trialing') throw new StateError('subscription_not_trialing', `Subscription ${id} is ${sub.status}; trial_end changes only during a trial.`, 'trial_end');
      checkFuture(trialEnd, now, 'trial_end');
      Object.assign(patch, { trialEnd, billingAnchor: trialEnd, currentPeriodEnd: trialEnd });
      if ((data.cancel_at_period_end ?? sub.cancelAtPeriodEnd) === true) patch.cancelAt = trialEnd;
    }
    let taxRates: string[] | undefined;
    if (data.default_tax_rates !== undefined) patch.defaultTaxRates = taxRates = await checkTaxRates(ctx, tx, data.default_tax_rates);
    let coupon: Coupon | null | undefined;
    if (data.coupon === null) {
      Object.assign(patch, NO_DISCOUNT);
      coupon = null;
    } else if (data.coupon !== undefined && data.coupon !== sub.couponId) {
      const plan = (await store.findPlan(tx, data.plan_id ?? sub.planId)) ?? (await store.findPlan(tx, sub.planId))!;
      coupon = await redeemCoupon(ctx, tx, data.coupon, plan.currency, now);
      Object.assign(patch, discountColumns(coupon, now));
    }
    const planChanges = data.plan_id !== undefined && data.plan_id !== sub.planId;
    const quantityChanges = data.quantity !== undefined && data.quantity !== sub.quantity;
    // The moment a change counts from: proration_date (checked even without a change), else now.
    const at = await prorationTime(tx, sub, data.proration_date, now);
    const changedPlan = planChanges ? await subscribablePlan(ctx, data.plan_id!, tx) : undefined;
    const behavior = data.proration_behavior ?? 'create_prorations';
    const priceChanges = planChanges || quantityChanges || taxRates !== undefined || coupon !== undefined;
    if (priceChanges) {
      // A change of price leaves every invoice it makes writable — the change's now, the next
      // renewal, each later one — as its preview checks it (upcoming.ts checkChange), before
      // anything of it is written: 400 amount_too_large, never a renewal that cannot be invoiced.
      checkChange(
        await loadBillingState(ctx, sub, tx),
        { plan: changedPlan, quantity: data.quantity, coupon, behavior, at, taxRates: taxRates && (await taxRatesForPricing(tx, taxRates)) },
        now,
        amountParam({ plan: planChanges, quantity: quantityChanges, taxRates: taxRates !== undefined, coupon: coupon !== undefined }),
      );
    }
    let renewOn: Plan | null = null;
    if (planChanges || quantityChanges) {
      const oldPlan = (await store.findPlan(tx, sub.planId))!;
      const newPlan = changedPlan ?? oldPlan;
      // What the change bills and how the subscription moves: changes.ts, the preview's function too.
      const waiting = await store.pendingLinesTotal(tx, id);
      const change = planChange({
        sub,
        oldPlan,
        newPlan,
        quantity: data.quantity ?? sub.quantity,
        behavior,
        at,
        waiting: waiting.amount,
        waitingLines: waiting.lines,
        param: planChanges ? 'plan_id' : 'quantity',
      });
      Object.assign(patch, change.patch);
      // An interval change starts a new period: cancel_at_period_end (set before or in this PATCH) ends that one.
      if (change.interval) patch.cancelAt = (data.cancel_at_period_end ?? sub.cancelAtPeriodEnd) ? change.patch.currentPeriodEnd! : null;
      if (change.waitLines) {
        await store.insertInvoiceLines(
          tx,
          change.lines.map((l) => ({ id: newId('invoice_line'), merchantId: ctx.merchant.id, subscriptionId: id, invoiceId: null, ...l, proration: true, createdAt: now })),
        );
      }
      if (change.interval) {
        // The old period's renewal and its notice will not come: the new period has its own.
        await cancelJobs(tx, { kind: SUB_CYCLE_JOB, key: `cycle:${id}:${sub.currentPeriodEnd.getTime()}` });
        await cancelJobs(tx, { kind: SUB_UPCOMING_JOB, key: `upcoming:${id}:${sub.currentPeriodEnd.getTime()}` });
        renewOn = newPlan;
      }
      if (change.invoiceNow) {
        const { invoice, discountEnded } = await issueInvoice(ctx, tx, {
          subscription: { ...sub, ...(patch as object) } as Subscription,
          currency: newPlan.currency,
          reason: 'subscription_update',
          key: `update:${newId('invoice_line')}`,
          periodStart: change.periodStart,
          periodEnd: change.periodEnd,
          lines: change.lines,
          takePending: true,
        });
        patch.latestInvoiceId = invoice.id;
        // A once discount used by this invoice ends with it (the write below would bring it back).
        if (discountEnded) Object.assign(patch, NO_DISCOUNT);
        if (invoice.status === 'open') charge = invoice.id;
      }
    }
    const after = Object.keys(patch).length > 0 ? await store.updateSubscription(tx, id, patch) : sub;
    // A renewal that could not be invoiced (its job failed: renewOrCannot) runs again now that the
    // price changed; the check above made sure it fits.
    if (priceChanges && !renewOn && after.currentPeriodEnd.getTime() <= now.getTime()) {
      await rerunFailedJob(tx, { kind: SUB_CYCLE_JOB, key: `cycle:${id}:${after.currentPeriodEnd.getTime()}` }, now);
    }
    if (trialEnd) jobs.push(...trialJobs(after, now));
    if (renewOn) jobs.push(...renewalJobs(after, renewOn));
    await enqueueJobs(tx, jobs);
    const { updated_at: _u, ...prev } = previousAttributes(subscriptionToJSON(sub) as any, subscriptionToJSON(after) as any);
    if (Object.keys(prev).length > 0) await recordEvent(tx, ctx, 'subscription.updated', subscriptionToJSON(after), prev);
    ctx.idempotency?.checkpoint({
      subscription_id: id,
      charge,
      retry_invoice: retry?.invoiceId ?? null,
      retry_attempt: retry?.attempt ?? null,
      retry_uncollectible: retry?.uncollectible ?? null,
    });
    return { sub: after, charge, retry };
  });
  // The answer is the row as this transaction left it (the UPDATE's RETURNING, what its event
  // carries), never a read after the commit that could show another request's change. Only a
  // charge made after the commit (its outcome may change the status) is read again, after it.
  if (!r.charge && !r.retry) return r.sub;
  if (r.charge) await chargeInvoice(ctx, r.charge, 1, { automatic: true });
  if (r.retry) await makeCharges(ctx, [r.retry]);
  return getSubscription(ctx, r.sub.id);
}

// ---------------------------------------------------------------- recovery: a new method, a retry at once

/** The retry of an invoice still waiting for money (open or uncollectible, something left to pay), else null. */
function retryOf(inv: { id: string; status: string; attemptCount: number; amountDue: bigint; amountPaid: bigint }): Charge | null {
  if (inv.status !== 'open' && inv.status !== 'uncollectible') return null;
  if (inv.amountDue - inv.amountPaid <= 0n) return null;
  return { invoiceId: inv.id, attempt: inv.attemptCount + 1, uncollectible: inv.status === 'uncollectible' };
}

/**
 * The customer made a method their default (in the caller's transaction, the customer locked):
 * the retries it calls for (docs/billing.md, "Recovery") — every open or uncollectible invoice,
 * with something left to pay, of the customer's `past_due` and `unpaid` subscriptions that charge
 * the default (no method of their own still attached to the customer: one pinned to its own
 * method would charge that one again). Made with makeCharges once the transaction commits.
 */
export async function retriesForNewDefault(ctx: Ctx, tx: TenantTx, customerId: string): Promise<Charge[]> {
  const retries: Charge[] = [];
  for (const sub of await subscriptionsOfCustomer(ctx, customerId, tx)) {
    if (sub.status !== 'past_due' && sub.status !== 'unpaid') continue;
    const pinned = sub.paymentMethodId ? await store.findPaymentMethod(tx, sub.paymentMethodId) : null;
    if (pinned && pinned.customerId === customerId) continue;
    for (const inv of await store.listUnsettledInvoicesOfSubscription(tx, sub.id)) {
      const retry = retryOf(inv);
      if (retry) retries.push(retry);
    }
  }
  return retries;
}

/** When the subscription's next invoice is due (for the portal). */
export function nextBillingDate(sub: Subscription): Date | null {
  return sub.status === 'cancelled' || sub.cancelAtPeriodEnd ? null : sub.currentPeriodEnd;
}


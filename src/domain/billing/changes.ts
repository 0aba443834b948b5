// Plan, quantity and interval changes of a subscription, decided without a query (issue 25, items
// 1, 4 and 5): what a change bills — prorations waiting for the next invoice, an invoice now, or,
// for another interval, a new period from the change invoiced at once — and how the subscription
// moves. updateSubscription makes the change with it; the upcoming-invoice preview predicts the
// same change with it (docs/billing.md, "Plan changes and proration", "Interval changes").
import type { Coupon, Plan, Subscription } from '../../generated/prisma/client.ts';
import { StateError, ValidationError } from '../../platform/errors.ts';
import { checkInvoiceTotal, MAX_INVOICE_LINES, tooManyLines } from './compose.ts';
import type { NewLine } from './invoices.ts';
import { addIntervals, periodAt, prorate, type Interval } from './periods.ts';
import type { ProrationBehavior } from './schema.ts';

const iso = (d: Date) => d.toISOString().slice(0, 10);
const named = (p: Pick<Plan, 'name'>, q: number) => (q === 1 ? p.name : `${q} × ${p.name}`);

/** The plan line of a period: `quantity` units at the plan's price (amount = unit × quantity). */
export function planLine(plan: Plan, start: Date, end: Date, quantity = 1): NewLine {
  return {
    description: `${named(plan, quantity)} (${iso(start)} – ${iso(end)})`,
    periodStart: start,
    periodEnd: end,
    amount: plan.amount * BigInt(quantity),
    quantity,
    unitAmount: plan.amount,
  };
}

/** The credit for the unused time of `plan` × `quantity` from `at` to the period's end (0 when none is left). */
function unusedTime(plan: Plan, quantity: number, start: Date, end: Date, at: Date): NewLine {
  return {
    description: `Unused time on ${named(plan, quantity)}`,
    periodStart: at,
    periodEnd: end,
    amount: -prorate(plan.amount * BigInt(quantity), end.getTime() - at.getTime(), end.getTime() - start.getTime()),
    proration: true,
    quantity,
  };
}

/**
 * The proration lines of a plan or quantity change at `now`: credit for the unused time of the old
 * plan × old quantity, charge for the rest of the period of the new plan × new quantity (each the
 * whole line's amount prorated, so a change back and forth at once nets to zero).
 */
export function prorationLines(oldPlan: Plan, newPlan: Plan, start: Date, end: Date, now: Date, oldQuantity = 1, newQuantity = 1): NewLine[] {
  const lines: NewLine[] = [
    unusedTime(oldPlan, oldQuantity, start, end, now),
    {
      description: `Remaining time on ${named(newPlan, newQuantity)}`,
      periodStart: now,
      periodEnd: end,
      amount: prorate(newPlan.amount * BigInt(newQuantity), end.getTime() - now.getTime(), end.getTime() - start.getTime()),
      proration: true,
      quantity: newQuantity,
    },
  ];
  return lines.filter((l) => l.amount !== 0n);
}

/** Whether moving from one plan to another changes the billing period (an interval change). */
export function changesInterval(oldPlan: Pick<Plan, 'interval' | 'intervalCount'>, newPlan: Pick<Plan, 'interval' | 'intervalCount'>): boolean {
  return oldPlan.interval !== newPlan.interval || oldPlan.intervalCount !== newPlan.intervalCount;
}

export interface PlanChangeArgs {
  /** the subscription before the change */
  sub: Subscription;
  oldPlan: Plan;
  newPlan: Plan;
  /** the new quantity (the old one when it does not change) */
  quantity: number;
  behavior: ProrationBehavior;
  /** the moment the change counts from: `proration_date`, else now (whole seconds) */
  at: Date;
  /** what already waits for the subscription's next invoice (Σ of its waiting lines) */
  waiting: bigint;
  /** how many lines wait for it */
  waitingLines: number;
  /** the parameter a refusal names: plan_id, or quantity when only it changes */
  param: string;
}

export interface PlanChange {
  /** another interval or interval_count: a new period from `at`, invoiced now */
  interval: boolean;
  /** what the change bills */
  lines: NewLine[];
  /** the lines are invoiced now (with everything waiting for the next invoice) */
  invoiceNow: boolean;
  /** the lines wait for the next invoice */
  waitLines: boolean;
  /** the period of the invoice made now */
  periodStart: Date;
  periodEnd: Date;
  /** the subscription's new columns */
  patch: Pick<Subscription, 'planId' | 'quantity'> &
    Partial<Pick<Subscription, 'billingAnchor' | 'anchorGeneration' | 'periodIndex' | 'currentPeriodStart' | 'currentPeriodEnd' | 'cancelAt'>>;
}

/** Prorations apply to a paid-for period in progress: not in a trial, not before the first payment, not while paused or unpaid. */
const PRORATING = new Set(['active', 'past_due']);

/**
 * A change of plan and/or quantity (docs/billing.md, "Plan changes and proration", "Interval
 * changes"). Refused, before anything is written: another currency (400 parameter_invalid on
 * plan_id), another interval while incomplete, paused or unpaid (409 subscription_not_active), an
 * invoice larger than one payment may charge (400 amount_too_large).
 *
 * - Same interval: `create_prorations` makes two lines wait for the next invoice — credit for the
 *   unused time of old plan × old quantity, charge for the rest of the period of the new ones —;
 *   `always_invoice` invoices them now; `none` makes none. Outside a paid-for period nothing is
 *   prorated: the plan just changes.
 * - Another interval or interval_count (active or past_due): as Stripe, the billing cycle anchor
 *   resets to `at`, the unused time of the old plan is credited (not with `none`) and the new
 *   period [at, at + interval) is invoiced now, on one invoice with everything waiting. During a
 *   trial the plan just changes: the first invoice, at the trial's end, bills the new one.
 */
export function planChange(a: PlanChangeArgs): PlanChange {
  const { sub, oldPlan, newPlan, quantity, behavior, at } = a;
  if (newPlan.currency !== oldPlan.currency) {
    throw new ValidationError(
      'parameter_invalid',
      `Invalid plan_id: plan ${newPlan.id} bills ${newPlan.currency}, the subscription ${oldPlan.currency}; a plan change keeps the currency (cancel and subscribe anew).`,
      'plan_id',
    );
  }
  const patch = { planId: newPlan.id, quantity };
  const none: PlanChange = { interval: false, lines: [], invoiceNow: false, waitLines: false, periodStart: at, periodEnd: sub.currentPeriodEnd, patch };
  if (changesInterval(oldPlan, newPlan) && sub.status !== 'trialing') {
    if (!PRORATING.has(sub.status)) {
      throw new StateError(
        'subscription_not_active',
        `Subscription ${sub.id} is ${sub.status}; its interval can change only while it is active, past_due or trialing.`,
        'plan_id',
      );
    }
    const period = periodAt(at, newPlan.interval as Interval, newPlan.intervalCount, 0);
    const credit = behavior === 'none' ? null : unusedTime(oldPlan, sub.quantity, sub.currentPeriodStart, sub.currentPeriodEnd, at);
    const lines = [...(credit && credit.amount !== 0n ? [credit] : []), planLine(newPlan, period.start, period.end, quantity)];
    checkInvoiceTotal(a.waiting + lines.reduce((s, l) => s + l.amount, 0n), a.param);
    checkInvoiceTotal(newPlan.amount * BigInt(quantity), a.param);
    checkLines(a.waitingLines + lines.length, a.param);
    return {
      interval: true,
      lines,
      invoiceNow: true,
      waitLines: false,
      periodStart: at,
      periodEnd: period.end,
      patch: {
        ...patch,
        billingAnchor: period.start,
        anchorGeneration: sub.anchorGeneration + 1,
        periodIndex: 0,
        currentPeriodStart: period.start,
        currentPeriodEnd: period.end,
        cancelAt: sub.cancelAtPeriodEnd ? period.end : sub.cancelAt,
      },
    };
  }
  const lines =
    behavior !== 'none' && PRORATING.has(sub.status) ? prorationLines(oldPlan, newPlan, sub.currentPeriodStart, sub.currentPeriodEnd, at, sub.quantity, quantity) : [];
  // Whatever waits for the next invoice plus this change must fit in one invoice: now
  // (always_invoice) or at the renewal, with the new plan's period (create_prorations).
  const changed = lines.reduce((s, l) => s + l.amount, 0n);
  checkInvoiceTotal(a.waiting + changed + (behavior === 'always_invoice' ? 0n : newPlan.amount * BigInt(quantity)), a.param);
  if (lines.length === 0) return none;
  // And within one invoice's lines: now, or at the renewal with its plan line.
  checkLines(a.waitingLines + lines.length + (behavior === 'always_invoice' ? 0 : 1), a.param);
  return { ...none, lines, invoiceNow: behavior === 'always_invoice', waitLines: behavior === 'create_prorations' };
}

/** A change whose invoice would hold more than MAX_INVOICE_LINES lines is refused (400 invoice_too_many_lines). */
function checkLines(lines: number, param: string): void {
  if (lines > MAX_INVOICE_LINES) {
    throw tooManyLines(
      `This change would put ${lines} lines on one invoice (the prorations waiting for the next invoice and its own); invoice what waits first (proration_behavior always_invoice earlier, or a change without proration: proration_behavior none).`,
      param,
    );
  }
}

/**
 * The moment a change counts from: `proration_date` (whole seconds) when given — in the current
 * period and not after now on the billing clock (400 parameter_invalid otherwise), so a change
 * made after its preview can be prorated exactly as previewed — else now.
 */
export function changeTime(sub: Pick<Subscription, 'currentPeriodStart'>, prorationDate: Date | undefined, now: Date, lastChange: Date | null = null): Date {
  if (prorationDate === undefined) return now;
  const at = new Date(Math.floor(prorationDate.getTime() / 1000) * 1000);
  if (at.getTime() < sub.currentPeriodStart.getTime() || at.getTime() > now.getTime()) {
    throw new ValidationError(
      'parameter_invalid',
      `Invalid proration_date: must be in the subscription's current period (from ${sub.currentPeriodStart.toISOString()}) and not after now (${now.toISOString()} on the billing clock).`,
      'proration_date',
    );
  }
  // Not before a prorated change already made in the period: its price was billed only from then,
  // so counting an unused-time credit from earlier would credit time that was never billed.
  if (lastChange && at.getTime() < lastChange.getTime()) {
    throw new ValidationError(
      'parameter_invalid',
      `Invalid proration_date: must not be before the subscription's last prorated change (${lastChange.toISOString()}); preview the change again.`,
      'proration_date',
    );
  }
  return at;
}

/** The discount a coupon applied at `start` gives a subscription: its columns (end: repeating coupons only). */
export function discountColumns(coupon: Pick<Coupon, 'id' | 'duration' | 'durationInMonths'>, start: Date) {
  const end = coupon.duration === 'repeating' && coupon.durationInMonths ? addIntervals(start, 'month', coupon.durationInMonths, 1) : null;
  return { couponId: coupon.id, discountStart: start, discountEnd: end };
}

export const NO_DISCOUNT = { couponId: null, discountStart: null, discountEnd: null };

// What an invoice of a subscription bills, decided without a query (issue 25, item 4): the one
// place that decides, for the real invoice and for every preview of it (GET /v1/invoices/upcoming,
// the invoice.upcoming notice), which lines it takes, in which order, the discount it gets and
// when, the discount share and taxes of each line (priceInvoice), the totals, what a total below
// zero credits to the customer's credit balance, and what the credit balance and the wallet pay. issueInvoice and finalize
// (invoices.ts) make real invoices with these functions; upcoming.ts predicts them with the same.
import type { Coupon, Subscription } from '../../generated/prisma/client.ts';
import { ValidationError } from '../../platform/errors.ts';
import { MAX_AMOUNT } from '../../platform/money.ts';
import { drawable } from '../customers/balance.ts';
import { pricingCoupon } from '../pricing/coupons.ts';
import { priceInvoice, type LineTax, type PricingCoupon, type PricingLine, type PricingTaxRate } from '../pricing/rules.ts';

/** A line of an invoice (stored, waiting, or not made yet: `id` null). */
export interface DraftLine {
  id: string | null;
  description: string;
  periodStart: Date;
  periodEnd: Date;
  amount: bigint;
  proration: boolean;
  quantity: number | null;
  unitAmount: bigint | null;
  /** false: a credit carried over from an earlier invoice (no discount, no tax again) */
  taxable: boolean;
  createdAt: Date;
}

/**
 * The order an invoice lists its lines in — the store's (`withLines` in store.ts): lines that are
 * not prorations first (plan lines, items, carried credits), then prorations; each group by
 * creation, then amount, then id. A line not made yet (id null) goes after a stored one it ties
 * with; two unmade lines that tie on all three keep their order (the id they will get is random,
 * so the real invoice may list such twins either way: docs/billing.md, "Previews").
 */
export function compareLines(a: DraftLine, b: DraftLine): number {
  if (a.proration !== b.proration) return a.proration ? 1 : -1;
  const t = a.createdAt.getTime() - b.createdAt.getTime();
  if (t !== 0) return t;
  if (a.amount !== b.amount) return a.amount < b.amount ? -1 : 1;
  if (a.id === b.id) return 0;
  if (a.id === null) return 1;
  if (b.id === null) return -1;
  return a.id < b.id ? -1 : 1;
}

/**
 * An invoice never bills more than one payment may charge (MAX_AMOUNT, as the payments API): a
 * change that would make it larger is refused (400 amount_too_large) in the change's own
 * transaction, before anything is written or charged — and its preview says so the same way.
 */
export function checkInvoiceTotal(total: bigint, param: string | null = null): void {
  if (total > BigInt(MAX_AMOUNT)) {
    throw new ValidationError(
      'amount_too_large',
      `This would bill ${total} in one invoice; an invoice (like a payment) charges at most ${MAX_AMOUNT}. Change less at once, or invoice the change now.`,
      param,
    );
  }
}

/**
 * The most lines one invoice holds (Stripe's cap of 250 invoice items per invoice, as its API
 * changelog of 2016-02-22 states it): a customer waits with at most this many one-off items per
 * currency (POST /v1/invoice-items refuses the next), a draft takes at most this many, and a
 * subscription's invoice takes the waiting items only while its lines stay within it — the rest
 * keep waiting, so a renewal never fails for them (docs/billing.md, "Lines per invoice").
 */
export const MAX_INVOICE_LINES = 250;

/** The refusal of a line beyond MAX_INVOICE_LINES (400 invoice_too_many_lines). */
export function tooManyLines(message: string, param: string | null): ValidationError {
  return new ValidationError('invoice_too_many_lines', `${message} An invoice holds at most ${MAX_INVOICE_LINES} lines.`, param);
}

/** What a subscription's invoice leaves for the customer's waiting one-off items: what its other lines leave under MAX_AMOUNT. */
export function itemBudget(billed: bigint): bigint {
  return BigInt(MAX_AMOUNT) - (billed > 0n ? billed : 0n);
}

/**
 * The most `lines` can bill: their total with their exclusive taxes and no discount (a discount
 * only lowers a total, and it may end or be removed before the invoice is made).
 */
export function undiscountedTotal(lines: readonly PricingLine[], taxRates: readonly PricingTaxRate[]): bigint {
  return priceInvoice(lines, null, taxRates).total;
}

/**
 * A subscription's plan line — plan × quantity with its exclusive taxes, no discount — must fit one
 * invoice on its own: every renewal bills it, after any discount has ended. Checked when a
 * subscription is made and by every change of its price (upcoming.ts checkChange): 400
 * amount_too_large naming `param`, before anything is written.
 */
export function checkPlanFits(unitAmount: bigint, quantity: number, taxRates: readonly PricingTaxRate[], param: string | null): void {
  checkInvoiceTotal(undiscountedTotal([{ amount: unitAmount * BigInt(quantity) }], taxRates), param);
}

/**
 * The oldest items (in the order given) that fit on an invoice that already bills `billed`, one
 * after the other; the rest keep waiting. An item fits when the lines' amounts stay under the most
 * one invoice may bill (itemBudget) and — with exclusive tax rates, which add to the total — the
 * invoice's undiscounted total with its taxes does too, and the invoice's lines stay within
 * MAX_INVOICE_LINES, so waiting items can never make an invoice that cannot be written
 * (docs/billing.md, "Amounts", "Lines per invoice").
 */
export function fitItems<T extends { amount: bigint }>(
  items: readonly T[],
  billed: readonly PricingLine[] = [],
  taxRates: readonly PricingTaxRate[] = [],
): { taken: T[]; left: T[] } {
  let room = itemBudget(billed.reduce((s, l) => s + l.amount, 0n));
  const lineRoom = MAX_INVOICE_LINES - billed.length;
  const taxed = taxRates.some((r) => !r.inclusive);
  const taken: T[] = [];
  const left: T[] = [];
  for (const i of items) {
    if (taken.length < lineRoom && i.amount <= room && (!taxed || undiscountedTotal([...billed, ...taken, i], taxRates) <= BigInt(MAX_AMOUNT))) {
      room -= i.amount;
      taken.push(i);
    } else left.push(i);
  }
  return { taken, left };
}

/** The discount and tax rates an invoice of a subscription gets when made at a given time. */
export interface InvoicePricing {
  coupon: PricingCoupon | null;
  couponId: string | null;
  /** the discount is a `once` coupon's: the subscription's discount ends with the invoice it discounts */
  once: boolean;
  taxRates: PricingTaxRate[];
}

export const NO_PRICING: InvoicePricing = { coupon: null, couponId: null, once: false, taxRates: [] };

/** Whether the subscription's discount applies to an invoice made at `at`: from its start, until its end (none: forever or once). */
export function discountActive(sub: Pick<Subscription, 'couponId' | 'discountStart' | 'discountEnd'>, at: Date): boolean {
  if (!sub.couponId || !sub.discountStart) return false;
  return sub.discountStart.getTime() <= at.getTime() && (sub.discountEnd === null || at.getTime() < sub.discountEnd.getTime());
}

/**
 * What an invoice of the subscription made at `at` is priced with: its discount's coupon when the
 * discount is active then (`coupon` is the row of `sub.couponId`, a deleted coupon's too: applied
 * discounts go on) and its tax rates, in order.
 */
export function pricingAt(
  sub: Pick<Subscription, 'couponId' | 'discountStart' | 'discountEnd'>,
  at: Date,
  coupon: Coupon | null,
  taxRates: PricingTaxRate[],
): InvoicePricing {
  if (!discountActive(sub, at) || !coupon || coupon.id !== sub.couponId) return { ...NO_PRICING, taxRates };
  return { coupon: pricingCoupon(coupon), couponId: coupon.id, once: coupon.duration === 'once', taxRates };
}

export type ComposedLine = DraftLine & { discountAmount: bigint; taxAmounts: LineTax[] };

export interface Composition {
  /** the lines in the order given, each with its discount share and taxes */
  lines: ComposedLine[];
  subtotal: bigint;
  discountAmount: bigint;
  /** the coupon whose discount it got (null when the discount is 0) */
  couponId: string | null;
  taxAmount: bigint;
  total: bigint;
  /** what is left to pay: the total, or 0 when it is below zero */
  due: bigint;
  /**
   * A total below zero, as a credit (≥ 0): what finalising the invoice adds to the customer's credit
   * balance in its currency (Stripe's rule for a negative invoice total; 0 otherwise).
   */
  creditedToBalance: bigint;
  /** the subscription's `once` discount ends with this invoice */
  discountEnded: boolean;
}

/**
 * Prices an invoice's lines (in the order it lists them) and derives its totals: the discount and
 * taxes by priceInvoice, the credit a total below zero gives the balance, whether a `once` discount ends.
 * finalize uses it on the stored lines, the previews on the lines they predict.
 */
export function composeInvoice(lines: readonly DraftLine[], pricing: InvoicePricing, subscriptionCouponId: string | null): Composition {
  const priced = priceInvoice(lines, pricing.coupon, pricing.taxRates);
  const total = priced.total;
  return {
    lines: lines.map((l, i) => ({ ...l, ...priced.lines[i]! })),
    subtotal: priced.subtotal,
    discountAmount: priced.discountAmount,
    couponId: priced.discountAmount !== 0n ? pricing.couponId : null,
    taxAmount: priced.taxAmount,
    total,
    due: total > 0n ? total : 0n,
    creditedToBalance: total < 0n ? -total : 0n,
    // A once discount ends with the invoice it discounted (one that got none — nothing billed, a
    // credit — leaves it for the next).
    discountEnded: pricing.once && subscriptionCouponId === pricing.couponId && priced.discountAmount !== 0n,
  };
}

/** What pays an invoice's `due`: the customer's credit balance first, then the wallet (when the subscription draws on it), then the card. */
export function drawsOf(due: bigint, creditBalance: bigint, walletBalance: bigint): { creditApplied: bigint; fromWallet: bigint; amountDue: bigint } {
  const creditApplied = drawable(creditBalance, due);
  const fromWallet = drawable(walletBalance, due - creditApplied);
  return { creditApplied, fromWallet, amountDue: due - creditApplied - fromWallet };
}

/** A customer's waiting one-off item as the line an invoice would make of it (invoice-items.ts itemLine). */
export type ItemLine = DraftLine & { itemId: string };

export interface SubscriptionInvoice extends Composition {
  creditApplied: bigint;
  fromWallet: bigint;
  amountDue: bigint;
  itemsTaken: ItemLine[];
  itemsLeft: ItemLine[];
}

/**
 * A subscription's invoice made of its own new lines (a plan line, a change's lines), the lines
 * waiting for it (prorations; a credit carried over by an invoice made before negative totals went to
 * the credit balance) and the customer's waiting items in its currency
 * that fit (issueInvoice: the same budget), listed in the invoice's order, priced, and paid by the
 * credit balance and the wallet as finalize draws them.
 */
export function composeSubscriptionInvoice(a: {
  newLines: readonly DraftLine[];
  pending: readonly DraftLine[];
  items: readonly ItemLine[];
  pricing: InvoicePricing;
  subscriptionCouponId: string | null;
  creditBalance: bigint;
  walletBalance: bigint;
}): SubscriptionInvoice {
  const { taken, left } = fitItems(a.items, [...a.newLines, ...a.pending], a.pricing.taxRates);
  const lines = [...a.newLines, ...a.pending, ...taken].sort(compareLines);
  const composed = composeInvoice(lines, a.pricing, a.subscriptionCouponId);
  return { ...composed, ...drawsOf(composed.due, a.creditBalance, a.walletBalance), itemsTaken: taken, itemsLeft: left };
}

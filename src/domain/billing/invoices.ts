// Invoices: draft → open → paid | void | uncollectible.
//
// An invoice is created and finalised in the transaction of the change that bills (a new
// subscription, a renewal, a plan change invoiced at once): lines, totals, the per-merchant
// number (INV-000123, gap-free: the counter moves in the same transaction), the wallet draw when
// the subscription applies its wallet balance, and the events. Charging is separate and follows
// the payments rule: one short transaction reserves the attempt (a payment with purpose
// "invoice", whose id is the processor's idempotency key), the processor is called outside any
// transaction, and the payment's outcome settles the invoice in the payment's own final
// transaction (the hook below). A crash between the steps is finished by the `invoice.charge`
// job, which finds the reserved payment and re-drives it under the same key: never a second charge.
import { randomBytes } from 'node:crypto';
import type { Invoice, InvoiceItem, Payment, PaymentMethod, Prisma, PrismaClient, Subscription } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction, type Db, type TenantTx } from '../../platform/db/tenant.ts';
import { lockRow, rawQuery } from '../../platform/db/raw.ts';
import { countsByParent, pagesByParent } from '../../platform/db/pages-by-parent.ts';
import { InsufficientBalanceError, NotFoundError, PaymentFailedError, StateError, TransactionConflict, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { formatMoney } from '../../platform/money.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { parse } from '../../platform/validation.ts';
import { cancelJobs, cancelWaitingJobs, DeferJob, enqueueJob, type NewJob } from '../../platform/jobs.ts';
import { clockNow } from '../../platform/clock.ts';
import { previousAttributes, recordEvent } from '../events/index.ts';
import { beforePaymentAttempt, onPaymentOutcome } from '../payments/hooks.ts';
import { cancelAtCheckout, chargeIfReserved, chargeSavedMethod, insertPayment, lockPayment, resumePayment, type NewPayment, type PaymentWithCustomer } from '../payments/index.ts';
import { reserveRefund } from '../refunds/index.ts';
import { creditWallet, debitWallet } from '../wallets/index.ts';
import { signedPdfPath, type InvoicePdfData } from './pdf.ts';
import { invoiceHooks, requireInvoiceHooks, type InvoiceWithLines } from './hooks.ts';
import { addCredit, drawable, drawCredit } from '../customers/balance.ts';
import * as store from './store.ts';
import type { LineTax } from '../pricing/rules.ts';
import { findCouponAny } from '../pricing/coupons.ts';
import {
  checkInvoiceTotal,
  composeInvoice,
  discountActive,
  NO_PRICING,
  pricingAt,
  type Composition,
  type DraftLine,
  type InvoicePricing,
} from './compose.ts';
import { taxRatesByIds, taxRatesForPricing } from '../pricing/tax-rates.ts';
import { collectWaitingItems } from './invoice-items.ts';
import type { CollectionMethod } from './invoicing-schema.ts';
import { invoicePay, type BillingReason, type InvoiceListQuery, type InvoicePayInput, type InvoiceStatus } from './schema.ts';

export const INVOICE_CHARGE_JOB = 'invoice.charge';
/** Dunning: retries this many days after the first failed charge; after the last, the invoice is uncollectible. */
export const RETRY_DAYS = [1, 3, 5] as const;
/** A reserved charge whose process died is re-driven (same processor key) after this long. */
export const CHARGE_RECOVERY_MS = 60_000;
const DAY_MS = 86_400_000;

export type { InvoiceWithLines };

export function invoiceNumber(seq: number): string {
  return `INV-${String(seq).padStart(6, '0')}`;
}

/** How an invoice's lines are loaded in the order the invoice lists them (REST, GraphQL, the PDF): the store's. */
export const INVOICE_LINES: store.LinesInclude = store.withLines;

/** What a line's JSON needs: a stored line, or a line of a preview priced by the same rules. */
export type LineFields = Pick<InvoiceItem, 'description' | 'periodStart' | 'periodEnd' | 'amount' | 'proration' | 'quantity' | 'unitAmount' | 'discountAmount'> & {
  id: string | null;
  taxAmounts: unknown;
};

export function invoiceLineToJSON<L extends LineFields>(l: L, currency: string) {
  return {
    id: l.id as L['id'],
    object: 'invoice_line' as const,
    description: l.description,
    period: { start: l.periodStart.toISOString(), end: l.periodEnd.toISOString() },
    amount: Number(l.amount),
    amount_formatted: formatMoney(l.amount, currency),
    proration: l.proration,
    quantity: l.quantity,
    unit_amount: l.unitAmount === null ? null : Number(l.unitAmount),
    discount_amount: Number(l.discountAmount),
    tax_amounts: ((l.taxAmounts ?? []) as LineTax[]).map((t) => ({ tax_rate: t.tax_rate, amount: t.amount, inclusive: t.inclusive })),
  };
}

export function invoiceToJSON(inv: InvoiceWithLines, baseUrl: string) {
  return {
    id: inv.id,
    object: 'invoice' as const,
    customer_id: inv.customerId,
    subscription_id: inv.subscriptionId,
    number: inv.number,
    status: inv.status as InvoiceStatus,
    billing_reason: inv.billingReason as BillingReason,
    currency: inv.currency,
    lines: inv.lines.map((l) => invoiceLineToJSON(l, inv.currency)),
    subtotal: Number(inv.subtotal),
    discount_amount: Number(inv.discountAmount),
    coupon_id: inv.couponId,
    tax_amount: Number(inv.taxAmount),
    total: Number(inv.total),
    total_formatted: formatMoney(inv.total, inv.currency),
    credit_applied: Number(inv.creditApplied),
    credited_to_balance: Number(inv.creditedToBalance),
    amount_from_wallet: Number(inv.amountFromWallet),
    amount_due: Number(inv.amountDue),
    amount_paid: Number(inv.amountPaid),
    amount_remaining: Number(inv.amountDue - inv.amountPaid),
    attempt_count: inv.attemptCount,
    next_payment_attempt: inv.nextPaymentAttempt?.toISOString() ?? null,
    payment_id: inv.paymentId,
    last_payment_error: lastPaymentError(inv),
    pdf_url: `${baseUrl}/v1/invoices/${inv.id}/pdf`,
    period_start: inv.periodStart.toISOString(),
    period_end: inv.periodEnd.toISOString(),
    due_date: inv.dueDate?.toISOString() ?? null,
    created_at: inv.createdAt.toISOString(),
    finalized_at: inv.finalizedAt?.toISOString() ?? null,
    paid_at: inv.paidAt?.toISOString() ?? null,
    voided_at: inv.voidedAt?.toISOString() ?? null,
    // One-off invoicing and credit notes (one-off.ts, credit-notes.ts).
    collection_method: inv.collectionMethod as CollectionMethod,
    days_until_due: inv.daysUntilDue,
    hosted_invoice_url: inv.hostedToken ? hostedInvoiceUrl(baseUrl, inv.hostedToken) : null,
    pre_payment_credit_notes_amount: Number(inv.prePaymentCreditNotesAmount),
    post_payment_credit_notes_amount: Number(inv.postPaymentCreditNotesAmount),
  };
}

/** The hosted page where the customer of a send_invoice invoice pays it (src/hosted/invoice.ts). */
export function hostedInvoiceUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/hosted/invoice/${token}`;
}
export type InvoiceJSON = ReturnType<typeof invoiceToJSON>;

/** A line of an invoice not made yet: a waiting line (its id) or one the invoice will create (id null). */
export type PreviewLine = DraftLine;

/**
 * The invoice a future billing will make, as an invoice-shaped object with `id: null` (Stripe's
 * upcoming invoice), from its composition (compose.ts: the lines in the invoice's order with their
 * discount shares and taxes, the totals, and the draws finalize would make with the balances the
 * preview read).
 */
export function invoicePreviewToJSON(p: {
  customerId: string;
  subscriptionId: string;
  currency: string;
  reason: BillingReason;
  periodStart: Date;
  periodEnd: Date;
  composed: Composition & { creditApplied: bigint; fromWallet: bigint; amountDue: bigint };
  /** when the invoice will be made and charged (its next_payment_attempt) */
  at: Date;
  createdAt: Date;
}) {
  const c = p.composed;
  return {
    id: null,
    object: 'invoice' as const,
    customer_id: p.customerId,
    subscription_id: p.subscriptionId,
    number: null,
    status: 'draft' as const,
    billing_reason: p.reason,
    currency: p.currency,
    lines: c.lines.map((l) => invoiceLineToJSON(l, p.currency)),
    subtotal: Number(c.subtotal),
    discount_amount: Number(c.discountAmount),
    coupon_id: c.couponId,
    tax_amount: Number(c.taxAmount),
    total: Number(c.total),
    total_formatted: formatMoney(c.total, p.currency),
    credit_applied: Number(c.creditApplied),
    credited_to_balance: Number(c.creditedToBalance),
    amount_from_wallet: Number(c.fromWallet),
    amount_due: Number(c.amountDue),
    amount_paid: 0,
    amount_remaining: Number(c.amountDue),
    attempt_count: 0,
    next_payment_attempt: p.at.toISOString(),
    payment_id: null,
    last_payment_error: null,
    pdf_url: null,
    period_start: p.periodStart.toISOString(),
    period_end: p.periodEnd.toISOString(),
    due_date: null,
    created_at: p.createdAt.toISOString(),
    finalized_at: null,
    paid_at: null,
    voided_at: null,
    collection_method: 'charge_automatically' as const,
    days_until_due: null,
    hosted_invoice_url: null,
    pre_payment_credit_notes_amount: 0,
    post_payment_credit_notes_amount: 0,
  };
}
export type InvoicePreviewJSON = ReturnType<typeof invoicePreviewToJSON>;

export { checkInvoiceTotal, discountActive, NO_PRICING, type InvoicePricing };

/**
 * What an invoice of a subscription made at `at` is priced with (compose.ts pricingAt): its active
 * discount's coupon and its default tax rates, in order. Used by finalize and by the previews alike.
 */
export async function invoicePricing(
  ctx: Ctx,
  db: Db,
  sub: Pick<Subscription, 'couponId' | 'discountStart' | 'discountEnd' | 'defaultTaxRates'>,
  at: Date,
): Promise<InvoicePricing> {
  const taxRates = await taxRatesForPricing(db, sub.defaultTaxRates ?? []);
  const coupon = discountActive(sub, at) ? await findCouponAny(ctx, sub.couponId!, db).catch(() => null) : null;
  return pricingAt(sub, at, coupon, taxRates);
}

/**
 * A draft with the totals it will bill (Stripe computes a draft's subtotal, discount, tax and total
 * as its lines change): its lines priced by `composed` (composeInvoice, the one function finalize
 * and the previews use), `amount_due` its total (0 below zero) — the credit balance and the wallet
 * are drawn when it is finalised.
 */
export function withDraftTotals(inv: InvoiceWithLines, composed: Composition): InvoiceWithLines {
  return {
    ...inv,
    ...draftTotals(composed),
    lines: inv.lines.map((l, i) => ({ ...l, discountAmount: composed.lines[i]!.discountAmount, taxAmounts: composed.lines[i]!.taxAmounts as unknown as Prisma.JsonValue })),
  };
}

/** A draft's stored totals (withDraftTotals). */
export function draftTotals(composed: Composition) {
  return {
    subtotal: composed.subtotal,
    discountAmount: composed.discountAmount,
    couponId: composed.couponId,
    taxAmount: composed.taxAmount,
    total: composed.total,
    amountDue: composed.due,
  };
}

/** Why a charge of an invoice failed: the invoice's `last_payment_error`. */
export interface PaymentError {
  code: string;
  message: string;
}

/** The reason its last attempt failed (automatic or manual); null when none failed, or once paid. */
export function lastPaymentError(inv: Pick<Invoice, 'lastPaymentErrorCode' | 'lastPaymentErrorMessage'>): PaymentError | null {
  return inv.lastPaymentErrorCode ? { code: inv.lastPaymentErrorCode, message: inv.lastPaymentErrorMessage ?? '' } : null;
}

const NO_PAYMENT_METHOD: PaymentError = { code: 'no_payment_method', message: 'The customer has no payment method to charge.' };
const PAYMENT_EXPIRED: PaymentError = { code: 'payment_expired', message: 'The checkout of the attempt expired before it was paid.' };

const json = (ctx: Ctx, inv: InvoiceWithLines) => invoiceToJSON(inv, ctx.runtime.config.publicBaseUrl);
/** The invoice's JSON for an event (the shape REST returns). */
export const invoiceEventJSON = json;

export async function getInvoice(ctx: Ctx, id: string, db: Db = ctx.db, param = 'id'): Promise<InvoiceWithLines> {
  const inv = await store.findInvoice(db, id);
  if (!inv) throw new NotFoundError('invoice', id, param);
  return inv;
}

async function lockInvoice(ctx: Ctx, tx: TenantTx, id: string): Promise<InvoiceWithLines> {
  await lockRow(tx, 'invoices', ctx.merchant.id, id);
  return getInvoice(ctx, id, tx);
}

/**
 * Locks an invoice and its current payment, the payment first: the order a payment's outcome
 * takes them in (its transaction locks the payment, then settles the invoice), so the two never
 * deadlock, and nothing can start or settle a charge of the invoice until the caller commits.
 */
export async function lockInvoiceAndPayment(ctx: Ctx, tx: TenantTx, id: string): Promise<{ inv: InvoiceWithLines; payment: PaymentWithCustomer | null }> {
  const seen = await getInvoice(ctx, id, tx);
  const payment = seen.paymentId ? await lockPayment(ctx, tx, seen.paymentId) : null;
  const inv = await lockInvoice(ctx, tx, id);
  if (inv.paymentId === seen.paymentId) return { inv, payment };
  // A new attempt took its place between the read and the lock. Locking that payment now, while
  // holding the invoice, would wait in the wrong order: its outcome holds the payment and waits for
  // the invoice (a deadlock). The transaction is run again instead (inTransaction's retry), its read
  // then seeing the new payment, which it locks first.
  throw new TransactionConflict(`invoice ${id} changed payment while being locked`);
}

export async function listInvoices(ctx: Ctx, q: InvoiceListQuery): Promise<Page<InvoiceWithLines>> {
  const filter = {
    ...(q.customer_id ? { customerId: q.customer_id } : {}),
    ...(q.subscription_id ? { subscriptionId: q.subscription_id } : {}),
    ...(q.status ? { status: q.status } : {}),
  };
  return paginate(
    q,
    ({ where, ...page }) => store.listInvoices(ctx.db, { AND: [where, filter] }, page),
    () => store.countInvoices(ctx.db, filter),
  );
}

const INVOICES_OF_SUBSCRIPTION = { table: 'invoices', parent: 'subscription_id' };

/** One page of invoices per subscription (GraphQL Subscription.invoices), in two queries for all. */
export function listInvoicesOfSubscriptions(ctx: Ctx, ids: readonly string[], q: Pick<InvoiceListQuery, 'limit' | 'after' | 'status'>) {
  return pagesByParent(ctx, INVOICES_OF_SUBSCRIPTION, ids, { ...q, filters: { status: q.status } }, (rows) =>
    store.listInvoicesById(ctx.db, rows),
  );
}

export function countInvoicesOfSubscriptions(ctx: Ctx, ids: readonly string[], q: Pick<InvoiceListQuery, 'status'>) {
  return countsByParent(ctx, INVOICES_OF_SUBSCRIPTION, ids, { status: q.status });
}

/**
 * Invoices by id, in no particular order (GraphQL Subscription.latestInvoice, one query for every
 * subscription of a response), their lines in the order `lines` gives (default: getInvoice's).
 */
export function invoicesById(ctx: Ctx, ids: readonly string[], lines?: store.LinesInclude): Promise<InvoiceWithLines[]> {
  return store.listInvoicesById(ctx.db, [...ids], lines);
}

/** Invoices' payments by id, in no particular order (GraphQL Invoice.payment, one query for every invoice of a response). */
export function invoicePaymentsById(ctx: Ctx, ids: readonly string[]): Promise<Payment[]> {
  return store.listPaymentsById(ctx.db, [...ids]);
}

// ---------------------------------------------------------------- issuing

export interface NewLine {
  description: string;
  periodStart: Date;
  periodEnd: Date;
  amount: bigint;
  proration?: boolean;
  /** plan lines: units, and the price of one (amount = unitAmount × quantity); prorations: units only */
  quantity?: number | null;
  unitAmount?: bigint | null;
}

export interface IssueArgs {
  subscription: Subscription;
  currency: string;
  reason: BillingReason;
  /** one invoice per (subscription, key): issuing again returns the first */
  key: string;
  periodStart: Date;
  periodEnd: Date;
  lines: NewLine[];
  /** also bill what waits for the next invoice: the subscription's prorations, the customer's one-off items in `currency` that fit */
  takePending: boolean;
  /**
   * No caller charges it after the transaction: its first attempt's job is due now rather than
   * CHARGE_RECOVERY_MS later (an invoice issued inside a payment's settlement).
   */
  chargeNow?: boolean;
}

/**
 * Creates and finalises an invoice in the caller's transaction (the subscription is locked by the
 * caller). Returns the invoice and whether it was created now (false: the key was billed before).
 */
export async function issueInvoice(ctx: Ctx, tx: TenantTx, a: IssueArgs): Promise<{ invoice: InvoiceWithLines; created: boolean; discountEnded: boolean }> {
  const prior = await store.findInvoiceByBillingKey(tx, a.subscription.id, a.key);
  if (prior) return { invoice: prior, created: false, discountEnded: false };
  const now = await clockNow({ ...ctx, db: tx });
  const draft = await store.insertInvoice(tx, {
    id: newId('invoice'),
    merchantId: ctx.merchant.id,
    customerId: a.subscription.customerId,
    subscriptionId: a.subscription.id,
    billingReason: a.reason,
    billingKey: a.key,
    currency: a.currency,
    periodStart: a.periodStart,
    periodEnd: a.periodEnd,
    dueDate: now,
    createdAt: now,
  });
  if (a.lines.length > 0) {
    await store.insertInvoiceLines(
      tx,
      a.lines.map((l) => ({
        id: newId('invoice_line'),
        merchantId: ctx.merchant.id,
        subscriptionId: a.subscription.id,
        invoiceId: draft.id,
        description: l.description,
        periodStart: l.periodStart,
        periodEnd: l.periodEnd,
        amount: l.amount,
        proration: l.proration ?? false,
        quantity: l.quantity ?? null,
        unitAmount: l.unitAmount ?? null,
        createdAt: now,
      })),
    );
  }
  const pricing = await invoicePricing(ctx, tx, a.subscription, now);
  if (a.takePending) {
    const waiting = await store.listPendingLines(tx, a.subscription.id);
    await store.attachPendingLines(tx, a.subscription.id, draft.id);
    // The customer's one-off items waiting in this currency go on it too (invoice-items.ts), as
    // many as fit under the most one invoice may bill with its taxes (compose.ts, the previews' rule).
    await collectWaitingItems(ctx, tx, draft, now, { fit: { billed: [...a.lines, ...waiting], taxRates: pricing.taxRates } });
  }
  const created = await getInvoice(ctx, draft.id, tx);
  // The draft's totals are what it bills (as Stripe computes a draft's): the lines as the invoice
  // lists them, priced and totalled by the previews' function (compose.ts). The draft lives only
  // inside this transaction, so its event carries them and finalize writes them.
  const composed = composeInvoice(created.lines, pricing, a.subscription.couponId);
  await recordEvent(tx, ctx, 'invoice.created', json(ctx, withDraftTotals(created, composed)));
  const { invoice, discountEnded } = await finalize(ctx, tx, created, composed, a.subscription, now);
  if (invoice.status === 'open') {
    // The caller charges it right after this transaction commits; should its process die first,
    // this job makes the first attempt instead (a no-op once it was made).
    await enqueueJob(tx, {
      merchantId: ctx.merchant.id,
      kind: INVOICE_CHARGE_JOB,
      runAt: new Date(now.getTime() + (a.chargeNow ? 0 : CHARGE_RECOVERY_MS)),
      key: `retry:${invoice.id}:1`,
      payload: { invoice_id: invoice.id, attempt: 1 },
    });
  }
  return { invoice, created: true, discountEnded };
}

/**
 * draft → open (or paid when nothing is due): totals, the number, the credit balance's and the
 * wallet's draws. A total below zero (credits larger than the charges) is paid with nothing due and
 * credited to the customer's credit balance in the invoice's currency (`credited_to_balance`; a
 * ledger entry `invoice_credit` with the invoice's id), as Stripe does with a negative total: the
 * customer's later invoices draw it — this subscription's, their other ones', one-off invoices.
 */
async function finalize(
  ctx: Ctx,
  tx: TenantTx,
  inv: InvoiceWithLines,
  composed: Composition,
  sub: Subscription,
  now: Date,
): Promise<{ invoice: InvoiceWithLines; discountEnded: boolean }> {
  for (const [i, l] of inv.lines.entries()) {
    const p = composed.lines[i]!;
    if (p.discountAmount !== 0n || p.taxAmounts.length > 0) {
      await store.setLinePricing(tx, l.id, { discountAmount: p.discountAmount, taxAmounts: p.taxAmounts as unknown as Prisma.InputJsonValue });
    }
  }
  const { subtotal, total, due } = composed;
  checkInvoiceTotal(total);
  const rows = await store.nextInvoiceSeq(rawQuery(tx), ctx.merchant.id);
  const number = invoiceNumber(Number(rows[0]!.seq));
  // A once coupon's discount ends with the invoice it applied to.
  const discountEnded = composed.discountEnded;
  if (discountEnded) await store.updateSubscription(tx, sub.id, { couponId: null, discountStart: null, discountEnd: null });
  // The customer's credit balance first (money owed to them), then the wallet (when the subscription draws on it).
  const credit = await drawCredit(ctx, tx, { customerId: inv.customerId, currency: inv.currency, due, invoiceId: inv.id, description: `Invoice ${number}` });
  const fromWallet = sub.applyWalletBalance && due - credit > 0n ? await drawFromWallet(ctx, tx, inv, due - credit) : 0n;
  const amountDue = due - credit - fromWallet;
  const paid = amountDue === 0n;
  // A total below zero: what the customer is owed goes to their credit balance (nothing was drawn
  // above, since nothing is due), with customer.balance_changed, in this transaction.
  const creditedToBalance = composed.creditedToBalance;
  if (creditedToBalance > 0n) {
    await addCredit(ctx, tx, {
      customerId: inv.customerId,
      currency: inv.currency,
      amount: creditedToBalance,
      type: 'invoice_credit',
      invoiceId: inv.id,
      subscriptionId: sub.id,
      description: `Credit from invoice ${number}`,
    });
  }
  const after = await store.updateInvoice(tx, inv.id, {
    number,
    status: paid ? 'paid' : 'open',
    subtotal,
    discountAmount: composed.discountAmount,
    couponId: composed.couponId,
    taxAmount: composed.taxAmount,
    total,
    creditApplied: credit,
    creditedToBalance,
    amountFromWallet: fromWallet,
    amountDue,
    finalizedAt: now,
    paidAt: paid ? now : null,
  });
  await recordEvent(tx, ctx, 'invoice.finalized', json(ctx, { ...after, status: 'open', paidAt: null }), { status: 'draft', number: null });
  if (paid) await recordEvent(tx, ctx, 'invoice.paid', json(ctx, after), { status: 'open', paid_at: null });
  return { invoice: after, discountEnded };
}

/** Debits what the customer's active wallet in the invoice's currency can pay (reference: the invoice id). */
async function drawFromWallet(ctx: Ctx, tx: TenantTx, inv: Invoice, due: bigint): Promise<bigint> {
  const wallet = await store.findActiveWallet(tx, inv.customerId, inv.currency);
  const amount = wallet ? drawable(wallet.balance, due) : 0n;
  if (!wallet || amount === 0n) return 0n;
  try {
    await debitWallet({ ...ctx, db: tx }, wallet.id, { amount: Number(amount), reference: inv.id, description: `Invoice ${inv.id}` });
    return amount;
  } catch (err) {
    // Expiring credit that lapsed at this very moment: the card pays it all instead.
    if (err instanceof InsufficientBalanceError) return 0n;
    throw err;
  }
}

/** What can be voided: an invoice that still waits for money (as Stripe: open or uncollectible). */
const VOIDABLE = new Set(['open', 'uncollectible']);

/**
 * POST /v1/invoices/:id/void: an open or uncollectible invoice (else 409 invoice_not_open; a paid,
 * void or draft one keeps its state). Its checkout closes, what it drew from the wallet goes back,
 * its automatic collection stops (the retry and recovery jobs of its charges are cancelled), and a
 * past_due or unpaid subscription left owing nothing is active again (the hook below), all in one
 * transaction with `invoice.voided`.
 */
export async function voidInvoice(ctx: Ctx, id: string): Promise<InvoiceWithLines> {
  return inTransaction(ctx.db, async (tx) => {
    // A checkout attempt can never slip between the check below and the void.
    const { inv, payment } = await lockInvoiceAndPayment(ctx, tx, id);
    if (!VOIDABLE.has(inv.status)) {
      throw new StateError('invoice_not_open', `Invoice ${id} is ${inv.status}; only an open or uncollectible invoice can be voided.`, null);
    }
    if (payment?.status === 'processing') throw new StateError('invoice_payment_in_progress', `Invoice ${id} is being charged; try again in a moment.`, null);
    // Its subscription is locked now, before the wallet below: the order a renewal takes them in
    // (subscription, then wallet), for the voided hook at the end.
    if (inv.subscriptionId) await lockRow(tx, 'subscriptions', ctx.merchant.id, inv.subscriptionId);
    // Its checkout closes: a voided invoice can no longer be paid there.
    if (payment) await cancelAtCheckout({ ...ctx, db: tx }, payment.id);
    // No more automatic attempts: every retry it may have waiting (attempt n + 1 at most, the first
    // attempt's safety job included) and the recovery of its current charge. (Run anyway, each
    // would find the invoice void and charge nothing; cancelled, they do not run at all.)
    await cancelJobs(tx, { kind: INVOICE_CHARGE_JOB, key: chargeJobKeys(inv) });
    // What it drew from the customer's credit balance goes back, then what it drew from the wallet
    // (the order finalize takes them in).
    if (inv.creditApplied > 0n) {
      await addCredit(ctx, tx, {
        customerId: inv.customerId,
        currency: inv.currency,
        amount: inv.creditApplied,
        type: 'unapplied_from_invoice',
        invoiceId: inv.id,
        description: `Invoice ${inv.number ?? inv.id} voided`,
      });
    }
    if (inv.amountFromWallet > 0n) {
      const debit = await store.findWalletDebit(tx, inv.id);
      if (debit) {
        await creditWallet({ ...ctx, db: tx }, debit.walletId, {
          amount: Number(inv.amountFromWallet),
          description: `Invoice ${inv.number ?? inv.id} voided`,
          reference: `${inv.id}:void`,
        });
      }
    }
    const now = await clockNow({ ...ctx, db: tx });
    const after = await store.updateInvoice(tx, id, { status: 'void', voidedAt: now, nextPaymentAttempt: null });
    const afterJSON = json(ctx, after);
    await recordEvent(tx, ctx, 'invoice.voided', afterJSON, previousAttributes(json(ctx, inv), afterJSON));
    requireInvoiceHooks(after);
    await invoiceHooks.voided?.(ctx, tx, after);
    return after;
  });
}

/**
 * Automatic collection of a subscription's open invoices stops (its cancellation without
 * `invoice_now`, docs/billing.md "Cancel"): each stays `open` and payable by hand, but its waiting
 * attempts (the first attempt's safety job, the next dunning retry) and the recovery of its current
 * charge are cancelled, `next_payment_attempt` is null, and `auto_advance` false keeps a charge that
 * fails later (one in flight now, or one made by hand) from scheduling retries. In the caller's
 * transaction; each invoice is taken with its payment first, the order a payment's outcome locks
 * them in.
 */
export async function stopCollection(ctx: Ctx, tx: TenantTx, subscriptionId: string): Promise<void> {
  for (const { id } of await openInvoicesOf(tx, subscriptionId)) {
    const { inv } = await lockInvoiceAndPayment(ctx, tx, id);
    if (inv.status !== 'open') continue;
    await cancelJobs(tx, { kind: INVOICE_CHARGE_JOB, key: chargeJobKeys(inv) });
    await store.updateInvoice(tx, id, { autoAdvance: false, nextPaymentAttempt: null });
  }
}

/** A subscription's open invoices with something left to pay, oldest first (ids and attempt counts). */
export async function openInvoicesOf(tx: TenantTx, subscriptionId: string): Promise<{ id: string; attemptCount: number }[]> {
  return (await store.listUnsettledInvoicesOfSubscription(tx, subscriptionId))
    .filter((i) => i.status === 'open' && i.amountDue - i.amountPaid > 0n)
    .map(({ id, attemptCount }) => ({ id, attemptCount }));
}

/** The job that recovers a reserved charge of the invoice should its process die before charging it (reserveAttempt). */
function recoveryOf(paymentId: string): { kind: string; key: string } {
  return { kind: INVOICE_CHARGE_JOB, key: `recover:${paymentId}` };
}

/** The keys of every charge job an invoice may have waiting: attempts 1 … n + 1 and its current charge's recovery. */
export function chargeJobKeys(inv: Invoice): string[] {
  const keys = Array.from({ length: inv.attemptCount + 1 }, (_, i) => `retry:${inv.id}:${i + 1}`);
  if (inv.paymentId) keys.push(`recover:${inv.paymentId}`);
  return keys;
}

/**
 * Takes the locks a subscription's cancellation will need on its open invoices (each invoice's
 * payment, then the invoice) before the caller locks the subscription, so the cancel takes them in
 * the order a payment's outcome does (payment → invoice → subscription).
 */
export async function lockOpenInvoicesOf(ctx: Ctx, tx: TenantTx, subscriptionId: string): Promise<void> {
  for (const { id } of await openInvoicesOf(tx, subscriptionId)) await lockInvoiceAndPayment(ctx, tx, id);
}

// ---------------------------------------------------------------- charging

/**
 * Makes attempt number `attempt` at charging an open invoice: reserves a payment for it, then
 * charges the subscription's method, or the customer's default, outside any transaction. The
 * payment's outcome settles the invoice (hook below). Returns the invoice afterwards. Safe to run
 * twice or concurrently: an attempt already made (attempt_count ≥ attempt) is not made again.
 */
/** How long a dunning retry that found a charge of its invoice in flight waits before it looks again. */
export const IN_FLIGHT_RETRY_MS = 5_000;

export async function chargeInvoice(
  ctx: Ctx,
  id: string,
  attempt: number,
  opts: {
    uncollectible?: boolean;
    /**
     * A charge of the invoice in flight (the customer paying at its checkout): `skip` (the default)
     * leaves the attempt to that charge's outcome; `defer` (a dunning retry's job) waits for it and
     * looks again, so a decline there does not use the retry up.
     */
    whileInFlight?: 'skip' | 'defer';
    /** an automatic attempt (a job's): not made once the invoice's automatic collection stopped */
    automatic?: boolean;
  } = {},
): Promise<InvoiceWithLines> {
  const reserved = await inTransaction(ctx.db, async (tx) => {
    const { inv, payment: current } = await lockInvoiceAndPayment(ctx, tx, id);
    // An uncollectible invoice is tried again only when asked (a new payment method), never by dunning.
    const chargeable = inv.status === 'open' || (inv.status === 'uncollectible' && opts.uncollectible === true);
    if (!chargeable || inv.amountDue - inv.amountPaid <= 0n || inv.attemptCount >= attempt) return null;
    if (opts.automatic && !inv.autoAdvance) return null; // its subscription was cancelled: collection stopped
    // At most one charge in flight per invoice: while its payment is being charged (at the
    // checkout, or by an earlier attempt), no other starts; that one's outcome settles the invoice.
    if (current?.status === 'processing') {
      if (opts.whileInFlight === 'defer') throw new DeferJob(IN_FLIGHT_RETRY_MS, 'a charge of the invoice is in flight');
      ctx.log.info({ invoice_id: id, payment_id: current.id, attempt }, 'invoice not charged: a charge of it is in flight');
      return null;
    }
    // The previous attempt's checkout (a failed payment stays payable there) closes: one payable payment per invoice.
    if (current) await cancelAtCheckout({ ...ctx, db: tx }, current.id);
    const customer = await store.findCustomer(tx, inv.customerId);
    if (!customer || customer.deletedAt) return null; // a deleted customer is charged no more
    const method = await methodToCharge(tx, inv, customer.defaultPaymentMethodId);
    const now = await clockNow({ ...ctx, db: tx });
    if (!method) {
      // Nothing to charge: a failed attempt all the same (dunning goes on; a method may be added meanwhile).
      await store.setInvoiceAttempt(tx, id, { attemptCount: attempt });
      await settleFailure(ctx, tx, await getInvoice(ctx, id, tx), now, NO_PAYMENT_METHOD);
      return null;
    }
    const payment = await reserveAttempt(ctx, tx, inv, method, now, { attemptCount: attempt, manual: false });
    return { payment, method };
  });
  if (reserved) await chargeSavedMethod(ctx, reserved.payment.id, reserved.method);
  return getInvoice(ctx, id);
}

/**
 * The method a charge of the invoice uses: the subscription's own method while it is still the
 * customer's (a detach releases the pin; a pin made before that rule may still name a detached
 * method), else the customer's default; null when there is none.
 */
async function methodToCharge(tx: TenantTx, inv: Invoice, defaultMethodId: string | null): Promise<PaymentMethod | null> {
  const sub = inv.subscriptionId ? await store.findSubscription(tx, inv.subscriptionId) : null;
  const pinned = sub?.paymentMethodId ? await store.findPaymentMethod(tx, sub.paymentMethodId) : null;
  return chooseMethod(inv.customerId, pinned, () => (defaultMethodId ? store.findPaymentMethod(tx, defaultMethodId) : null));
}

/**
 * The rule of methodToCharge, on methods given (a renewal batch reads them for many at once): the
 * pinned method while it is the customer's, else the customer's default, when that is theirs.
 */
export async function chooseMethod(
  customerId: string,
  pinned: PaymentMethod | null | undefined,
  byDefault: () => Promise<PaymentMethod | null | undefined> | PaymentMethod | null | undefined,
): Promise<PaymentMethod | null> {
  const method = pinned && pinned.customerId === customerId ? pinned : await byDefault();
  return method && method.customerId === customerId ? method : null;
}

/**
 * Reserves one attempt at charging the invoice (locked by the caller, its previous attempt's
 * checkout closed): the payment (charged after the commit, its id the processor's key), the
 * invoice's current payment and attempt count, and the recovery job should this process die
 * before the outcome is recorded (a no-op when it was). A manual attempt (POST /invoices/:id/pay)
 * is marked on the payment, so its failure leaves dunning as it was.
 */
async function reserveAttempt(
  ctx: Ctx,
  tx: TenantTx,
  inv: InvoiceWithLines,
  method: PaymentMethod,
  now: Date,
  a: { attemptCount: number; manual: boolean; paymentId?: string },
): Promise<PaymentWithCustomer> {
  const payment = await insertPayment(ctx, tx, { ...(a.paymentId ? { id: a.paymentId } : {}), ...attemptPaymentOf(inv, method, a.manual) });
  await store.setInvoiceAttempt(tx, inv.id, { paymentId: payment.id, attemptCount: a.attemptCount });
  await enqueueJob(tx, reservedChargeRecoveryJob(ctx, inv.id, payment.id, now));
  return payment;
}

/** The payment of one attempt at charging the invoice with `method` (reserveAttempt's, and a renewal batch's). */
export function attemptPaymentOf(inv: Invoice, method: PaymentMethod, manual: boolean): NewPayment {
  return {
    customerId: inv.customerId,
    amount: inv.amountDue - inv.amountPaid,
    currency: inv.currency,
    redirectUrl: null,
    paymentMethodId: method.id,
    purpose: 'invoice',
    metadata: manual ? { invoice_id: inv.id, collection: 'manual' } : { invoice_id: inv.id },
    checkout: { description: `Invoice ${inv.number}` },
  };
}

/** The job that charges a reserved payment of the invoice should its process die before the charge (`at` + CHARGE_RECOVERY_MS; a no-op once charged). */
export function reservedChargeRecoveryJob(ctx: Ctx, invoiceId: string, paymentId: string, at: Date): NewJob {
  return {
    merchantId: ctx.merchant.id,
    kind: INVOICE_CHARGE_JOB,
    runAt: new Date(at.getTime() + CHARGE_RECOVERY_MS),
    key: recoveryOf(paymentId).key,
    payload: { invoice_id: invoiceId, recover_payment_id: paymentId },
  };
}

/** What can be paid now: an invoice that still waits for money (as Stripe: open or uncollectible). */
const PAYABLE = VOIDABLE;

/**
 * POST /v1/invoices/:id/pay: charges an open or uncollectible invoice once, now (else 409
 * invoice_not_open; 409 invoice_payment_in_progress while a charge of it is at the processor),
 * with `payment_method_id` (a saved method of the invoice's customer: 404 unknown, 400
 * parameter_invalid another customer's or detached) or the method dunning would use. It goes
 * through dunning's charging path: the previous attempt's checkout closes, one payment is reserved
 * and charged outside any transaction, and its outcome settles the invoice in the payment's own
 * transaction — paid (the subscription hooks run: past_due or unpaid → active), or failed
 * (`last_payment_error`, `invoice.payment_failed`). Returns the paid invoice (or, when the
 * processor has not answered yet, the invoice as it stands); a failed charge throws 402
 * (PaymentFailedError) with the invoice's last_payment_error.
 *
 * As Stripe's attempt_count: the first attempt counts whoever makes it, later manual attempts do
 * not — a manual attempt after dunning began changes neither attempt_count nor
 * next_payment_attempt, and its failure does not move the invoice or the subscription on (only
 * last_payment_error and the event). Retries with the same idempotency key carry on with the same
 * payment (recovery point `{invoice_id, payment_id}`): never a second charge.
 */
export async function payInvoice(ctx: Ctx, id: string, input: InvoicePayInput = {}): Promise<InvoiceWithLines> {
  const data = parse(invoicePay, input);
  const resumed = ctx.idempotency?.resumed;
  if (resumed?.invoice_id === id && typeof resumed.payment_id === 'string') {
    const p = await store.findPayment(ctx.db, resumed.payment_id);
    if (p) await resumePayment(ctx, p.id);
    return payOutcome(ctx, id, resumed.payment_id);
  }
  const paymentId = newId('payment');
  ctx.idempotency?.checkpoint({ invoice_id: id, payment_id: paymentId });
  const reserved = await inTransaction(ctx.db, async (tx) => {
    const { inv, payment: current } = await lockInvoiceAndPayment(ctx, tx, id);
    if (!PAYABLE.has(inv.status) || inv.amountDue - inv.amountPaid <= 0n) {
      throw new StateError('invoice_not_open', `Invoice ${id} is ${inv.status}; only an open or uncollectible invoice can be paid.`, null);
    }
    if (current?.status === 'processing') throw new StateError('invoice_payment_in_progress', `Invoice ${id} is being charged; try again in a moment.`, null);
    const customer = await store.findCustomer(tx, inv.customerId);
    if (!customer || customer.deletedAt) throw new StateError('customer_deleted', `The customer of invoice ${id} is deleted; it can no longer be charged.`, null);
    const method = data.payment_method_id
      ? await attachedMethod(tx, inv.customerId, data.payment_method_id)
      : await methodToCharge(tx, inv, customer.defaultPaymentMethodId);
    // The previous attempt's checkout closes: one payable payment per invoice.
    if (current) await cancelAtCheckout({ ...ctx, db: tx }, current.id);
    // The first attempt counts whoever makes it (dunning starts from it); later manual ones do not.
    const first = inv.attemptCount === 0;
    const now = await clockNow({ ...ctx, db: tx });
    if (!method) {
      if (first) {
        await store.setInvoiceAttempt(tx, id, { attemptCount: 1 });
        await settleFailure(ctx, tx, await getInvoice(ctx, id, tx), now, NO_PAYMENT_METHOD);
      } else {
        await recordFailure(ctx, tx, inv, NO_PAYMENT_METHOD);
      }
      return null;
    }
    const payment = await reserveAttempt(ctx, tx, inv, method, now, { attemptCount: first ? 1 : inv.attemptCount, manual: !first, paymentId });
    return { payment, method };
  });
  if (reserved) await chargeSavedMethod(ctx, reserved.payment.id, reserved.method);
  return payOutcome(ctx, id, reserved ? paymentId : null);
}

/** A `payment_method_id` given for a customer's invoice or subscription: one of its attached methods (404 unknown, 400 another's or detached). */
export async function attachedMethod(tx: TenantTx, customerId: string, id: string): Promise<PaymentMethod> {
  const pm = await store.findPaymentMethod(tx, id);
  if (!pm) throw new NotFoundError('payment method', id, 'payment_method_id');
  if (pm.customerId !== customerId) {
    throw new ValidationError('parameter_invalid', `Invalid payment_method_id: payment method ${id} is not attached to customer ${customerId}.`, 'payment_method_id');
  }
  return pm;
}

/** The answer of a manual attempt: the paid invoice, the invoice while its charge is still out, else 402 with its last_payment_error. */
async function payOutcome(ctx: Ctx, id: string, paymentId: string | null): Promise<InvoiceWithLines> {
  const inv = await getInvoice(ctx, id);
  if (inv.status === 'paid') return inv;
  const payment = paymentId ? await store.findPayment(ctx.db, paymentId) : null;
  if (payment && (payment.status === 'processing' || payment.status === 'created')) return inv;
  const error = lastPaymentError(inv);
  if (error) throw new PaymentFailedError(inv.id, error);
  return inv;
}

/**
 * Carries on with the charge of an invoice that an interrupted request started (a retry with the
 * same idempotency key): attempt `attempt` is made if it was not, and a charge of it that was cut
 * off is finished under the same processor key. Returns the invoice afterwards.
 */
export async function resumeInvoiceCharge(ctx: Ctx, id: string, attempt: number, opts: { uncollectible?: boolean } = {}): Promise<InvoiceWithLines> {
  const inv = await getInvoice(ctx, id);
  if (inv.attemptCount < attempt) return chargeInvoice(ctx, id, attempt, opts);
  if (inv.paymentId) await resumePayment(ctx, inv.paymentId);
  return getInvoice(ctx, id);
}

/**
 * The recovery of an attempt whose process died between reserving the payment and charging it: a
 * reserved payment (`created`) is charged. (A charge that started and was cut off — `processing` —
 * is finished by the payment's own recovery job, as every payment's is.) Anything else (settled,
 * or a later attempt) is left alone.
 */
export async function recoverInvoiceCharge(ctx: Ctx, id: string, paymentId: string): Promise<void> {
  const inv = await getInvoice(ctx, id);
  if ((inv.status !== 'open' && inv.status !== 'uncollectible') || inv.paymentId !== paymentId) return;
  const p = await store.findPayment(ctx.db, paymentId);
  if (p) await chargeIfReserved(ctx, p);
}

/**
 * An attempt at paying an invoice's payment (off-session or at its checkout) starts only while
 * the invoice can take the money and that payment is the invoice's current one: decided under the
 * invoice's lock (the payment is locked already), so a re-charge and a checkout cannot both run.
 */
beforePaymentAttempt('invoice', async (ctx, tx, payment) => {
  const invoiceId = (payment.metadata as Record<string, string>).invoice_id;
  if (!invoiceId) return null;
  const inv = await lockInvoice(ctx, tx, invoiceId);
  if (inv.paymentId !== payment.id) return `invoice ${inv.id} is charged by another payment`;
  if (inv.status !== 'open' && inv.status !== 'uncollectible') return `invoice ${inv.id} is ${inv.status}`;
  if (inv.amountDue - inv.amountPaid <= 0n) return `invoice ${inv.id} has nothing left to pay`;
  return null;
});

/** Settles an invoice from its payment's final status, inside the payment's transaction. */
async function settleFromPayment(ctx: Ctx, tx: TenantTx, payment: PaymentWithCustomer): Promise<void> {
  const invoiceId = (payment.metadata as Record<string, string>).invoice_id;
  if (!invoiceId) return;
  const inv = await lockInvoice(ctx, tx, invoiceId);
  const now = await clockNow({ ...ctx, db: tx });
  if (payment.status === 'succeeded') {
    // An uncollectible invoice may still be paid (its last attempt's checkout stays open for 24 h),
    // by its current payment. Money that arrives for an invoice that cannot take it — paid
    // already, voided (a subscription that expired incomplete voids its first invoice), or charged
    // by another payment — is refunded at once, never kept for nothing. (At most one charge is in
    // flight per invoice and voiding closes its checkout, so this is a safety net: after a crash,
    // a recovered charge may settle late.)
    const takes = (inv.status === 'open' || inv.status === 'uncollectible') && inv.paymentId === payment.id && inv.amountDue - inv.amountPaid > 0n;
    if (!takes) {
      await cancelWaitingJobs(tx, [recoveryOf(payment.id)]);
      const refund = await reserveRefund(ctx, tx, payment, { reason: 'duplicate', metadata: { invoice_id: inv.id }, settleAt: now });
      ctx.log.warn(
        { invoice_id: inv.id, invoice_status: inv.status, payment_id: payment.id, refund_id: refund.id, amount: String(payment.amount) },
        'payment succeeded for an invoice that cannot take it: refunded automatically',
      );
      return;
    }
    const after = await store.updateInvoice(tx, inv.id, {
      status: 'paid',
      amountPaid: inv.amountDue,
      paidAt: now,
      nextPaymentAttempt: null,
      paymentId: payment.id,
      lastPaymentErrorCode: null,
      lastPaymentErrorMessage: null,
    });
    await recordEvent(tx, ctx, 'invoice.paid', json(ctx, after), { status: inv.status, paid_at: null });
    // A paid invoice needs no more attempts: its waiting charge jobs (the first attempt's safety
    // job, the next retry, the recovery of this charge) are cancelled with the payment, not run to
    // do nothing.
    await cancelWaitingJobs(tx, chargeJobKeys(inv).map((key) => ({ kind: INVOICE_CHARGE_JOB, key })));
    requireInvoiceHooks(after);
    await invoiceHooks.paid?.(ctx, tx, after);
    return;
  }
  // A failed attempt — and a payment that expired before it was ever charged (its checkout lapsed
  // first; one that failed and then expired was counted when it failed) — is a failed attempt at
  // the invoice: dunning goes on.
  // The recovery of this payment's reservation (a charge never started) has nothing left to do.
  await cancelWaitingJobs(tx, [recoveryOf(payment.id)]);
  const neverCharged = payment.status === 'expired' && payment.attempts === 0;
  if ((payment.status !== 'failed' && !neverCharged) || inv.paymentId !== payment.id) return;
  // A checkout opened from the hosted invoice page and left unpaid is no attempt (one-off.ts).
  if (neverCharged && (payment.metadata as Record<string, string>).hosted === 'true') return;
  const error: PaymentError =
    payment.status === 'expired'
      ? PAYMENT_EXPIRED
      : { code: payment.failureCode ?? 'payment_failed', message: payment.failureMessage ?? 'The payment failed.' };
  // A manual attempt (POST /invoices/:id/pay after dunning began), or an attempt at an
  // uncollectible invoice, leaves dunning as it was: only the reason and the event.
  const manual = (payment.metadata as Record<string, string>).collection === 'manual';
  if (inv.status === 'open' && !manual) await settleFailure(ctx, tx, inv, now, error);
  else if (inv.status === 'open' || inv.status === 'uncollectible') await recordFailure(ctx, tx, inv, error);
}

/** A failed attempt that does not move dunning on: the invoice's last_payment_error and `invoice.payment_failed`. */
async function recordFailure(ctx: Ctx, tx: TenantTx, inv: InvoiceWithLines, error: PaymentError): Promise<InvoiceWithLines> {
  const after = await store.updateInvoice(tx, inv.id, { lastPaymentErrorCode: error.code, lastPaymentErrorMessage: error.message });
  await recordEvent(tx, ctx, 'invoice.payment_failed', json(ctx, after));
  return after;
}

/** A failed attempt: the event, the next retry (1, 3, 5 days after the first failure), or the end of dunning. */
async function settleFailure(ctx: Ctx, tx: TenantTx, inv: InvoiceWithLines, now: Date, error: PaymentError): Promise<InvoiceWithLines> {
  const firstFailedAt = inv.firstFailedAt ?? now;
  const retryIndex = inv.attemptCount - 1; // attempts so far, the first one included
  const sub = inv.subscriptionId ? await store.findSubscription(tx, inv.subscriptionId) : null;
  // A first invoice that fails leaves the subscription incomplete: no dunning, it expires instead.
  // Nor for an invoice whose automatic collection stopped (its subscription cancelled without
  // invoice_now): it stays open, with no retry, until paid by hand or voided.
  const dunning = sub !== null && sub.status !== 'incomplete' && inv.autoAdvance;
  const next = dunning && retryIndex < RETRY_DAYS.length ? new Date(firstFailedAt.getTime() + RETRY_DAYS[retryIndex]! * DAY_MS) : null;
  const after = await store.updateInvoice(tx, inv.id, {
    firstFailedAt,
    nextPaymentAttempt: next,
    lastPaymentErrorCode: error.code,
    lastPaymentErrorMessage: error.message,
  });
  await recordEvent(tx, ctx, 'invoice.payment_failed', json(ctx, after));
  if (next) {
    await enqueueJob(tx, {
      merchantId: ctx.merchant.id,
      kind: INVOICE_CHARGE_JOB,
      runAt: next,
      key: `retry:${inv.id}:${inv.attemptCount + 1}`,
      payload: { invoice_id: inv.id, attempt: inv.attemptCount + 1 },
    });
  }
  requireInvoiceHooks(after);
  await invoiceHooks.failed?.(ctx, tx, after, { exhausted: dunning && next === null });
  if (dunning && next === null) {
    const written = await store.updateInvoice(tx, inv.id, { status: 'uncollectible' });
    return written;
  }
  return after;
}

onPaymentOutcome('invoice', settleFromPayment);

// ---------------------------------------------------------------- the PDF and its signed link

/** The merchant's key for signed PDF links (32 random bytes, created on first use, kept in the database). */
export async function signingKey(ctx: Ctx): Promise<Buffer> {
  const prisma = ctx.runtime.prisma;
  const m = await store.findMerchantSigningKey(prisma, ctx.merchant.id);
  if (m?.signingKey) return Buffer.from(m.signingKey);
  await store.setMerchantSigningKeyIfNone(prisma, ctx.merchant.id, new Uint8Array(randomBytes(32)));
  const again = await store.findMerchantSigningKey(prisma, ctx.merchant.id);
  return Buffer.from(again!.signingKey!);
}

/**
 * The merchant of an invoice with its key for signed PDF links (the hosted PDF page, which knows
 * no merchant until the invoice names it); null for an unknown invoice.
 */
export function invoicePdfMerchant(prisma: PrismaClient, id: string) {
  return store.findInvoiceMerchant(prisma, id);
}

/** GET /v1/invoices/:id/pdf: the absolute signed address of the invoice's PDF (valid 5 minutes, real time). */
export async function signedPdfUrl(ctx: Ctx, id: string): Promise<string> {
  await getInvoice(ctx, id);
  return signedPdfUrlOf(ctx, await signingKey(ctx), id);
}

/**
 * The same address for an invoice the caller already read for this merchant, with the merchant's
 * key read once by the caller (signingKey): a page of invoices costs no read per invoice.
 */
export function signedPdfUrlOf(ctx: Ctx, key: Buffer, id: string): string {
  return `${ctx.runtime.config.publicBaseUrl}${signedPdfPath(key, id, new Date())}`;
}

/** The invoice's taxes per rate, summed over its lines, labelled "VAT 20%" (the PDF's tax rows). */
async function pdfTaxes(ctx: Ctx, inv: InvoiceWithLines): Promise<{ label: string; amount: bigint; inclusive: boolean }[]> {
  const sums = new Map<string, { amount: bigint; inclusive: boolean }>();
  for (const l of inv.lines) {
    for (const t of (l.taxAmounts ?? []) as unknown as LineTax[]) {
      const s = sums.get(t.tax_rate) ?? { amount: 0n, inclusive: t.inclusive };
      s.amount += BigInt(t.amount);
      sums.set(t.tax_rate, s);
    }
  }
  if (sums.size === 0) return [];
  const rates = new Map((await taxRatesByIds(ctx, [...sums.keys()])).map((r) => [r.id, r]));
  return [...sums.entries()].map(([id, s]) => {
    const r = rates.get(id);
    return { label: r ? `${r.displayName} ${r.percentage / 10_000}%` : id, amount: s.amount, inclusive: s.inclusive };
  });
}

/**
 * A line as the PDF shows it: its description and, for a line of several units, the price of one —
 * "3 × Pro (…) at $29.00 each" — unless the description already says it (an item's
 * "Seats (3 × $25.00)", invoice-items.ts lineDescription). Prorations carry no unit price.
 */
export function pdfLineDescription(l: Pick<InvoiceItem, 'description' | 'quantity' | 'unitAmount'>, currency: string): string {
  if (l.quantity === null || l.quantity <= 1 || l.unitAmount === null) return l.description;
  const unit = formatMoney(l.unitAmount, currency);
  return l.description.includes(`${l.quantity} × ${unit}`) ? l.description : `${l.description} at ${unit} each`;
}

/** What the PDF shows (the merchant's name, the customer, the lines and totals). */
export async function invoicePdfData(ctx: Ctx, id: string): Promise<InvoicePdfData> {
  const inv = await getInvoice(ctx, id);
  const customer = await store.findCustomer(ctx.db, inv.customerId);
  const merchant = await store.findMerchantName(ctx.runtime.prisma, ctx.merchant.id);
  return {
    merchantName: merchant?.name ?? 'Merchant',
    accentColor: merchant?.accentColor ?? null,
    logo: merchant?.logo && merchant.logoType ? Buffer.from(merchant.logo) : null,
    number: inv.number ?? 'DRAFT',
    status: inv.status,
    customer: { id: inv.customerId, name: customer?.name ?? null, email: customer?.email ?? null },
    currency: inv.currency,
    lines: inv.lines.map((l) => ({
      description: pdfLineDescription(l, inv.currency),
      periodStart: l.periodStart,
      periodEnd: l.periodEnd,
      amount: l.amount,
      proration: l.proration,
    })),
    subtotal: inv.subtotal,
    discountAmount: inv.discountAmount,
    discountLabel: inv.couponId ? `Discount (${inv.couponId})` : 'Discount',
    taxes: await pdfTaxes(ctx, inv),
    total: inv.total,
    creditApplied: inv.creditApplied,
    creditedToBalance: inv.creditedToBalance,
    amountFromWallet: inv.amountFromWallet,
    amountPaid: inv.amountPaid,
    // What is still to pay (0 on a paid invoice).
    amountDue: inv.amountDue - inv.amountPaid,
    periodStart: inv.periodStart,
    periodEnd: inv.periodEnd,
    // Issued when finalised, on the merchant's billing clock (created_at is the record's real time).
    createdAt: inv.finalizedAt ?? inv.createdAt,
    dueDate: inv.dueDate,
    paidAt: inv.paidAt,
  };
}

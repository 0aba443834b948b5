// One-off invoices (issue 25, "Billing depth"; Stripe's invoices made by hand): POST /v1/invoices
// makes a `draft` of the customer's waiting invoice items (invoice-items.ts); finalizing it
// (draft → open) numbers it (INV-…, the same gap-free counter as every invoice, in the same
// transaction), draws the customer's credit balance, and then either charges the customer's
// default method at once (`charge_automatically`, through the invoices' charging path) or gives it
// a `due_date` and a hosted payment page (`send_invoice`, src/hosted/invoice.ts), e-mailed to the
// customer (the `invoices` e-mail kind). An open `send_invoice` invoice still open at its due date
// gets `invoice.overdue` once (a job on the merchant's billing clock). `/mark-uncollectible` and
// `/pay` apply to every open invoice.
import type { Ctx } from '../../platform/context.ts';
import { inTransaction, type TenantTx } from '../../platform/db/tenant.ts';
import { lockRow, rawQuery } from '../../platform/db/raw.ts';
import { NotFoundError, StateError, ValidationError } from '../../platform/errors.ts';
import { newId, randomToken } from '../../platform/ids.ts';
import { parse } from '../../platform/validation.ts';
import { MAX_AMOUNT } from '../../platform/money.ts';
import { cancelJobs, enqueueJob } from '../../platform/jobs.ts';
import { clockNow } from '../../platform/clock.ts';
import { recordEvent } from '../events/index.ts';
import { cancelAtCheckout, checkoutUrl, insertPayment } from '../payments/index.ts';
import { drawCredit } from '../customers/balance.ts';
import {
  chargeInvoice,
  chargeJobKeys,
  checkInvoiceTotal,
  CHARGE_RECOVERY_MS,
  draftTotals,
  getInvoice,
  hostedInvoiceUrl,
  INVOICE_CHARGE_JOB,
  invoiceEventJSON as json,
  invoiceNumber,
  lockInvoiceAndPayment,
  resumeInvoiceCharge,
  type InvoiceWithLines,
} from './invoices.ts';
import { collectWaitingItems } from './invoice-items.ts';
import { composeInvoice, NO_PRICING } from './compose.ts';
import * as store from './store.ts';
import { invoiceCreate, type InvoiceCreateInput } from './invoicing-schema.ts';

export const INVOICE_OVERDUE_JOB = 'invoice.overdue';
/** send_invoice's default days_until_due (as Stripe's). */
export const DEFAULT_DAYS_UNTIL_DUE = 30;
const DAY_MS = 86_400_000;

/**
 * POST /v1/invoices: a draft of the customer's oldest items waiting in `currency` that fit one
 * invoice (at most MAX_AMOUNT in all, MAX_INVOICE_LINES lines; the rest keep waiting); none
 * waiting: 400 `invoice_no_customer_line_items`, param customer_id. Nothing is charged or numbered yet.
 */
export async function createInvoice(ctx: Ctx, input: InvoiceCreateInput): Promise<InvoiceWithLines> {
  const data = parse(invoiceCreate, input);
  const method = data.collection_method ?? 'charge_automatically';
  return inTransaction(ctx.db, async (tx) => {
    await lockRow(tx, 'customers', ctx.merchant.id, data.customer_id);
    const customer = await store.findCustomer(tx, data.customer_id);
    if (!customer || customer.deletedAt) throw new NotFoundError('customer', data.customer_id, 'customer_id');
    const now = await clockNow({ ...ctx, db: tx });
    const draft = await store.insertInvoice(tx, {
      id: newId('invoice'),
      merchantId: ctx.merchant.id,
      customerId: customer.id,
      subscriptionId: null,
      billingReason: 'manual',
      currency: data.currency,
      periodStart: now,
      periodEnd: now,
      dueDate: null,
      collectionMethod: method,
      daysUntilDue: method === 'send_invoice' ? (data.days_until_due ?? DEFAULT_DAYS_UNTIL_DUE) : null,
      // No automatic attempts for an invoice the customer pays by hand.
      autoAdvance: method === 'charge_automatically',
      createdAt: now,
    });
    // The oldest waiting items that fit one invoice — under the most it may bill and within 250
    // lines, the subscription invoices' rule (compose.ts fitItems; a one-off invoice has no tax
    // rates) —; the rest keep waiting for the next invoice.
    const items = await collectWaitingItems(ctx, tx, draft, now, { fit: { billed: [], taxRates: [] } });
    if (items.length === 0 && (await store.hasWaitingItems(tx, customer.id, data.currency))) {
      // Not even the oldest fits on its own: cannot happen while every item is capped at the
      // maximum when made (createInvoiceItem); said in the items' words should one ever be larger.
      throw new ValidationError(
        'amount_too_large',
        `Customer ${customer.id}'s oldest invoice item waiting in ${data.currency} bills more than one invoice may (at most ${MAX_AMOUNT}): delete it (DELETE /v1/invoice-items/:id) and add it again in smaller items.`,
        'customer_id',
      );
    }
    if (items.length === 0) {
      // Thrown: the draft goes with the transaction.
      throw new ValidationError(
        'invoice_no_customer_line_items',
        `Customer ${customer.id} has no invoice items waiting in ${data.currency}: create some with POST /v1/invoice-items first.`,
        'customer_id',
      );
    }
    // Its period: from the oldest item to the newest (a one-off charge's moment).
    const times = items.map((i) => i.createdAt.getTime());
    const lines = (await getInvoice(ctx, draft.id, tx)).lines;
    // A draft shows what it bills (as Stripe's): its totals by the one compose function
    // finalization uses (one-off invoices carry no discount or tax rates).
    const composed = composeInvoice(lines, NO_PRICING, null);
    await store.updateInvoice(tx, draft.id, { periodStart: new Date(Math.min(...times)), periodEnd: new Date(Math.max(...times)), ...draftTotals(composed) });
    const created = await getInvoice(ctx, draft.id, tx);
    await recordEvent(tx, ctx, 'invoice.created', json(ctx, created));
    return created;
  });
}

/**
 * POST /v1/invoices/:id/finalize: draft → open (409 `invoice_not_draft` otherwise). In one
 * transaction: the totals, the number, the credit balance's draw, `invoice.finalized` (and
 * `invoice.paid` when the credit covers it), and for `send_invoice` the due date, the hosted page's
 * token and the overdue job; for `charge_automatically` the first attempt's safety job. After the
 * commit a `charge_automatically` invoice is charged once (the customer's default method): the
 * answer is the invoice after that attempt (paid, or open with `last_payment_error` — no 402: the
 * finalization happened). One-off invoices have no dunning: a failed charge leaves the invoice
 * open for `/pay` or the merchant's decision (void, mark uncollectible).
 */
export async function finalizeInvoice(ctx: Ctx, id: string): Promise<InvoiceWithLines> {
  // A retry (same idempotency key) of a request cut off after the finalization committed carries on with its charge.
  if (ctx.idempotency?.resumed?.invoice_id === id) {
    const inv = await getInvoice(ctx, id);
    if (inv.status !== 'draft') return inv.collectionMethod === 'charge_automatically' ? resumeInvoiceCharge(ctx, id, 1) : inv;
  }
  ctx.idempotency?.checkpoint({ invoice_id: id });
  const after = await inTransaction(ctx.db, async (tx) => {
    const { inv } = await lockInvoiceAndPayment(ctx, tx, id);
    if (inv.status !== 'draft') throw new StateError('invoice_not_draft', `Invoice ${id} is ${inv.status}; only a draft can be finalized.`, null);
    return finalizeDraft(ctx, tx, inv);
  });
  if (after.status === 'open' && after.collectionMethod === 'charge_automatically') return chargeInvoice(ctx, id, 1);
  return after;
}

async function finalizeDraft(ctx: Ctx, tx: TenantTx, inv: InvoiceWithLines): Promise<InvoiceWithLines> {
  const now = await clockNow({ ...ctx, db: tx });
  // The draft's totals, computed again by the same function from the same lines.
  const { subtotal, total, due } = composeInvoice(inv.lines, NO_PRICING, null);
  checkInvoiceTotal(total);
  const rows = await store.nextInvoiceSeq(rawQuery(tx), ctx.merchant.id);
  const number = invoiceNumber(Number(rows[0]!.seq));
  const credit = await drawCredit(ctx, tx, { customerId: inv.customerId, currency: inv.currency, due, invoiceId: inv.id, description: `Invoice ${number}` });
  const amountDue = due - credit;
  const paid = amountDue === 0n;
  const sendInvoice = inv.collectionMethod === 'send_invoice';
  const after = await store.updateInvoice(tx, inv.id, {
    number,
    status: paid ? 'paid' : 'open',
    subtotal,
    total,
    creditApplied: credit,
    amountDue,
    finalizedAt: now,
    paidAt: paid ? now : null,
    dueDate: sendInvoice ? new Date(now.getTime() + (inv.daysUntilDue ?? DEFAULT_DAYS_UNTIL_DUE) * DAY_MS) : now,
    hostedToken: sendInvoice ? randomToken(40) : null,
  });
  await recordEvent(tx, ctx, 'invoice.finalized', json(ctx, { ...after, status: 'open', paidAt: null }), { status: 'draft', number: null });
  if (paid) {
    await recordEvent(tx, ctx, 'invoice.paid', json(ctx, after), { status: 'open', paid_at: null });
    return after;
  }
  if (sendInvoice) {
    await enqueueJob(tx, { merchantId: ctx.merchant.id, kind: INVOICE_OVERDUE_JOB, runAt: after.dueDate!, key: `overdue:${inv.id}`, payload: { invoice_id: inv.id } });
  } else {
    // Charged right after this transaction commits; should the process die first, this job makes the first attempt.
    await enqueueJob(tx, {
      merchantId: ctx.merchant.id,
      kind: INVOICE_CHARGE_JOB,
      runAt: new Date(now.getTime() + CHARGE_RECOVERY_MS),
      key: `retry:${inv.id}:1`,
      payload: { invoice_id: inv.id, attempt: 1 },
    });
  }
  return after;
}

/**
 * POST /v1/invoices/:id/mark-uncollectible: an open invoice (else 409 invoice_not_open; 409
 * invoice_payment_in_progress while it is being charged) is written off: `uncollectible`, its
 * automatic attempts stop; it can still be paid (`/pay`, its hosted page) or voided.
 * `invoice.marked_uncollectible`.
 */
export async function markUncollectible(ctx: Ctx, id: string): Promise<InvoiceWithLines> {
  return inTransaction(ctx.db, async (tx) => {
    const { inv, payment } = await lockInvoiceAndPayment(ctx, tx, id);
    if (inv.status !== 'open') throw new StateError('invoice_not_open', `Invoice ${id} is ${inv.status}; only an open invoice can be marked uncollectible.`, null);
    if (payment?.status === 'processing') throw new StateError('invoice_payment_in_progress', `Invoice ${id} is being charged; try again in a moment.`, null);
    await cancelJobs(tx, { kind: INVOICE_CHARGE_JOB, key: chargeJobKeys(inv) });
    const after = await store.updateInvoice(tx, id, { status: 'uncollectible', nextPaymentAttempt: null });
    await recordEvent(tx, ctx, 'invoice.marked_uncollectible', json(ctx, after), { status: 'open' });
    return after;
  });
}

/**
 * The `invoice.overdue` job (at a send_invoice invoice's due date, on the merchant's clock): an
 * invoice still open then gets `invoice.overdue` once (overdue_at records it, under the invoice's
 * lock, so a job run twice sends it once). Paid, void or uncollectible by then: nothing.
 */
export async function markOverdue(ctx: Ctx, id: string): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    await lockRow(tx, 'invoices', ctx.merchant.id, id);
    const inv = await store.findInvoice(tx, id);
    if (!inv || inv.status !== 'open' || inv.overdueAt || !inv.dueDate) return;
    const now = await clockNow({ ...ctx, db: tx });
    if (inv.dueDate.getTime() > now.getTime()) return;
    const after = await store.updateInvoice(tx, id, { overdueAt: now });
    await recordEvent(tx, ctx, 'invoice.overdue', json(ctx, after));
  });
}

// ---------------------------------------------------------------- the hosted invoice page

/** The invoice behind a hosted page's token, with its merchant (null: no such page). */
export function hostedInvoiceByToken(prisma: Parameters<typeof store.findInvoiceByHostedToken>[0], token: string) {
  return store.findInvoiceByHostedToken(prisma, token);
}

/**
 * "Pay" on the hosted invoice page: the address of a checkout for what is left to pay — the
 * invoice's current payment while it is still payable there for that amount, else a new payment
 * (the previous checkout closes; the first attempt counts in attempt_count). null when the
 * invoice takes no money now (paid, void, a charge in flight). The payment's outcome settles the
 * invoice as every invoice payment does (invoice.paid); a checkout left unpaid is no attempt.
 */
export async function hostedCheckout(ctx: Ctx, id: string): Promise<string | null> {
  const baseUrl = ctx.runtime.config.publicBaseUrl;
  return inTransaction(ctx.db, async (tx) => {
    const { inv, payment } = await lockInvoiceAndPayment(ctx, tx, id);
    const remaining = inv.amountDue - inv.amountPaid;
    if ((inv.status !== 'open' && inv.status !== 'uncollectible') || remaining <= 0n || !inv.hostedToken) return null;
    if (payment?.status === 'processing') return null;
    const now = await clockNow({ ...ctx, db: tx });
    if (payment && (payment.status === 'created' || payment.status === 'failed') && payment.amount === remaining && payment.expiresAt.getTime() > now.getTime() && !payment.paymentMethodId) {
      return checkoutUrl(baseUrl, payment.checkoutToken);
    }
    if (payment) await cancelAtCheckout({ ...ctx, db: tx }, payment.id);
    const first = inv.attemptCount === 0;
    const created = await insertPayment(ctx, tx, {
      customerId: inv.customerId,
      amount: remaining,
      currency: inv.currency,
      redirectUrl: hostedInvoiceUrl(baseUrl, inv.hostedToken),
      paymentMethodId: null,
      purpose: 'invoice',
      metadata: first ? { invoice_id: inv.id, hosted: 'true' } : { invoice_id: inv.id, collection: 'manual', hosted: 'true' },
      checkout: { description: `Invoice ${inv.number}` },
    });
    await store.setInvoiceAttempt(tx, inv.id, { paymentId: created.id, attemptCount: first ? 1 : inv.attemptCount });
    return checkoutUrl(baseUrl, created.checkoutToken);
  });
}

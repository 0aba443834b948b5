// Credit notes (issue 25, "Billing depth"; Stripe's credit notes): a document that credits part or
// all of a finalised invoice, numbered CN-000001 … gap-free per merchant (a counter row moved in
// the issuing transaction, as invoice numbers are).
// - On an open (or uncollectible) invoice (`type: pre_payment`) it lowers `amount_due`; a note
//   that leaves nothing to pay makes the invoice `paid` (invoice.paid). The invoice's current
//   checkout, made for the old amount, closes (the next attempt charges the new amount).
// - On a paid invoice (`type: post_payment`) its amount is split between `refund_amount` (a refund
//   of the invoice's payment through the refunds area: reserved in this transaction, asked of the
//   processor after the commit) and `credit_amount` (the customer's credit balance, a ledger entry
//   `credit_note`); they must add up to the amount (both omitted: all of it to the balance).
// Every note of an invoice is taken under the invoice's lock (after its payment's), so two at once
// never credit more than the invoice: the second sees the first. Event: credit_note.created.
// Voiding an invoice leaves its credit notes as they are (a pre-payment note moved no money; the
// void gives back what the invoice drew, as always) — docs/billing.md "Credit notes".
import type { CreditNote } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction } from '../../platform/db/tenant.ts';
import { rawQuery } from '../../platform/db/raw.ts';
import { NotFoundError, StateError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { formatMoney } from '../../platform/money.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { paramPath, parse } from '../../platform/validation.ts';
import { cancelJobs } from '../../platform/jobs.ts';
import { clockNow } from '../../platform/clock.ts';
import { recordEvent } from '../events/index.ts';
import { cancelAtCheckout } from '../payments/index.ts';
import { reserveRefund, settlePendingRefund } from '../refunds/index.ts';
import { addCredit } from '../customers/balance.ts';
import { invoiceHooks, requireInvoiceHooks } from './hooks.ts';
import { chargeJobKeys, getInvoice, INVOICE_CHARGE_JOB, invoiceEventJSON, lockInvoiceAndPayment, signingKey } from './invoices.ts';
import { signedPdfPath, type InvoicePdfData } from './pdf.ts';
import * as store from './store.ts';
import { creditNoteCreate, type CreditNoteCreateInput, type CreditNoteListQuery } from './invoicing-schema.ts';

export interface CreditNoteLine {
  invoice_line_id: string | null;
  description: string;
  amount: number;
}

export function creditNoteNumber(seq: number): string {
  return `CN-${String(seq).padStart(6, '0')}`;
}

export function creditNoteToJSON(n: CreditNote, baseUrl: string) {
  const lines = n.lines as unknown as CreditNoteLine[];
  return {
    id: n.id,
    object: 'credit_note' as const,
    number: n.number,
    customer_id: n.customerId,
    invoice_id: n.invoiceId,
    currency: n.currency,
    amount: Number(n.amount),
    amount_formatted: formatMoney(n.amount, n.currency),
    type: n.type as 'pre_payment' | 'post_payment',
    status: n.status as 'issued',
    reason: n.reason as 'duplicate' | 'fraudulent' | 'order_change' | 'product_unsatisfactory' | null,
    memo: n.memo,
    refund_amount: Number(n.refundAmount),
    credit_amount: Number(n.creditAmount),
    refund_id: n.refundId,
    customer_balance_transaction_id: n.customerBalanceTransactionId,
    lines: lines.map((l) => ({ invoice_line_id: l.invoice_line_id, description: l.description, amount: l.amount })),
    pdf_url: `${baseUrl}/v1/credit-notes/${n.id}/pdf`,
    created_at: n.createdAt.toISOString(),
  };
}
export type CreditNoteJSON = ReturnType<typeof creditNoteToJSON>;

const json = (ctx: Ctx, n: CreditNote) => creditNoteToJSON(n, ctx.runtime.config.publicBaseUrl);

export async function getCreditNote(ctx: Ctx, id: string): Promise<CreditNote> {
  const n = await store.findCreditNote(ctx.db, id);
  if (!n) throw new NotFoundError('credit note', id);
  return n;
}

export async function listCreditNotes(ctx: Ctx, q: CreditNoteListQuery): Promise<Page<CreditNote>> {
  const filter = { ...(q.invoice_id ? { invoiceId: q.invoice_id } : {}), ...(q.customer_id ? { customerId: q.customer_id } : {}) };
  return paginate(
    q,
    ({ where, ...page }) => store.listCreditNotes(ctx.db, { AND: [where, filter] }, page),
    () => store.countCreditNotes(ctx.db, filter),
  );
}

const tooMuch = (message: string, param: string) => new ValidationError('credit_note_exceeds_invoice', message, param);

/**
 * POST /v1/credit-notes (see the file's head). Errors: 404 unknown invoice (param invoice_id);
 * 409 `invoice_not_creditable` (draft or void), `invoice_payment_in_progress`; 400
 * `credit_note_exceeds_invoice` (more than is left to credit: of the invoice, of a line, of the
 * payment for refund_amount), `parameter_invalid` (a line of another invoice, amounts that do not
 * add up, refund or credit amounts on an invoice that is not paid).
 */
export async function createCreditNote(ctx: Ctx, input: CreditNoteCreateInput): Promise<CreditNote> {
  const data = parse(creditNoteCreate, input);
  // A retry (same idempotency key) of a request cut off after the note committed: its refund is finished, the note returned.
  const resumed = ctx.idempotency?.resumed?.credit_note_id;
  if (typeof resumed === 'string') {
    const n = await store.findCreditNote(ctx.db, resumed);
    if (n) {
      if (n.refundId) await settlePendingRefund(ctx, n.refundId);
      return n;
    }
  }
  const id = newId('credit_note');
  ctx.idempotency?.checkpoint({ credit_note_id: id });
  const note = await inTransaction(ctx.db, async (tx) => {
    await getInvoice(ctx, data.invoice_id, tx, 'invoice_id');
    const { inv, payment } = await lockInvoiceAndPayment(ctx, tx, data.invoice_id);
    const paid = inv.status === 'paid';
    if (!paid && inv.status !== 'open' && inv.status !== 'uncollectible') {
      throw new StateError('invoice_not_creditable', `Invoice ${inv.id} is ${inv.status}; only an open, uncollectible or paid invoice can be credited.`, 'invoice_id');
    }
    if (!paid && payment?.status === 'processing') throw new StateError('invoice_payment_in_progress', `Invoice ${inv.id} is being charged; try again in a moment.`, null);
    const earlier = await store.listCreditNotesOfInvoice(tx, inv.id);

    // The lines credited, and the amount.
    let lines: CreditNoteLine[];
    if (data.lines) {
      const credited = new Map<string, bigint>();
      for (const n of earlier) {
        for (const l of n.lines as unknown as CreditNoteLine[]) if (l.invoice_line_id) credited.set(l.invoice_line_id, (credited.get(l.invoice_line_id) ?? 0n) + BigInt(l.amount));
      }
      lines = data.lines.map((l, i) => {
        const line = inv.lines.find((x) => x.id === l.invoice_line_id);
        const lineParam = paramPath(['lines', i, 'invoice_line_id'])!;
        if (!line) throw new ValidationError('parameter_invalid', `Invalid ${lineParam}: ${l.invoice_line_id} is not a line of invoice ${inv.id}.`, lineParam);
        const left = line.amount - (credited.get(line.id) ?? 0n);
        if (BigInt(l.amount) > left) {
          const amountParam = paramPath(['lines', i, 'amount'])!;
          throw tooMuch(`${amountParam} ${l.amount} exceeds what is left to credit of line ${line.id} (${left > 0n ? left : 0n}).`, amountParam);
        }
        return { invoice_line_id: line.id, description: line.description, amount: l.amount };
      });
    } else {
      lines = [{ invoice_line_id: null, description: data.memo ?? `Credit for invoice ${inv.number}`, amount: data.amount! }];
    }
    const amount = lines.reduce((s, l) => s + BigInt(l.amount), 0n);
    const param = data.lines ? 'lines' : 'amount';
    const now = await clockNow({ ...ctx, db: tx });
    const seq = await store.nextCreditNoteSeq(rawQuery(tx), ctx.merchant.id);
    const number = creditNoteNumber(seq);

    let refundAmount = 0n;
    let creditAmount = 0n;
    let refundId: string | null = null;
    let balanceTxId: string | null = null;
    if (!paid) {
      if (data.refund_amount || data.credit_amount) {
        throw new ValidationError('parameter_invalid', `Invoice ${inv.id} is ${inv.status}: a credit note lowers what is due; refund_amount and credit_amount apply to paid invoices only.`, data.refund_amount ? 'refund_amount' : 'credit_amount');
      }
      const remaining = inv.amountDue - inv.amountPaid;
      if (amount > remaining) throw tooMuch(`The credit of ${formatMoney(amount, inv.currency)} exceeds what is left to pay on invoice ${inv.id} (${formatMoney(remaining, inv.currency)}).`, param);
      const settled = amount === remaining;
      // The checkout of the current attempt was made for the old amount: it closes.
      if (payment && payment.status !== 'succeeded') await cancelAtCheckout({ ...ctx, db: tx }, payment.id);
      const after = await store.updateInvoice(tx, inv.id, {
        amountDue: inv.amountDue - amount,
        prePaymentCreditNotesAmount: inv.prePaymentCreditNotesAmount + amount,
        ...(settled ? { status: 'paid', paidAt: now, nextPaymentAttempt: null, lastPaymentErrorCode: null, lastPaymentErrorMessage: null } : {}),
      });
      if (settled) {
        // Nothing left to pay: no more attempts; the invoice is paid as one the credit balance covers.
        await cancelJobs(tx, { kind: INVOICE_CHARGE_JOB, key: chargeJobKeys(inv) });
        await recordEvent(tx, ctx, 'invoice.paid', invoiceEventJSON(ctx, after), { status: inv.status, paid_at: null });
        requireInvoiceHooks(after);
        await invoiceHooks.paid?.(ctx, tx, after);
      }
    } else {
      const creditable = inv.total - inv.prePaymentCreditNotesAmount - inv.postPaymentCreditNotesAmount;
      if (amount > creditable) throw tooMuch(`The credit of ${formatMoney(amount, inv.currency)} exceeds what is left to credit on invoice ${inv.id} (${formatMoney(creditable > 0n ? creditable : 0n, inv.currency)}).`, param);
      if (data.refund_amount === undefined && data.credit_amount === undefined) {
        creditAmount = amount;
      } else {
        refundAmount = BigInt(data.refund_amount ?? 0);
        creditAmount = BigInt(data.credit_amount ?? 0);
        if (refundAmount + creditAmount !== amount) {
          throw new ValidationError('parameter_invalid', `refund_amount (${refundAmount}) + credit_amount (${creditAmount}) must equal the credit note's amount (${amount}).`, data.credit_amount !== undefined ? 'credit_amount' : 'refund_amount');
        }
      }
      if (refundAmount > 0n) {
        const refundable = payment && payment.status === 'succeeded' && payment.id === inv.paymentId ? payment.amount - payment.amountRefunded : 0n;
        if (refundAmount > refundable) {
          throw tooMuch(`refund_amount ${refundAmount} exceeds what the invoice's payment can still refund (${refundable}).`, 'refund_amount');
        }
        const refund = await reserveRefund(ctx, tx, payment!, {
          amount: refundAmount,
          reason: data.reason === 'duplicate' || data.reason === 'fraudulent' ? data.reason : 'other',
          metadata: { invoice_id: inv.id, credit_note_id: id },
        });
        refundId = refund.id;
      }
      await store.updateInvoice(tx, inv.id, { postPaymentCreditNotesAmount: inv.postPaymentCreditNotesAmount + amount });
      if (creditAmount > 0n) {
        const entry = await addCredit(ctx, tx, {
          customerId: inv.customerId,
          currency: inv.currency,
          amount: creditAmount,
          type: 'credit_note',
          invoiceId: inv.id,
          description: `Credit note ${number}`,
        });
        balanceTxId = entry.id;
      }
    }
    const created = await store.insertCreditNote(tx, {
      id,
      merchantId: ctx.merchant.id,
      customerId: inv.customerId,
      invoiceId: inv.id,
      number,
      currency: inv.currency,
      amount,
      type: paid ? 'post_payment' : 'pre_payment',
      reason: data.reason ?? null,
      memo: data.memo ?? null,
      refundAmount,
      creditAmount,
      refundId,
      customerBalanceTransactionId: balanceTxId,
      lines: lines as unknown as object,
      createdAt: now,
    });
    await recordEvent(tx, ctx, 'credit_note.created', json(ctx, created));
    return created;
  });
  // The refund is asked of the processor after the commit (never inside a transaction); its job finishes it should this process die.
  if (note.refundId) await settlePendingRefund(ctx, note.refundId);
  return note;
}

// ---------------------------------------------------------------- the PDF

/** GET /v1/credit-notes/:id/pdf: the absolute signed address of its PDF (valid 5 minutes, as an invoice's). */
export async function signedCreditNotePdfUrl(ctx: Ctx, id: string): Promise<string> {
  await getCreditNote(ctx, id);
  return signedCreditNotePdfUrlOf(ctx, await signingKey(ctx), id);
}

/**
 * The same address for a note the caller already read for this merchant, with the merchant's key
 * read once by the caller (signingKey): a page of credit notes costs no read per note.
 */
export function signedCreditNotePdfUrlOf(ctx: Ctx, key: Buffer, id: string): string {
  const path = signedPdfPath(key, id, new Date()).replace('/hosted/invoices/', '/hosted/credit-notes/');
  return `${ctx.runtime.config.publicBaseUrl}${path}`;
}

/** What the credit note's PDF shows: the invoice it credits, its lines and how it was settled. */
export async function creditNotePdfData(ctx: Ctx, id: string): Promise<InvoicePdfData> {
  const n = await getCreditNote(ctx, id);
  const inv = await getInvoice(ctx, n.invoiceId);
  const customer = await store.findCustomer(ctx.db, n.customerId);
  const merchant = await store.findMerchantName(ctx.runtime.prisma, ctx.merchant.id);
  const lines = n.lines as unknown as CreditNoteLine[];
  const totals: [string, bigint, boolean][] = [['Total credited', n.amount, true]];
  if (n.type === 'pre_payment') totals.push(['Amount due lowered by', n.amount, false]);
  if (n.refundAmount > 0n) totals.push(['Refunded', n.refundAmount, false]);
  if (n.creditAmount > 0n) totals.push(['Credited to balance', n.creditAmount, false]);
  return {
    merchantName: merchant?.name ?? 'Merchant',
    accentColor: merchant?.accentColor ?? null,
    logo: merchant?.logo && merchant.logoType ? Buffer.from(merchant.logo) : null,
    number: n.number,
    status: n.status,
    customer: { id: n.customerId, name: customer?.name ?? null, email: customer?.email ?? null },
    currency: n.currency,
    lines: lines.map((l) => ({ description: l.description, periodStart: inv.periodStart, periodEnd: inv.periodEnd, amount: BigInt(l.amount), proration: false })),
    subtotal: n.amount,
    total: n.amount,
    creditApplied: 0n,
    amountFromWallet: 0n,
    amountPaid: 0n,
    amountDue: 0n,
    periodStart: inv.periodStart,
    periodEnd: inv.periodEnd,
    createdAt: n.createdAt,
    dueDate: null,
    paidAt: null,
    document: {
      title: 'Credit note',
      numberLabel: 'Credit note number',
      periodLabel: 'Invoice period',
      facts: [['Invoice', inv.number ?? inv.id], ...(n.reason ? [['Reason', n.reason.replaceAll('_', ' ')] as [string, string]] : [])],
      totals,
    },
  };
}

/** The merchant of a credit note with its key for signed PDF links (the hosted PDF page); null for an unknown one. */
export function creditNotePdfMerchant(prisma: Parameters<typeof store.findCreditNoteMerchant>[0], id: string) {
  return store.findCreditNoteMerchant(prisma, id);
}

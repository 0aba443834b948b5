// One-off invoicing and credit notes (issue 25): invoice items, invoices made by hand, their
// finalization and write-off, and credit notes (src/domain/billing/invoice-items.ts, one-off.ts,
// credit-notes.ts). Paying and voiding are the routes of every invoice (billing.ts).
import { exampleId } from '../platform/ids.ts';
import * as items from '../domain/billing/invoice-items.ts';
import * as oneOff from '../domain/billing/one-off.ts';
import * as notes from '../domain/billing/credit-notes.ts';
import * as schema from '../domain/billing/invoicing-schema.ts';
import { invoiceToJSON, type InvoiceWithLines } from '../domain/billing/invoices.ts';
import type { Ctx } from '../platform/context.ts';
import { route, listEnvelope } from './route.ts';
import { creditNoteObject, deletedInvoiceItemObject, idParam, invoiceItemObject, invoiceObject, listOf, redirectObject } from './schemas.ts';

const itemTag = 'Invoice items';
const invTag = 'Invoices';
const noteTag = 'Credit notes';
const invoiceJSON = (ctx: Ctx) => (i: InvoiceWithLines) => invoiceToJSON(i, ctx.runtime.config.publicBaseUrl);
const noteJSON = (ctx: Ctx) => (n: Parameters<typeof notes.creditNoteToJSON>[0]) => notes.creditNoteToJSON(n, ctx.runtime.config.publicBaseUrl);

export const invoicingRoutes = [
  route({
    method: 'post', path: '/v1/invoice-items', operationId: 'createInvoiceItem', tag: itemTag, summary: "Add a one-off charge to the customer's next invoice",
    description:
      "The item waits for the customer's next invoice in its currency: an invoice made with POST /v1/invoices, or the next invoice one of the customer's subscriptions in that currency makes (a renewal). `amount` is the price of one unit; the item bills amount × quantity. A customer waits with at most 250 items per currency, what one invoice holds (the next: 400 invoice_too_many_lines, param customer_id); a subscription's invoice takes the oldest that fit its 250 lines, the rest wait.",
    example: { customer_id: exampleId('customer'), amount: 50000, currency: 'USD', description: 'Onboarding workshop' },
    body: schema.invoiceItemCreate,
    response: { status: 201, description: 'The waiting item.', schema: invoiceItemObject },
    handler: async (ctx, { body }) => items.invoiceItemToJSON(await items.createInvoiceItem(ctx, body)),
  }),
  route({
    method: 'get', path: '/v1/invoice-items/{id}', operationId: 'getInvoiceItem', tag: itemTag, summary: 'Retrieve an invoice item',
    params: idParam,
    response: { status: 200, description: 'The item.', schema: invoiceItemObject },
    handler: async (ctx, { params }) => items.invoiceItemToJSON(await items.getInvoiceItem(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/invoice-items', operationId: 'listInvoiceItems', tag: itemTag, summary: 'List invoice items, newest first',
    query: schema.invoiceItemListQuery,
    response: { status: 200, description: 'A page of items.', schema: listOf(invoiceItemObject, 'InvoiceItemList') },
    handler: async (ctx, { query }) => listEnvelope(await items.listInvoiceItems(ctx, query), items.invoiceItemToJSON),
  }),
  route({
    method: 'delete', path: '/v1/invoice-items/{id}', operationId: 'deleteInvoiceItem', tag: itemTag, summary: 'Delete an item still waiting for an invoice',
    conflict: { code: 'invoice_item_invoiced', message: `Invoice item ${exampleId('invoice_item')} is on invoice ${exampleId('invoice')}; only an item still waiting can be deleted.` },
    params: idParam,
    response: { status: 200, description: 'The item is gone.', schema: deletedInvoiceItemObject },
    handler: async (ctx, { params }) => {
      const gone = await items.deleteInvoiceItem(ctx, params.id);
      return { id: gone.id, object: 'invoice_item' as const, deleted: true as const };
    },
  }),

  route({
    method: 'post', path: '/v1/invoices', operationId: 'createInvoice', tag: invTag, summary: "A draft invoice of the customer's waiting invoice items",
    description:
      "Takes the items the customer has waiting in `currency` onto a new `draft`: the oldest first, each while the draft's total stays at most 99,999,999,999 (the most one invoice may bill) and its lines at most 250; the rest keep waiting for the next invoice (none waiting: 400 invoice_no_customer_line_items). Nothing is numbered or charged until POST /v1/invoices/{id}/finalize. collection_method `send_invoice` gives the customer days_until_due days (default 30) to pay at the invoice's hosted page.",
    example: { customer_id: exampleId('customer'), currency: 'USD', collection_method: 'send_invoice', days_until_due: 30 },
    body: schema.invoiceCreate,
    response: { status: 201, description: 'The draft invoice with its lines.', schema: invoiceObject },
    handler: async (ctx, { body }) => invoiceJSON(ctx)(await oneOff.createInvoice(ctx, body)),
  }),
  route({
    method: 'post', path: '/v1/invoices/{id}/finalize', operationId: 'finalizeInvoice', tag: invTag, summary: 'Finalize a draft: number it, then charge it or send it',
    conflict: { code: 'invoice_not_draft', message: `Invoice ${exampleId('invoice')} is open; only a draft can be finalized.` },
    description:
      "draft → open (the next INV- number; the customer's credit balance drawn first; paid at once when it covers everything). charge_automatically: the customer's default method is charged at once — the answer is the invoice after that attempt (paid, or open with last_payment_error; no automatic retries for one-off invoices). send_invoice: due_date and hosted_invoice_url are set and the customer is e-mailed the link; invoice.overdue comes once if it is still open at due_date.",
    params: idParam,
    response: { status: 200, description: 'The finalised invoice.', schema: invoiceObject },
    phased: true,
    handler: async (ctx, { params }) => invoiceJSON(ctx)(await oneOff.finalizeInvoice(ctx, params.id)),
  }),
  route({
    method: 'post', path: '/v1/invoices/{id}/mark-uncollectible', operationId: 'markInvoiceUncollectible', tag: invTag, summary: 'Write off an open invoice',
    conflict: { code: 'invoice_not_open', message: `Invoice ${exampleId('invoice')} is paid; only an open invoice can be marked uncollectible.` },
    description: 'open → uncollectible: its automatic attempts stop; it can still be paid (POST /v1/invoices/{id}/pay, its hosted page) or voided. Event invoice.marked_uncollectible.',
    params: idParam,
    response: { status: 200, description: 'The uncollectible invoice.', schema: invoiceObject },
    handler: async (ctx, { params }) => invoiceJSON(ctx)(await oneOff.markUncollectible(ctx, params.id)),
  }),

  route({
    method: 'post', path: '/v1/credit-notes', operationId: 'createCreditNote', tag: noteTag, summary: 'Credit an invoice: lower what is due, or refund / credit a paid one',
    description:
      "On an open or uncollectible invoice: amount_due is lowered by the note (at most what is left to pay; all of it makes the invoice paid). On a paid invoice: refund_amount is refunded to the invoice's payment and credit_amount added to the customer's credit balance; they must add up to the note's amount (both omitted: all to the balance). Give `amount`, or `lines` (each at most what is left of that invoice line). Numbered CN-000001 …, gap-free per merchant. Event credit_note.created.",
    example: { invoice_id: exampleId('invoice'), amount: 1000, reason: 'order_change' },
    body: schema.creditNoteCreate, errors: [409],
    response: { status: 201, description: 'The credit note.', schema: creditNoteObject },
    phased: true,
    handler: async (ctx, { body }) => noteJSON(ctx)(await notes.createCreditNote(ctx, body)),
  }),
  route({
    method: 'get', path: '/v1/credit-notes/{id}', operationId: 'getCreditNote', tag: noteTag, summary: 'Retrieve a credit note',
    params: idParam,
    response: { status: 200, description: 'The credit note.', schema: creditNoteObject },
    handler: async (ctx, { params }) => noteJSON(ctx)(await notes.getCreditNote(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/credit-notes', operationId: 'listCreditNotes', tag: noteTag, summary: 'List credit notes, newest first',
    query: schema.creditNoteListQuery,
    response: { status: 200, description: 'A page of credit notes.', schema: listOf(creditNoteObject, 'CreditNoteList') },
    handler: async (ctx, { query }) => listEnvelope(await notes.listCreditNotes(ctx, query), noteJSON(ctx)),
  }),
  route({
    method: 'get', path: '/v1/credit-notes/{id}/pdf', operationId: 'getCreditNotePdf', tag: noteTag, summary: 'Download the credit note as PDF',
    description: 'Redirects (302) to a signed address of the PDF, valid 5 minutes, that needs no credentials.',
    params: idParam,
    response: { status: 302, description: 'Location: the signed address of the PDF.', schema: redirectObject },
    handler: async (ctx, { params }) => ({ location: await notes.signedCreditNotePdfUrl(ctx, params.id) }),
  }),
];

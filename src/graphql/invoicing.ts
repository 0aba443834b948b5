// One-off invoicing and credit notes over GraphQL (issue 25): the same domain functions as
// /v1/invoice-items, POST /v1/invoices, /finalize, /mark-uncollectible and /v1/credit-notes,
// the same list filters (through the REST query schemas) and the same error codes, as data.
import * as items from '../domain/billing/invoice-items.ts';
import * as oneOff from '../domain/billing/one-off.ts';
import * as notes from '../domain/billing/credit-notes.ts';
import * as schema from '../domain/billing/invoicing-schema.ts';
import { hostedInvoiceUrl } from '../domain/billing/invoices.ts';
import { formatMoney } from '../platform/money.ts';
import { NotFoundError, StateError } from '../platform/errors.ts';
import { builder, connectionComplexity, nodeKind } from './builder.ts';
import { COMMON_ERRORS } from './errors.ts';
import { connectionType, domainInput, listArgs, mutate, PHASED, orNull, toConnection } from './helpers.ts';
import { Invoice, pdfSigningKey } from './billing.ts';

const CollectionMethod = builder.enumType('CollectionMethod', {
  description: "charge_automatically: charged when finalised; send_invoice: the customer pays at hostedInvoiceUrl by dueDate.",
  values: schema.COLLECTION_METHODS,
});
const CreditNoteType = builder.enumType('CreditNoteType', { values: schema.CREDIT_NOTE_TYPES });
const CreditNoteReason = builder.enumType('CreditNoteReason', { values: schema.CREDIT_NOTE_REASONS });
const CreditNoteStatus = builder.enumType('CreditNoteStatus', {
  description: 'issued: in effect (credit notes cannot be voided: docs/billing.md, "Credit notes").',
  values: schema.CREDIT_NOTE_STATUSES,
});

// The invoice's one-off invoicing and credit note fields.
builder.prismaObjectFields('Invoice', (t) => ({
  collectionMethod: t.field({ type: CollectionMethod, resolve: (i) => i.collectionMethod as schema.CollectionMethod }),
  daysUntilDue: t.exposeInt('daysUntilDue', { nullable: true }),
  hostedInvoiceUrl: t.string({
    nullable: true,
    description: 'send_invoice, once finalised: the page where the customer pays by card (no credentials).',
    resolve: (i, _, { ctx }) => (i.hostedToken ? hostedInvoiceUrl(ctx.runtime.config.publicBaseUrl, i.hostedToken) : null),
  }),
  prePaymentCreditNotesAmount: t.field({ type: 'Money', description: 'Credit notes issued while open: amountDue was lowered by this much.', resolve: (i) => i.prePaymentCreditNotesAmount }),
  postPaymentCreditNotesAmount: t.field({ type: 'Money', description: 'Credit notes issued after it was paid.', resolve: (i) => i.postPaymentCreditNotesAmount }),
}));

export const InvoiceItem = builder.prismaNode('PendingInvoiceItem', {
  name: 'InvoiceItem',
  id: { field: 'id' },
  description: "A one-off charge waiting for the customer's next invoice in its currency (then pending is false and invoice names it).",
  fields: (t) => ({
    customer: t.relation('customer'),
    invoice: t.relation('invoice', { nullable: true }),
    currency: t.exposeString('currency'),
    description: t.exposeString('description'),
    quantity: t.exposeInt('quantity'),
    unitAmount: t.field({ type: 'Money', resolve: (i) => i.unitAmount }),
    amount: t.field({ type: 'Money', description: 'unitAmount × quantity.', resolve: (i) => i.amount }),
    amountFormatted: t.string({ resolve: (i) => formatMoney(i.amount, i.currency) }),
    invoiceLineId: t.exposeString('lineId', { nullable: true }),
    pending: t.boolean({ resolve: (i) => i.invoiceId === null }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
nodeKind('invoice_item', InvoiceItem);

type NoteLine = notes.CreditNoteLine;
const CreditNoteLine = builder.objectRef<NoteLine & { currency: string }>('CreditNoteLine').implement({
  fields: (t) => ({
    invoiceLineId: t.string({ nullable: true, description: 'The invoice line credited; null for a note given as an amount.', resolve: (l) => l.invoice_line_id }),
    description: t.exposeString('description'),
    amount: t.field({ type: 'Money', resolve: (l) => l.amount }),
    amountFormatted: t.string({ resolve: (l) => formatMoney(l.amount, l.currency) }),
  }),
});

export const CreditNote = builder.prismaNode('CreditNote', {
  id: { field: 'id' },
  description: "A credit against a finalised invoice (CN-000001 …): lowered an open invoice's amountDue, or refunded and/or credited a paid one.",
  fields: (t) => ({
    number: t.exposeString('number'),
    customer: t.relation('customer'),
    invoice: t.relation('invoice'),
    currency: t.exposeString('currency'),
    amount: t.field({ type: 'Money', resolve: (n) => n.amount }),
    amountFormatted: t.string({ resolve: (n) => formatMoney(n.amount, n.currency) }),
    type: t.field({ type: CreditNoteType, resolve: (n) => n.type as (typeof schema.CREDIT_NOTE_TYPES)[number] }),
    status: t.field({ type: CreditNoteStatus, resolve: (n) => n.status as (typeof schema.CREDIT_NOTE_STATUSES)[number] }),
    reason: t.field({ type: CreditNoteReason, nullable: true, resolve: (n) => n.reason as (typeof schema.CREDIT_NOTE_REASONS)[number] | null }),
    memo: t.exposeString('memo', { nullable: true }),
    refundAmount: t.field({ type: 'Money', resolve: (n) => n.refundAmount }),
    creditAmount: t.field({ type: 'Money', resolve: (n) => n.creditAmount }),
    refundId: t.exposeString('refundId', { nullable: true }),
    customerBalanceTransactionId: t.exposeString('customerBalanceTransactionId', { nullable: true }),
    lines: t.field({ type: [CreditNoteLine], resolve: (n) => (n.lines as unknown as NoteLine[]).map((l) => ({ ...l, currency: n.currency })) }),
    pdfUrl: t.string({ description: 'A fresh signed address of the PDF, valid 5 minutes, that needs no credentials.', resolve: async (n, _, gctx) => notes.signedCreditNotePdfUrlOf(gctx.ctx, await pdfSigningKey(gctx), n.id) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
nodeKind('credit_note', CreditNote);

const InvoiceItemConnection = connectionType(InvoiceItem, 'InvoiceItem');
const CreditNoteConnection = connectionType(CreditNote, 'CreditNote');

builder.queryFields((t) => ({
  invoiceItem: t.field({ type: InvoiceItem, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(items.getInvoiceItem(ctx, String(id))) }),
  invoiceItems: t.field({
    type: InvoiceItemConnection,
    description: 'Invoice items, newest first.',
    complexity: connectionComplexity,
    args: {
      first: t.arg.int({ description: '1 to 100, default 20.' }),
      after: t.arg.string(),
      customerId: t.arg.id(),
      invoiceId: t.arg.id(),
      pending: t.arg.boolean({ description: 'true: still waiting for an invoice; false: invoiced.' }),
    },
    resolve: async (_, { pending, ...a }, { ctx }) =>
      toConnection(await items.listInvoiceItems(ctx, listArgs(schema.invoiceItemListQuery, { ...a, pending: pending === null || pending === undefined ? undefined : String(pending) }))),
  }),
  creditNote: t.field({ type: CreditNote, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }, { ctx }) => orNull(notes.getCreditNote(ctx, String(id))) }),
  creditNotes: t.field({
    type: CreditNoteConnection,
    description: 'Credit notes, newest first.',
    complexity: connectionComplexity,
    args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string(), invoiceId: t.arg.id(), customerId: t.arg.id() },
    resolve: async (_, a, { ctx }) => toConnection(await notes.listCreditNotes(ctx, listArgs(schema.creditNoteListQuery, a))),
  }),
}));

const CreateInvoiceItemInput = builder.inputType('CreateInvoiceItemInput', {
  fields: (t) => ({
    customerId: t.id({ required: true }),
    amount: t.field({ type: 'Money', required: true, description: 'The price of one unit; the item bills amount × quantity.' }),
    currency: t.string({ required: true }),
    description: t.string({ required: true }),
    quantity: t.int({ description: 'Default 1.' }),
    idempotencyKey: t.string(),
  }),
});
const IdInput = (name: string) => builder.inputType(name, { fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }) });
const DeleteInvoiceItemInput = IdInput('DeleteInvoiceItemInput');
const FinalizeInvoiceInput = IdInput('FinalizeInvoiceInput');
const MarkInvoiceUncollectibleInput = IdInput('MarkInvoiceUncollectibleInput');
const CreateInvoiceInput = builder.inputType('CreateInvoiceInput', {
  fields: (t) => ({
    customerId: t.id({ required: true }),
    currency: t.string({ required: true }),
    collectionMethod: t.field({ type: CollectionMethod, description: 'Default charge_automatically.' }),
    daysUntilDue: t.int({ description: 'send_invoice only (default 30).' }),
    idempotencyKey: t.string(),
  }),
});
const CreditNoteLineInput = builder.inputType('CreditNoteLineInput', {
  fields: (t) => ({ invoiceLineId: t.id({ required: true }), amount: t.field({ type: 'Money', required: true }) }),
});
const CreateCreditNoteInput = builder.inputType('CreateCreditNoteInput', {
  fields: (t) => ({
    invoiceId: t.id({ required: true }),
    amount: t.field({ type: 'Money', description: 'The total to credit; give amount or lines.' }),
    lines: t.field({ type: [CreditNoteLineInput] }),
    reason: t.field({ type: CreditNoteReason }),
    memo: t.string(),
    refundAmount: t.field({ type: 'Money', description: "Paid invoices: refunded to the invoice's payment." }),
    creditAmount: t.field({ type: 'Money', description: "Paid invoices: added to the customer's credit balance." }),
    idempotencyKey: t.string(),
  }),
});

const DeletedInvoiceItem = builder.objectRef<{ id: string }>('DeletedInvoiceItem').implement({
  fields: (t) => ({ id: t.exposeID('id'), deleted: t.boolean({ resolve: () => true }) }),
});

const ERRORS = [...COMMON_ERRORS, NotFoundError, StateError];

builder.mutationFields((t) => ({
  createInvoiceItem: t.field({
    type: InvoiceItem,
    description: "A one-off charge for the customer's next invoice in its currency (at most 250 waiting per customer and currency, what one invoice holds: else ValidationError invoice_too_many_lines).",
    errors: { types: ERRORS, dataField: { name: 'invoiceItem' }, result: { name: 'CreateInvoiceItemSuccess' }, union: { name: 'CreateInvoiceItemResult' } },
    args: { input: t.arg({ type: CreateInvoiceItemInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createInvoiceItem', input, (ctx, fields) => items.createInvoiceItem(ctx, domainInput(schema.invoiceItemCreate, fields))),
  }),
  deleteInvoiceItem: t.field({
    type: DeletedInvoiceItem,
    description: 'Deletes an item still waiting (else StateError invoice_item_invoiced).',
    errors: { types: ERRORS, dataField: { name: 'deletedInvoiceItem' }, result: { name: 'DeleteInvoiceItemSuccess' }, union: { name: 'DeleteInvoiceItemResult' } },
    args: { input: t.arg({ type: DeleteInvoiceItemInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'deleteInvoiceItem', input, async (ctx, { id }) => ({ id: (await items.deleteInvoiceItem(ctx, String(id))).id })),
  }),
  createInvoice: t.field({
    type: Invoice,
    description: "A draft of the customer's oldest items waiting in the currency that fit one invoice (a total of at most 99,999,999,999, at most 250 lines); the rest keep waiting (none: ValidationError invoice_no_customer_line_items).",
    errors: { types: ERRORS, dataField: { name: 'invoice' }, result: { name: 'CreateInvoiceSuccess' }, union: { name: 'CreateInvoiceResult' } },
    args: { input: t.arg({ type: CreateInvoiceInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createInvoice', input, (ctx, fields) => oneOff.createInvoice(ctx, domainInput(schema.invoiceCreate, fields))),
  }),
  finalizeInvoice: t.field({
    type: Invoice,
    description: 'draft → open (else StateError invoice_not_draft): numbered; charge_automatically is charged at once, send_invoice gets dueDate and hostedInvoiceUrl and is e-mailed.',
    errors: { types: ERRORS, dataField: { name: 'invoice' }, result: { name: 'FinalizeInvoiceSuccess' }, union: { name: 'FinalizeInvoiceResult' } },
    args: { input: t.arg({ type: FinalizeInvoiceInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'finalizeInvoice', input, (ctx, { id }) => oneOff.finalizeInvoice(ctx, String(id)), PHASED),
  }),
  markInvoiceUncollectible: t.field({
    type: Invoice,
    description: 'open → uncollectible (else StateError invoice_not_open): automatic attempts stop; it can still be paid or voided.',
    errors: { types: ERRORS, dataField: { name: 'invoice' }, result: { name: 'MarkInvoiceUncollectibleSuccess' }, union: { name: 'MarkInvoiceUncollectibleResult' } },
    args: { input: t.arg({ type: MarkInvoiceUncollectibleInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'markInvoiceUncollectible', input, (ctx, { id }) => oneOff.markUncollectible(ctx, String(id))),
  }),
  createCreditNote: t.field({
    type: CreditNote,
    description: "Credits an invoice: lowers an open one's amountDue, or refunds (refundAmount) and/or credits the balance (creditAmount) for a paid one.",
    errors: { types: ERRORS, dataField: { name: 'creditNote' }, result: { name: 'CreateCreditNoteSuccess' }, union: { name: 'CreateCreditNoteResult' } },
    args: { input: t.arg({ type: CreateCreditNoteInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createCreditNote', input, (ctx, fields) => notes.createCreditNote(ctx, domainInput(schema.creditNoteCreate, fields)), PHASED),
  }),
}));

// One-off invoicing and credit notes (issue 25, "Billing depth"): the inputs of invoice items,
// invoices made by hand and credit notes (REST bodies and queries, the OpenAPI document, GraphQL inputs).
import { z, amount, currency, freeText, idOf, listQuery } from '../../platform/validation.ts';

export const COLLECTION_METHODS = ['charge_automatically', 'send_invoice'] as const;
export type CollectionMethod = (typeof COLLECTION_METHODS)[number];

export const CREDIT_NOTE_REASONS = ['duplicate', 'fraudulent', 'order_change', 'product_unsatisfactory'] as const;
export const CREDIT_NOTE_TYPES = ['pre_payment', 'post_payment'] as const;
/** A credit note's states: issued only (they cannot be voided). */
export const CREDIT_NOTE_STATUSES = ['issued'] as const;

/** The most units of one invoice item (as a subscription's quantity). */
export const MAX_QUANTITY = 10_000;
/** The most days an invoice may give its customer to pay. */
export const MAX_DAYS_UNTIL_DUE = 730;

const text = (max: number) => freeText(max);

export const invoiceItemCreate = z.strictObject({
  customer_id: idOf('customer'),
  amount: amount(1).meta({ description: 'The price of one unit, in the smallest currency unit; the item bills amount × quantity.', example: 5000 }),
  currency,
  description: text(500).meta({ example: 'Onboarding workshop' }),
  quantity: z
    .number()
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be at least 1' })
    .max(MAX_QUANTITY, { error: `must be at most ${MAX_QUANTITY}` })
    .optional()
    .meta({ description: 'Units (default 1).', example: 1 }),
});
export type InvoiceItemCreateInput = z.input<typeof invoiceItemCreate>;

export const invoiceItemListQuery = z.strictObject({
  customer_id: idOf('customer').optional(),
  pending: z.enum(['true', 'false']).optional().meta({ description: 'true: only items still waiting for an invoice; false: only invoiced ones.' }),
  invoice_id: idOf('invoice').optional(),
  ...listQuery,
});
export type InvoiceItemListQuery = z.output<typeof invoiceItemListQuery>;

export const invoiceCreate = z
  .strictObject({
    customer_id: idOf('customer'),
    currency,
    collection_method: z
      .enum(COLLECTION_METHODS)
      .optional()
      .meta({ description: "charge_automatically (default): finalizing charges the customer's default method at once. send_invoice: finalizing e-mails the customer a link to pay (hosted_invoice_url) by due_date." }),
    days_until_due: z
      .number()
      .int({ error: 'must be a whole number of days' })
      .min(0, { error: 'must be at least 0' })
      .max(MAX_DAYS_UNTIL_DUE, { error: `must be at most ${MAX_DAYS_UNTIL_DUE}` })
      .optional()
      .meta({ description: 'send_invoice only (default 30): due_date is finalization + this many days.', example: 30 }),
  })
  .superRefine((v, ctx) => {
    if (v.days_until_due !== undefined && v.collection_method !== 'send_invoice') {
      ctx.addIssue({ code: 'custom', path: ['days_until_due'], message: 'applies to collection_method send_invoice only' });
    }
  });
export type InvoiceCreateInput = z.input<typeof invoiceCreate>;

const creditLine = z.strictObject({
  invoice_line_id: idOf('invoice_line'),
  amount: amount(1).meta({ description: 'How much of the line to credit (at most what is left of it).', example: 1000 }),
});

export const creditNoteCreate = z
  .strictObject({
    invoice_id: idOf('invoice'),
    amount: amount(1).optional().meta({ description: 'The total to credit; give amount or lines, not both.', example: 1000 }),
    lines: z.array(creditLine).min(1, { error: 'must have at least one line' }).max(100, { error: 'must have at most 100 lines' }).optional(),
    reason: z.enum(CREDIT_NOTE_REASONS).optional(),
    memo: text(500).optional().meta({ description: 'Shown on the credit note (and its line, for a note given as an amount).', example: 'Two seats fewer' }),
    refund_amount: amount(0)
      .optional()
      .meta({ description: "Paid invoices: how much to refund to the invoice's payment.", example: 0 }),
    credit_amount: amount(0)
      .optional()
      .meta({ description: "Paid invoices: how much to add to the customer's credit balance.", example: 1000 }),
  })
  .superRefine((v, ctx) => {
    if (v.amount === undefined && v.lines === undefined) ctx.addIssue({ code: 'custom', path: ['amount'], message: 'give amount or lines' });
    if (v.amount !== undefined && v.lines !== undefined) ctx.addIssue({ code: 'custom', path: ['lines'], message: 'give amount or lines, not both' });
    const ids = new Set<string>();
    for (const [i, l] of (v.lines ?? []).entries()) {
      if (ids.has(l.invoice_line_id)) ctx.addIssue({ code: 'custom', path: ['lines', i, 'invoice_line_id'], message: 'names a line twice' });
      ids.add(l.invoice_line_id);
    }
  });
export type CreditNoteCreateInput = z.input<typeof creditNoteCreate>;

export const creditNoteListQuery = z.strictObject({
  invoice_id: idOf('invoice').optional(),
  customer_id: idOf('customer').optional(),
  ...listQuery,
});
export type CreditNoteListQuery = z.output<typeof creditNoteListQuery>;

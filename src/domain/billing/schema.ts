// Subscription and invoice inputs (REST bodies and queries, the OpenAPI document, GraphQL inputs).
import { z, idOf, metadata, listQuery, openApiOverrides, timestamp } from '../../platform/validation.ts';
import { MAX_TRIAL_DAYS } from './plans.ts';

export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'paused', 'cancelled', 'incomplete', 'unpaid'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'void', 'uncollectible'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export const BILLING_REASONS = ['subscription_create', 'subscription_cycle', 'subscription_update', 'manual'] as const;
export type BillingReason = (typeof BILLING_REASONS)[number];

export const PRORATION_BEHAVIORS = ['create_prorations', 'none', 'always_invoice'] as const;
export type ProrationBehavior = (typeof PRORATION_BEHAVIORS)[number];

export const MAX_QUANTITY = 10_000;

const quantity = z
  .number({ error: 'must be a whole number' })
  .int({ error: 'must be a whole number' })
  .min(1, { error: 'must be at least 1' })
  .max(MAX_QUANTITY, { error: `must be at most ${MAX_QUANTITY}` });

const taxRateIds = z.array(idOf('tax_rate')).max(5, { error: 'must have at most 5 tax rates' });

const trialDays = z
  .number()
  .int({ error: 'must be a whole number of days' })
  .min(0, { error: 'must be at least 0' })
  .max(MAX_TRIAL_DAYS, { error: `must be at most ${MAX_TRIAL_DAYS}` });

export const subscriptionCreate = z
  .strictObject({
    customer_id: idOf('customer'),
    plan_id: idOf('plan'),
    payment_method_id: idOf('payment_method')
      .optional()
      .meta({ description: "The saved method to charge (attached to the customer); default: the customer's default method." }),
    trial_period_days: trialDays.optional().meta({ description: "Trial length in days; overrides the plan's trial_period_days.", example: 14 }),
    trial_end: timestamp.optional().meta({ description: 'An explicit end of the trial (in the future, at most 730 days ahead); overrides trial_period_days.' }),
    cancel_at_period_end: z.boolean().optional().meta({ description: 'Cancel at the end of the first period.' }),
    apply_wallet_balance: z
      .boolean()
      .optional()
      .meta({ description: "Draw invoices from the customer's active wallet in the plan's currency first (default: the plan's setting)." }),
    quantity: quantity.optional().meta({ description: 'Units of the plan billed each period (1 to 10,000; default 1): plan lines bill amount × quantity.', example: 1 }),
    coupon: z.string().min(1).max(64).optional().meta({ description: 'A coupon id: its discount applies to the invoices made while it lasts (redeems the coupon).', example: 'SUMMER25' }),
    default_tax_rates: taxRateIds.optional().meta({ description: 'Tax rate ids applied to every line of its invoices (at most 5).' }),
    metadata: metadata.optional(),
  })
  .superRefine((v, ctx) => {
    if (v.trial_end !== undefined && v.trial_period_days !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['trial_end'], message: 'give either trial_end or trial_period_days, not both' });
    }
  });
export type SubscriptionCreateInput = z.input<typeof subscriptionCreate>;

export const subscriptionUpdate = z.strictObject({
  plan_id: idOf('plan')
    .optional()
    .meta({
      description:
        'Move to another plan of the same currency; see proration_behavior. Another interval or interval_count is an interval change: a new period from now (or proration_date), the unused time credited, invoiced at once.',
    }),
  proration_behavior: z
    .enum(PRORATION_BEHAVIORS)
    .optional()
    .meta({ description: 'With plan_id or quantity: create_prorations (default: credit and charge for the rest of the period on the next invoice), always_invoice (invoice them now), none (the new price from the next period).' }),
  cancel_at_period_end: z.boolean().optional(),
  payment_method_id: idOf('payment_method').nullable().optional().meta({ description: "A saved method of the customer; null: the customer's default." }),
  trial_end: timestamp.optional().meta({ description: 'A new end of the trial (only while trialing; in the future).' }),
  apply_wallet_balance: z.boolean().optional(),
  quantity: quantity
    .optional()
    .meta({ description: 'A new number of units (1 to 10,000); prorated like a plan change (see proration_behavior), together with plan_id when both change.', example: 5 }),
  coupon: z
    .string()
    .min(1)
    .max(64)
    .meta({ example: 'SUMMER25' })
    .nullable()
    .optional()
    .meta({ description: 'A coupon id to apply (replaces the current discount; redeems the coupon); null removes the discount.' }),
  default_tax_rates: taxRateIds.optional().meta({ description: 'Replaces the tax rate ids applied to its invoices ([] for none); from the next invoice on.' }),
  proration_date: timestamp
    .optional()
    .meta({
      description:
        'With plan_id or quantity: prorate as if the change were made at this time (in the current period, not after now), e.g. the proration_date of the preview (GET /v1/invoices/upcoming) the customer accepted. An interval change starts its new period then.',
    }),
  metadata: metadata.optional().meta({ description: 'Merged into the existing metadata; a key set to an empty string is removed.' }),
});
export type SubscriptionUpdateInput = z.input<typeof subscriptionUpdate>;

export const subscriptionCancel = z
  .strictObject({
    cancel_at_period_end: z
      .boolean()
      .optional()
      .meta({ description: 'true: cancel at the end of the current period; false (the default): cancel now.' }),
    invoice_now: z
      .boolean()
      .optional()
      .meta({
        description:
          "With an immediate cancel: charge the subscription's open invoices once at once (then the normal retry schedule) and invoice the prorations waiting for the next invoice now. Default false: automatic collection of its open invoices stops.",
      }),
  })
  .superRefine((v, ctx) => {
    if (v.invoice_now === true && v.cancel_at_period_end === true) {
      ctx.addIssue({ code: 'custom', path: ['invoice_now'], message: 'applies to an immediate cancel only (at the period end, waiting prorations go on a final invoice anyway)' });
    }
  });
export type SubscriptionCancelInput = z.input<typeof subscriptionCancel>;

export const subscriptionPause = z.strictObject({
  resumes_at: timestamp.optional().meta({ description: 'When to resume automatically (in the future); without it the subscription stays paused until resumed.' }),
});
export type SubscriptionPauseInput = z.input<typeof subscriptionPause>;

export const subscriptionListQuery = z.strictObject({
  customer_id: idOf('customer').optional(),
  plan_id: idOf('plan').optional(),
  status: z.enum(SUBSCRIPTION_STATUSES).optional(),
  ...listQuery,
});
export type SubscriptionListQuery = z.output<typeof subscriptionListQuery>;

export const invoiceListQuery = z.strictObject({
  customer_id: idOf('customer').optional(),
  subscription_id: idOf('subscription').optional(),
  status: z.enum(INVOICE_STATUSES).optional(),
  ...listQuery,
});
export type InvoiceListQuery = z.output<typeof invoiceListQuery>;

/** A quantity in a query string (GET /v1/invoices/upcoming): digits, then the quantity's bounds. */
const queryQuantity = z
  .string()
  .regex(/^[0-9]{1,5}$/, { error: `must be a whole number between 1 and ${MAX_QUANTITY}` })
  .transform(Number)
  .pipe(quantity);
openApiOverrides.set(queryQuantity, { type: 'integer', minimum: 1, maximum: MAX_QUANTITY, description: 'A new number of units to preview (1 to 10,000).', example: 5 });

/** default_tax_rates in a query string: the ids separated by commas; empty previews none. */
const queryTaxRates = z
  .string()
  .max(400)
  .transform((v) => (v.trim() === '' ? [] : v.split(',').map((id) => id.trim())))
  .pipe(taxRateIds);
openApiOverrides.set(queryTaxRates, {
  type: 'string',
  description: 'Preview replacing the tax rates (as default_tax_rates on PATCH /v1/subscriptions/{id}): their ids separated by commas (at most 5); empty previews none.',
  example: 'txr_1,txr_2',
});

export const invoiceUpcomingQuery = z.strictObject({
  subscription_id: idOf('subscription').meta({ description: 'The subscription whose next invoice (or change) to preview.' }),
  plan_id: idOf('plan').optional().meta({ description: 'Preview moving to this plan (same currency; another interval or interval_count is an interval change).' }),
  quantity: queryQuantity.optional(),
  coupon: z
    .string()
    .max(64)
    .optional()
    .meta({ description: 'Preview applying this coupon (it is not redeemed); an empty value previews removing the discount.', example: 'SUMMER25' }),
  default_tax_rates: queryTaxRates.optional(),
  proration_behavior: z.enum(PRORATION_BEHAVIORS).optional().meta({ description: 'With plan_id or quantity, as on PATCH /v1/subscriptions/{id} (default create_prorations).' }),
  proration_date: timestamp
    .optional()
    .meta({ description: 'The time the change counts from (in the current period, not after now; default now). Give the same to the PATCH to be billed exactly this.' }),
});
export type InvoiceUpcomingQuery = z.output<typeof invoiceUpcomingQuery>;

export const invoicePay = z.strictObject({
  payment_method_id: idOf('payment_method')
    .optional()
    .meta({ description: "A saved method of the invoice's customer to charge; default: the subscription's method, else the customer's default." }),
});
export type InvoicePayInput = z.input<typeof invoicePay>;

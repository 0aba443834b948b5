// Response schemas for the OpenAPI document (documentation of what serializers return).
import { BILLING_REASONS, INVOICE_STATUSES, SUBSCRIPTION_STATUSES } from '../domain/billing/schema.ts';
import { COLLECTION_METHODS, CREDIT_NOTE_REASONS, CREDIT_NOTE_TYPES } from '../domain/billing/invoicing-schema.ts';
import { z } from 'zod';
import { CHECKOUT_LOCALES, PAYMENT_STATUSES } from '../domain/payments/schema.ts';
import { PAYMENT_METHODS } from '../platform/processor.ts';
import { LOCALE_DESCRIPTION } from '../domain/customers/schema.ts';
import { REFUND_REASONS, REFUND_STATUSES } from '../domain/refunds/index.ts';
import { SETUP_INTENT_STATUSES } from '../domain/payment-methods/schema.ts';
import { INTERVALS } from '../domain/billing/periods.ts';
import { TOPUP_STATUSES, TRANSACTION_TYPES, WALLET_STATUSES } from '../domain/wallets/schema.ts';
import { ATTEMPT_STATUSES, ENDPOINT_STATUSES } from '../domain/webhooks/index.ts';
import { exampleId, exampleToken, type IdKind } from '../platform/ids.ts';

/** Why a charge failed (an invoice's last_payment_error). */
export const paymentErrorObject = z
  .object({
    code: z.string().meta({ example: 'card_declined' }),
    message: z.string().meta({ example: 'The card was declined.' }),
  })
  .meta({ id: 'PaymentError' });

export const errorObject = z
  .object({
    error: z.object({
      type: z.enum(['invalid_request_error', 'authentication_error', 'wallet_error', 'card_error', 'state_error', 'idempotency_error', 'rate_limit_error', 'api_error']),
      code: z.string().meta({ example: 'parameter_missing' }),
      message: z.string().meta({ example: 'Missing required parameter: email.' }),
      param: z.string().nullable().meta({ example: 'email' }),
      request_id: z.string().meta({ example: exampleId('request') }),
      balance: z.number().int().optional().meta({ description: 'With insufficient_balance (402): the balance that was available.', example: 300 }),
      invoice_id: z.string().optional().meta({ example: exampleId('invoice'), description: 'With card_error (402, POST /v1/invoices/{id}/pay): the invoice whose charge failed.' }),
      last_payment_error: paymentErrorObject.optional().meta({ description: "With card_error (402): the invoice's last_payment_error (the same code and message)." }),
    }),
  })
  .meta({ id: 'Error' });

export function listOf(item: z.ZodType, id: string) {
  return z
    .object({ object: z.literal('list'), data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable().meta({ example: 'eyJjIjoiMjAyNi0xMS0yNFQxMjowMDowMC4wMDBaIiwiaSI6ImN1c18wMTIzIn0' }) })
    .meta({ id });
}

/**
 * Absolute addresses of this service in examples start with this; the OpenAPI builder puts the
 * configured origin (PUBLIC_BASE_URL) in its place, so the reference shows the reader's own.
 */
export const EXAMPLE_ORIGIN = 'https://public-base-url.example.invalid';

const idOf = (kind: IdKind) => z.string().meta({ example: exampleId(kind) });
const currencyCode = z.string().meta({ example: 'USD', description: 'ISO 4217, upper case.' });
const metadataMap = z.record(z.string(), z.string()).meta({ example: { order_id: '6735' } });
const example = (value: string) => z.string().meta({ example: value });

export const idParam = z.strictObject({ id: z.string().min(1).max(64) });

const ts = z.string().meta({ format: 'date-time', example: '2026-11-24T12:00:00.000Z' });

export const creditBalanceMap = z
  .record(z.string(), z.number().int().meta({ example: 1250 }))
  .meta({
    id: 'CreditBalance',
    example: { USD: 1250 },
    description:
      'Credit owed to the customer per currency (smallest unit; `{}` when none; currencies with no credit are left out), drawn by their invoices before charging: adjustments, invoices whose total fell below zero (a downgrade invoiced at once), a cancelled subscription’s unused time, credit notes. On every customer object — create, update, retrieve, lists and search, the customer.* events — as Stripe’s `balance`; its ledger is GET /v1/customers/{id}/balance-transactions.',
  });

export const customerObject = z
  .object({
    id: z.string().meta({ example: exampleId('customer') }),
    object: z.literal('customer'),
    email: example('jane@example.com'),
    name: example('Jane Doe').nullable(),
    phone: example('+256700000001').nullable(),
    currency: currencyCode.nullable(),
    locale: z.enum(CHECKOUT_LOCALES).nullable().meta({ description: LOCALE_DESCRIPTION }),
    default_payment_method_id: idOf('payment_method').nullable().meta({ description: 'The saved method charged when none is named.' }),
    metadata: metadataMap,
    credit_balance: creditBalanceMap,
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Customer' });

export const deletedObject = z
  .object({ id: idOf('customer'), object: example('customer'), deleted: z.literal(true) })
  .meta({ id: 'Deleted' });

export const eventObject = z
  .object({
    id: z.string().meta({ example: exampleId('event') }),
    object: z.literal('event'),
    type: z.string().meta({ example: 'customer.created' }),
    created_at: ts,
    data: z.object({
      object: z.record(z.string(), z.unknown()).meta({ description: 'The record after the change, as the API returns it.' }),
      previous_attributes: z.record(z.string(), z.unknown()).optional().meta({ description: 'Changed fields with their values before the change.' }),
    }),
  })
  .meta({ id: 'Event' });

const methodDetails = z
  .union([
    z.object({ type: z.literal('card'), card: z.object({ brand: example('visa'), last4: example('4242'), exp_month: z.number().int().meta({ example: 12 }), exp_year: z.number().int().meta({ example: 2030 }) }) }),
    z.object({ type: z.literal('mobile_money'), mobile_money: z.object({ phone: example('+256700000001') }) }),
  ])
  .nullable()
  .meta({ description: 'The method the customer used (never a full card number; a saved mobile-money number shows its last 4 digits only).' });

const savedCard = z
  .object({ brand: example('visa'), last4: example('4242'), exp_month: z.number().int().meta({ example: 12 }), exp_year: z.number().int().meta({ example: 2030 }) })
  .meta({ id: 'SavedCard' });
const savedMobileMoney = z.object({ phone_last4: example('0100'), provider: example('test') }).meta({ id: 'SavedMobileMoney' });

export const paymentMethodObject = z
  .object({
    id: z.string().meta({ example: exampleId('payment_method') }),
    object: z.literal('payment_method'),
    customer_id: idOf('customer').nullable().meta({ description: 'Null once detached.' }),
    type: z.enum(PAYMENT_METHODS),
    card: savedCard.nullable().meta({ description: 'With type card.' }),
    mobile_money: savedMobileMoney.nullable().meta({ description: 'With type mobile_money.' }),
    created_at: ts,
  })
  .meta({ id: 'PaymentMethod' });


export const setupIntentObject = z
  .object({
    id: z.string().meta({ example: exampleId('setup_intent') }),
    object: z.literal('setup_intent'),
    customer_id: idOf('customer'),
    status: z.enum(SETUP_INTENT_STATUSES),
    setup_url: example(`${EXAMPLE_ORIGIN}/hosted/setup/${exampleToken('setup')}`).meta({ description: 'Hosted page where the customer saves a method (no credentials needed).' }),
    return_url: example('https://shop.example.com/account').nullable(),
    payment_method_types: z.array(z.enum(PAYMENT_METHODS)),
    payment_method_id: idOf('payment_method').nullable().meta({ description: 'The method saved, once succeeded.' }),
    metadata: metadataMap,
    expires_at: ts.meta({ description: '24 h after creation, on the merchant’s clock.' }),
    completed_at: ts.nullable(),
    created_at: ts,
  })
  .meta({ id: 'SetupIntent' });

export const portalSessionObject = z
  .object({
    id: z.string().meta({ example: exampleId('portal_session') }),
    object: z.literal('customer_portal_session'),
    customer_id: idOf('customer'),
    url: example(`${EXAMPLE_ORIGIN}/hosted/portal/${exampleToken('portal')}`).meta({ description: 'The hosted portal, for this customer only: a link that opens once (the browser that opens it gets a session cookie until expires_at), like Stripe’s.' }),
    return_url: example('https://shop.example.com/account'),
    locale: z.enum(CHECKOUT_LOCALES),
    expires_at: ts.meta({ description: '1 h after creation, on the merchant’s clock.' }),
    created_at: ts,
  })
  .meta({ id: 'CustomerPortalSession' });

export const paymentObject = z
  .object({
    id: z.string().meta({ example: exampleId('payment') }),
    object: z.literal('payment'),
    amount: z.number().int().meta({ example: 1250, description: 'Smallest currency unit (cents).' }),
    currency: currencyCode,
    status: z.enum(PAYMENT_STATUSES),
    checkout_url: example(`${EXAMPLE_ORIGIN}/hosted/checkout/${exampleToken('checkout')}`).meta({ description: 'Hosted checkout page for the customer (no credentials needed).' }),
    customer_id: idOf('customer'),
    customer: z.object({ id: idOf('customer'), email: example('jane@example.com'), name: example('Jane Doe').nullable(), phone: example('+256700000001').nullable() }),
    redirect_url: example('https://shop.example.com/thanks').nullable().meta({ description: 'Null for an off-session payment of a saved method created without one.' }),
    cancel_url: example('https://shop.example.com/cart').nullable(),
    payment_method_id: idOf('payment_method').nullable().meta({ description: 'The saved method this payment charged off-session.' }),
    checkout: z
      .object({
        title: example('Order #6735').optional(),
        description: example('2 × coffee beans, 1 kg').optional(),
        locale: z.enum(CHECKOUT_LOCALES).optional(),
        payment_methods: z.array(z.enum(PAYMENT_METHODS)).optional(),
      })
      .meta({ description: 'The checkout options given at creation (defaults are not filled in).' }),
    metadata: metadataMap,
    amount_refunded: z.number().int().meta({ example: 0 }),
    refunded: z.boolean().meta({ example: false }),
    payment_method: methodDetails,
    failure_code: example('card_declined').nullable(),
    failure_message: example('The card was declined.').nullable(),
    expires_at: ts.meta({ description: 'When the checkout expires (24 h after creation, merchant clock).' }),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Payment' });

export const refundObject = z
  .object({
    id: z.string().meta({ example: exampleId('refund') }),
    object: z.literal('refund'),
    payment_id: idOf('payment'),
    amount: z.number().int().meta({ example: 1250, description: 'Smallest currency unit (cents).' }),
    currency: currencyCode,
    status: z.enum(REFUND_STATUSES),
    reason: z.enum(REFUND_REASONS).nullable(),
    failure_code: example('card_declined').nullable(),
    metadata: metadataMap,
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Refund' });

export const walletObject = z
  .object({
    id: z.string().meta({ example: exampleId('wallet') }),
    object: z.literal('wallet'),
    customer_id: idOf('customer'),
    currency: currencyCode,
    balance: z.number().int().meta({ description: 'Smallest currency unit; always the sum of the ledger.', example: 1234 }),
    balance_formatted: z.string().meta({ example: '$12.34' }),
    status: z.enum(WALLET_STATUSES),
    metadata: metadataMap,
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Wallet' });

export const walletTransactionObject = z
  .object({
    id: z.string().meta({ example: exampleId('wallet_transaction') }),
    object: z.literal('wallet_transaction'),
    wallet_id: idOf('wallet'),
    type: z.enum(TRANSACTION_TYPES),
    amount: z.number().int().meta({ example: 1250, description: 'Smallest currency unit (cents).' }),
    balance_before: z.number().int().meta({ example: 5000 }),
    balance_after: z.number().int().meta({ example: 3750 }),
    reference: example('order-6735').nullable(),
    description: example('Order #6735').nullable(),
    metadata: metadataMap,
    expires_at: ts.nullable().meta({ description: 'For credits with an expiry.' }),
    created_at: ts,
  })
  .meta({ id: 'WalletTransaction' });

export const walletTopupObject = z
  .object({
    id: z.string().meta({ example: exampleId('wallet_topup') }),
    object: z.literal('wallet_topup'),
    wallet_id: idOf('wallet'),
    amount: z.number().int().meta({ example: 1250, description: 'Smallest currency unit (cents).' }),
    currency: currencyCode,
    status: z.enum(TOPUP_STATUSES),
    checkout_url: example(`${EXAMPLE_ORIGIN}/hosted/checkout/${exampleToken('topup')}`),
    payment_id: idOf('payment'),
    transaction_id: idOf('wallet_transaction').nullable(),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'WalletTopup' });

export const webhookEndpointObject = z
  .object({
    id: z.string().meta({ example: exampleId('webhook_endpoint') }),
    object: z.literal('webhook_endpoint'),
    url: example('https://shop.example.com/webhooks/billing'),
    events: z.array(z.string().meta({ example: 'customer.created' })).meta({ description: 'Subscribed event types; empty = all.' }),
    description: example('Order fulfilment').nullable(),
    status: z.enum(ENDPOINT_STATUSES),
    created_at: ts,
    updated_at: ts,
    secret: example('whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD9t/aCm7MxaE=').optional().meta({ description: 'whsec_…: only in the create and rotate-secret responses.' }),
  })
  .meta({ id: 'WebhookEndpoint' });

export const deliveryAttemptObject = z
  .object({
    id: z.string().meta({ example: exampleId('delivery_attempt') }),
    object: z.literal('delivery_attempt'),
    event_id: idOf('event'),
    endpoint_id: idOf('webhook_endpoint'),
    status: z.enum(ATTEMPT_STATUSES),
    attempt_number: z.number().int().meta({ description: '1 to 8.', example: 1 }),
    response_status: z.number().int().meta({ example: 200 }).nullable(),
    response_body: example('{"received":true}').nullable().meta({ description: 'First 64 KiB of the response.' }),
    scheduled_at: ts,
    attempted_at: ts.nullable(),
    next_retry_at: ts.nullable().meta({ description: 'When the next attempt goes out after this one failed; null after the last.' }),
    duration_ms: z.number().int().meta({ example: 87 }).nullable(),
    created_at: ts,
  })
  .meta({ id: 'DeliveryAttempt' });

export const planObject = z
  .object({
    id: z.string().meta({ example: exampleId('plan') }),
    object: z.literal('plan'),
    name: example('Pro monthly'),
    amount: z.number().int().meta({ example: 2900, description: 'Price per period, smallest currency unit.' }),
    amount_formatted: example('$29.00'),
    currency: currencyCode,
    interval: z.enum(INTERVALS),
    interval_count: z.number().int().meta({ example: 1 }),
    trial_period_days: z.number().int().meta({ example: 14 }),
    active: z.boolean().meta({ description: 'false once archived.' }),
    apply_wallet_balance: z.boolean().meta({ description: "Default of new subscriptions: invoices draw from the customer's wallet first." }),
    metadata: metadataMap,
    archived_at: ts.nullable(),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Plan' });

export const subscriptionObject = z
  .object({
    id: z.string().meta({ example: exampleId('subscription') }),
    object: z.literal('subscription'),
    customer_id: idOf('customer'),
    plan_id: idOf('plan'),
    status: z.enum(SUBSCRIPTION_STATUSES),
    current_period_start: ts,
    current_period_end: ts.meta({ description: 'When the next invoice is created (or the subscription ends, with cancel_at_period_end).' }),
    billing_cycle_anchor: ts.meta({ description: 'Periods are counted from here (the trial end, or the start): a month-end anchor keeps its day where the month has it.' }),
    trial_start: ts.nullable(),
    trial_end: ts.nullable(),
    cancel_at_period_end: z.boolean().meta({ example: false }),
    cancel_at: ts.nullable(),
    cancelled_at: ts.nullable(),
    pause_collection: z.object({ resumes_at: ts.nullable() }).nullable().meta({ description: 'Set while paused: no invoices until resumed.' }),
    paused_at: ts.nullable(),
    resumes_at: ts.nullable(),
    payment_method_id: idOf('payment_method').nullable().meta({ description: "The saved method charged; null: the customer's default." }),
    latest_invoice_id: idOf('invoice').nullable(),
    apply_wallet_balance: z.boolean(),
    quantity: z.number().int().meta({ example: 1, description: 'Units of the plan billed each period (1 to 10,000).' }),
    discount: z
      .object({
        coupon: z.string().meta({ example: 'SUMMER25', description: 'The coupon id.' }),
        start: ts,
        end: ts.nullable().meta({ description: 'When a repeating discount ends; null for forever and once (a once discount is removed after the invoice it applied to).' }),
      })
      .nullable()
      .meta({ description: 'The active discount; null without one.' }),
    default_tax_rates: z.array(z.string().meta({ example: exampleId('tax_rate') })).meta({ description: 'Tax rate ids applied to every line of its invoices.' }),
    metadata: metadataMap,
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Subscription' });

export const couponObject = z
  .object({
    id: z.string().meta({ example: 'SUMMER25' }),
    object: z.literal('coupon'),
    name: example('Summer sale'),
    percent_off: z.number().nullable().meta({ example: 25, description: 'Percent off (up to 2 decimals); null for an amount off.' }),
    amount_off: z.number().int().nullable().meta({ example: null, description: 'Amount off each discounted invoice (at most its subtotal); null for a percent off.' }),
    amount_off_formatted: z.string().nullable().meta({ example: null }),
    currency: currencyCode.nullable().meta({ description: 'The currency of amount_off.' }),
    duration: z.enum(['once', 'repeating', 'forever']),
    duration_in_months: z.number().int().nullable().meta({ example: null }),
    max_redemptions: z.number().int().nullable().meta({ example: 100 }),
    redeem_by: ts.nullable(),
    times_redeemed: z.number().int().meta({ example: 0, description: 'Subscriptions it was applied to.' }),
    valid: z.boolean().meta({ description: 'Whether it can still be applied: not deleted, not past redeem_by, redemptions left.' }),
    deleted: z.boolean().meta({ description: 'Deleted: no new redemptions; applied discounts go on.' }),
    metadata: metadataMap,
    created_at: ts,
  })
  .meta({ id: 'Coupon' });

export const taxRateObject = z
  .object({
    id: z.string().meta({ example: exampleId('tax_rate') }),
    object: z.literal('tax_rate'),
    display_name: example('VAT'),
    percentage: z.number().meta({ example: 19.6, description: 'Percent, up to 4 decimals.' }),
    inclusive: z.boolean().meta({ description: 'true: contained in the line amounts (extracted); false: added to them.' }),
    country: z.string().nullable().meta({ example: 'FR' }),
    jurisdiction: z.string().nullable().meta({ example: 'FR' }),
    active: z.boolean(),
    metadata: metadataMap,
    created_at: ts,
  })
  .meta({ id: 'TaxRate' });

export const invoiceLineObject = z
  .object({
    id: z.string().meta({ example: exampleId('invoice_line') }),
    object: z.literal('invoice_line'),
    description: example('Pro monthly (2027-01-31 – 2027-02-28)'),
    period: z.object({ start: ts, end: ts }),
    amount: z.number().int().meta({ example: 2900, description: 'Negative for a credit.' }),
    amount_formatted: example('$29.00'),
    proration: z.boolean().meta({ example: false }),
    quantity: z.number().int().nullable().meta({ example: 1, description: 'Units billed (plan lines, one-off items and prorations); null for a credit carried over (a line made before negative totals went to the credit balance).' }),
    unit_amount: z.number().int().nullable().meta({ example: 2900, description: 'Price of one unit on a plan line or a one-off item (amount = unit_amount × quantity); null on prorations and credits.' }),
    discount_amount: z.number().int().meta({ example: 0, description: "This line's share of the invoice's discount (negative on a credit line when the discount is negative)." }),
    tax_amounts: z
      .array(
        z.object({
          tax_rate: z.string().meta({ example: exampleId('tax_rate') }),
          amount: z.number().int().meta({ example: 580, description: 'On the line amount after its discount share, rounded half away from zero.' }),
          inclusive: z.boolean(),
        }),
      )
      .meta({ description: 'The taxes of this line, one per tax rate.' }),
  })
  .meta({ id: 'InvoiceLine' });

export const invoiceObject = z
  .object({
    id: z.string().meta({ example: exampleId('invoice') }),
    object: z.literal('invoice'),
    customer_id: idOf('customer'),
    subscription_id: idOf('subscription').nullable(),
    number: example('INV-000123').nullable().meta({ description: 'Per merchant, gap-free; assigned when finalised.' }),
    status: z.enum(INVOICE_STATUSES),
    billing_reason: z.enum(BILLING_REASONS),
    currency: currencyCode,
    lines: z.array(invoiceLineObject),
    subtotal: z.number().int().meta({ example: 2900, description: 'The sum of the line amounts (inclusive taxes within).' }),
    discount_amount: z.number().int().meta({ example: 0, description: "The coupon's discount (percent: the discountable subtotal × percent, rounded half away from zero — negative on a negative subtotal with a forever or repeating coupon, so credits are at the discounted price; amount_off: at most the subtotal, 0 on a negative one)." }),
    coupon_id: z.string().nullable().meta({ example: null, description: 'The coupon whose discount it got.' }),
    tax_amount: z.number().int().meta({ example: 0, description: 'Every tax of its lines, inclusive and exclusive.' }),
    total: z.number().int().meta({ example: 2900, description: 'subtotal − discount_amount + exclusive taxes.' }),
    total_formatted: example('$29.00'),
    credit_applied: z.number().int().meta({ example: 0, description: "Drawn from the customer's credit balance in the invoice's currency (before the wallet); given back when the invoice is voided." }),
    credited_to_balance: z.number().int().meta({
      example: 0,
      description:
        "A total below zero (a downgrade, unused time credited), as a credit: added to the customer's credit balance in the invoice's currency when it was finalised (a ledger entry invoice_credit with this invoice's id); the customer's later invoices draw it. 0 otherwise. On a preview: what the invoice would add.",
    }),
    amount_from_wallet: z.number().int().meta({ example: 0, description: "Drawn from the customer's wallet (apply_wallet_balance)." }),
    amount_due: z.number().int().meta({ example: 2900 }),
    amount_paid: z.number().int().meta({ example: 2900 }),
    amount_remaining: z.number().int().meta({ example: 0 }),
    attempt_count: z.number().int().meta({ example: 1 }),
    next_payment_attempt: ts.nullable().meta({ description: 'The next automatic retry after a failed charge (1, 3 and 5 days after the first failure).' }),
    payment_id: idOf('payment').nullable().meta({ description: 'The payment of the latest charge attempt.' }),
    last_payment_error: paymentErrorObject.nullable().meta({ description: 'Why the last attempt (automatic or manual) failed; null when none failed, and once paid.' }),
    pdf_url: example(`${EXAMPLE_ORIGIN}/v1/invoices/${exampleId('invoice')}/pdf`).meta({ description: 'Authenticated; redirects to a signed address of the PDF valid 5 minutes.' }),
    period_start: ts,
    period_end: ts,
    due_date: ts.nullable(),
    created_at: ts,
    finalized_at: ts.nullable(),
    paid_at: ts.nullable(),
    voided_at: ts.nullable(),
    collection_method: z.enum(COLLECTION_METHODS).meta({ description: 'charge_automatically: charged when finalised (every subscription invoice); send_invoice: the customer pays at hosted_invoice_url by due_date.' }),
    days_until_due: z.number().int().nullable().meta({ example: null, description: 'send_invoice: due_date is finalization + this many days.' }),
    hosted_invoice_url: z.string().nullable().meta({ example: null, description: 'send_invoice, once finalised: the page where the customer pays by card (no credentials).' }),
    pre_payment_credit_notes_amount: z.number().int().meta({ example: 0, description: 'Credit notes issued while it was open: amount_due was lowered by this much.' }),
    post_payment_credit_notes_amount: z.number().int().meta({ example: 0, description: 'Credit notes issued after it was paid (refunded and/or credited to the balance).' }),
  })
  .meta({ id: 'Invoice' });

export const redirectObject = z.object({ location: z.string() });

export const balanceTransactionObject = z
  .object({
    id: z.string().meta({ example: exampleId('customer_balance_transaction') }),
    object: z.literal('customer_balance_transaction'),
    customer_id: idOf('customer'),
    currency: currencyCode,
    amount: z.number().int().meta({ example: 1250, description: 'Smallest currency unit: > 0 added credit, < 0 used it.' }),
    ending_balance: z.number().int().meta({ example: 1250, description: 'The credit balance in this currency after this entry.' }),
    type: z.enum(['adjustment', 'subscription_credit', 'invoice_credit', 'applied_to_invoice', 'unapplied_from_invoice', 'credit_note']).meta({
      description:
        'adjustment: made by the merchant; subscription_credit: a cancelled subscription’s waiting credit; invoice_credit: an invoice’s total below zero (a downgrade, unused time), credited when it was finalised (invoice_id); applied_to_invoice: drawn by an invoice; unapplied_from_invoice: given back when that invoice was voided; credit_note: a paid invoice’s credit note.',
    }),
    invoice_id: idOf('invoice').nullable(),
    subscription_id: idOf('subscription').nullable(),
    description: example('Goodwill credit').nullable(),
    created_at: ts,
  })
  .meta({ id: 'CustomerBalanceTransaction' });

export const customerWithEmbedsObject = customerObject
  .extend({
    payment_methods: z.array(paymentMethodObject).meta({ description: 'Attached saved methods, newest first (up to 100).' }),
    subscriptions: z.array(subscriptionObject).meta({ description: 'The customer’s subscriptions, newest first (up to 100), cancelled ones included.' }),
  })
  .meta({ id: 'CustomerWithEmbeds' });

export const emailSettingsObject = z
  .object({
    object: z.literal('email_settings'),
    receipts: z.boolean().meta({ description: 'Receipts for paid payments and invoices (default on).' }),
    failed_payments: z.boolean().meta({ description: 'A failed invoice payment, with a link to fix it in the portal (default on).' }),
    trial_ending: z.boolean().meta({ description: 'A trial ends in three days (default on).' }),
    upcoming_renewal: z.boolean().meta({ description: 'An upcoming renewal, three days before it (invoice.upcoming); off by default.' }),
    invoices: z.boolean().meta({ description: 'Invoices to pay (send_invoice, with the link to the hosted invoice page; default on).' }),
  })
  .meta({ id: 'EmailSettings' });

export const emailObject = z
  .object({
    id: z.string().meta({ example: exampleId('email') }),
    object: z.literal('email'),
    kind: z.enum(['receipt', 'failed_payment', 'trial_ending', 'upcoming_renewal', 'invoice']),
    to: example('jane@example.com'),
    subject: example('Your receipt from Acme'),
    text: z.string().meta({ description: 'The plain-text part.', example: 'Acme\n\nPayment received: €25.99\n\nHello Jane Doe,\n…' }),
    html: z.string().meta({ description: 'The HTML part.', example: '<!doctype html>\n<html lang="en">…' }),
    locale: z.enum(['en', 'fr']),
    status: z
      .enum(['sending', 'retrying', 'sent', 'kept', 'failed', 'not_sent'])
      .meta({ description: '`kept`: in the dev mailbox (no SMTP_URL); `sent`: the SMTP server accepted it; `retrying`/`failed`: it refused or could not be reached (see last_error).' }),
    attempts: z.number().int().meta({ description: 'SMTP sends tried so far.', example: 1 }),
    last_error: z.string().meta({ example: '421 4.7.0 Try again later' }).nullable(),
    event_id: idOf('event').meta({ description: 'The event that caused the message.' }),
    created_at: ts,
    sent_at: ts.nullable(),
  })
  .meta({ id: 'Email' });

export const accountObject = z
  .object({
    id: z.string().meta({ example: 'mer_3Xb1pQ9wE2rT6yU8iO0pAs' }),
    object: z.literal('account'),
    name: z.string().meta({ example: 'Acme Coffee' }),
    mode: z.enum(['test', 'live']),
    branding: z.object({
      accent_color: z.string().nullable().meta({ description: '#RRGGBB, or null: the default.' }),
      logo: z.string().nullable().meta({ description: 'The logo as a data: URL (PNG or JPEG), or null.', example: 'data:image/png;base64,iVBORw0KGgo…' }),
    }),
    created_at: ts,
  })
  .meta({ id: 'Account' });
/** customer.deleted's `data.object`: the customer as it was, marked deleted. */
export const deletedCustomerObject = customerObject
  .extend({ deleted: z.literal(true) })
  .meta({ id: 'DeletedCustomer', description: 'The customer as it was when deleted (customer.deleted).' });

/** invoice.upcoming's `data.object`: the invoice the next renewal will make, not made yet (no id, number or PDF). */
export const upcomingInvoiceObject = invoiceObject
  .extend({
    id: z.null().meta({ description: 'Not made yet.' }),
    number: z.null(),
    status: z.literal('draft'),
    pdf_url: z.null(),
    lines: z.array(
      invoiceLineObject
        .extend({
          id: z
            .string()
            .meta({ example: exampleId('invoice_line') })
            .nullable()
            .meta({ description: 'Null for a line the invoice will make (the plan line, a change’s prorations, a waiting invoice item’s line); the id of a line already waiting for the invoice (a proration; a credit carried over from before negative totals went to the credit balance).' }),
        })
        .meta({ id: 'UpcomingInvoiceLine' }),
    ),
  })
  .meta({
    id: 'UpcomingInvoice',
    description:
      'An invoice not made yet (invoice.upcoming, GET /v1/invoices/upcoming): invoice-shaped, without id, number or PDF; computed by the code that will make it, so the real invoice equals it line for line unless something changes in between.',
  });

/** GET /v1/invoices/upcoming: the first invoice the subscription (or the change) will make, and the renewal after a change invoiced now. */
export const upcomingInvoicePreviewObject = upcomingInvoiceObject
  .extend({
    subscription_proration_date: ts.nullable().meta({
      description:
        'With a change: the moment it counts from (proration_date, else the preview’s now, whole seconds). Give it as proration_date to PATCH /v1/subscriptions/{id} with the same fields to be billed exactly this. Null without a change.',
      example: '2029-01-20T09:00:00.000Z',
    }),
    next_invoice: upcomingInvoiceObject.nullable().meta({
      description:
        'When the change is invoiced now (always_invoice with prorations, or an interval change): the renewal that follows it, with what that invoice leaves (the credit balance with its negative total credited and its draws, the wallet, a once discount used up). Null otherwise, and when the subscription will not renew.',
    }),
  })
  .meta({ id: 'UpcomingInvoicePreview' });

export const invoiceItemObject = z
  .object({
    id: z.string().meta({ example: exampleId('invoice_item') }),
    object: z.literal('invoice_item'),
    customer_id: idOf('customer'),
    currency: currencyCode,
    description: example('Onboarding workshop'),
    quantity: z.number().int().meta({ example: 1 }),
    unit_amount: z.number().int().meta({ example: 50000 }),
    amount: z.number().int().meta({ example: 50000, description: 'unit_amount × quantity.' }),
    amount_formatted: example('$500.00'),
    invoice_id: idOf('invoice').nullable().meta({ description: 'The invoice that took it; null while it waits.' }),
    invoice_line_id: idOf('invoice_line').nullable().meta({ description: 'The line it became on that invoice.' }),
    pending: z.boolean().meta({ example: true, description: 'Still waiting for an invoice (only then can it be deleted).' }),
    created_at: ts,
  })
  .meta({ id: 'InvoiceItem' });

export const creditNoteObject = z
  .object({
    id: z.string().meta({ example: exampleId('credit_note') }),
    object: z.literal('credit_note'),
    number: example('CN-000001').meta({ description: 'Per merchant, gap-free.' }),
    customer_id: idOf('customer'),
    invoice_id: idOf('invoice'),
    currency: currencyCode,
    amount: z.number().int().meta({ example: 1000 }),
    amount_formatted: example('$10.00'),
    type: z.enum(CREDIT_NOTE_TYPES).meta({ description: 'pre_payment: lowered an open invoice’s amount_due; post_payment: refunded and/or credited a paid one.' }),
    status: z.literal('issued'),
    reason: z.enum(CREDIT_NOTE_REASONS).nullable(),
    memo: example('Two seats fewer').nullable(),
    refund_amount: z.number().int().meta({ example: 0 }),
    credit_amount: z.number().int().meta({ example: 1000 }),
    refund_id: idOf('refund').nullable().meta({ description: 'The refund of the invoice’s payment (refund_amount > 0).' }),
    customer_balance_transaction_id: idOf('customer_balance_transaction').nullable().meta({ description: 'The credit balance entry (credit_amount > 0).' }),
    lines: z.array(
      z
        .object({
          invoice_line_id: idOf('invoice_line').nullable().meta({ description: 'The invoice line credited; null for a note given as an amount.' }),
          description: example('Consulting'),
          amount: z.number().int().meta({ example: 1000 }),
        })
        .meta({ id: 'CreditNoteLine' }),
    ),
    pdf_url: example(`${EXAMPLE_ORIGIN}/v1/credit-notes/${exampleId('credit_note')}/pdf`).meta({ description: 'Authenticated; redirects to a signed address of the PDF valid 5 minutes.' }),
    created_at: ts,
  })
  .meta({ id: 'CreditNote' });

export const deletedInvoiceItemObject = z
  .object({ id: idOf('invoice_item'), object: z.literal('invoice_item'), deleted: z.literal(true) })
  .meta({ id: 'DeletedInvoiceItem' });

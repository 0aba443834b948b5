import type { Customer, Payment } from '../../generated/prisma/client.ts';
import { createdBetween } from '../../platform/pagination.ts';
import { PAYMENT_METHODS } from '../../platform/processor.ts';
import { z, amount, currency, email, phone, httpUrl, idOf, metadata, listQuery, LOCALES, timestamp, freeText } from '../../platform/validation.ts';

/** A payment with its customer (what most payment operations read). */
export type PaymentWithCustomer = Payment & { customer: Customer };

export const PAYMENT_STATUSES = ['created', 'processing', 'succeeded', 'failed', 'cancelled', 'expired'] as const;
export const CHECKOUT_LOCALES = LOCALES;

export const checkoutOptions = z
  .strictObject({
    title: freeText(120).optional().meta({ description: 'Heading of the checkout page (default: the merchant name).', example: 'Order #6735' }),
    description: freeText(500, { allowEmpty: true }).optional().meta({ description: 'What is being paid for, shown under the amount.', example: '2 × coffee beans, 1 kg' }),
    locale: z.enum(CHECKOUT_LOCALES).optional().meta({ description: 'Language of the checkout page and of the e-mails about this payment (default: the customer’s `locale`, else en).' }),
    payment_methods: z
      .array(z.enum(PAYMENT_METHODS))
      .min(1, { error: 'must list at least one method' })
      .max(2)
      .refine((a) => new Set(a).size === a.length, { error: 'must not repeat a method' })
      .optional()
      .meta({ description: 'Methods offered (default both).' }),
  })
  .meta({ description: 'Checkout page customisation.' });

export const inlineCustomer = z.strictObject({
  email,
  name: freeText(256).optional().meta({ example: 'Jane Doe' }),
  phone: phone.optional().meta({ description: 'E.164; needed for mobile money (the page asks when absent).' }),
});

export const paymentCreate = z
  .strictObject({
    amount: amount(),
    currency,
    customer: inlineCustomer
      .optional()
      .meta({ description: 'Customer details. A known email of this merchant reuses that customer; otherwise one is created. Ignored when customer_id is given.' }),
    customer_id: idOf('customer').optional().meta({ description: 'An existing customer; overrides `customer`.' }),
    redirect_url: httpUrl
      .optional()
      .meta({ description: 'Where the customer goes after paying at the checkout; gets payment_id and status query parameters. Required unless payment_method_id is given.' }),
    payment_method_id: idOf('payment_method')
      .optional()
      .meta({ description: 'A saved method to charge at once, off-session (no checkout needed). Its customer is the payment’s customer; a failed charge can still be paid at checkout_url until it expires.' }),
    cancel_url: httpUrl.optional().meta({ description: 'Where the customer goes after cancelling.' }),
    checkout: checkoutOptions.optional(),
    metadata: metadata.optional(),
  })
  .superRefine((v, ctx) => {
    if (v.redirect_url === undefined && v.payment_method_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['redirect_url'], params: { code: 'parameter_missing' }, message: 'Missing required parameter: redirect_url.' });
    }
    if (v.customer === undefined && v.customer_id === undefined && v.payment_method_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['customer'], params: { code: 'parameter_missing' }, message: 'Missing required parameter: customer (or customer_id, or payment_method_id).' });
    }
  });

export type PaymentCreateInput = z.input<typeof paymentCreate>;

export const paymentListQuery = z.strictObject({
  status: z.enum(PAYMENT_STATUSES).optional(),
  currency: currency.optional(),
  customer_id: z.string().max(64).optional(),
  created_after: timestamp.optional(),
  created_before: timestamp.optional(),
  ...listQuery,
});
export type PaymentListQuery = z.output<typeof paymentListQuery>;

export const paymentCompleteBody = z.strictObject({
  outcome: z.enum(['succeeded', 'failed', 'cancelled']),
  method: z.enum(PAYMENT_METHODS).optional().meta({ description: 'Default card.' }),
});
export type PaymentCompleteInput = z.input<typeof paymentCompleteBody>;

/** The filters payments and refunds share (the contract gives refunds "the same filters as payments"). */
export function paymentLikeFilters(q: { status?: string; currency?: string; customer_id?: string; created_after?: Date; created_before?: Date }) {
  return [
    q.status ? { status: q.status } : {},
    q.currency ? { currency: q.currency } : {},
    q.customer_id ? { customerId: q.customer_id } : {},
    createdBetween(q.created_after, q.created_before),
  ];
}

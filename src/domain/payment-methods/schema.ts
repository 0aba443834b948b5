// Setup intent and payment method inputs (REST bodies, the OpenAPI document and GraphQL inputs).
import { z, httpUrl, idOf, metadata, listQuery } from '../../platform/validation.ts';
import { PAYMENT_METHODS } from '../../platform/processor.ts';

export const SETUP_INTENT_STATUSES = ['requires_payment_method', 'succeeded', 'expired'] as const;
export type SetupIntentStatus = (typeof SETUP_INTENT_STATUSES)[number];

export const setupIntentCreate = z.strictObject({
  customer_id: idOf('customer'),
  return_url: httpUrl.optional().meta({ description: 'Where the setup page sends the customer afterwards, with setup_intent_id and status query parameters.' }),
  payment_method_types: z
    .array(z.enum(PAYMENT_METHODS))
    .min(1, { error: 'must list at least one method' })
    .max(2)
    .refine((a) => new Set(a).size === a.length, { error: 'must not repeat a method' })
    .optional()
    .meta({ description: 'Kinds of method the setup page offers (default both).' }),
  metadata: metadata.optional(),
});
export type SetupIntentCreateInput = z.input<typeof setupIntentCreate>;

export const setupIntentCompleteBody = z.strictObject({
  card_number: z
    .string()
    .regex(/^[0-9 ]{12,23}$/, { error: 'must be a card number (digits)' })
    .optional()
    .meta({ description: 'Default 4242424242424242. 4000000000000002 is refused; 4000000000009995 saves, then every charge of it fails with insufficient_funds.', example: '4242424242424242' }),
});
export type SetupIntentCompleteInput = z.input<typeof setupIntentCompleteBody>;

export const paymentMethodListQuery = z.strictObject({
  customer_id: idOf('customer').meta({ description: 'The customer whose saved methods to list (required).' }),
  ...listQuery,
});
export type PaymentMethodListQuery = z.output<typeof paymentMethodListQuery>;

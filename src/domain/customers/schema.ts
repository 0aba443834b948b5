// Customer inputs. REST validates requests with these, the OpenAPI document is generated from
// them, and the domain functions parse GraphQL input with the same schemas.
import { z, email, phone, currency, locale, metadata, listQuery, idOf, amount, freeText } from '../../platform/validation.ts';
import { MAX_AMOUNT } from '../../platform/money.ts';

const name = freeText(256).meta({ example: 'Jane Doe' });

/** What a customer's `locale` decides (docs/emails.md, "Language"). */
export const LOCALE_DESCRIPTION =
  'Language of the customer’s e-mails and hosted pages (an invoice’s checkout, the portal) when no more specific one is given (a payment’s `checkout.locale`, a portal session’s `locale`): en or fr; null means en.';

export const customerCreate = z.strictObject({
  email,
  name: name.nullable().optional(),
  phone: phone.nullable().optional().meta({ description: 'E.164, e.g. +256700000001. Needed for mobile money.' }),
  currency: currency.nullable().optional().meta({ description: 'Default currency (ISO 4217).' }),
  locale: locale.nullable().optional().meta({ description: LOCALE_DESCRIPTION }),
  metadata: metadata.optional(),
});

export const customerUpdate = z.strictObject({
  email: email.optional(),
  name: name.nullable().optional(),
  phone: phone.nullable().optional(),
  currency: currency.nullable().optional(),
  locale: locale.nullable().optional().meta({ description: `${LOCALE_DESCRIPTION} null clears it.` }),
  default_payment_method_id: idOf('payment_method')
    .nullable()
    .optional()
    .meta({ description: 'A saved method attached to this customer, charged when none is named (null: none).' }),
  metadata: metadata
    .optional()
    .meta({ description: 'Merged into the existing metadata; a key set to an empty string is removed.' }),
});

/** What `search` matches (docs/api: customers). */
export const SEARCH_DESCRIPTION =
  'Case-insensitive search: customers whose email starts with the text, or whose name has a word starting with each of its words ("ada lov" finds "Ada Lovelace"). 1 to 100 characters; combines with the other filters.';

export const customerListQuery = z.strictObject({
  email: z.string().max(254).meta({ description: 'Exact email match.' }).optional(),
  search: z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(100, { error: 'must be at most 100 characters' })
    .meta({ description: SEARCH_DESCRIPTION, example: 'ada' })
    .optional(),
  ...listQuery,
});

export const balanceTransactionCreate = z.strictObject({
  amount: amount(-MAX_AMOUNT)
    .refine((v) => v !== 0, { error: 'must not be 0' })
    .meta({
      description:
        'Added to the credit balance (smallest currency unit): > 0 gives the customer credit, < 0 takes unused credit back (never below 0). Not 0; at most 99,999,999,999 either way per adjustment; the balance never exceeds 999,999,999,999,999.',
      example: 500,
    }),
  currency,
  description: freeText(500)
    .meta({ example: 'Goodwill credit for the outage of May 3' })
    .optional(),
});

export const balanceTransactionListQuery = z.strictObject({ ...listQuery });

export type CustomerCreateInput = z.input<typeof customerCreate>;
export type CustomerUpdateInput = z.input<typeof customerUpdate>;
export type CustomerListQuery = z.output<typeof customerListQuery>;
export type BalanceTransactionCreateInput = z.input<typeof balanceTransactionCreate>;
export type BalanceTransactionListQuery = z.output<typeof balanceTransactionListQuery>;

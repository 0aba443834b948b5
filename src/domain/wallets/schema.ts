import { z, amount, currency, httpUrl, idOf, metadata, listQuery, timestamp, freeText } from '../../platform/validation.ts';

export const WALLET_STATUSES = ['active', 'frozen', 'closed'] as const;
export const TRANSACTION_TYPES = ['topup', 'debit', 'credit', 'expiry', 'refund', 'refund_reversal'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];
export type WalletStatus = (typeof WALLET_STATUSES)[number];
export const TOPUP_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled', 'expired'] as const;
export type TopupStatus = (typeof TOPUP_STATUSES)[number];

const reference = z
  .string()
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(255, { error: 'must be at most 255 characters' })
  .meta({ description: 'Your unique reference for this movement (per wallet). Repeating it returns the original transaction.', example: 'order_6735' });
const description = freeText(500).meta({ example: 'API calls, November' });

export const walletCreate = z.strictObject({
  customer_id: idOf('customer'),
  currency,
  metadata: metadata.optional(),
});
export type WalletCreateInput = z.input<typeof walletCreate>;

export const walletListQuery = z.strictObject({
  customer_id: z.string().max(64).optional(),
  currency: currency.optional(),
  status: z.enum(WALLET_STATUSES).optional(),
  ...listQuery,
});
export type WalletListQuery = z.output<typeof walletListQuery>;

export const walletDebit = z.strictObject({
  amount: amount(),
  description: description.meta({ description: 'Human-readable reason.' }),
  reference,
  metadata: metadata.optional(),
});
export type WalletDebitInput = z.input<typeof walletDebit>;

export const walletCredit = z.strictObject({
  amount: amount(),
  description,
  reference,
  expires_at: timestamp.optional().meta({ description: 'The unused part of this credit leaves the balance at this time (merchant clock).' }),
  metadata: metadata.optional(),
});
export type WalletCreditInput = z.input<typeof walletCredit>;

export const topupCreate = z.strictObject({
  amount: amount().meta({ description: 'What the customer pays, credited to the wallet once paid.' }),
  redirect_url: httpUrl,
  cancel_url: httpUrl.optional(),
});
export type TopupCreateInput = z.input<typeof topupCreate>;

export const transactionListQuery = z.strictObject({
  type: z.enum(TRANSACTION_TYPES).optional(),
  ...listQuery,
});
export type TransactionListQuery = z.output<typeof transactionListQuery>;

export const topupListQuery = z.strictObject({ ...listQuery });
export type TopupListQuery = z.output<typeof topupListQuery>;

export const topupCompleteBody = z.strictObject({ outcome: z.enum(['succeeded', 'failed', 'cancelled']) });
export type TopupCompleteInput = z.input<typeof topupCompleteBody>;

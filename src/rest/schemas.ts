// Response schemas for the OpenAPI document (documentation of what serializers return).
import { z } from 'zod';
import { CHECKOUT_LOCALES, PAYMENT_METHODS, PAYMENT_STATUSES } from '../domain/payments/schema.ts';
import { REFUND_REASONS, REFUND_STATUSES } from '../domain/refunds/index.ts';
import { TOPUP_STATUSES, TRANSACTION_TYPES, WALLET_STATUSES } from '../domain/wallets/schema.ts';
import { ATTEMPT_STATUSES, ENDPOINT_STATUSES } from '../domain/webhooks/index.ts';

export const errorObject = z
  .object({
    error: z.object({
      type: z.enum(['invalid_request_error', 'authentication_error', 'wallet_error', 'state_error', 'idempotency_error', 'rate_limit_error', 'api_error']),
      code: z.string().meta({ example: 'parameter_missing' }),
      message: z.string(),
      param: z.string().nullable(),
      request_id: z.string().meta({ example: 'req_0123456789abcdefGHIJKL' }),
      balance: z.number().int().optional().meta({ description: 'With insufficient_balance (402): the balance that was available.' }),
    }),
  })
  .meta({ id: 'Error' });

export function listOf(item: z.ZodType, id: string) {
  return z
    .object({ object: z.literal('list'), data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() })
    .meta({ id });
}

export const idParam = z.strictObject({ id: z.string().min(1).max(64) });

const ts = z.string().meta({ format: 'date-time' });

export const customerObject = z
  .object({
    id: z.string().meta({ example: 'cus_0123456789abcdefGHIJKL' }),
    object: z.literal('customer'),
    email: z.string(),
    name: z.string().nullable(),
    phone: z.string().nullable(),
    currency: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Customer' });

export const deletedObject = z
  .object({ id: z.string(), object: z.string(), deleted: z.literal(true) })
  .meta({ id: 'Deleted' });

export const eventObject = z
  .object({
    id: z.string().meta({ example: 'evt_0123456789abcdefGHIJKL' }),
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
    z.object({ type: z.literal('card'), card: z.object({ brand: z.string(), last4: z.string(), exp_month: z.number().int(), exp_year: z.number().int() }) }),
    z.object({ type: z.literal('mobile_money'), mobile_money: z.object({ phone: z.string() }) }),
  ])
  .nullable()
  .meta({ description: 'The method the customer used (never a full card number).' });

export const paymentObject = z
  .object({
    id: z.string().meta({ example: 'pay_0123456789abcdefGHIJKL' }),
    object: z.literal('payment'),
    amount: z.number().int(),
    currency: z.string(),
    status: z.enum(PAYMENT_STATUSES),
    checkout_url: z.string().meta({ description: 'Hosted checkout page for the customer (no credentials needed).' }),
    customer_id: z.string(),
    customer: z.object({ id: z.string(), email: z.string(), name: z.string().nullable(), phone: z.string().nullable() }),
    redirect_url: z.string(),
    cancel_url: z.string().nullable(),
    checkout: z
      .object({
        title: z.string().optional(),
        description: z.string().optional(),
        locale: z.enum(CHECKOUT_LOCALES).optional(),
        payment_methods: z.array(z.enum(PAYMENT_METHODS)).optional(),
      })
      .meta({ description: 'The checkout options given at creation (defaults are not filled in).' }),
    metadata: z.record(z.string(), z.string()),
    amount_refunded: z.number().int(),
    refunded: z.boolean(),
    payment_method: methodDetails,
    failure_code: z.string().nullable(),
    failure_message: z.string().nullable(),
    expires_at: ts.meta({ description: 'When the checkout expires (24 h after creation, merchant clock).' }),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Payment' });

export const refundObject = z
  .object({
    id: z.string().meta({ example: 're_0123456789abcdefGHIJKL' }),
    object: z.literal('refund'),
    payment_id: z.string(),
    amount: z.number().int(),
    currency: z.string(),
    status: z.enum(REFUND_STATUSES),
    reason: z.enum(REFUND_REASONS).nullable(),
    failure_code: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Refund' });

export const walletObject = z
  .object({
    id: z.string().meta({ example: 'wal_0123456789abcdefGHIJKL' }),
    object: z.literal('wallet'),
    customer_id: z.string(),
    currency: z.string(),
    balance: z.number().int().meta({ description: 'Smallest currency unit; always the sum of the ledger.' }),
    balance_formatted: z.string().meta({ example: '$12.34' }),
    status: z.enum(WALLET_STATUSES),
    metadata: z.record(z.string(), z.string()),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Wallet' });

export const walletTransactionObject = z
  .object({
    id: z.string().meta({ example: 'wtx_0123456789abcdefGHIJKL' }),
    object: z.literal('wallet_transaction'),
    wallet_id: z.string(),
    type: z.enum(TRANSACTION_TYPES),
    amount: z.number().int(),
    balance_before: z.number().int(),
    balance_after: z.number().int(),
    reference: z.string().nullable(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    expires_at: ts.nullable().meta({ description: 'For credits with an expiry.' }),
    created_at: ts,
  })
  .meta({ id: 'WalletTransaction' });

export const walletTopupObject = z
  .object({
    id: z.string().meta({ example: 'wtu_0123456789abcdefGHIJKL' }),
    object: z.literal('wallet_topup'),
    wallet_id: z.string(),
    amount: z.number().int(),
    currency: z.string(),
    status: z.enum(TOPUP_STATUSES),
    checkout_url: z.string(),
    payment_id: z.string(),
    transaction_id: z.string().nullable(),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'WalletTopup' });

export const webhookEndpointObject = z
  .object({
    id: z.string().meta({ example: 'we_0123456789abcdefGHIJKL' }),
    object: z.literal('webhook_endpoint'),
    url: z.string(),
    events: z.array(z.string()).meta({ description: 'Subscribed event types; empty = all.' }),
    description: z.string().nullable(),
    status: z.enum(ENDPOINT_STATUSES),
    created_at: ts,
    updated_at: ts,
    secret: z.string().optional().meta({ description: 'whsec_…: only in the create and rotate-secret responses.' }),
  })
  .meta({ id: 'WebhookEndpoint' });

export const deliveryAttemptObject = z
  .object({
    id: z.string().meta({ example: 'wda_0123456789abcdefGHIJKL' }),
    object: z.literal('delivery_attempt'),
    event_id: z.string(),
    endpoint_id: z.string(),
    status: z.enum(ATTEMPT_STATUSES),
    attempt_number: z.number().int().meta({ description: '1 to 8.' }),
    response_status: z.number().int().nullable(),
    response_body: z.string().nullable().meta({ description: 'First 64 KiB of the response.' }),
    scheduled_at: ts,
    attempted_at: ts.nullable(),
    next_retry_at: ts.nullable().meta({ description: 'When the next attempt goes out after this one failed; null after the last.' }),
    duration_ms: z.number().int().nullable(),
    created_at: ts,
  })
  .meta({ id: 'DeliveryAttempt' });

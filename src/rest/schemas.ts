// Response schemas for the OpenAPI document (documentation of what serializers return).
import { z } from 'zod';

export const errorObject = z
  .object({
    error: z.object({
      type: z.enum(['invalid_request_error', 'authentication_error', 'wallet_error', 'state_error', 'idempotency_error', 'rate_limit_error', 'api_error']),
      code: z.string().meta({ example: 'parameter_missing' }),
      message: z.string(),
      param: z.string().nullable(),
      request_id: z.string().meta({ example: 'req_0123456789abcdefGHIJKL' }),
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

export const customerWithEmbedsObject = customerObject
  .extend({
    subscriptions: z.array(z.unknown()).meta({ description: 'The customer’s subscriptions (full records).' }),
    payment_methods: z.array(z.unknown()).meta({ description: 'The customer’s saved payment methods (full records).' }),
  })
  .meta({ id: 'CustomerWithEmbeds' });

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

// The OpenAPI 3.1 document, generated from the route table and its zod schemas (JSON Schema
// 2020-12 is OpenAPI 3.1's schema dialect, which z.toJSONSchema emits). Nothing is hand-written
// per endpoint but a route's own request `example` and `conflict`; a test checks that every route
// appears and every schema is well-formed. Examples (test/openapi.examples.test.ts): request bodies
// from the route or its required fields, responses sampled from the schemas' field examples, one
// error example per status made by the error class that answers it, the configured origin in
// every absolute address. `webhooks`: one entry per event type (test/openapi.webhooks.test.ts).
import { z } from 'zod';
import { sample } from 'openapi-sampler';
import type { RouteDef } from './route.ts';
import { openApiOverrides } from '../platform/validation.ts';
import {
  AuthenticationError, errorBody, HttpError, IdempotencyError, InsufficientBalanceError, InternalError, NotFoundError,
  PaymentFailedError, RateLimitError, ServiceUnavailableError, StateError, ValidationError, type AppError,
} from '../platform/errors.ts';
import { exampleId, type IdKind } from '../platform/ids.ts';
import { MAX_BODY_BYTES } from '../platform/limits.ts';
import {
  balanceTransactionObject, customerObject, deletedCustomerObject, errorObject, EXAMPLE_ORIGIN, invoiceObject, paymentMethodObject,
  couponObject, paymentObject, planObject, refundObject, setupIntentObject, subscriptionObject, upcomingInvoiceObject, walletObject, creditNoteObject,
  walletTopupObject, walletTransactionObject, webhookEndpointObject, accountObject,
} from './schemas.ts';
import { EVENT_TYPES, type EventType } from '../domain/events/types.ts';

type JsonSchema = Record<string, unknown>;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (parameter_missing, parameter_invalid, parameter_unknown, invalid_json, amount_too_large).',
  401: 'Missing or invalid credentials (unauthorized).',
  402: 'Insufficient wallet balance (wallet_error), or a charge asked for now failed (card_error, with last_payment_error).',
  404: 'No such record (resource_missing), also for another merchant’s ids.',
  409: 'The record’s state does not allow this, or an idempotency conflict.',
  413: 'Body larger than 1 MiB (body_too_large).',
  415: 'Body is not JSON (unsupported_media_type).',
  429: 'Rate limited.',
  500: 'Internal error (internal_error); the request id identifies it in the logs.',
  503: 'The database cannot be reached or no connection came free in time (service_unavailable); nothing was written. Retry after Retry-After seconds.',
};

const TAG_DESCRIPTIONS: Record<string, string> = {
  Customers: 'The people and companies that pay you. Deleting one is a soft delete.',
  'Payment methods': 'Saved cards and mobile-money numbers: a setup intent’s hosted page saves one (nothing is charged), payments charge it later off-session with payment_method_id.',
  'Customer portal': 'A hosted page where a customer manages their own details, saved methods and wallets for an hour.',
  Plans: 'Prices per billing interval that subscriptions follow; archiving one stops new subscriptions.',
  Coupons: 'Percent or amount discounts applied to subscriptions (once, repeating N months, forever); deleting one stops new redemptions only.',
  'Tax rates': 'Exclusive or inclusive percentages that subscriptions apply to every line of their invoices.',
  Payments: 'One-off payments, each with a hosted checkout page the customer pays on.',
  'Invoice items': 'One-off charges waiting for the customer’s next invoice (one made by hand, or a subscription’s next one).',
  'Credit notes': 'Credits against finalised invoices: lower what an open invoice asks, or refund and credit a paid one. Numbered CN-000001 …',
  Refunds: 'Full or partial refunds of succeeded payments.',
  Wallets: 'Prepaid credit: a balance per customer and currency that always equals the sum of its ledger.',
  'Webhook endpoints': 'Where events are delivered, signed the Standard Webhooks way.',
  Events: 'Every change, in order, with its delivery attempts and replay.',
  'Customer emails': 'Receipts, failed payments and trial ends told to customers by e-mail: which ones are sent (docs/emails.md).',
  Account: 'The merchant’s own settings: name and branding of the hosted pages and invoice PDFs.',
  'Test helpers': 'Test mode only: finish checkouts as a customer would, move the merchant’s clock, read the dev mailbox.',
};

/**
 * Each event type's `data.object`: the record as the API returns it. A Record over EventType, so
 * a new event type does not compile until it is given its payload here (and a test compares this
 * with docs/conventions.md).
 */
export const EVENT_OBJECTS: Record<EventType, z.ZodType> = {
  'payment.created': paymentObject,
  'payment.succeeded': paymentObject,
  'payment.failed': paymentObject,
  'payment.cancelled': paymentObject,
  'payment.expired': paymentObject,
  'refund.created': refundObject,
  'refund.succeeded': refundObject,
  'refund.failed': refundObject,
  'customer.created': customerObject,
  'customer.updated': customerObject,
  'customer.deleted': deletedCustomerObject,
  'customer.balance_changed': balanceTransactionObject,
  'account.updated': accountObject,
  'setup_intent.succeeded': setupIntentObject,
  'payment_method.attached': paymentMethodObject,
  'payment_method.detached': paymentMethodObject,
  'plan.created': planObject,
  'plan.archived': planObject,
  'coupon.created': couponObject,
  'coupon.deleted': couponObject,
  'subscription.created': subscriptionObject,
  'subscription.updated': subscriptionObject,
  'subscription.paused': subscriptionObject,
  'subscription.resumed': subscriptionObject,
  'subscription.cancelled': subscriptionObject,
  'subscription.reactivated': subscriptionObject,
  'subscription.trial_will_end': subscriptionObject,
  'invoice.created': invoiceObject,
  'invoice.finalized': invoiceObject,
  'invoice.paid': invoiceObject,
  'invoice.payment_failed': invoiceObject,
  'invoice.voided': invoiceObject,
  'invoice.upcoming': upcomingInvoiceObject,
  'invoice.overdue': invoiceObject,
  'invoice.marked_uncollectible': invoiceObject,
  'credit_note.created': creditNoteObject,
  'wallet.created': walletObject,
  'wallet.frozen': walletObject,
  'wallet.unfrozen': walletObject,
  'wallet.closed': walletObject,
  'wallet.debited': walletTransactionObject,
  'wallet.credited': walletTransactionObject,
  'wallet.topup.succeeded': walletTopupObject,
  'wallet.credit.expired': walletTransactionObject,
  'webhook_endpoint.disabled': webhookEndpointObject,
};

/** The Standard Webhooks headers of every delivery (docs/webhooks.md). */
const WEBHOOK_HEADERS = [
  { name: 'webhook-id', description: 'The event id: the same on every attempt — deduplicate by it.', example: exampleId('event') },
  { name: 'webhook-timestamp', description: 'Unix seconds when the attempt was sent (real time).', example: '1795953600' },
  {
    name: 'webhook-signature',
    description: 'v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}"> keyed by the base64-decoded part of the endpoint’s whsec_ secret; two, space-separated, during a rotation.',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
];

/** The record a path's `{id}` names: its id kind (for the example) and its name in a 404. */
const RESOURCES: Record<string, [IdKind, string]> = {
  customers: ['customer', 'customer'],
  'setup-intents': ['setup_intent', 'setup intent'],
  'payment-methods': ['payment_method', 'payment method'],
  payments: ['payment', 'payment'],
  refunds: ['refund', 'refund'],
  wallets: ['wallet', 'wallet'],
  'wallet-topups': ['wallet_topup', 'wallet top-up'],
  plans: ['plan', 'plan'],
  subscriptions: ['subscription', 'subscription'],
  invoices: ['invoice', 'invoice'],
  coupons: ['coupon', 'coupon'],
  'tax-rates': ['tax_rate', 'tax rate'],
  'invoice-items': ['invoice_item', 'invoice item'],
  'credit-notes': ['credit_note', 'credit note'],
  'webhook-endpoints': ['webhook_endpoint', 'webhook endpoint'],
  events: ['event', 'event'],
};

/** Body fields naming another record, for a 404 example of an operation without `{id}`. */
const REFERENCES: Record<string, [IdKind, string]> = {
  customer_id: ['customer', 'customer'],
  payment_id: ['payment', 'payment'],
  plan_id: ['plan', 'plan'],
  payment_method_id: ['payment_method', 'payment method'],
  invoice_id: ['invoice', 'invoice'],
};

/** The record of a path with `{id}` (the segment before it). */
export function resourceOfPath(path: string): [IdKind, string] | null {
  const parts = path.split('/');
  const i = parts.indexOf('{id}');
  if (i < 1) return null;
  const r = RESOURCES[parts[i - 1]!];
  if (!r) throw new Error(`openapi: no resource known for ${path} (add it to RESOURCES)`);
  return r;
}

type Schema = Record<string, any>;

/** A copy of `schema` in which every nullable field (anyOf with null) has the example null. */
function preferNull<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(preferNull) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) out[k] = preferNull(v);
  const nullable = (Array.isArray(out.anyOf) && out.anyOf.some((b: Schema) => b?.type === 'null')) || (Array.isArray(out.type) && out.type.includes('null'));
  if (nullable && out.example === undefined) out.example = null;
  return out as T;
}
const REQUEST_ID = exampleId('request');
const example = (err: AppError) => errorBody(err, REQUEST_ID);

/**
 * One example body per error status of an operation, each made by the error class that answers
 * it (so the code, type, message and extra fields are what the service really sends).
 */
function errorExamples(r: RouteDef, status: number, body: Schema | undefined, queryNames: string[], requiredQuery: string[]): Record<string, { summary: string; value: unknown }> {
  const M = r.method.toUpperCase();
  const one = (summary: string, err: AppError) => ({ [err.code]: { summary, value: example(err) } });
  switch (status) {
    case 400: {
      const required: string[] = [...requiredQuery, ...(body?.required ?? [])];
      if (required.length > 0) return one('A required parameter is missing', new ValidationError('parameter_missing', `Missing required parameter: ${required[0]}.`, required[0]!));
      if (queryNames.includes('limit')) return one('A parameter is invalid', new ValidationError('parameter_invalid', 'Invalid limit: must be an integer between 1 and 100.', 'limit'));
      return one('An unknown parameter', new ValidationError('parameter_unknown', 'Received unknown parameter: expand.', 'expand'));
    }
    case 401:
      return one('Missing or wrong credentials', new AuthenticationError());
    case 402:
      return r.path.startsWith('/v1/invoices/')
        ? one('The charge failed', new PaymentFailedError(exampleId('invoice'), { code: 'card_declined', message: 'The card was declined.' }))
        : one('Not enough balance', new InsufficientBalanceError('Insufficient balance: the wallet has $3.00, the debit needs $12.50.', 300n));
    case 404: {
      const resource = resourceOfPath(r.path);
      if (resource) return one('No such record (or another merchant’s)', new NotFoundError(resource[1], exampleId(resource[0])));
      const field = [...Object.keys(body?.properties ?? {}), ...queryNames].find((f) => REFERENCES[f]);
      if (field && M !== 'GET') {
        const [kind, name] = REFERENCES[field]!;
        return one(`No such ${name}`, new NotFoundError(name, exampleId(kind), field));
      }
      if (r.path.startsWith('/v1/test-helpers/')) return one('A live-mode merchant', new NotFoundError('test helper', null, null));
      const mistyped = r.path.replace(/s(\/|$)/, '$1');
      return one('No such URL', new HttpError(404, 'resource_missing', `Unrecognized request URL (${M}: ${mistyped}).`));
    }
    case 409: {
      const idem = new IdempotencyError(
        'idempotency_key_reused',
        `Keys for idempotent requests can only be used with the same parameters they were first used with. This key was first used for ${M} ${r.path.replace('{id}', exampleId(resourceOfPath(r.path)?.[0] ?? 'customer'))}.`,
        null,
      );
      const state = r.conflict ? one('The record’s state does not allow it', new StateError(r.conflict.code, r.conflict.message, r.conflict.param ?? null)) : {};
      return { ...state, ...one('The Idempotency-Key was used with another body', idem) };
    }
    case 413:
      return one('Body too large', new HttpError(413, 'body_too_large', `The request body is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB.`));
    case 415:
      return one('Body not JSON', new HttpError(415, 'unsupported_media_type', 'Request bodies must be JSON (UTF-8), sent with Content-Type: application/json.'));
    case 429:
      return one('Rate limited', new RateLimitError(1));
    case 500:
      return one('Internal error', new InternalError());
    case 503:
      return one('Database unavailable', new ServiceUnavailableError());
    default:
      throw new Error(`openapi: no error example for status ${status}`);
  }
}

export function buildOpenApi(routes: RouteDef[], opts: { serverUrl: string; version: string }) {
  const components: Record<string, JsonSchema> = {};

  // Registered schemas (those with .meta({id})) become components, referenced everywhere else.
  const convert = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const generated = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any', reused: 'inline', cycles: 'ref',
      override: (c) => {
        const replacement = openApiOverrides.get(c.zodSchema as unknown as z.ZodType);
        if (!replacement) return;
        for (const k of Object.keys(c.jsonSchema)) delete (c.jsonSchema as Record<string, unknown>)[k];
        Object.assign(c.jsonSchema, replacement);
      },
    });
    // Schemas with a .meta({ id }) land in $defs; in OpenAPI they are components.
    const out = JSON.parse(JSON.stringify(generated).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema & {
      $defs?: Record<string, JsonSchema>;
      $schema?: string;
    };
    const { $schema: _s, $defs, ...rest } = out;
    for (const [k, v] of Object.entries($defs ?? {})) components[k] = v;
    // A schema registered under an id comes back as a $ref to its own $defs entry (now a
    // component); one that is not yet there is inlined, and becomes the component here.
    const id = (schema.meta?.() as { id?: string } | undefined)?.id;
    if (id) {
      const ref = `#/components/schemas/${id}`;
      if (rest.$ref !== ref) {
        const { id: _id, ...body } = rest as JsonSchema & { id?: string };
        components[id] = body;
      }
      return { $ref: ref };
    }
    return rest;
  };

  const paths: Record<string, Record<string, unknown>> = {};
  const errorRef = convert(errorObject, 'output');
  // Work that needs every component: examples sampled from schemas, which may be $refs.
  const later: (() => void)[] = [];
  const spec = { components: { schemas: components } };
  // A record as the API returns it when just made: nullable fields null (a new payment has no
  // failure, a draft invoice no number), the rest from the schemas' examples.
  let nullFirst: Schema | undefined;
  const sampleRecord = (schema: Schema) => {
    nullFirst ??= preferNull(spec);
    return sample(preferNull(schema), { skipReadOnly: true }, nullFirst);
  };
  const resolve = (schema: Schema | undefined): Schema | undefined =>
    typeof schema?.$ref === 'string' ? components[schema.$ref.slice('#/components/schemas/'.length)] : schema;
  for (const r of routes) {
    const parameters: unknown[] = [];
    for (const [where, schema] of [['path', r.params], ['query', r.query]] as const) {
      if (!schema) continue;
      const shape = (schema as z.ZodObject).shape as Record<string, z.ZodType>;
      for (const [name, field] of Object.entries(shape)) {
        const optional = field.safeParse(undefined).success;
        const js = convert(field, 'input');
        const resource = where === 'path' && name === 'id' ? resourceOfPath(r.path) : null;
        parameters.push({
          name,
          in: where,
          required: where === 'path' ? true : !optional,
          ...(typeof js.description === 'string' ? { description: js.description } : {}),
          ...(resource ? { example: exampleId(resource[0]) } : {}),
          schema: js,
        });
      }
    }
    const method = r.method;
    const statuses = new Set([400, 401, 404, 429, 500, 503, ...(r.errors ?? [])]);
    if (method !== 'get') {
      statuses.add(409);
      statuses.add(413);
      statuses.add(415);
    }
    if (r.method !== 'get' && r.path.includes('{id}')) statuses.add(409);
    const responses: Record<string, unknown> = {
      [r.response.status]:
        r.response.status === 302
          ? { description: r.response.description, headers: { Location: { description: 'Where to go.', schema: { type: 'string', format: 'uri' } } } }
          : { description: r.response.description, content: { 'application/json': { schema: convert(r.response.schema, 'output') } } },
    };
    if (r.response.also) {
      responses[r.response.also.status] = {
        description: r.response.also.description,
        content: { 'application/json': { schema: convert(r.response.schema, 'output') } },
      };
    }
    const bodySchema = method !== 'get' && method !== 'delete' ? (r.body ? convert(r.body, 'input') : { type: 'object', additionalProperties: false }) : undefined;
    const queryNames = r.query ? Object.keys((r.query as z.ZodObject).shape) : [];
    const requiredQuery = (parameters as { name: string; in: string; required: boolean }[]).filter((p) => p.in === 'query' && p.required).map((p) => p.name);
    for (const s of [...statuses].sort()) {
      // Examples are filled in once every component exists (below): a body may be a $ref.
      responses[s] = { description: ERROR_DESCRIPTIONS[s] ?? 'Error.', content: { 'application/json': { schema: errorRef } } };
      later.push(() => {
        const examples = errorExamples(r, s, resolve(bodySchema), queryNames, requiredQuery);
        const media = (responses[s] as { content: Record<string, Schema> }).content['application/json']!;
        const list = Object.values(examples);
        if (list.length === 1) media.example = list[0]!.value;
        else media.examples = examples;
      });
    }
    for (const [status, res] of Object.entries(responses)) {
      const media = (res as { content?: Record<string, Schema> }).content?.['application/json'];
      if (media && Number(status) < 400) later.push(() => (media.example = sampleRecord(media.schema)));
    }
    const op: Record<string, unknown> = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: [r.tag],
      parameters: [
        ...parameters,
        ...(method !== 'get'
          ? [{
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: 'Up to 255 characters. Retries with the same key and body within 24 h return the first response (Idempotent-Replayed: true).',
              schema: { type: 'string', maxLength: 255 },
            }]
          : []),
      ],
      responses,
    };
    if (bodySchema) {
      const media: Schema = { schema: bodySchema };
      op.requestBody = { required: !!r.body && !r.body.safeParse({}).success, content: { 'application/json': media } };
      // The body the reference prefills: the route's own working example, or the required fields.
      later.push(() => (media.example = r.example ?? sample(bodySchema, { skipNonRequired: true, skipReadOnly: true }, spec)));
    }
    (paths[r.path] ??= {})[method] = op;
  }

  // One webhook per event type (OpenAPI 3.1): the event envelope with its type and its data.object,
  // so a generator gives typed handlers (openapi-typescript: webhooks['payment.succeeded']).
  const webhooks: Record<string, unknown> = {};
  for (const type of EVENT_TYPES) {
    const object = convert(EVENT_OBJECTS[type], 'output');
    const schema: Schema = {
      type: 'object',
      properties: {
        id: { type: 'string', example: exampleId('event') },
        object: { type: 'string', const: 'event' },
        type: { type: 'string', const: type },
        created_at: { type: 'string', format: 'date-time', example: '2026-11-24T12:00:00.000Z' },
        data: {
          type: 'object',
          properties: {
            object,
            previous_attributes: { type: 'object', additionalProperties: {}, description: 'Changed fields with their values before the change (status changes and updates).', example: { status: 'created' } },
          },
          required: ['object'],
          additionalProperties: false,
        },
      },
      required: ['id', 'object', 'type', 'created_at', 'data'],
      additionalProperties: false,
    };
    const media: Schema = { schema };
    later.push(() => {
      const value = sampleRecord(schema) as { data: Record<string, unknown> };
      delete value.data.previous_attributes;
      media.example = value;
    });
    webhooks[type] = {
      post: {
        operationId: `on_${type.replaceAll('.', '_')}`,
        summary: type,
        description: `Sent to endpoints subscribed to \`${type}\` (or to every type), signed the Standard Webhooks way; the body is the event exactly as \`GET /v1/events/{id}\` returns it.`,
        tags: ['Webhook events'],
        security: [],
        parameters: WEBHOOK_HEADERS.map((h) => ({ name: h.name, in: 'header', required: true, description: h.description, example: h.example, schema: { type: 'string' } })),
        requestBody: { required: true, content: { 'application/json': media } },
        responses: {
          '200': { description: 'Any 2xx acknowledges the delivery. Anything else, or no answer within WEBHOOK_TIMEOUT_MS, is retried (8 attempts over about 28 hours).' },
        },
      },
    };
  }

  for (const fill of later) fill();

  const doc = {
    openapi: '3.1.0',
    info: {
      title: 'Billing API',
      version: opts.version,
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        'Payments with a hosted checkout, refunds, customers, prepaid wallets with a ledger, webhooks and events. Authenticate with HTTP Basic ' +
        '(client id as username, client secret as password). Amounts are integers in the smallest currency unit. ' +
        'Every error has the body `{"error": {type, code, message, param, request_id}}`. The same operations are ' +
        'available over GraphQL at /graphql.',
    },
    servers: [{ url: opts.serverUrl }],
    security: [{ basicAuth: [] }],
    tags: [
      ...[...new Set(routes.map((r) => r.tag))].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name })),
      { name: 'Webhook events', description: 'What your webhook endpoint receives: one entry per event type, its body the event with that type’s data.object (docs/webhooks.md).' },
    ],
    paths,
    webhooks,
    components: {
      securitySchemes: { basicAuth: { type: 'http', scheme: 'basic' } },
      schemas: components,
    },
  };
  // Absolute addresses of this service in examples are the configured origin's.
  return JSON.parse(JSON.stringify(doc).replaceAll(EXAMPLE_ORIGIN, opts.serverUrl)) as typeof doc;
}

// The OpenAPI 3.1 document, generated from the route table and its zod schemas (JSON Schema
// 2020-12 is OpenAPI 3.1's schema dialect, which z.toJSONSchema emits). Nothing is hand-written
// per endpoint; a test checks that every route appears and every schema is well-formed.
import { z } from 'zod';
import type { RouteDef } from './route.ts';
import { openApiOverrides } from '../platform/validation.ts';
import { errorObject } from './schemas.ts';

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
  Payments: 'One-off payments, each with a hosted checkout page the customer pays on.',
  Refunds: 'Full or partial refunds of succeeded payments.',
  Wallets: 'Prepaid credit: a balance per customer and currency that always equals the sum of its ledger.',
  'Webhook endpoints': 'Where events are delivered, signed the Standard Webhooks way.',
  Events: 'Every change, in order, with its delivery attempts and replay.',
  'Customer emails': 'Receipts, failed payments and trial ends told to customers by e-mail: which ones are sent (docs/emails.md).',
  Account: 'The merchant’s own settings: name and branding of the hosted pages and invoice PDFs.',
  'Test helpers': 'Test mode only: finish checkouts as a customer would, move the merchant’s clock, read the dev mailbox.',
};

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
  for (const r of routes) {
    const parameters: unknown[] = [];
    for (const [where, schema] of [['path', r.params], ['query', r.query]] as const) {
      if (!schema) continue;
      const shape = (schema as z.ZodObject).shape as Record<string, z.ZodType>;
      for (const [name, field] of Object.entries(shape)) {
        const optional = field.safeParse(undefined).success;
        const js = convert(field, 'input');
        parameters.push({
          name,
          in: where,
          required: where === 'path' ? true : !optional,
          ...(typeof js.description === 'string' ? { description: js.description } : {}),
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
    for (const s of [...statuses].sort()) {
      responses[s] = { description: ERROR_DESCRIPTIONS[s] ?? 'Error.', content: { 'application/json': { schema: errorRef } } };
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
    if (method !== 'get' && method !== 'delete') {
      const bodySchema = r.body ? convert(r.body, 'input') : { type: 'object', additionalProperties: false };
      op.requestBody = { required: !!r.body && !r.body.safeParse({}).success, content: { 'application/json': { schema: bodySchema } } };
    }
    (paths[r.path] ??= {})[method] = op;
  }

  return {
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
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name })),
    paths,
    components: {
      securitySchemes: { basicAuth: { type: 'http', scheme: 'basic' } },
      schemas: components,
    },
  };
}

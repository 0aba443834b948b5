// The same bad value gets the same message on REST and on GraphQL — in the project's words, not
// zod's default English ("Too big: expected string to have <=254 characters") — with the field as
// each surface names it (REST `limit` / `default_payment_method_id`, GraphQL `first` /
// `defaultPaymentMethodId`). One mapping does it: the error map `parse` hands zod
// (issueMessage in src/platform/validation.ts), which REST and GraphQL input both go through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueMessage, parse, z } from '../src/platform/validation.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let m: Client;
let customer: any;
let endpoint: any;

beforeAll(async () => {
  app = await startApp({}, { worker: false });
  m = await app.merchant();
  customer = (await m.post('/v1/customers', { email: 'same@example.com' })).body;
  endpoint = (await m.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/x' })).body;
});
afterAll(() => app?.close());

const ZOD_DEFAULT = /Too big|Too small|Invalid option|Invalid input|expected (string|number|array|one of)|<=|>=/;
const long = (n: number, c = 'a') => c.repeat(n);

/** A REST error and the GraphQL one for the same value: same code and message, the param as each surface spells it. */
function expectSame(rest: any, gql: { message: string; code: string; param: string | null }, restParam: string, gqlParam: string, message: string) {
  expect(rest.error, JSON.stringify(rest)).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: restParam, message: `Invalid ${restParam}: ${message}` });
  expect(gql).toEqual({ code: 'parameter_invalid', param: gqlParam, message: `Invalid ${gqlParam}: ${message}` });
  expect(rest.error.message).not.toMatch(ZOD_DEFAULT);
}

/** A query error (a list argument) as { code, message, param }. */
async function queryError(query: string, variables: Record<string, unknown>) {
  const r = await m.gql(query, variables);
  expect(r.errors, JSON.stringify(r)).toHaveLength(1);
  const e = r.errors![0];
  return { code: e.extensions.code, message: e.message, param: e.extensions.param ?? null };
}

/** A mutation's error member as { code, message, param }. */
async function mutationError(field: string, query: string, variables: Record<string, unknown>) {
  const r = await m.gql(query, variables);
  expect(r.errors, JSON.stringify(r)).toBeUndefined();
  const { code, message, param } = r.data[field];
  return { code, message, param };
}

describe('REST and GraphQL say the same for the same bad value', () => {
  it('a too-long email in the customers list filter (customers(email:))', async () => {
    const email = `${long(250)}@example.com`;
    expectSame(
      (await m.get(`/v1/customers?email=${email}`)).body,
      await queryError('query($e: String) { customers(email: $e) { edges { cursor } } }', { e: email }),
      'email',
      'email',
      'must be at most 254 characters.',
    );
    // the same words as creating a customer with it (whose schema says it itself)
    expect((await m.post('/v1/customers', { email })).body.error.message).toBe('Invalid email: must be at most 254 characters.');
  });

  it('a too-long description in a mutation input (createWebhookEndpoint)', async () => {
    const description = long(501, 'd');
    expectSame(
      (await m.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/y', description })).body,
      await mutationError('createWebhookEndpoint', 'mutation($d: String) { createWebhookEndpoint(input: { url: "https://hooks.example.com/y", description: $d }) { ... on Error { code message param } } }', { d: description }),
      'description',
      'description',
      'must be at most 500 characters.',
    );
  });

  it('a too-long id in a camelCase input field (updateCustomer.defaultPaymentMethodId)', async () => {
    const id = `pm_${long(70)}`;
    expectSame(
      (await m.patch(`/v1/customers/${customer.id}`, { default_payment_method_id: id })).body,
      await mutationError('updateCustomer', 'mutation($i: UpdateCustomerInput!) { updateCustomer(input: $i) { ... on Error { code message param } } }', { i: { id: customer.id, defaultPaymentMethodId: id } }),
      'default_payment_method_id',
      'defaultPaymentMethodId',
      'must be at most 64 characters.',
    );
  });

  it('an enum-like string (a webhook event type, a String on GraphQL checked against the catalogue)', async () => {
    const rest = (await m.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/z', events: ['customer.created', 'customer.exploded'] })).body;
    const gql = await mutationError('createWebhookEndpoint', 'mutation($e: [String!]) { createWebhookEndpoint(input: { url: "https://hooks.example.com/z", events: $e }) { ... on Error { code message param } } }', {
      e: ['customer.created', 'customer.exploded'],
    });
    expect(gql).toEqual({ code: rest.error.code, message: rest.error.message, param: 'events[1]' });
    expect(rest.error.param).toBe('events[1]');
  });

  it('an out-of-range first is REST’s limit, named first', async () => {
    for (const n of [0, 101]) {
      const rest = (await m.get(`/v1/webhook-endpoints/${endpoint.id}/delivery-attempts?limit=${n}`)).body;
      const gql = await queryError('query($id: ID!, $n: Int) { webhookEndpoint(id: $id) { deliveryAttempts(first: $n) { edges { cursor } } } }', { id: endpoint.id, n });
      expect(rest.error).toMatchObject({ code: 'parameter_invalid', param: 'limit', message: 'Invalid limit: must be an integer between 1 and 100.' });
      expect(gql).toEqual({ code: 'parameter_invalid', param: 'first', message: 'Invalid first: must be an integer between 1 and 100.' });
    }
  });

  it('a too-long search, and an event type filter too long for its pattern', async () => {
    const search = long(101, 's');
    expectSame(
      (await m.get(`/v1/customers?search=${search}`)).body,
      await queryError('query($s: String) { customers(search: $s) { edges { cursor } } }', { s: search }),
      'search',
      'search',
      'must be at most 100 characters.',
    );
    const type = long(300, 't');
    const rest = (await m.get(`/v1/events?type=${type}`)).body;
    const gql = await queryError('query($t: String) { events(type: $t) { edges { cursor } } }', { t: type });
    expect(gql).toEqual({ code: rest.error.code, message: rest.error.message, param: 'type' });
    expect(rest.error.message).not.toMatch(ZOD_DEFAULT);
  });

  it('a value outside an enum: REST’s words on GraphQL too, for a variable and a field of an input variable', async () => {
    const rest = (await m.get(`/v1/webhook-endpoints/${endpoint.id}/delivery-attempts?status=paused`)).body;
    expect(rest.error).toMatchObject({ code: 'parameter_invalid', param: 'status', message: "Invalid status: must be one of 'failed', 'pending', 'succeeded'." });
    expectSame(
      rest,
      await queryError('query($id: ID!, $status: DeliveryAttemptStatus) { webhookEndpoint(id: $id) { deliveryAttempts(status: $status) { edges { cursor } } } }', { id: endpoint.id, status: 'paused' }),
      'status',
      'status',
      "must be one of 'failed', 'pending', 'succeeded'.",
    );
    expect((await m.get('/v1/wallets?status=nope')).body.error.message).toBe("Invalid status: must be one of 'active', 'closed', 'frozen'.");
    // In an input object variable the param is the field's path in it (GraphQL's names).
    const plan = (await m.post('/v1/plans', { name: 'p', amount: 100, currency: 'USD', interval: 'fortnight' })).body;
    const gql = await queryError('mutation($input: CreatePlanInput!) { createPlan(input: $input) { __typename } }', { input: { name: 'p', amount: 100, currency: 'USD', interval: 'fortnight' } });
    expect(plan.error).toMatchObject({ code: 'parameter_invalid', param: 'interval', message: "Invalid interval: must be one of 'day', 'month', 'week', 'year'." });
    expect(gql).toEqual({ code: 'parameter_invalid', param: 'input[interval]', message: "Invalid input[interval]: must be one of 'day', 'month', 'week', 'year'." });
    const upd = await queryError('mutation($i: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(input: $i) { __typename } }', { i: { id: endpoint.id, status: 'paused' } });
    expect(upd).toEqual({ code: 'parameter_invalid', param: 'i[status]', message: "Invalid i[status]: must be one of 'active', 'disabled'." });
    // A literal in the document is a document error: GraphQL's own words.
    const lit = await queryError('{ webhookEndpoints { edges { node { deliveryAttempts(status: paused) { edges { cursor } } } } } }', {});
    expect(lit).toMatchObject({ code: 'invalid_query', message: expect.stringMatching(/^Value "paused" does not exist in "DeliveryAttemptStatus" enum/) });
  });
});

describe('issueMessage: the words for checks a schema states without its own', () => {
  const msg = (schema: z.ZodType, value: unknown) => {
    try {
      parse(z.strictObject({ f: schema }), { f: value });
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  };
  it('words each kind of zod issue, and a schema’s own message still wins', () => {
    expect(msg(z.string().max(3), 'abcd')).toBe('Invalid f: must be at most 3 characters.');
    expect(msg(z.string().min(2), 'a')).toBe('Invalid f: must be at least 2 characters.');
    expect(msg(z.string().min(1), '')).toBe('Invalid f: must not be empty.');
    expect(msg(z.array(z.string()).max(2), ['a', 'b', 'c'])).toBe('Invalid f: must have at most 2 items.');
    expect(msg(z.array(z.string()).min(1), [])).toBe('Invalid f: must not be empty.');
    expect(msg(z.number().max(10), 11)).toBe('Invalid f: must be at most 10.');
    expect(msg(z.number().gt(0), 0)).toBe('Invalid f: must be more than 0.');
    expect(msg(z.number().int(), 1.5)).toBe('Invalid f: must be an integer.');
    expect(msg(z.string(), 5)).toBe('Invalid f: must be a string.');
    expect(msg(z.boolean(), 'yes')).toBe('Invalid f: must be true or false.');
    expect(msg(z.enum(['a', 'b']), 'c')).toBe("Invalid f: must be one of 'a', 'b'.");
    expect(msg(z.literal('x'), 'y')).toBe("Invalid f: must be 'x'.");
    expect(msg(z.email(), 'nope')).toBe('Invalid f: must be a valid email address.');
    expect(msg(z.string().startsWith('we_'), 'x')).toBe("Invalid f: must start with 'we_'.");
    expect(msg(z.number().multipleOf(5), 7)).toBe('Invalid f: must be a multiple of 5.');
    expect(msg(z.string().max(3, { error: 'is too long for a code' }), 'abcd')).toBe('Invalid f: is too long for a code.');
    for (const code of ['invalid_type', 'too_big', 'too_small', 'invalid_value', 'invalid_format', 'not_multiple_of', 'invalid_union', 'invalid_key', 'invalid_element'] as const) {
      expect(issueMessage({ code, input: 1, path: [], maximum: 1, minimum: 1, origin: 'number', inclusive: true, expected: 'string', values: [1], format: 'email', divisor: 2 } as any), code).toMatch(/^(must|is|has) /);
    }
  });
});

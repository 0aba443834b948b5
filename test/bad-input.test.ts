// Hostile input on every operation of the route table and on GraphQL: NUL characters in path ids,
// query values, body strings and metadata keys; impossible dates; absurd nesting; LIKE patterns;
// broken percent-encoding. Each gets a 4xx with the documented error body and param — never a
// 500. The list of operations comes from the route table, so a new route is covered by itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { routes } from '../src/rest/index.ts';
import { send, startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
});
afterAll(() => app?.close());

const concrete = (path: string, id = 'cus_0123456789abcdefGHIJKL') => path.replace(/\{[a-z_]+\}/g, id);

function expectError(r: { status: number; body: any; text: string }, param: string | null, what: string) {
  expect(r.status, `${what}: ${r.text}`).toBeGreaterThanOrEqual(400);
  expect(r.status, `${what}: ${r.text}`).toBeLessThan(500);
  expect(r.body.error, what).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param });
  expect(r.body.error.request_id, what).toMatch(/^req_/);
  expect(r.text, what).not.toMatch(/prisma|postgres|at .*\.ts:\d+/i);
}

describe('NUL and other text PostgreSQL cannot store', () => {
  it('in a path id, on every route with one', async () => {
    let n = 0;
    for (const r of routes.filter((r) => r.path.includes('{id}'))) {
      const res = await api.request(r.method.toUpperCase(), concrete(r.path, 'cus_%00abc'), r.method === 'get' ? undefined : {});
      expectError(res, 'id', `${r.method} ${r.path}`);
      n++;
    }
    expect(n).toBeGreaterThanOrEqual(15);
  });

  it('in a query value, for every parameter of every list', async () => {
    let n = 0;
    for (const r of routes.filter((r) => r.method === 'get' && r.query)) {
      for (const key of Object.keys((r.query as z.ZodObject).shape)) {
        const res = await api.get(`${concrete(r.path)}?${key}=a%00b`);
        expectError(res, key, `${r.path}?${key}`);
        n++;
      }
    }
    expect(n).toBeGreaterThanOrEqual(20);
  });

  it('in a body string, a nested value or a metadata key, on every operation with a body', async () => {
    let n = 0;
    for (const r of routes.filter((r) => r.method !== 'get' && r.method !== 'delete')) {
      const path = concrete(r.path);
      expectError(await api.request(r.method.toUpperCase(), path, { description: 'a\u0000b' }), 'description', `${r.path} body`);
      expectError(await api.request(r.method.toUpperCase(), path, { metadata: { order: 'x\u0000' } }), 'metadata[order]', `${r.path} metadata value`);
      expectError(await api.request(r.method.toUpperCase(), path, { metadata: { 'a\u0000b': 'x' } }), 'metadata', `${r.path} metadata key`);
      expectError(await api.request(r.method.toUpperCase(), path, '{"name":"\\ud800"}'), 'name', `${r.path} lone surrogate`);
      n++;
    }
    expect(n).toBeGreaterThanOrEqual(15);
    // and nothing was written
    expect((await api.get('/v1/customers')).body.data).toEqual([]);
  });

  it('answers broken percent-encoding without a 500 (the raw text is taken as it is)', async () => {
    for (const path of ['/v1/customers/%E0%A4%A', '/v1/customers/%ff', '/v1/customers?email=%ff', '/v1/customers?email=%E0%A4%A', '/v1/events?type=%', '/v1/payments?currency=%C0%80']) {
      const r = await api.get(path);
      expect(r.status, `${path}: ${r.text}`).toBeLessThan(500);
      expect(typeof r.body, path).toBe('object');
    }
  });
});

describe('timestamps', () => {
  it('refuses impossible dates and years outside 1970..9999 on every filter and field', async () => {
    const bad = ['0000-01-01', '1969-12-31T23:59:59Z', '2030-02-30T00:00:00Z', '2030-13-01', '2030-01-01T24:00:00Z', '2030-01-01T10:61:00Z', '2030-01-01T10:00:00+25:00', '10000-01-01', 'tomorrow'];
    for (const r of routes.filter((r) => r.method === 'get' && r.query && 'created_after' in (r.query as z.ZodObject).shape)) {
      for (const v of bad) expectError(await api.get(`${concrete(r.path)}?created_after=${encodeURIComponent(v)}`), 'created_after', `${r.path} ${v}`);
    }
    const cus = (await api.post('/v1/customers', { email: 'ts@example.com' })).body;
    const w = (await api.post('/v1/wallets', { customer_id: cus.id, currency: 'USD' })).body;
    for (const v of bad) {
      const r = await api.post(`/v1/wallets/${w.id}/credit`, { amount: 5, description: 'x', reference: `r-${v}`, expires_at: v });
      expectError(r, 'expires_at', v);
    }
    // a real leap day and an offset are fine; without an offset the time is UTC
    const ok = await api.post(`/v1/wallets/${w.id}/credit`, { amount: 5, description: 'x', reference: 'leap', expires_at: '2032-02-29T10:00:00+02:00' });
    expect(ok.status).toBe(201);
    expect(ok.body.expires_at).toBe('2032-02-29T08:00:00.000Z');
    const utc = await api.post(`/v1/wallets/${w.id}/credit`, { amount: 5, description: 'x', reference: 'utc', expires_at: '2032-03-01T10:00' });
    expect(utc.body.expires_at).toBe('2032-03-01T10:00:00.000Z');
  });
});

describe('event type filter', () => {
  it('is an exact type or a prefix of whole segments, never a LIKE pattern', async () => {
    await api.post('/v1/customers', { email: 'like@example.com' });
    for (const type of ['%.*', '%', 'customer%', 'customer.created;drop', 'Customer.created', 'customer.', '.*']) {
      expectError(await api.get(`/v1/events?type=${encodeURIComponent(type)}`), 'type', type);
    }
    expect((await api.get('/v1/events?type=customer.*')).body.data.length).toBeGreaterThan(0);
    expect((await api.get('/v1/events?type=customer.created')).body.data.length).toBeGreaterThan(0);
    expect((await api.get('/v1/events?type=webhook_endpoint.*')).body.data).toEqual([]); // a known prefix with no event yet
    const g = await api.gql('{ events(type: "%.*") { edges { node { id } } } }');
    expect(g.errors![0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'type' });
  });

  it('refuses a type (or a prefix) the catalogue does not have, with the webhook endpoint\'s message, on both surfaces', async () => {
    const endpoint = await api.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/x', events: ['nope.nope'] });
    expectError(endpoint, 'events[0]', 'endpoint events');
    const rule = endpoint.body.error.message.replace(/^Invalid events\[0\]: /, '');
    expect(rule).toMatch(/^must be an event type of the catalogue \(\d+ types; see docs\/webhooks.md\)\.$/);
    // '_' is no wildcard; custom.* is a prefix no type starts with
    for (const type of ['nope.nope', 'customer.exploded', '_ustomer.created', 'custom.*', 'nope.*']) {
      const r = await api.get(`/v1/events?type=${encodeURIComponent(type)}`);
      expectError(r, 'type', type);
      expect(r.status).toBe(400);
      expect(r.body.error.message, type).toBe(`Invalid type: ${rule}`);
      const g = await api.gql(`{ events(type: ${JSON.stringify(type)}) { edges { node { id } } } }`);
      expect(g.data ?? null, type).toBeNull();
      expect(g.errors![0].extensions, type).toMatchObject({ code: 'parameter_invalid', param: 'type' });
      expect(g.errors![0].message, type).toBe(`Invalid type: ${rule}`);
    }
  });
});

describe('metadata keys that name object machinery', () => {
  it('__proto__, constructor and prototype are refused (400 parameter_invalid, param metadata[key]) on every operation with metadata, never dropped', async () => {
    let n = 0;
    const before = (await api.get('/v1/events?limit=100')).body.data.length;
    const doc = (await api.get('/openapi.json')).body;
    for (const r of routes.filter((r) => r.method !== 'get' && (r.body as z.ZodObject | undefined)?.shape?.metadata)) {
      // A body the route takes (the reference's example), with the key in its metadata: JSON text,
      // since an object literal would not carry __proto__ as a key.
      const example = doc.paths[r.path][r.method].requestBody?.content['application/json']?.example ?? {};
      for (const key of ['__proto__', 'constructor', 'prototype']) {
        const text = JSON.stringify({ ...example, metadata: { ok: '1', placeholder: 'x' } }).replace('"placeholder"', JSON.stringify(key));
        const res = await api.request(r.method.toUpperCase(), concrete(r.path), text);
        expectError(res, `metadata[${key}]`, `${r.method} ${r.path} ${key}`);
        expect(res.body.error.message).toContain(`metadata[${key}]`);
      }
      n++;
    }
    // customers (create, update), payments, refunds, plans, subscriptions (create, update), wallets, coupons, tax rates …
    expect(n).toBeGreaterThanOrEqual(10);
    expect((await api.get('/v1/events?limit=100')).body.data.length, 'nothing was written').toBe(before);
  });

  it('GraphQL the same, from variables and from literals', async () => {
    const q = `mutation($input: CreateCustomerInput!) { createCustomer(input: $input) { __typename ... on Error { code message param } } }`;
    const v = await api.post('/graphql', `{"query":${JSON.stringify(q)},"variables":{"input":{"email":"proto@example.com","metadata":{"__proto__":"x"}}}}`);
    expect(v.body.data.createCustomer).toEqual({ __typename: 'ValidationError', code: 'parameter_invalid', message: 'Invalid metadata[__proto__]: the key __proto__ is reserved.', param: 'metadata[__proto__]' });
    const lit = await api.gql(`mutation { createCustomer(input: {email: "proto@example.com", metadata: {constructor: "x"}}) { __typename ... on Error { code param } } }`);
    expect(lit.data.createCustomer).toEqual({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'metadata[constructor]' });
    expect((await api.get('/v1/customers?email=proto@example.com')).body.data).toEqual([]);
  });
});

describe('nested parameters have one spelling: lines[0][amount]', () => {
  it('a nested array error on two routes (zod and the domain) names the field as Stripe does, on REST and GraphQL', async () => {
    const wh = await api.post('/v1/webhook-endpoints', { url: 'https://example.com/hook', events: ['customer.created', 'nope.nope'] });
    expect(wh.body.error).toMatchObject({ code: 'parameter_invalid', param: 'events[1]' });
    expect(wh.body.error.message).toMatch(/^Invalid events\[1\]: /);
    const pay = await api.post('/v1/payments', { amount: 100, currency: 'USD', checkout: { payment_methods: ['card', 'cash'] } });
    expect(pay.body.error).toMatchObject({ code: 'parameter_invalid', param: 'checkout[payment_methods][1]' });
    const note = await api.post('/v1/credit-notes', { invoice_id: 'in_nope', lines: [{ invoice_line_id: 'il_x', amount: 5 }, { invoice_line_id: 'il_y', amount: -1 }] });
    expect(note.body.error).toMatchObject({ code: 'parameter_invalid', param: 'lines[1][amount]' });
    expect(note.body.error.message).toMatch(/^Invalid lines\[1\]\[amount\]: /);
    const unknown = await api.post('/v1/credit-notes', { invoice_id: 'in_nope', lines: [{ invoice_line_id: 'il_x', amount: 5, colour: 'red' }] });
    expect(unknown.body.error).toMatchObject({ code: 'parameter_unknown', param: 'lines[0][colour]' });
    // GraphQL: the same path in its own names.
    const g = await api.gql(`mutation { createCreditNote(input: {invoiceId: "in_nope", lines: [{invoiceLineId: "il_x", amount: -1}]}) { __typename ... on Error { code message param } } }`);
    expect(g.data.createCreditNote).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'lines[0][amount]' });
    const gm = await api.gql(`mutation { createCreditNote(input: {invoiceId: "in_nope", lines: [{invoiceLineId: "", amount: 1}]}) { __typename ... on Error { code message param } } }`);
    expect(gm.data.createCreditNote).toMatchObject({ __typename: 'ValidationError', param: 'lines[0][invoiceLineId]' });
    expect(gm.data.createCreditNote.message).toMatch(/^Invalid lines\[0\]\[invoiceLineId\]: /);
  });
});

describe('GraphQL', () => {
  const gqlRaw = (body: string) => api.post('/graphql', body);

  it('refuses NUL in variables and literals with 400 parameter_invalid and the param', async () => {
    const q = `mutation($input: CreateCustomerInput!) { createCustomer(input: $input) { __typename } }`;
    const v = await api.gql(q, { input: { email: 'n@example.com', name: 'a\u0000b' } });
    expect(v.status).toBe(400);
    expect(v.errors![0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'input[name]' });
    const lit = await api.gql('{ customer(id: "cus_\\u0000") { id } }');
    expect(lit.status).toBe(400);
    expect(lit.errors![0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'id' });
    const meta = await api.gql(q, { input: { email: 'n@example.com', metadata: { 'k\u0000': 'v' } } });
    expect(meta.errors![0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'input[metadata]' });
    expect((await api.get('/v1/customers?email=n@example.com')).body.data).toEqual([]);
  });

  it('refuses absurd nesting (variables and literals), also with an idempotencyKey, without a 500', async () => {
    const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    const body = `{"query":"mutation($m: JSON) { createCustomer(input: {email: \\"deep@example.com\\", metadata: $m, idempotencyKey: \\"deep-1\\"}) { __typename } }","variables":{"m":${deep}}}`;
    const r = await gqlRaw(body);
    expect(r.status).toBe(400);
    expect(r.body.errors![0].extensions).toMatchObject({ code: 'parameter_invalid', param: `m${'[a]'.repeat(31)}` });
    const lit = 'metadata: ' + '{a:'.repeat(3000) + '1' + '}'.repeat(3000);
    const r2 = await api.gql(`mutation { createCustomer(input: {email: "deep@example.com", ${lit}}) { __typename } }`);
    expect(r2.status).toBeLessThan(500);
    expect(r2.errors![0]).toMatchObject({ message: 'Document nesting limit of 128 exceeded.', extensions: { code: 'query_too_deep' } });
    const rest = await api.post('/v1/customers', `{"email":"deep@example.com","metadata":${deep}}`, { 'Idempotency-Key': 'deep-rest' });
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe('parameter_invalid');
  });

  it('refuses impossible DateTime values', async () => {
    const r = await api.gql('{ events(createdAfter: "2030-02-30T00:00:00Z") { edges { node { id } } } }');
    expect(r.status).toBeLessThan(500);
    expect(r.errors![0].message).toMatch(/ISO 8601/);
    const v = await api.gql('query($t: DateTime) { events(createdAfter: $t) { edges { node { id } } } }', { t: '0000-01-01' });
    expect(v.status).toBeLessThan(500);
    expect(v.errors![0].message).toMatch(/1970/);
  });

  it('node(id:) of a well-formed id that names nothing is null, not an internal error', async () => {
    for (const id of ['cus_0000000000000000000000', 'pay_0000000000000000000000', 'wtx_0000000000000000000000', 'evt_0000000000000000000000', 'we_0000000000000000000000']) {
      const r = await api.gql(`{ node(id: "${id}") { id } }`);
      expect(r.errors, id).toBeUndefined();
      expect(r.data.node, id).toBeNull();
    }
  });

  it('a text/plain POST gets the JSON error body (415)', async () => {
    const r = await send(`${app.url}/graphql`, { method: 'POST', headers: { authorization: api.auth, 'content-type': 'text/plain' }, body: '{"query":"{ __typename }"}' });
    expect(r.status).toBe(415);
    expect(r.body.errors![0].extensions.code).toBe('unsupported_media_type');
  });
});

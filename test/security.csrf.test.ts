// Cross-site request forgery and CORS, tried the way an attacker's page would: form and text/plain
// bodies, GET mutations, hostile origins and preflights, bodiless POSTs with form content types.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;
let open: TestApp;
let openApi: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
  open = await startApp({ CORS_ALLOWED_ORIGINS: 'https://dashboard.example, http://localhost:5173' }, { worker: false });
  openApi = await open.merchant();
});
afterAll(async () => {
  await app?.close();
  await open?.close();
});

const MUTATION = 'mutation { createWebhookEndpoint(input: { url: "https://attacker.example/hook" }) { __typename } }';
const endpoints = async (c: Client) => (await c.get('/v1/webhook-endpoints')).body.data.length;

describe('/graphql accepts only JSON bodies', () => {
  it('refuses form, multipart, text/plain and application/graphql bodies with 415 and the error body; nothing runs', async () => {
    const attempts: [string, BodyInit][] = [
      ['application/x-www-form-urlencoded', new URLSearchParams({ query: MUTATION }).toString()],
      ['text/plain', JSON.stringify({ query: MUTATION })],
      ['text/plain;charset=UTF-8', `{"query":"${MUTATION.replaceAll('"', '\\"')}","x":"="}`],
      ['application/graphql', MUTATION],
    ];
    for (const [type, body] of attempts) {
      const r = await send(`${app.url}/graphql`, { method: 'POST', headers: { authorization: api.auth, 'content-type': type, origin: 'https://attacker.example' }, body });
      expect(r.status, type).toBe(415);
      expect(r.body.errors[0].extensions).toMatchObject({ code: 'unsupported_media_type', type: 'invalid_request_error' });
      expect(r.body.errors[0].extensions.request_id).toMatch(/^req_/);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
    }
    const form = new FormData();
    form.set('operations', JSON.stringify({ query: MUTATION }));
    const multipart = await send(`${app.url}/graphql`, { method: 'POST', headers: { authorization: api.auth }, body: form });
    expect(multipart.status).toBe(415);
    const none = await send(`${app.url}/graphql`, { method: 'POST', headers: { authorization: api.auth }, body: JSON.stringify({ query: MUTATION }) });
    expect(none.status).toBe(415);
    expect(await endpoints(api)).toBe(0);
  });

  it('accepts application/json and application/graphql-response+json', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/graphql-response+json']) {
      const r = await send(`${app.url}/graphql`, { method: 'POST', headers: { authorization: api.auth, 'content-type': type }, body: JSON.stringify({ query: '{ __typename }' }) });
      expect(r.status, type).toBe(200);
      expect(r.body.data).toEqual({ __typename: 'Query' });
    }
  });

  it('answers bad JSON, a body without a query, a foreign charset and an oversized body with the documented errors', async () => {
    const post = (body: string, type = 'application/json') => send(`${app.url}/graphql`, { method: 'POST', headers: { authorization: api.auth, 'content-type': type }, body });
    const cases: [Awaited<ReturnType<typeof post>>, number, string][] = [
      [await post('not json'), 400, 'invalid_json'],
      [await post('{}'), 400, 'parameter_missing'],
      [await post('[{"query":"{ __typename }"}]'), 400, 'parameter_missing'],
      [await post(JSON.stringify({ query: MUTATION }), 'application/json; charset=utf-16'), 415, 'unsupported_media_type'],
      [await post(JSON.stringify({ query: '{ __typename }', x: 'y'.repeat(1024 * 1024) })), 413, 'body_too_large'],
    ];
    for (const [r, status, code] of cases) {
      expect(r.status, code).toBe(status);
      expect(r.body.errors[0].extensions, code).toMatchObject({ code, type: 'invalid_request_error' });
      expect(JSON.stringify(r.body), code).not.toMatch(/SyntaxError|originalError|stack/);
    }
    expect(await endpoints(api)).toBe(0);
  });

  it('never runs a mutation sent with GET (an <img> or link could)', async () => {
    const r = await send(`${app.url}/graphql?query=${encodeURIComponent(MUTATION)}`, { headers: { authorization: api.auth } });
    expect(r.status).toBe(405);
    expect(await endpoints(api)).toBe(0);
  });
});

describe('CORS', () => {
  it('by default no origin is allowed: no Access-Control headers, preflights get nothing to work with', async () => {
    const r = await send(`${app.url}/graphql`, {
      method: 'POST',
      headers: { authorization: api.auth, 'content-type': 'application/json', origin: 'https://attacker.example' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    for (const path of ['/graphql', '/v1/customers']) {
      const pre = await send(`${app.url}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://attacker.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
      });
      expect(pre.headers.get('access-control-allow-origin'), path).toBeNull();
      expect(pre.headers.get('access-control-allow-credentials'), path).toBeNull();
    }
  });

  it('answers only the configured origins, without credentials', async () => {
    for (const path of ['/graphql', '/v1/customers']) {
      const pre = await send(`${open.url}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://dashboard.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,idempotency-key' },
      });
      expect(pre.status).toBeLessThan(300);
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://dashboard.example');
      expect(pre.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
      expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
      const evil = await send(`${open.url}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://dashboard.example.attacker.io', 'access-control-request-method': 'POST' },
      });
      expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    }
    const r = await send(`${open.url}/v1/customers`, { headers: { authorization: openApi.auth, origin: 'http://localhost:5173' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(r.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('request-id');
  });

  it('rejects a malformed CORS_ALLOWED_ORIGINS at start', async () => {
    const { loadConfig } = await import('../src/platform/config.ts');
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: 'https://ok.example,https://bad.example/path' })).toThrow(/CORS_ALLOWED_ORIGINS/);
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: '*' })).toThrow(/CORS_ALLOWED_ORIGINS/);
    expect(loadConfig({}).CORS_ALLOWED_ORIGINS).toEqual([]);
  });
});

describe('REST bodies', () => {
  it('a bodiless POST with a form or text content type is refused (415); without any Content-Type it is accepted', async () => {
    const cus = (await api.post('/v1/customers', { email: 'csrf@example.com' })).body;
    const w = (await api.post('/v1/wallets', { customer_id: cus.id, currency: 'USD' })).body;
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
      const r = await send(`${app.url}/v1/wallets/${w.id}/freeze`, { method: 'POST', headers: { authorization: api.auth, 'content-type': type } });
      expect(r.status, type).toBe(415);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_media_type' });
    }
    expect((await api.get(`/v1/wallets/${w.id}`)).body.status).toBe('active');
    const ok = await send(`${app.url}/v1/wallets/${w.id}/freeze`, { method: 'POST', headers: { authorization: api.auth } });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('frozen');
  });
});

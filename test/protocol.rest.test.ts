// The HTTP protocol rules of the conventions: auth, bodies, unknown routes, methods, headers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp({ AUTH_CACHE_TTL_MS: '1000' });
  api = await app.merchant();
});
afterAll(() => app?.close());

function expectError(r: { status: number; body: any; headers: Headers }, status: number, type: string, code: string) {
  expect(r.status).toBe(status);
  expect(r.body).toEqual({
    error: { type, code, message: expect.any(String), param: r.body?.error?.param ?? null, request_id: r.headers.get('request-id') },
  });
  expect(r.body.error.request_id).toMatch(/^req_/);
}

describe('authentication', () => {
  it('answers 401 with WWW-Authenticate for missing, malformed and wrong credentials', async () => {
    const wrongSecret = 'Basic ' + Buffer.from(`${api.creds.client_id}:sk_test_wrong`).toString('base64');
    const unknownId = 'Basic ' + Buffer.from(`ck_doesnotexist0000000000:${api.creds.client_secret}`).toString('base64');
    for (const authorization of [undefined, 'Bearer abc', 'Basic !!!', 'Basic ' + Buffer.from('nocolon').toString('base64'), wrongSecret, unknownId]) {
      const r = await send(`${app.url}/v1/customers`, { headers: authorization ? { authorization } : {} });
      expectError(r, 401, 'authentication_error', 'unauthorized');
      expect(r.headers.get('www-authenticate')).toMatch(/^Basic/);
    }
  });

  it('checks credentials before anything else, also on unknown paths and GraphQL', async () => {
    expectError(await send(`${app.url}/v1/nothing-here`), 401, 'authentication_error', 'unauthorized');
    const g = await send(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
    expect(g.status).toBe(401);
    expect(g.body.errors[0].extensions.code).toBe('unauthorized');
  });

  it('a revoked key stops working within the cache TTL', async () => {
    const m = await app.merchant();
    expect((await m.get('/v1/customers')).status).toBe(200);
    await app.services.db.prisma.apiKey.update({ where: { clientId: m.creds.client_id }, data: { revokedAt: new Date() } });
    const ttl = app.services.config.AUTH_CACHE_TTL_MS;
    await new Promise((r) => setTimeout(r, ttl + 100));
    expect((await m.get('/v1/customers')).status).toBe(401);
  });
});

describe('rate limit', () => {
  it('answers 429 rate_limited with Retry-After above the per-key limit, per key', async () => {
    const limited = await startApp({ RATE_LIMIT_PER_SECOND: '5' }, { worker: false });
    try {
      const a = await limited.merchant();
      const b = await limited.merchant();
      // The limit is per second: however slowly a loaded machine sends them, no more than 5
      // succeed in any one second, so 30 at once spread over w seconds give at most 5 × w.
      const started = performance.now();
      const rs = await Promise.all(Array.from({ length: 30 }, () => a.get('/v1/customers')));
      const windows = Math.ceil((performance.now() - started) / 1000) + 1;
      const ok = rs.filter((r) => r.status === 200).length;
      expect(ok).toBeGreaterThanOrEqual(5);
      expect(ok).toBeLessThanOrEqual(5 * windows);
      const over = rs.filter((r) => r.status === 429);
      expect(over.length).toBe(30 - ok);
      expect(over.length).toBeGreaterThan(0);
      expectError(over[0]!, 429, 'rate_limit_error', 'rate_limited');
      expect(Number(over[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // another key is not affected
      expect((await b.get('/v1/customers')).status).toBe(200);
      // GraphQL counts against the same key: a burst of it is refused too
      const g = await Promise.all(Array.from({ length: 10 }, () => a.gql('{ __typename }')));
      expect(g.some((r) => r.status === 429)).toBe(true);
      // and the key works again once its second has passed
      let again = 0;
      for (const deadline = Date.now() + 5000; Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 250));
        again = (await a.get('/v1/customers')).status;
        if (again === 200) break;
      }
      expect(again).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('request bodies', () => {
  it('rejects invalid JSON, non-object JSON, non-JSON content types and bodies over 1 MiB', async () => {
    expectError(await api.post('/v1/customers', '{"email":'), 400, 'invalid_request_error', 'invalid_json');
    expectError(await api.post('/v1/customers', '[1,2]'), 400, 'invalid_request_error', 'invalid_json');
    expectError(await api.post('/v1/customers', '"text"'), 400, 'invalid_request_error', 'invalid_json');
    expectError(await api.post('/v1/customers', 'email=a@b.co', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'invalid_request_error', 'unsupported_media_type');
    expectError(await api.post('/v1/customers', '{"email":"a@b.co"}', { 'content-type': 'text/plain' }), 415, 'invalid_request_error', 'unsupported_media_type');
    const big = JSON.stringify({ email: 'a@b.co', metadata: { k: 'x'.repeat(1024 * 1024) } });
    expectError(await api.post('/v1/customers', big), 413, 'invalid_request_error', 'body_too_large');
    // nothing was created by any of them
    expect((await api.get('/v1/customers?email=a@b.co')).body.data).toEqual([]);
  });

  it('refuses a charset other than UTF-8, and a streamed body over 1 MiB that declared no length', async () => {
    expectError(await api.post('/v1/customers', '{"email":"a@b.co"}', { 'content-type': 'application/json; charset=utf-16' }), 415, 'invalid_request_error', 'unsupported_media_type');
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (sent++ < 20) ctl.enqueue(chunk);
        else ctl.close();
      },
    });
    const r = await send(`${app.url}/v1/customers`, { method: 'POST', headers: { authorization: api.auth, 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    expectError(r, 413, 'invalid_request_error', 'body_too_large');
    expect((await api.get('/v1/customers?email=a@b.co')).body.data).toEqual([]);
  });

  it('accepts application/json with a charset', async () => {
    const r = await api.post('/v1/customers', '{"email":"charset@example.com"}', { 'content-type': 'application/json; charset=utf-8' });
    expect(r.status).toBe(201);
  });
});

describe('routing', () => {
  it('answers unknown paths with 404 and known paths with another method with 405 + Allow', async () => {
    const nf = await api.get('/v1/unknown');
    expectError(nf, 404, 'invalid_request_error', 'resource_missing');
    const na = await api.request('PUT', '/v1/customers', { email: 'a@b.co' });
    expectError(na, 405, 'invalid_request_error', 'method_not_allowed');
    expect(na.headers.get('allow')).toBe('POST, GET');
    const na2 = await api.request('POST', '/v1/customers/cus_x', {});
    expect(na2.status).toBe(405);
    expect(na2.headers.get('allow')).toBe('GET, PATCH, DELETE');
    expect((await api.get('/v1/customers/cus_doesnotexist')).body.error.code).toBe('resource_missing');
  });

  it('sends no-store and nosniff with API answers, and keeps the GraphiQL page out of frames and caches', async () => {
    const list = await api.get('/v1/customers');
    expect(list.headers.get('cache-control')).toBe('no-store');
    expect(list.headers.get('x-content-type-options')).toBe('nosniff');
    const g = await api.gql('{ __typename }');
    expect(g.status).toBe(200);
    const graphql = await send(`${app.url}/graphql`, { method: 'POST', headers: { authorization: api.auth, 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
    expect(graphql.headers.get('cache-control')).toBe('no-store');
    const graphiql = await send(`${app.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(graphiql.status).toBe(200);
    expect(graphiql.headers.get('x-frame-options')).toBe('DENY');
    expect(graphiql.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(graphiql.headers.get('cache-control')).toBe('no-store');
    expect(graphiql.headers.get('referrer-policy')).toBe('no-referrer');
    const docs = await send(`${app.url}/docs`);
    expect(docs.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src 'self' 'nonce-/);
    expect(docs.text).toContain('persistAuthorization: false');
  });

  it('serves health and readiness without credentials', async () => {
    expect((await send(`${app.url}/healthz`)).body).toEqual({ status: 'ok' });
    const ready = await send(`${app.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
  });

  it('never leaks stack traces or SQL', async () => {
    const r = await api.get('/v1/customers/' + 'x'.repeat(64));
    expect(r.status).toBe(404);
    const long = await api.get('/v1/customers/' + 'x'.repeat(65));
    expect(long.status).toBe(400);
    expect(long.text).not.toMatch(/at .*\.ts:\d+|SELECT|prisma/i);
  });
});

// The merchant dashboard's sign-in (docs/dashboard.md "Sign-in and sessions"), over HTTP against
// the real database: the session endpoints, the cookie's attributes, the cookie on /graphql and
// the cross-site checks around it, tenancy, expiry, sign-out and failure limits.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardUser, purgeEndedDashboardSessions } from '../src/domain/merchants/dashboard.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

const PASSWORD = 'correct horse battery';
const SESSION = '/dashboard/api/session';
const CREATE = 'mutation($input: CreateCustomerInput!) { createCustomer(input: $input) { __typename ... on CreateCustomerSuccess { customer { id email } } } }';

let app: TestApp;
let a: Client;
let b: Client;
let emailA: string;
let emailB: string;
let seq = 0;

async function user(t: TestApp, m: Client, password = PASSWORD) {
  const email = `owner${++seq}.${Date.now()}@Shop.Example`;
  const u = await createDashboardUser(t.services.db.prisma, { merchantId: m.creds.merchant_id, email, password });
  expect(u.email).toBe(email.toLowerCase());
  expect(u.user_id).toMatch(/^usr_/);
  return u.email;
}

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function call(t: TestApp, method: string, path: string, opts: { body?: string; headers?: Record<string, string>; cookie?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.cookie) headers.cookie = `billing_session=${opts.cookie}`;
  const res = await fetch(t.url + path, { method, headers, body: opts.body, redirect: 'manual' });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body };
}

const origin = (t: TestApp) => t.url;
const json = (t: TestApp, extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', origin: origin(t), ...extra });

async function signIn(t: TestApp, email: string, password = PASSWORD, headers: Record<string, string> = json(t)) {
  return call(t, 'POST', SESSION, { body: JSON.stringify({ email, password }), headers });
}

function cookieOf(r: Answer): string {
  const set = r.headers.get('set-cookie') ?? '';
  const m = /billing_session=([^;]*)/.exec(set);
  expect(m, set).not.toBeNull();
  return m![1]!;
}

/** A dashboard GraphQL call: POST, JSON, the dashboard header, our Origin, the cookie. */
function gql(t: TestApp, cookie: string, query: string, variables?: object, headers: Record<string, string> = {}) {
  return call(t, 'POST', '/graphql', { body: JSON.stringify({ query, variables }), cookie, headers: { ...json(t, { 'x-billing-dashboard': '1' }), ...headers } });
}

async function customerEmails(m: Client): Promise<string[]> {
  const r = await m.get('/v1/customers?limit=100');
  return r.body.data.map((c: { email: string }) => c.email);
}

beforeAll(async () => {
  app = await startApp({ AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: '1000', AUTH_FAILURES_PER_CLIENT_PER_MINUTE: '1000' }, { worker: false });
  a = await app.merchant({ name: 'Shop A' });
  b = await app.merchant({ name: 'Shop B', mode: 'live' });
  emailA = await user(app, a);
  emailB = await user(app, b);
  await b.post('/v1/customers', { email: 'b-only@example.com' });
  await a.post('/v1/customers', { email: 'a-only@example.com' });
});
afterAll(() => app?.close());

describe('sign-in', () => {
  it('answers the user and merchant and sets the session cookie (HttpOnly, SameSite=Strict, Path=/, Max-Age = lifetime; not Secure over http)', async () => {
    const r = await signIn(app, emailA.toUpperCase());
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ signed_in: true, user: { id: expect.stringMatching(/^usr_/), email: emailA }, merchant: { id: a.creds.merchant_id, name: 'Shop A', mode: 'test' } });
    const set = r.headers.get('set-cookie')!;
    expect(set).toMatch(/^billing_session=[A-Za-z0-9]{43};/);
    expect(set).toMatch(/; HttpOnly/);
    expect(set).toMatch(/; SameSite=Strict/);
    expect(set).toMatch(/; Path=\//);
    expect(set).toMatch(/; Max-Age=43200/);
    expect(set).not.toMatch(/Secure/);
    expect(r.headers.get('cache-control')).toBe('no-store');
    // Only a hash of the token is stored.
    const token = cookieOf(r);
    const rows = await app.services.db.query<{ tokenHash: string }>('SELECT token_hash AS "tokenHash" FROM dashboard_sessions WHERE token_hash = $1 OR token_hash = $2', [token, createHash('sha256').update(token).digest('hex')]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(createHash("sha256").update(token).digest("hex"));

    const again = await call(app, 'GET', SESSION, { cookie: token });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(r.body);
  });

  it('wrong password and unknown email: the same 401 body, no cookie, no Basic prompt', async () => {
    const wrong = await signIn(app, emailA, 'not the password at all');
    const unknown = await signIn(app, 'nobody@shop.example', PASSWORD);
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401);
      expect(r.body.error).toMatchObject({ type: 'authentication_error', code: 'unauthorized', message: 'Invalid email or password.' });
      expect(r.body.error.request_id).toMatch(/^req_/);
      expect(r.headers.get('set-cookie')).toBeNull();
      expect(r.headers.get('www-authenticate')).toBeNull();
    }
    expect({ ...unknown.body.error, request_id: 0 }).toEqual({ ...wrong.body.error, request_id: 0 });
  });

  it('an unknown email costs a scrypt like a wrong password (verified against a dummy hash)', async () => {
    const time = async (email: string) => {
      const t0 = performance.now();
      expect((await signIn(app, email, 'wrong password 123')).status).toBe(401);
      return performance.now() - t0;
    };
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await time(emailA));
      unknown.push(await time(`ghost${i}@shop.example`));
    }
    // A database read alone takes a millisecond or two; a scrypt tens of them.
    expect(median(unknown)).toBeGreaterThan(median(known) * 0.5);
  });

  it('bad bodies get the REST answers: 415 for a form or text, 400 invalid_json, 400 for missing fields', async () => {
    const form = await call(app, 'POST', SESSION, { body: `email=${emailA}&password=${PASSWORD}`, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: origin(app) } });
    expect(form.status).toBe(415);
    expect(form.body.error.code).toBe('unsupported_media_type');
    const text = await call(app, 'POST', SESSION, { body: JSON.stringify({ email: emailA, password: PASSWORD }), headers: { 'content-type': 'text/plain', origin: origin(app) } });
    expect(text.status).toBe(415);
    const bad = await call(app, 'POST', SESSION, { body: '{"email":', headers: json(app) });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_json');
    const missing = await call(app, 'POST', SESSION, { body: JSON.stringify({ email: emailA }), headers: json(app) });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'parameter_missing', param: 'password' });
    const typed = await call(app, 'POST', SESSION, { body: JSON.stringify({ email: emailA, password: 5 }), headers: json(app) });
    expect(typed.status).toBe(400);
    expect(typed.body.error).toMatchObject({ code: 'parameter_invalid', param: 'password' });
    const nul = await call(app, 'POST', SESSION, { body: JSON.stringify({ email: 'a\u0000b@shop.example', password: PASSWORD }), headers: json(app) });
    expect(nul.status).toBe(400);
    expect(nul.body.error).toMatchObject({ code: 'parameter_invalid', param: 'email' });
    const arr = await call(app, 'POST', SESSION, { body: '[1]', headers: json(app) });
    expect(arr.status).toBe(400);
    const long = await signIn(app, `${'x'.repeat(5000)}@shop.example`, 'p'.repeat(5000));
    expect(long.status).toBe(401);
    for (const r of [form, text, bad, missing, typed, nul, arr, long]) expect(r.headers.get('set-cookie')).toBeNull();
  });

  it('login CSRF: sign-in without our Origin, or from another one, is 403 and signs nobody in', async () => {
    const none = await signIn(app, emailA, PASSWORD, { 'content-type': 'application/json' });
    const evil = await signIn(app, emailA, PASSWORD, { 'content-type': 'application/json', origin: 'https://evil.example' });
    for (const r of [none, evil]) {
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'forbidden' });
      expect(r.headers.get('set-cookie')).toBeNull();
    }
    // Sign-in carries no cookie yet: the message speaks of sign-in, not of the session cookie.
    expect(none.body.error.message).toBe('Dashboard sign-in requests must carry an Origin header.');
    expect(evil.body.error.message).toBe("Dashboard sign-in requests must come from this service's origin, not https://evil.example.");
  });

  it('GET without a cookie, or with an unknown one, is 200 {"signed_in": false} (a signed-out visitor is no failed request)', async () => {
    const none = await call(app, 'GET', SESSION);
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ signed_in: false });
    expect(none.headers.get('cache-control')).toBe('no-store');
    const r = await call(app, 'GET', SESSION, { cookie: 'x'.repeat(43) });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ signed_in: false });
    // The API without a session still answers 401.
    expect((await gql(app, 'x'.repeat(43), '{ customers(first: 1) { totalCount } }')).status).toBe(401);
  });
});

describe('the cookie on /graphql', () => {
  let cookieA: string;
  beforeAll(async () => {
    cookieA = cookieOf(await signIn(app, emailA));
  });

  it("acts as the session's merchant: reads and mutations, another merchant's data never visible", async () => {
    const list = await gql(app, cookieA, '{ customers(first: 50) { totalCount edges { node { id email } } } }');
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    const emails = list.body.data.customers.edges.map((e: any) => e.node.email);
    expect(emails).toContain('a-only@example.com');
    expect(emails).not.toContain('b-only@example.com');
    const bCustomer = (await b.get('/v1/customers?limit=1')).body.data[0].id;
    const node = await gql(app, cookieA, 'query($id: ID!) { node(id: $id) { id } }', { id: bCustomer });
    expect(node.body.data.node).toBeNull();

    const created = await gql(app, cookieA, CREATE, { input: { email: 'made-in-dashboard@example.com' } });
    expect(created.body.data.createCustomer.__typename).toBe('CreateCustomerSuccess');
    expect(await customerEmails(a)).toContain('made-in-dashboard@example.com');
    expect(await customerEmails(b)).not.toContain('made-in-dashboard@example.com');
  });

  it("B's user sees B's data only", async () => {
    const cookieB = cookieOf(await signIn(app, emailB));
    const list = await gql(app, cookieB, '{ customers(first: 50) { edges { node { email } } } }');
    const emails = list.body.data.customers.edges.map((e: any) => e.node.email);
    expect(emails).toContain('b-only@example.com');
    expect(emails).not.toContain('a-only@example.com');
  });

  it('the Authorization header wins over the cookie', async () => {
    const r = await gql(app, cookieA, '{ customers(first: 50) { edges { node { email } } } }', undefined, { authorization: b.auth });
    const emails = r.body.data.customers.edges.map((e: any) => e.node.email);
    expect(emails).toContain('b-only@example.com');
    expect(emails).not.toContain('a-only@example.com');
  });

  it('a hostile page can do nothing with the cookie: every request that is not the dashboard’s own is 403 and creates nothing', async () => {
    const before = await customerEmails(a);
    const body = JSON.stringify({ query: CREATE, variables: { input: { email: 'csrf@example.com' } } });
    const attempts: Record<string, { method?: string; body?: string; headers: Record<string, string> }> = {
      'no dashboard header': { body, headers: json(app) },
      'dashboard header 0': { body, headers: json(app, { 'x-billing-dashboard': '0' }) },
      'another Origin': { body, headers: json(app, { 'x-billing-dashboard': '1', origin: 'https://evil.example' }) },
      'no Origin': { body, headers: { 'content-type': 'application/json', 'x-billing-dashboard': '1' } },
      'a null Origin': { body, headers: json(app, { 'x-billing-dashboard': '1', origin: 'null' }) },
      'a form post': {
        body: `query=${encodeURIComponent(CREATE)}&variables=${encodeURIComponent('{"input":{"email":"csrf@example.com"}}')}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      },
      'a form post from our own origin': { body, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: origin(app), 'x-billing-dashboard': '1' } },
      'text/plain': { body, headers: { 'content-type': 'text/plain', origin: 'https://evil.example' } },
      'text/plain with every other sign': { body, headers: { 'content-type': 'text/plain', origin: origin(app), 'x-billing-dashboard': '1' } },
      'multipart': { body, headers: { 'content-type': 'multipart/form-data; boundary=x', origin: origin(app), 'x-billing-dashboard': '1' } },
      'a GET': { method: 'GET', headers: { origin: origin(app), 'x-billing-dashboard': '1' } },
    };
    for (const [name, req] of Object.entries(attempts)) {
      const path = req.method === 'GET' ? `/graphql?query=${encodeURIComponent('{ customers(first: 5) { totalCount } }')}` : '/graphql';
      const r = await call(app, req.method ?? 'POST', path, { body: req.body, headers: req.headers, cookie: cookieA });
      expect(r.status, name).toBe(403);
      expect(r.body.errors[0].extensions, name).toMatchObject({ code: 'forbidden', type: 'invalid_request_error' });
      expect(r.body.data, name).toBeUndefined();
    }
    expect(await customerEmails(a)).toEqual(before);
  });

  it('without a cookie or credentials: 401 as before', async () => {
    const r = await call(app, 'POST', '/graphql', { body: JSON.stringify({ query: '{ customers(first: 1) { totalCount } }' }), headers: json(app, { 'x-billing-dashboard': '1' }) });
    expect(r.status).toBe(401);
  });
});

describe('sign-out', () => {
  it('revokes the session in the database and clears the cookie: the old cookie is refused everywhere', async () => {
    const cookie = cookieOf(await signIn(app, emailA));
    expect((await call(app, 'GET', SESSION, { cookie })).status).toBe(200);
    // Sign-out is checked like sign-in: another origin cannot sign a user out either.
    expect((await call(app, 'DELETE', SESSION, { cookie, headers: { origin: 'https://evil.example' } })).status).toBe(403);
    expect((await call(app, 'GET', SESSION, { cookie })).status).toBe(200);
    expect((await call(app, 'DELETE', SESSION, { cookie, headers: { origin: origin(app), 'content-type': 'text/plain' }, body: 'x' })).status).toBe(415);

    const out = await call(app, 'DELETE', SESSION, { cookie, headers: { origin: origin(app) } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^billing_session=; Max-Age=0; .*Path=\/.*HttpOnly.*SameSite=Strict/);
    const [row] = await app.services.db.query<{ revokedAt: Date | null }>(
      'SELECT revoked_at AS "revokedAt" FROM dashboard_sessions WHERE token_hash = $1',
      [createHash('sha256').update(cookie).digest('hex')],
    );
    expect(row!.revokedAt).toBeInstanceOf(Date);
    expect((await call(app, 'GET', SESSION, { cookie })).body).toEqual({ signed_in: false });
    const g = await gql(app, cookie, '{ customers(first: 1) { totalCount } }');
    expect(g.status).toBe(401);
    expect(g.body.errors[0].extensions.type).toBe('authentication_error');
  });
});

describe('PUBLIC_BASE_URL https, a short session lifetime and tight failure limits', () => {
  let app2: TestApp;
  let m: Client;
  let email: string;
  const base = 'https://billing.example';
  const h = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', origin: base, ...extra });

  beforeAll(async () => {
    app2 = await startApp(
      { PUBLIC_BASE_URL: base, DASHBOARD_SESSION_HOURS: '0.0005', AUTH_FAILURES_PER_CLIENT_PER_MINUTE: '3', AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: '6' },
      { worker: false },
    );
    m = await app2.merchant({ name: 'Shop C' });
    email = await user(app2, m);
  });
  afterAll(() => app2?.close());

  it('the cookie is Secure; only the configured origin is accepted (not the Host the request names)', async () => {
    const local = await signIn(app2, email, PASSWORD, json(app2));
    expect(local.status).toBe(403);
    const r = await signIn(app2, email, PASSWORD, h());
    expect(r.status).toBe(200);
    const set = r.headers.get('set-cookie')!;
    expect(set).toMatch(/; Secure/);
    expect(set).toMatch(/; Max-Age=1;/);
    const cookie = cookieOf(r);
    const q = await gql(app2, cookie, '{ customers(first: 1) { totalCount } }', undefined, { origin: base });
    expect(q.status).toBe(200);
    expect((await gql(app2, cookie, '{ customers(first: 1) { totalCount } }')).status).toBe(403);
  });

  it('a session expires after DASHBOARD_SESSION_HOURS: signed out on the session endpoint, 401 on /graphql', async () => {
    const cookie = cookieOf(await signIn(app2, email, PASSWORD, h()));
    expect((await call(app2, 'GET', SESSION, { cookie })).body.signed_in).toBe(true);
    await new Promise((r) => setTimeout(r, 2_000));
    const after = await call(app2, 'GET', SESSION, { cookie });
    expect(after.status).toBe(200);
    expect(after.body).toEqual({ signed_in: false });
    const g = await gql(app2, cookie, '{ customers(first: 1) { totalCount } }', undefined, { origin: base });
    expect(g.status).toBe(401);
    // Housekeeping deletes it a day after it ended.
    const hash = createHash('sha256').update(cookie).digest('hex');
    const count = async () => (await app2.services.db.query('SELECT 1 FROM dashboard_sessions WHERE token_hash = $1', [hash])).length;
    await purgeEndedDashboardSessions(app2.services.db.prisma);
    expect(await count()).toBe(1);
    await purgeEndedDashboardSessions(app2.services.db.prisma, new Date(Date.now() + 86_400_000 + 5_000));
    expect(await count()).toBe(0);
  });

  it('failures are limited per email (429, Retry-After, even for the right password) and per source address', async () => {
    for (let i = 0; i < 3; i++) expect((await signIn(app2, email, 'wrong password 123', h())).status).toBe(401);
    const locked = await signIn(app2, email, PASSWORD, h());
    expect(locked.status).toBe(429);
    expect(locked.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(locked.headers.get('set-cookie')).toBeNull();
    // Another email from the same address still gets through (the address has 3 of its 6) …
    const other = await user(app2, m);
    expect((await signIn(app2, other, PASSWORD, h())).status).toBe(200);
    // … until the address has used its failures: then every attempt from it is refused.
    for (let i = 0; i < 3; i++) expect((await signIn(app2, `guess${i}@shop.example`, 'wrong password 123', h())).status).toBe(401);
    const refused = await signIn(app2, other, PASSWORD, h());
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});

describe('behind TRUST_PROXY, with a low request rate limit', () => {
  it('the cookie is Secure when the proxy says the request came over https; the rate limit counts per user, across sessions', async () => {
    const app3 = await startApp({ TRUST_PROXY: '1', RATE_LIMIT_PER_SECOND: '2' }, { worker: false });
    try {
      const m = await app3.merchant();
      const email = await user(app3, m);
      const host = new URL(app3.url).host;
      const viaHttps = await signIn(app3, email, PASSWORD, { 'content-type': 'application/json', 'x-forwarded-proto': 'https', origin: `https://${host}` });
      expect(viaHttps.status).toBe(200);
      expect(viaHttps.headers.get('set-cookie')).toMatch(/; Secure/);
      const plain = await signIn(app3, email, PASSWORD, json(app3));
      expect(plain.status).toBe(200);
      expect(plain.headers.get('set-cookie')).not.toMatch(/Secure/);
      // Two sessions of one user share one budget (RATE_LIMIT_PER_SECOND, keyed by the user id).
      const sessions = [cookieOf(viaHttps), cookieOf(plain)];
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => gql(app3, sessions[i % 2]!, '{ customers(first: 1) { totalCount } }')));
      const limited = answers.filter((r) => r.status === 429);
      expect(answers.filter((r) => r.status === 200).length).toBeLessThanOrEqual(4);
      expect(limited.length).toBeGreaterThanOrEqual(4);
      expect(limited[0]!.body.errors[0].extensions.code).toBe('rate_limited');
      expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await app3.close();
    }
  });
});

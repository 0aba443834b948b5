// Authentication abuse: failed logins cost the same scrypt whatever the reason, are refused per
// source address (without running the scrypt once over) and slowed — never refused — per client
// id, so nobody can lock a merchant out; a GraphQL mutation counts its root fields against the
// per-key request limit. The scrypt is observed through Authenticator.verify; held answers are
// timed by lower bounds only (a loaded machine can make them longer, never shorter).
import { parse } from 'graphql';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { mutationRootFieldCount } from '../src/graphql/rate-limit-plugin.ts';
import { DUMMY_SECRET_HASH } from '../src/platform/auth.ts';
import { addressKey, authTarpitMs } from '../src/platform/rate-limit.ts';
import { send, startApp, type Res, type TestApp } from './helpers/app.ts';

const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
});
afterEach(() => vi.restoreAllMocks());

async function boot(env: Record<string, string>) {
  const app = await startApp(env, { worker: false });
  apps.push(app);
  return app;
}

const basic = (id: string, secret: string) => 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');
const get = (app: TestApp, authorization: string, headers: Record<string, string> = {}) =>
  send(`${app.url}/v1/customers`, { headers: { authorization, ...headers } });

function expectError(r: Res, status: number, type: string, code: string) {
  expect(r.status).toBe(status);
  expect(r.body).toEqual({ error: { type, code, message: expect.any(String), param: null, request_id: r.headers.get('request-id') } });
}

function expectRateLimited(r: Res) {
  expectError(r, 429, 'rate_limit_error', 'rate_limited');
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(60);
}

describe('failed authentication costs the same work', () => {
  it('unknown, revoked and known ids with a wrong secret all run one scrypt; a cached key does not fail fast', async () => {
    const app = await boot({});
    const m = await app.merchant();
    const revoked = await app.merchant();
    await app.services.db.prisma.apiKey.update({ where: { clientId: revoked.creds.client_id }, data: { revokedAt: new Date() } });
    expect((await m.get('/v1/customers')).status).toBe(200); // m's key is now in the verified cache
    const stored = (await app.services.db.prisma.apiKey.findUniqueOrThrow({ where: { clientId: m.creds.client_id } })).secretHash;

    const verify = vi.spyOn(app.services.auth, 'verify');
    const cases: [string, string, string][] = [
      ['unknown id', basic('ck_doesnotexist0000000000', m.creds.client_secret), DUMMY_SECRET_HASH],
      ['revoked id', basic(revoked.creds.client_id, revoked.creds.client_secret), DUMMY_SECRET_HASH],
      ['known id, wrong secret (key cached)', basic(m.creds.client_id, 'sk_test_wrong'), stored],
    ];
    for (const [label, authorization, hash] of cases) {
      verify.mockClear();
      const r = await get(app, authorization);
      expectError(r, 401, 'authentication_error', 'unauthorized');
      expect(r.headers.get('www-authenticate'), label).toMatch(/^Basic/);
      expect(verify, label).toHaveBeenCalledTimes(1);
      expect(verify.mock.calls[0]![1], label).toBe(hash);
      // the same dummy hash uses the same scrypt parameters as real keys
      expect(hash.split('$').slice(0, 4)).toEqual(stored.split('$').slice(0, 4));
    }

    // Only a success is fast: the verified secret answers from the cache, no scrypt.
    verify.mockClear();
    expect((await m.get('/v1/customers')).status).toBe(200);
    expect(verify).not.toHaveBeenCalled();
  });
});

describe('failed authentication limits', () => {
  it('a client id that keeps failing is slowed, never refused: every guess is checked and held, the right secret is answered at once', async () => {
    // The victim's secret was never verified by this process (as after a restart, on another
    // instance or a new worker): the case in which a refusal keyed on the client id locked the
    // merchant out (issue 21). The same process is tested as its own process in
    // auth.lockout.restart.test.ts.
    const app = await boot({ AUTH_FAILURES_PER_CLIENT_PER_MINUTE: '3', AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: '1000' });
    const victim = await app.merchant();
    const other = await app.merchant();
    const verify = vi.spyOn(app.services.auth, 'verify');
    const wrong = (i: number) => basic(victim.creds.client_id, `sk_test_guess${i}`);
    const timed = async (request: () => Promise<Res>) => {
      const started = performance.now();
      const r = await request();
      return { r, ms: performance.now() - started };
    };
    const unauthorized = (r: Res) => expectError(r, 401, 'authentication_error', 'unauthorized');

    // The free failures: checked (one scrypt each) and answered.
    for (let i = 0; i < 3; i++) unauthorized(await get(app, wrong(i)));
    expect(verify).toHaveBeenCalledTimes(3);

    // Beyond them: still checked and answered 401 — never 429 — but held: 0.1 s, 0.2 s, 0.4 s …
    // (lower bounds only: a loaded machine can only make them longer).
    for (const [i, held] of [[3, 100], [4, 200], [5, 400]] as const) {
      const { r, ms } = await timed(() => get(app, wrong(i)));
      unauthorized(r);
      expect(ms, `failure ${i + 1}`).toBeGreaterThanOrEqual(held - 5);
    }
    expect(verify).toHaveBeenCalledTimes(6);
    const g = await timed(() =>
      send(`${app.url}/graphql`, {
        method: 'POST',
        headers: { authorization: wrong(6), 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      }),
    );
    expect(g.r.status).toBe(401);
    expect(g.r.body.errors[0].extensions.code).toBe('unauthorized');
    expect(g.ms).toBeGreaterThanOrEqual(800 - 5);
    expect(verify).toHaveBeenCalledTimes(7);

    // Repeats of a held guess share its check while it is held: one scrypt, one failure.
    const repeats = await Promise.all(Array.from({ length: 5 }, () => timed(() => get(app, wrong(7)))));
    for (const { r, ms } of repeats) {
      unauthorized(r);
      expect(ms).toBeGreaterThanOrEqual(1600 - 5);
    }
    expect(verify).toHaveBeenCalledTimes(8);

    // The right secret, sent together with another guess: it is checked and answered at once,
    // while the guess is held 3.2 s.
    const [right, guess] = await Promise.all([timed(() => victim.get('/v1/customers')), timed(() => get(app, wrong(8)))]);
    expect(right.r.status).toBe(200);
    unauthorized(guess.r);
    expect(guess.ms).toBeGreaterThanOrEqual(3200 - 5);
    expect(right.ms).toBeLessThan(guess.ms);
    expect(right.ms).toBeLessThan(3000);
    expect(verify).toHaveBeenCalledTimes(10);

    // From now on the verified secret answers from the cache, without a scrypt.
    for (let i = 0; i < 3; i++) expect((await victim.get('/v1/customers')).status).toBe(200);
    expect(verify).toHaveBeenCalledTimes(10);
    // Other client ids are not slowed by this one's failures.
    const fresh = await timed(() => other.get('/v1/customers'));
    expect(fresh.r.status).toBe(200);
    expect(fresh.ms).toBeLessThan(3000);
  });

  it('holds a failure 0.1 s beyond the free ones, doubling, at most 5 s', () => {
    expect([1, 10, 11, 12, 13, 16, 17, 100, 10_000].map((n) => authTarpitMs(n, 10))).toEqual([0, 0, 100, 200, 400, 3200, 5000, 5000, 5000]);
    expect(authTarpitMs(1000, 0)).toBe(0); // 0 = off
  });

  it('a client’s first burst to a process that has not verified its secret yet is one check, not a lockout', async () => {
    const app = await boot({ AUTH_FAILURES_PER_CLIENT_PER_MINUTE: '3' });
    const fresh = await app.merchant();
    const verify = vi.spyOn(app.services.auth, 'verify');
    const rs = await Promise.all(Array.from({ length: 30 }, () => fresh.get('/v1/customers')));
    expect(rs.map((r) => r.status)).toEqual(Array(30).fill(200));
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('limits failures per source address across many client ids; X-Forwarded-For is ignored unless TRUST_PROXY', async () => {
    const app = await boot({ AUTH_FAILURES_PER_CLIENT_PER_MINUTE: '1000', AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: '4' });
    const legit = await app.merchant();
    expect((await legit.get('/v1/customers')).status).toBe(200);
    const verify = vi.spyOn(app.services.auth, 'verify');
    const guess = (i: number) => basic(`ck_enumerated${String(i).padStart(12, '0')}`, 'sk_test_guess');

    for (let i = 0; i < 4; i++) expectError(await get(app, guess(i)), 401, 'authentication_error', 'unauthorized');
    expect(verify).toHaveBeenCalledTimes(4);
    expectRateLimited(await get(app, guess(4)));
    // A spoofed forwarding header does not give the attacker a new address.
    expectRateLimited(await get(app, guess(5), { 'x-forwarded-for': '203.0.113.9' }));
    expect(verify).toHaveBeenCalledTimes(4);
    // The cached client on the same address still works.
    expect((await legit.get('/v1/customers')).status).toBe(200);

    // Behind a trusted proxy, the address is the last X-Forwarded-For entry.
    const proxied = await boot({ AUTH_FAILURES_PER_CLIENT_PER_MINUTE: '1000', AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: '2', TRUST_PROXY: '1' });
    const from = (addr: string) => ({ 'x-forwarded-for': `198.51.100.1, ${addr}` });
    for (let i = 0; i < 2; i++) expectError(await get(proxied, guess(i), from('203.0.113.1')), 401, 'authentication_error', 'unauthorized');
    expectRateLimited(await get(proxied, guess(2), from('203.0.113.1')));
    expectError(await get(proxied, guess(3), from('203.0.113.2')), 401, 'authentication_error', 'unauthorized');
  });

  it('keys addresses: IPv4-mapped IPv6 as IPv4, IPv6 by /64', () => {
    expect(addressKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey(undefined)).toBe('unknown');
    expect(addressKey('not an address')).toBe('unknown');
  });
});

describe('GraphQL mutations count their root fields against RATE_LIMIT_PER_SECOND', () => {
  const create = (alias: string, i: number) => `${alias}: createCustomer(input: { email: "c${i}@example.com" }) { __typename }`;
  const aliased = (n: number) => Array.from({ length: n }, (_, i) => create(`c${i}`, i)).join(' ');

  it('limits a request carrying many aliased mutations, also through fragments; nothing is executed', async () => {
    const app = await boot({ RATE_LIMIT_PER_SECOND: '5' });
    const count = (merchantId: string) => app.services.db.prisma.customer.count({ where: { merchantId } });
    const documents = [
      `mutation { ${aliased(10)} }`,
      `mutation Many { ...F } fragment F on Mutation { ${aliased(10)} }`,
      `mutation { ... on Mutation { ${aliased(5)} } ... { ${Array.from({ length: 5 }, (_, i) => create(`d${i}`, 10 + i)).join(' ')} } }`,
    ];
    for (const query of documents) {
      const m = await app.merchant();
      const r = await m.post('/graphql', { query });
      expect(r.status, query).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.body.data ?? null).toBeNull();
      expect(r.body.errors).toHaveLength(1);
      expect(r.body.errors[0].extensions).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error', request_id: r.headers.get('request-id') });
      expect(r.body.errors[0].extensions.http).toBeUndefined();
      expect(await count(m.creds.merchant_id)).toBe(0);
    }

    // Within the limit: 1 (the request) + 2 (further root fields) ≤ 5.
    const ok = await app.merchant();
    const r = await ok.gql(`mutation { ${aliased(3)} }`);
    expect(r.status).toBe(200);
    expect(Object.values(r.data).map((x: any) => x.__typename)).toEqual(['CreateCustomerSuccess', 'CreateCustomerSuccess', 'CreateCustomerSuccess']);
    expect(await count(ok.creds.merchant_id)).toBe(3);

    // Queries are not counted by field (their cost is limited by complexity).
    const reader = await app.merchant();
    const q = await reader.gql(`{ ${Array.from({ length: 10 }, (_, i) => `q${i}: customers(first: 1) { edges { cursor } }`).join(' ')} }`);
    expect(q.status).toBe(200);
    expect(q.errors).toBeUndefined();
  });

  it('counts distinct root response keys of the selected mutation operation', () => {
    const n = (src: string, op?: string) => mutationRootFieldCount(parse(src), op);
    expect(n('mutation { a: x b: x c: x }')).toBe(3);
    expect(n('mutation { x x }')).toBe(1); // same response key: merged, executed once
    expect(n('mutation { a: x ...F ... on Mutation { d: x ... { e: x } } } fragment F on Mutation { b: x ...G } fragment G on Mutation { c: x a: x }')).toBe(5);
    expect(n('query { a: x b: x }')).toBe(0);
    expect(n('query Q { a: x b: x } mutation M { a: x b: x c: x }', 'M')).toBe(3);
    expect(n('query Q { a: x b: x } mutation M { a: x b: x c: x }', 'Q')).toBe(0);
  });
});

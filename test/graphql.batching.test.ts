// Nested connections and relations load in batches: the SQL a query costs does not grow with the
// number of parents. Each nested connection is asked for under 5 and under 50 parents, and the
// query count must be the same (and small). The pages must also be right: each parent's page is
// what the REST list of that parent returns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inBatches, queryCounter } from './helpers/query-count.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let m: Client;
const PARENTS = 50;

beforeAll(async () => {
  // No background worker: the count is the request's own queries, and attempts stay pending.
  // The verified key stays cached (60 s, refreshed on use), so no measured request pays the key re-read.
  app = await startApp({ AUTH_CACHE_TTL_MS: '60000' }, { worker: false });
  m = await app.merchant();
  // Every event gets a delivery attempt to this endpoint.
  expect((await m.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/billing' })).status).toBe(201);
  await inBatches(PARENTS, async (i) => {
    const c = (await m.post('/v1/customers', { email: `batch${i}@example.com` })).body;
    // Every third customer has a credit balance (in two currencies for some).
    if (i % 3 === 0) await m.post(`/v1/customers/${c.id}/balance-transactions`, { amount: 100 + i, currency: 'USD' });
    if (i % 6 === 0) await m.post(`/v1/customers/${c.id}/balance-transactions`, { amount: 7, currency: 'EUR' });
    for (let k = 0; k < 3; k++) {
      const p = (await m.post('/v1/payments', { amount: 100 + k, currency: 'USD', customer_id: c.id, redirect_url: 'https://shop.example/r' })).body;
      if (k === 0) await m.post(`/v1/test-helpers/payments/${p.id}/complete`, { outcome: 'succeeded' });
    }
    const w = (await m.post('/v1/wallets', { customer_id: c.id, currency: 'USD' })).body;
    for (let k = 0; k < 3; k++) await m.post(`/v1/wallets/${w.id}/credit`, { amount: 10, reference: `c${k}`, description: 'credit' });
    await m.post(`/v1/wallets/${w.id}/topups`, { amount: 500, redirect_url: 'https://shop.example/r' });
    for (let k = 0; k < 2; k++) {
      const si = (await m.post('/v1/setup-intents', { customer_id: c.id })).body;
      await m.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {});
    }
  });
}, 300_000);
afterAll(() => app?.close());
const expectConstant = queryCounter(() => app, () => m, PARENTS);

describe('nested connections cost the same SQL for 5 parents or 50', () => {
  it('customers → payments (with totalCount, customer and refunds) and wallets', async () => {
    const q = `query($n: Int) { customers(first: $n) { totalCount edges { node { id
      payments(first: 2) { totalCount pageInfo { hasNextPage endCursor } edges { node { id status customer { id } refunds { id } } } }
      wallets { id } } } } }`;
    const { data } = await expectConstant(q, (d, n) => {
      expect(d.customers.edges).toHaveLength(n);
      expect(d.customers.totalCount).toBe(PARENTS);
      for (const e of d.customers.edges) {
        // three payments and the wallet top-up's payment
        expect(e.node.payments.totalCount).toBe(4);
        expect(e.node.payments.edges).toHaveLength(2);
        expect(e.node.payments.pageInfo.hasNextPage).toBe(true);
        expect(e.node.wallets).toHaveLength(1);
        for (const p of e.node.payments.edges) expect(p.node.customer.id).toBe(e.node.id);
      }
    });
    // Each customer's page is what REST lists for that customer, and its cursor continues it.
    const one = data.customers.edges[7].node;
    const rest = (await m.get(`/v1/payments?customer_id=${one.id}`)).body.data.map((p: any) => p.id);
    expect(one.payments.edges.map((e: any) => e.node.id)).toEqual(rest.slice(0, 2));
    const next = await m.gql(`query($id: ID!, $after: String) { customer(id: $id) { payments(first: 2, after: $after) { edges { node { id } } pageInfo { hasNextPage } } } }`, {
      id: one.id,
      after: one.payments.pageInfo.endCursor,
    });
    expect(next.data.customer.payments).toEqual({ edges: rest.slice(2, 4).map((id: string) => ({ node: { id } })), pageInfo: { hasNextPage: false } });
    // Filters apply per parent.
    const ok = await m.gql(`query($id: ID!) { customer(id: $id) { payments(status: succeeded) { totalCount edges { node { status } } } } }`, { id: one.id });
    expect(ok.data.customer.payments).toEqual({ totalCount: 1, edges: [{ node: { status: 'succeeded' } }] });
  });

  it('customers → creditBalance', async () => {
    const q = `query($n: Int) { customers(first: $n) { edges { node { id email creditBalance { currency amount } } } } }`;
    await expectConstant(q, (d, n) => {
      expect(d.customers.edges).toHaveLength(n);
      for (const e of d.customers.edges) {
        const i = Number(/batch(\d+)@/.exec(e.node.email)![1]);
        const want = [...(i % 6 === 0 ? [{ currency: 'EUR', amount: 7 }] : []), ...(i % 3 === 0 ? [{ currency: 'USD', amount: 100 + i }] : [])];
        expect(e.node.creditBalance, e.node.email).toEqual(want);
      }
    });
  });

  it('customers → saved payment methods and the default one', async () => {
    const q = `query($n: Int) { customers(first: $n) { edges { node { id
      defaultPaymentMethod { id }
      paymentMethods(first: 1) { totalCount pageInfo { hasNextPage } edges { node { id type card { last4 } customer { id } } } } } } } }`;
    const { data } = await expectConstant(q, (d, n) => {
      expect(d.customers.edges).toHaveLength(n);
      for (const e of d.customers.edges) {
        expect(e.node.paymentMethods.totalCount).toBe(2);
        expect(e.node.paymentMethods.pageInfo.hasNextPage).toBe(true);
        expect(e.node.paymentMethods.edges[0].node).toMatchObject({ type: 'card', card: { last4: '4242' }, customer: { id: e.node.id } });
        expect(e.node.defaultPaymentMethod.id).toMatch(/^pm_/);
      }
    });
    const one = data.customers.edges[4].node;
    const rest = (await m.get(`/v1/customers/${one.id}`)).body;
    expect(one.paymentMethods.edges[0].node.id).toBe(rest.payment_methods[0].id);
    expect(one.defaultPaymentMethod.id).toBe(rest.default_payment_method_id);
  });

  it('wallets → transactions and top-ups', async () => {
    const q = `query($n: Int) { wallets(first: $n) { totalCount edges { node { id customer { id }
      transactions(first: 2) { totalCount edges { node { id type wallet { id } } } }
      topups(first: 5) { totalCount edges { node { id status payment { id } } } } } } } }`;
    const { data } = await expectConstant(q, (d, n) => {
      expect(d.wallets.edges).toHaveLength(n);
      for (const e of d.wallets.edges) {
        expect(e.node.transactions.totalCount).toBe(3);
        expect(e.node.transactions.edges).toHaveLength(2);
        expect(e.node.topups.totalCount).toBe(1);
        expect(e.node.topups.edges[0].node.status).toBe('pending');
      }
    });
    const one = data.wallets.edges[3].node;
    const rest = (await m.get(`/v1/wallets/${one.id}/transactions?limit=2`)).body.data.map((t: any) => t.id);
    expect(one.transactions.edges.map((e: any) => e.node.id)).toEqual(rest);
  });

  it('events → delivery attempts', async () => {
    const q = `query($n: Int) { events(first: $n, type: "customer.created") { edges { node { id
      deliveryAttempts(first: 5) { totalCount edges { node { id status endpoint { id url } } } } } } } }`;
    await expectConstant(q, (d, n) => {
      expect(d.events.edges).toHaveLength(n);
      for (const e of d.events.edges) {
        expect(e.node.deliveryAttempts.totalCount).toBe(1);
        expect(e.node.deliveryAttempts.edges[0].node).toMatchObject({ status: 'pending', endpoint: { url: 'https://hooks.example.com/billing' } });
      }
    });
  });

  it('gives nested list arguments the same validation as the top-level lists', async () => {
    const r = await m.gql(`{ customers(first: 1) { edges { node { payments(first: 0) { edges { cursor } } } } } }`);
    expect(r.errors?.[0]).toMatchObject({ message: 'Invalid first: must be an integer between 1 and 100.', extensions: { code: 'parameter_invalid', param: 'first' } });
    const bad = await m.gql(`{ wallets(first: 1) { edges { node { transactions(after: "nope") { edges { cursor } } } } } }`);
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'after' });
  });
});

describe('GraphQL list arguments are validated as REST validates the query string', () => {
  it('answers the same error code for the same bad filter', async () => {
    const cases: [string, string, string][] = [
      ['{ payments(currency: "xyz") { edges { cursor } } }', '/v1/payments?currency=xyz', 'currency'],
      ['{ refunds(customerId: "x".padEnd(70)) { edges { cursor } } }'.replace('"x".padEnd(70)', JSON.stringify('x'.repeat(70))), `/v1/refunds?customer_id=${'x'.repeat(70)}`, 'customer_id'],
      ['{ events(type: "customer.*.x") { edges { cursor } } }', '/v1/events?type=customer.*.x', 'type'],
      ['{ wallets(currency: "ZZZ") { edges { cursor } } }', '/v1/wallets?currency=ZZZ', 'currency'],
      ['{ customers(first: 101) { edges { cursor } } }', '/v1/customers?limit=101', 'limit'],
      // far past the limit: still the resolver's parameter_invalid, not the cost check's code
      ['{ customers(first: 100000) { edges { cursor } } }', '/v1/customers?limit=100000', 'limit'],
      ['{ customers(first: -5) { edges { cursor } } }', '/v1/customers?limit=-5', 'limit'],
      ['{ webhookEndpoints(after: "x") { edges { cursor } } }', '/v1/webhook-endpoints?after=x', 'after'],
    ];
    for (const [query, path, restParam] of cases) {
      const rest = await m.get(path);
      expect(rest.status, path).toBe(400);
      const gql = await m.gql(query);
      expect(gql.data ?? null, query).toBeNull();
      expect(gql.errors?.[0].extensions.code, query).toBe(rest.body.error.code);
      const expected = restParam === 'limit' ? 'first' : restParam.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
      expect(gql.errors?.[0].extensions.param, query).toBe(expected);
    }
  });

  it('refuses an impossible DateTime with the same code (GraphQL checks scalars before the resolver runs)', async () => {
    const rest = await m.get('/v1/refunds?created_after=2026-02-30T00:00:00Z');
    const gql = await m.gql('{ refunds(createdAfter: "2026-02-30T00:00:00Z") { edges { cursor } } }');
    expect(rest.body.error).toMatchObject({ code: 'parameter_invalid', param: 'created_after' });
    expect(gql.errors?.[0].extensions.code).toBe('parameter_invalid');
    expect(gql.errors?.[0].message).toMatch(/DateTime/);
  });

  it('accepts a currency in any case, as REST does', async () => {
    const r = await m.gql('{ payments(currency: "usd", first: 1) { edges { node { currency } } } }');
    expect(r.data.payments.edges[0].node.currency).toBe('USD');
  });
});

describe('REST lists of customers carry credit_balance in one statement per page', () => {
  it('GET /v1/customers and its search: the same statements for 5 customers as for 50, and each credit_balance is the retrieve’s', async () => {
    const cost = async (path: string) => {
      app.queries.reset();
      const r = await m.get(path);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return { count: app.queries.count, sql: app.queries.sql, body: r.body };
    };
    for (const base of ['/v1/customers?', '/v1/customers?search=batch&']) {
      const small = await cost(`${base}limit=5`);
      const large = await cost(`${base}limit=${PARENTS}`);
      expect(large.body.data).toHaveLength(PARENTS);
      expect(large.count, `${base}\n${large.sql.join('\n')}\n---\n${small.sql.join('\n')}`).toBe(small.count);
      expect(large.sql.filter((q) => /FROM customer_balances/.test(q)), base).toHaveLength(1);
      for (const c of large.body.data) {
        const i = Number(/batch(\d+)@/.exec(c.email)![1]);
        expect(c.credit_balance, c.email).toEqual({ ...(i % 6 === 0 ? { EUR: 7 } : {}), ...(i % 3 === 0 ? { USD: 100 + i } : {}) });
      }
      const one = large.body.data[3];
      expect((await m.get(`/v1/customers/${one.id}`)).body.credit_balance).toEqual(one.credit_balance);
    }
  });
});

describe('the query log', () => {
  it('counts statements where they reach the database: raw SQL and transactions too, not only Prisma’s', async () => {
    const m = await app.merchant();
    const c = (await m.post('/v1/customers', { email: 'counted@example.com' })).body;
    app.queries.reset();
    // GET /v1/customers/:id is one raw statement (the customer with its embeds)
    expect((await m.get(`/v1/customers/${c.id}`)).status).toBe(200);
    expect(app.queries.sql.some((q) => /FROM customers c WHERE c\.merchant_id = \$1/.test(q))).toBe(true);
    app.queries.reset();
    // a debit with an Idempotency-Key is a raw transaction (the debit and the key with its answer):
    // its statements and its BEGIN are seen
    const w = (await m.post('/v1/wallets', { customer_id: c.id, currency: 'USD' })).body;
    expect((await m.post(`/v1/wallets/${w.id}/credit`, { amount: 500, description: 'grant', reference: 'c-1' })).status).toBe(201);
    app.queries.reset();
    expect((await m.post(`/v1/wallets/${w.id}/debit`, { amount: 100, description: 'use', reference: 'd-1' }, { 'idempotency-key': 'query-log-debit' })).status).toBe(200);
    expect(app.queries.sql.some((q) => /^\s*BEGIN/i.test(q))).toBe(true);
    expect(app.queries.sql.some((q) => /INSERT INTO wallet_transactions/.test(q))).toBe(true);
  });
});

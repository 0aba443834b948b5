import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant({ name: 'Kampala Coffee' });
});
afterAll(() => app?.close());

const base = { amount: 5000, currency: 'usd', redirect_url: 'https://shop.example/return', cancel_url: 'https://shop.example/cancel' };
const newPayment = (c: Client, extra: Record<string, unknown> = {}) =>
  c.post('/v1/payments', { ...base, customer: { email: 'buyer@example.com', name: 'Buyer' }, ...extra });

async function eventsFor(c: Client, id: string) {
  const r = await c.get('/v1/events?limit=100');
  return r.body.data.filter((e: any) => e.data.object.id === id).map((e: any) => e.type);
}

describe('payments over REST', () => {
  it('creates a payment with a hosted checkout, creating or reusing the customer', async () => {
    const r = await newPayment(api, { checkout: { title: 'Order #42', payment_methods: ['card'] }, metadata: { order: '42' } });
    expect(r.status).toBe(201);
    const p = r.body;
    expect(p).toMatchObject({
      object: 'payment',
      amount: 5000,
      currency: 'USD',
      status: 'created',
      redirect_url: base.redirect_url,
      cancel_url: base.cancel_url,
      checkout: { title: 'Order #42', payment_methods: ['card'] },
      metadata: { order: '42' },
      amount_refunded: 0,
      refunded: false,
      payment_method: null,
      failure_code: null,
      customer: { email: 'buyer@example.com', name: 'Buyer' },
    });
    expect(p.id).toMatch(/^pay_/);
    expect(p.checkout_url).toMatch(new RegExp(`^${app.services.config.publicBaseUrl}/hosted/checkout/[0-9A-Za-z]{40}$`));
    expect(new Date(p.expires_at).getTime() - new Date(p.created_at).getTime()).toBeGreaterThanOrEqual(24 * 3600_000 - 1000);
    expect((await api.get(`/v1/payments/${p.id}`)).body).toEqual(p);
    expect(await eventsFor(api, p.id)).toEqual(['payment.created']);
    expect(await eventsFor(api, p.customer_id)).toEqual(['customer.created']);

    const again = (await newPayment(api)).body;
    expect(again.customer_id).toBe(p.customer_id);
    const explicit = (await api.post('/v1/customers', { email: 'other@example.com' })).body;
    const byId = (await newPayment(api, { customer_id: explicit.id })).body;
    expect(byId.customer_id).toBe(explicit.id);
    const onlyId = await api.post('/v1/payments', { ...base, customer_id: explicit.id });
    expect(onlyId.status).toBe(201);
  });

  it('validates the request', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ amount: undefined }, 'parameter_missing', 'amount'],
      [{ amount: 0 }, 'parameter_invalid', 'amount'],
      [{ amount: 10.5 }, 'parameter_invalid', 'amount'],
      [{ amount: '100' }, 'parameter_invalid', 'amount'],
      [{ amount: 100_000_000_000 }, 'amount_too_large', 'amount'],
      [{ currency: 'ABC' }, 'parameter_invalid', 'currency'],
      [{ redirect_url: undefined }, 'parameter_missing', 'redirect_url'],
      [{ redirect_url: 'not a url' }, 'parameter_invalid', 'redirect_url'],
      [{ redirect_url: 'ftp://x.example/' }, 'parameter_invalid', 'redirect_url'],
      [{ customer: undefined }, 'parameter_missing', 'customer'],
      [{ customer: { name: 'x' } }, 'parameter_missing', 'customer[email]'],
      [{ customer: { email: 'x@y.io', phone: '123' } }, 'parameter_invalid', 'customer[phone]'],
      [{ checkout: { payment_methods: ['cash'] } }, 'parameter_invalid', 'checkout[payment_methods][0]'],
      [{ checkout: { payment_methods: [] } }, 'parameter_invalid', 'checkout[payment_methods]'],
      [{ checkout: { colour: 'red' } }, 'parameter_unknown', 'checkout[colour]'],
      [{ checkout: { locale: 'xx' } }, 'parameter_invalid', 'checkout[locale]'],
      [{ metadata: { a: 1 } }, 'parameter_invalid', 'metadata[a]'],
      [{ status: 'succeeded' }, 'parameter_unknown', 'status'],
    ];
    for (const [patch, code, param] of cases) {
      const r = await api.post('/v1/payments', { ...base, customer: { email: 'v@example.com' }, ...patch });
      expect({ patch, status: r.status, code: r.body.error?.code, param: r.body.error?.param }).toEqual({ patch, status: 400, code, param });
    }
    const missing = await api.post('/v1/payments', { ...base, customer_id: 'cus_0000000000000000000000' });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'resource_missing', param: 'customer_id' });
    const other = await app.merchant();
    const theirs = (await other.post('/v1/customers', { email: 'theirs@example.com' })).body;
    expect((await api.post('/v1/payments', { ...base, customer_id: theirs.id })).status).toBe(404);
    expect((await api.get('/v1/payments?email=v@example.com')).body.data ?? []).toEqual([]);
  });

  it('completes through the test helper with each outcome and method', async () => {
    const ok = (await newPayment(api)).body;
    const done = await api.post(`/v1/test-helpers/payments/${ok.id}/complete`, { outcome: 'succeeded', method: 'card' });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'succeeded', payment_method: { type: 'card', card: { brand: 'visa', last4: '4242' } }, failure_code: null });
    expect(await eventsFor(api, ok.id)).toEqual(['payment.succeeded', 'payment.created']);

    const failed = (await newPayment(api)).body;
    const f = await api.post(`/v1/test-helpers/payments/${failed.id}/complete`, { outcome: 'failed' });
    expect(f.body).toMatchObject({ status: 'failed', failure_code: 'card_declined' });
    expect(await eventsFor(api, failed.id)).toEqual(['payment.failed', 'payment.created']);

    const mm = (await newPayment(api, { customer: { email: 'mm@example.com', phone: '+256700000001' } })).body;
    const m = await api.post(`/v1/test-helpers/payments/${mm.id}/complete`, { outcome: 'succeeded', method: 'mobile_money' });
    expect(m.body).toMatchObject({ status: 'succeeded', payment_method: { type: 'mobile_money', mobile_money: { phone: '+256700000001' } } });
    const mmFail = (await newPayment(api)).body;
    expect((await api.post(`/v1/test-helpers/payments/${mmFail.id}/complete`, { outcome: 'failed', method: 'mobile_money' })).body.failure_code).toBe('mobile_money_declined');

    const cancel = (await newPayment(api)).body;
    expect((await api.post(`/v1/test-helpers/payments/${cancel.id}/complete`, { outcome: 'cancelled' })).body.status).toBe('cancelled');
    expect(await eventsFor(api, cancel.id)).toEqual(['payment.cancelled', 'payment.created']);

    const twice = await api.post(`/v1/test-helpers/payments/${ok.id}/complete`, { outcome: 'succeeded' });
    expect(twice.status).toBe(409);
    expect(twice.body.error).toMatchObject({ type: 'state_error', code: 'payment_not_pending' });
    const cardOnly = (await newPayment(api, { checkout: { payment_methods: ['card'] } })).body;
    const wrong = await api.post(`/v1/test-helpers/payments/${cardOnly.id}/complete`, { outcome: 'succeeded', method: 'mobile_money' });
    expect(wrong.body.error).toMatchObject({ code: 'parameter_invalid', param: 'method' });
    expect((await api.get(`/v1/payments/${cardOnly.id}`)).body.status).toBe('created');
    const bad = await api.post(`/v1/test-helpers/payments/${cardOnly.id}/complete`, { outcome: 'maybe' });
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'outcome' });
    expect((await api.post('/v1/test-helpers/payments/pay_0000000000000000000000/complete', { outcome: 'succeeded' })).status).toBe(404);

    const live = await app.merchant({ mode: 'live' });
    const lp = (await newPayment(live)).body;
    expect((await live.post(`/v1/test-helpers/payments/${lp.id}/complete`, { outcome: 'succeeded' })).status).toBe(404);
  });

  it('expires an unpaid checkout after 24 hours on the merchant clock', async () => {
    const m = await app.merchant();
    const p = (await newPayment(m)).body;
    await m.post('/v1/test-helpers/clock/advance', { seconds: 24 * 3600 - 60 });
    expect((await m.get(`/v1/payments/${p.id}`)).body.status).toBe('created');
    await m.post('/v1/test-helpers/clock/advance', { seconds: 61 });
    expect((await m.get(`/v1/payments/${p.id}`)).body.status).toBe('expired');
    expect(await eventsFor(m, p.id)).toEqual(['payment.expired', 'payment.created']);
    const late = await m.post(`/v1/test-helpers/payments/${p.id}/complete`, { outcome: 'succeeded' });
    expect(late.status).toBe(409);
    const page = await fetch(p.checkout_url.replace(app.services.config.publicBaseUrl, app.url));
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('expired');
  });

  it('filters and pages the list', async () => {
    const m = await app.merchant();
    const t0 = new Date(Date.now() - 1000).toISOString();
    const ids: Record<string, string> = {};
    ids.usd1 = (await newPayment(m)).body.id;
    ids.ugx = (await newPayment(m, { currency: 'UGX', amount: 50000, customer: { email: 'ug@example.com' } })).body.id;
    ids.usd2 = (await newPayment(m)).body.id;
    await m.post(`/v1/test-helpers/payments/${ids.usd2}/complete`, { outcome: 'succeeded' });
    const mid = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    ids.late = (await newPayment(m, { customer: { email: 'late@example.com' } })).body.id;
    const q = async (s: string) => (await m.get(`/v1/payments?${s}`)).body.data.map((p: any) => p.id);
    expect(await q('status=succeeded')).toEqual([ids.usd2]);
    expect(await q('status=created')).toEqual([ids.late, ids.ugx, ids.usd1]);
    expect(await q('currency=ugx')).toEqual([ids.ugx]);
    const ug = (await m.get(`/v1/payments/${ids.ugx}`)).body.customer_id;
    expect(await q(`customer_id=${ug}`)).toEqual([ids.ugx]);
    expect(await q(`created_after=${mid}`)).toEqual([ids.late]);
    expect(await q(`created_before=${mid}&created_after=${t0}`)).toEqual([ids.usd2, ids.ugx, ids.usd1]);
    expect(await q('status=created&currency=USD')).toEqual([ids.late, ids.usd1]);
    const page1 = (await m.get('/v1/payments?limit=2')).body;
    const page2 = (await m.get(`/v1/payments?limit=2&after=${page1.next_cursor}`)).body;
    expect([...page1.data, ...page2.data].map((p: any) => p.id)).toEqual([ids.late, ids.usd2, ids.ugx, ids.usd1]);
    expect(page2.has_more).toBe(false);
    for (const bad of ['status=paid', 'currency=XXX', 'created_after=soon', 'limit=500']) {
      expect((await m.get(`/v1/payments?${bad}`)).status, bad).toBe(400);
    }
  });
});

describe('payments over GraphQL', () => {
  const CREATE = `mutation($input: CreatePaymentInput!) { createPayment(input: $input) {
    __typename ... on CreatePaymentSuccess { payment { id amount currency status checkoutUrl customer { id email } } } ... on Error { code param } } }`;

  it('creates, completes, reads and filters payments', async () => {
    const m = await app.merchant();
    const r = await m.gql(CREATE, {
      input: { amount: 99_999_999_999, currency: 'ugx', customer: { email: 'g@example.com' }, redirectUrl: 'https://shop.example/r', checkout: { paymentMethods: ['MOBILE_MONEY'.toLowerCase()] } },
    });
    expect(r.errors).toBeUndefined();
    const p = r.data.createPayment.payment;
    expect(p).toMatchObject({ amount: 99_999_999_999, currency: 'UGX', status: 'created' });
    expect((await m.get(`/v1/payments/${p.id}`)).body.checkout).toEqual({ payment_methods: ['mobile_money'] });

    const bad = await m.gql(CREATE, { input: { amount: 5, currency: 'usd', redirectUrl: 'https://shop.example/r' } });
    expect(bad.data.createPayment).toMatchObject({ __typename: 'ValidationError', code: 'parameter_missing', param: 'customer' });
    const badUrl = await m.gql(CREATE, { input: { amount: 5, currency: 'usd', customer: { email: 'g@example.com' }, redirectUrl: 'nope' } });
    expect(badUrl.data.createPayment).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'redirectUrl' });

    const done = await m.gql(`mutation { completeTestPayment(input: { id: "${p.id}", outcome: succeeded, method: mobile_money }) {
      __typename ... on CompleteTestPaymentSuccess { payment { status paymentMethod { type card { last4 } mobileMoney { phone } } checkout { paymentMethods locale } } } ... on Error { code } } }`);
    expect(done.data.completeTestPayment).toMatchObject({
      __typename: 'CompleteTestPaymentSuccess',
      payment: { status: 'succeeded', paymentMethod: { type: 'mobile_money', card: null, mobileMoney: { phone: expect.stringMatching(/^\+/) } }, checkout: { paymentMethods: ['mobile_money'], locale: null } },
    });
    const again = await m.gql(`mutation { completeTestPayment(input: { id: "${p.id}", outcome: succeeded }) { __typename ... on Error { code } } }`);
    expect(again.data.completeTestPayment).toEqual({ __typename: 'StateError', code: 'payment_not_pending' });

    const list = await m.gql(`{ payments(status: succeeded) { edges { node { id customer { email payments { edges { node { id } } } } } } } }`);
    expect(list.data.payments.edges.map((e: any) => e.node.id)).toEqual([p.id]);
    expect(list.data.payments.edges[0].node.customer.payments.edges.map((e: any) => e.node.id)).toEqual([p.id]);
    expect((await m.gql(`{ node(id: "${p.id}") { __typename ... on Payment { status } } }`)).data.node).toEqual({ __typename: 'Payment', status: 'succeeded' });
  });

  it('loads a page of 100 payments with customers and refunds in a bounded number of queries', async () => {
    // An app without a background worker: the count is the request's queries alone.
    const quiet = await startApp({}, { worker: false });
    try {
      await countPageQueries(quiet);
    } finally {
      await quiet.close();
    }
  });
});

/** Loads 100 payments with their customers and refunds in one GraphQL request and counts its SQL. */
async function countPageQueries(app: TestApp) {
  const m = await app.merchant();
  for (let i = 0; i < 100; i++) {
    const p = (await m.post('/v1/payments', { ...base, customer: { email: `n${i}@example.com` } })).body;
    if (i % 10 === 0) {
      await m.post(`/v1/test-helpers/payments/${p.id}/complete`, { outcome: 'succeeded' });
      await m.post('/v1/refunds', { payment_id: p.id, amount: 100 });
    }
  }
  const Q = `{ payments(first: 100) { edges { node { id amount customer { id email name } refunds { id amount status } } } } }`;
  app.queries.reset();
  const r = await m.gql(Q);
  const queries = app.queries.count;
  expect(r.errors).toBeUndefined();
  expect(r.data.payments.edges).toHaveLength(100);
  expect(r.data.payments.edges.filter((e: any) => e.node.refunds.length === 1)).toHaveLength(10);
  expect(new Set(r.data.payments.edges.map((e: any) => e.node.customer.email)).size).toBe(100);
  // auth + page (+ its include) + one batch per relation; never one per payment
  expect(queries).toBeLessThanOrEqual(12);
}

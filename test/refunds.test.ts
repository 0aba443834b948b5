import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
});
afterAll(() => app?.close());

async function paidPayment(c: Client, amount = 1000, currency = 'USD', email = 'r@example.com') {
  const p = (await c.post('/v1/payments', { amount, currency, customer: { email }, redirect_url: 'https://shop.example/r' })).body;
  const done = await c.post(`/v1/test-helpers/payments/${p.id}/complete`, { outcome: 'succeeded' });
  expect(done.body.status).toBe('succeeded');
  return p;
}

describe('refunds over REST', () => {
  it('keeps the metadata it is given (REST and GraphQL)', async () => {
    const p = await paidPayment(api, 500, 'USD', 'meta@example.com');
    const r = await api.post('/v1/refunds', { payment_id: p.id, amount: 100, metadata: { ticket: 'T-42' } });
    expect(r.body.metadata).toEqual({ ticket: 'T-42' });
    expect((await api.get(`/v1/refunds/${r.body.id}`)).body.metadata).toEqual({ ticket: 'T-42' });
    expect((await api.post('/v1/refunds', { payment_id: p.id, amount: 100 })).body.metadata).toEqual({});
    const g = await api.gql(`{ node(id: "${r.body.id}") { ... on Refund { metadata } } }`);
    expect(g.data.node.metadata).toEqual({ ticket: 'T-42' });
  });

  it('refunds partially, then the rest, and never more', async () => {
    const p = await paidPayment(api);
    const r1 = await api.post('/v1/refunds', { payment_id: p.id, amount: 300, reason: 'customer_request' });
    expect(r1.status).toBe(201);
    expect(r1.body).toMatchObject({ object: 'refund', payment_id: p.id, amount: 300, currency: 'USD', status: 'succeeded', reason: 'customer_request' });
    expect(r1.body.id).toMatch(/^re_/);
    expect((await api.get(`/v1/payments/${p.id}`)).body).toMatchObject({ amount_refunded: 300, refunded: false });

    const over = await api.post('/v1/refunds', { payment_id: p.id, amount: 701 });
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({ type: 'state_error', code: 'refund_exceeds_payment', param: 'amount' });
    expect(over.body.error.message).toContain('$7.00');

    const rest = await api.post('/v1/refunds', { payment_id: p.id });
    expect(rest.body).toMatchObject({ amount: 700, status: 'succeeded', reason: null });
    expect((await api.get(`/v1/payments/${p.id}`)).body).toMatchObject({ amount_refunded: 1000, refunded: true });
    const none = await api.post('/v1/refunds', { payment_id: p.id });
    expect(none.status).toBe(409);
    expect(none.body.error.code).toBe('refund_exceeds_payment');

    expect((await api.get(`/v1/refunds/${r1.body.id}`)).body).toEqual(r1.body);
    const types = (await api.get('/v1/events?type=refund.*&limit=100')).body.data.filter((e: any) => e.data.object.payment_id === p.id).map((e: any) => e.type);
    expect(types).toEqual(['refund.succeeded', 'refund.created', 'refund.succeeded', 'refund.created']);
  });

  it('refuses refunds of payments that did not succeed, and bad input', async () => {
    const open = (await api.post('/v1/payments', { amount: 100, currency: 'USD', customer: { email: 'x@example.com' }, redirect_url: 'https://shop.example/r' })).body;
    const r = await api.post('/v1/refunds', { payment_id: open.id });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ type: 'state_error', code: 'payment_not_succeeded', param: 'payment_id' });
    const failed = (await api.post('/v1/payments', { amount: 100, currency: 'USD', customer: { email: 'x@example.com' }, redirect_url: 'https://shop.example/r' })).body;
    await api.post(`/v1/test-helpers/payments/${failed.id}/complete`, { outcome: 'failed' });
    expect((await api.post('/v1/refunds', { payment_id: failed.id })).body.error.code).toBe('payment_not_succeeded');

    const missing = await api.post('/v1/refunds', { payment_id: 'pay_0000000000000000000000' });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'resource_missing', param: 'payment_id' });
    const p = await paidPayment(api);
    const other = await app.merchant();
    expect((await other.post('/v1/refunds', { payment_id: p.id })).status).toBe(404);
    for (const [body, code, param] of [
      [{}, 'parameter_missing', 'payment_id'],
      [{ payment_id: p.id, amount: 0 }, 'parameter_invalid', 'amount'],
      [{ payment_id: p.id, amount: -5 }, 'parameter_invalid', 'amount'],
      [{ payment_id: p.id, reason: 'bored' }, 'parameter_invalid', 'reason'],
      [{ payment_id: p.id, extra: 1 }, 'parameter_unknown', 'extra'],
    ] as const) {
      const res = await api.post('/v1/refunds', body);
      expect({ body, code: res.body.error?.code, param: res.body.error?.param }).toEqual({ body, code, param });
    }
    expect((await api.get(`/v1/payments/${p.id}`)).body.amount_refunded).toBe(0);
  });

  it('20 concurrent partial refunds that together exceed the amount: only those that fit succeed', async () => {
    const p = await paidPayment(api, 1000);
    const rs = await Promise.all(Array.from({ length: 20 }, () => api.post('/v1/refunds', { payment_id: p.id, amount: 150 })));
    const ok = rs.filter((r) => r.status === 201);
    const refused = rs.filter((r) => r.status === 409);
    expect(ok).toHaveLength(6);
    expect(refused).toHaveLength(14);
    for (const r of refused) expect(r.body.error.code).toBe('refund_exceeds_payment');
    const pay = (await api.get(`/v1/payments/${p.id}`)).body;
    expect(pay.amount_refunded).toBe(900);
    const listed = (await api.get(`/v1/refunds?payment_id=${p.id}&limit=100`)).body.data;
    expect(listed).toHaveLength(6);
    expect(listed.reduce((s: number, r: any) => s + r.amount, 0)).toBe(900);
    // the remaining 100 can still be refunded, and nothing more
    expect((await api.post('/v1/refunds', { payment_id: p.id })).body.amount).toBe(100);
  });

  it('filters refunds like payments', async () => {
    const m = await app.merchant();
    const t0 = new Date(Date.now() - 1000).toISOString();
    const usd = await paidPayment(m, 1000, 'USD', 'a@example.com');
    const kes = await paidPayment(m, 5000, 'KES', 'b@example.com');
    const r1 = (await m.post('/v1/refunds', { payment_id: usd.id, amount: 10 })).body;
    const mid = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const r2 = (await m.post('/v1/refunds', { payment_id: kes.id, amount: 20 })).body;
    const q = async (s: string) => (await m.get(`/v1/refunds?${s}`)).body.data.map((r: any) => r.id);
    expect(await q('')).toEqual([r2.id, r1.id]);
    expect(await q('currency=kes')).toEqual([r2.id]);
    expect(await q(`customer_id=${usd.customer_id}`)).toEqual([r1.id]);
    expect(await q('status=succeeded')).toEqual([r2.id, r1.id]);
    expect(await q('status=pending')).toEqual([]);
    expect(await q(`created_after=${mid}`)).toEqual([r2.id]);
    expect(await q(`created_before=${mid}&created_after=${t0}`)).toEqual([r1.id]);
    expect(await q('limit=1')).toEqual([r2.id]);
    expect((await m.get('/v1/refunds?status=done')).status).toBe(400);
  });
});

describe('refunds over GraphQL', () => {
  it('creates refunds with typed errors and lists them on the payment and in the connection', async () => {
    const m = await app.merchant();
    const p = await paidPayment(m, 500);
    const M = `mutation($input: CreateRefundInput!) { createRefund(input: $input) {
      __typename ... on CreateRefundSuccess { refund { id amount status reason payment { id amountRefunded refunded } } } ... on Error { code param } } }`;
    const ok = await m.gql(M, { input: { paymentId: p.id, amount: 200, reason: 'duplicate' } });
    expect(ok.data.createRefund).toMatchObject({
      __typename: 'CreateRefundSuccess',
      refund: { amount: 200, status: 'succeeded', reason: 'duplicate', payment: { id: p.id, amountRefunded: 200, refunded: false } },
    });
    const over = await m.gql(M, { input: { paymentId: p.id, amount: 301 } });
    expect(over.data.createRefund).toEqual({ __typename: 'StateError', code: 'refund_exceeds_payment', param: 'amount' });
    const missing = await m.gql(M, { input: { paymentId: 'pay_0000000000000000000000' } });
    expect(missing.data.createRefund).toEqual({ __typename: 'NotFoundError', code: 'resource_missing', param: 'paymentId' });
    const rest = await m.gql(M, { input: { paymentId: p.id, idempotencyKey: 'full-1' } });
    const again = await m.gql(M, { input: { paymentId: p.id, idempotencyKey: 'full-1' } });
    expect(again.data.createRefund.refund.id).toBe(rest.data.createRefund.refund.id);
    expect(rest.data.createRefund.refund).toMatchObject({ amount: 300, payment: { refunded: true } });

    const q = await m.gql(`{ payment(id: "${p.id}") { refunds { amount } } refunds(first: 10, currency: "usd", status: succeeded) { edges { node { amount } } } }`);
    expect(q.data.payment.refunds.map((r: any) => r.amount)).toEqual([300, 200]);
    expect(q.data.refunds.edges.map((e: any) => e.node.amount)).toEqual([300, 200]);
    const byCustomer = await m.gql(`{ refunds(customerId: "${p.customer_id}", paymentId: "${p.id}") { edges { node { id } } } }`);
    expect(byCustomer.data.refunds.edges).toHaveLength(2);
  });
});

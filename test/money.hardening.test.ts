// Money paths under a slow, a failing and a jittery processor, and under PostgreSQL races:
// idempotency never wraps a processor call in a transaction, top-up refunds take the money back
// out of the wallet, closing a wallet never strands a charged top-up, same-reference debits agree.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApp, usingPostgres, type Client, type TestApp } from './helpers/app.ts';
import { injectProcessor, type FakeProcessor } from './helpers/processor.ts';

let app: TestApp;
let api: Client;
let proc: FakeProcessor;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
  proc = injectProcessor(app);
});
afterEach(() => {
  proc.release();
  proc.mode = 'pass';
  proc.jitterMs = 0;
  app.services.runtime.idempotencyLeaseMs = undefined;
});
afterAll(() => app?.close());

const REDIRECT = 'https://shop.example/done';

async function paidPayment(amount = 1000) {
  const p = (await api.post('/v1/payments', { amount, currency: 'USD', customer: { email: `p${Math.random()}@example.com` }, redirect_url: REDIRECT })).body;
  const done = await api.post(`/v1/test-helpers/payments/${p.id}/complete`, { outcome: 'succeeded' });
  expect(done.body.status).toBe('succeeded');
  return p;
}

async function wallet(c: Client = api) {
  const cus = (await c.post('/v1/customers', { email: `w${Math.random()}@example.com` })).body;
  const w = await c.post('/v1/wallets', { customer_id: cus.id, currency: 'USD' });
  expect(w.status).toBe(201);
  return w.body;
}

async function paidTopup(walletId: string, amount: number) {
  const t = (await api.post(`/v1/wallets/${walletId}/topups`, { amount, redirect_url: REDIRECT })).body;
  const done = await api.post(`/v1/test-helpers/wallet-topups/${t.id}/complete`, { outcome: 'succeeded' });
  expect(done.body.status).toBe('succeeded');
  return t;
}

const INCOMING = new Set(['credit', 'topup', 'refund_reversal']);
async function ledger(c: Client, walletId: string) {
  const rows: any[] = [];
  let after: string | null = null;
  do {
    const r: any = await c.get(`/v1/wallets/${walletId}/transactions?limit=100${after ? `&after=${after}` : ''}`);
    rows.push(...r.body.data);
    after = r.body.next_cursor;
  } while (after);
  return { rows, sum: rows.reduce((s, t) => s + (INCOMING.has(t.type) ? t.amount : -t.amount), 0) };
}

const eventsOf = async (objectId: string) =>
  (await app.services.db.prisma.event.findMany({ where: { merchantId: api.creds.merchant_id }, orderBy: { createdAt: 'asc' } }))
    .filter((e) => (e.data as any).object?.id === objectId || (e.data as any).object?.metadata?.refund_id === objectId)
    .map((e) => e.type);

/** True when no transaction holds the payment's row lock (a separate connection can take it at once). */
async function paymentRowFree(paymentId: string): Promise<boolean> {
  if (!usingPostgres) return true;
  const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await c.connect();
  try {
    await c.query('BEGIN');
    await c.query('SELECT id FROM payments WHERE id = $1 FOR UPDATE NOWAIT', [paymentId]);
    return true;
  } catch {
    return false;
  } finally {
    await c.query('ROLLBACK').catch(() => {});
    await c.end();
  }
}

describe('a processor call never runs inside a transaction, with or without an Idempotency-Key', () => {
  it('slow refund: the reservation is committed and visible, no row lock is held, a duplicate waits its turn', async () => {
    const p = await paidPayment(1000);
    proc.hold();
    const calledOnce = proc.called();
    const key = { 'Idempotency-Key': `slow-refund-${p.id}` };
    const first = api.post('/v1/refunds', { payment_id: p.id, amount: 400 }, key);
    await calledOnce;

    // While the processor thinks: others read (and on PostgreSQL could lock) the payment at once.
    const seen = await api.get(`/v1/payments/${p.id}`);
    expect(seen.status).toBe(200);
    expect(seen.body.amount_refunded).toBe(400);
    const pending = (await api.get(`/v1/refunds?payment_id=${p.id}`)).body.data;
    expect(pending).toEqual([expect.objectContaining({ amount: 400, status: 'pending' })]);
    expect(await paymentRowFree(p.id)).toBe(true);
    // Another refund of the same payment is not blocked either (it is held at the processor too).
    const other = api.post('/v1/refunds', { payment_id: p.id, amount: 100 });
    // The same key meanwhile: the first request is still running.
    const dup = await api.post('/v1/refunds', { payment_id: p.id, amount: 400 }, key);
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('idempotency_key_in_use');

    proc.release();
    const r1 = await first;
    expect(r1.status).toBe(201);
    expect(r1.body).toMatchObject({ amount: 400, status: 'succeeded' });
    expect((await other).body.status).toBe('succeeded');
    const replay = await api.post('/v1/refunds', { payment_id: p.id, amount: 400 }, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(r1.body);
    expect(proc.refunds.filter((id) => id === r1.body.id)).toHaveLength(1);
    expect((await api.get(`/v1/payments/${p.id}`)).body.amount_refunded).toBe(500);
  });

  it('a retry after the claim went stale never repeats a refund that was committed', async () => {
    const p = await paidPayment(1000);
    app.services.runtime.idempotencyLeaseMs = 200;
    proc.hold();
    const called = proc.called();
    const key = { 'Idempotency-Key': `stale-refund-${p.id}` };
    const first = api.post('/v1/refunds', { payment_id: p.id }, key);
    await called;
    await new Promise((r) => setTimeout(r, 400));
    const retry = await api.post('/v1/refunds', { payment_id: p.id }, key);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('idempotency_key_in_use');
    proc.release();
    const r1 = await first;
    expect(r1.body.status).toBe('succeeded');
    const all = (await api.get(`/v1/refunds?payment_id=${p.id}`)).body.data;
    expect(all).toHaveLength(1);
    expect(proc.refunds.filter((id) => id === r1.body.id)).toHaveLength(1);
    expect((await api.post('/v1/refunds', { payment_id: p.id }, key)).body).toEqual(r1.body);
  });

  it('failing processor: the refund is recorded as failed, the amount released, the outcome replayed', async () => {
    const p = await paidPayment(1000);
    proc.mode = 'throw';
    const key = { 'Idempotency-Key': `failing-refund-${p.id}` };
    const r = await api.post('/v1/refunds', { payment_id: p.id, amount: 300 }, key);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'failed', failure_code: 'processing_error' });
    expect((await api.get(`/v1/payments/${p.id}`)).body.amount_refunded).toBe(0);
    expect((await eventsOf(r.body.id)).sort()).toEqual(['refund.created', 'refund.failed']);
    const again = await api.post('/v1/refunds', { payment_id: p.id, amount: 300 }, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(r.body);
    expect(proc.refunds.filter((id) => id === r.body.id)).toHaveLength(1);
    proc.mode = 'pass';
    expect((await api.post('/v1/refunds', { payment_id: p.id })).body).toMatchObject({ amount: 1000, status: 'succeeded' });
  });

  it('a refund left pending by a dead request is finished by its job, once', async () => {
    const p = await paidPayment(800);
    // Reserve as a request would, then "die" before asking the processor.
    const { reserveRefund } = await import('../src/domain/refunds/index.ts');
    const { lockPayment } = await import('../src/domain/payments/index.ts');
    const { forMerchant, inTransaction } = await import('../src/platform/db/tenant.ts');
    const merchant = { id: api.creds.merchant_id, mode: 'test' as const };
    const ctx = { merchant, db: forMerchant(app.services.db.prisma, merchant.id), requestId: 'req_test', log: app.services.log, runtime: app.services.runtime };
    const refund = await inTransaction(ctx.db, async (tx) => reserveRefund(ctx, tx, await lockPayment(ctx, tx, p.id), {}));
    expect(refund.status).toBe('pending');
    await api.post('/v1/test-helpers/clock/advance', { seconds: 11 * 60 });
    const after = (await api.get(`/v1/refunds/${refund.id}`)).body;
    expect(after.status).toBe('succeeded');
    expect(proc.refunds.filter((id) => id === refund.id)).toHaveLength(1);
    expect((await api.get(`/v1/payments/${p.id}`)).body.amount_refunded).toBe(800);
  });

  it('slow charge at the checkout: the payment shows processing meanwhile and is charged once', async () => {
    const p = (await api.post('/v1/payments', { amount: 1200, currency: 'USD', customer: { email: 'slow@example.com' }, redirect_url: REDIRECT })).body;
    proc.hold();
    const called = proc.called();
    const key = { 'Idempotency-Key': `slow-charge-${p.id}` };
    const first = api.post(`/v1/test-helpers/payments/${p.id}/complete`, { outcome: 'succeeded' }, key);
    await called;
    expect((await api.get(`/v1/payments/${p.id}`)).body.status).toBe('processing');
    expect(await paymentRowFree(p.id)).toBe(true);
    proc.release();
    expect((await first).body.status).toBe('succeeded');
    expect(proc.charges.filter((id) => id === p.id)).toHaveLength(1);
  });
});

describe('refunding a wallet top-up takes the money back out of the wallet', () => {
  it('full and partial refunds move the wallet in the refund’s transaction, with a ledger entry and event', async () => {
    const w = await wallet();
    const t = await paidTopup(w.id, 5000);
    const part = await api.post('/v1/refunds', { payment_id: t.payment_id, amount: 2000 });
    expect(part.status).toBe(201);
    expect(part.body.status).toBe('succeeded');
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(3000);
    const rest = await api.post('/v1/refunds', { payment_id: t.payment_id });
    expect(rest.body.amount).toBe(3000);
    const l = await ledger(api, w.id);
    expect(l.rows.map((r) => [r.type, r.amount, r.reference])).toEqual([
      ['refund', 3000, rest.body.id],
      ['refund', 2000, part.body.id],
      ['topup', 5000, t.id],
    ]);
    expect(l.sum).toBe(0);
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(0);
    // (events of one transaction share its timestamp: compare as a set)
    expect((await eventsOf(part.body.id)).sort()).toEqual(['refund.created', 'refund.succeeded', 'wallet.debited']);
  });

  it('is refused (409) when the wallet no longer holds the money, or is closed; nothing moves', async () => {
    const w = await wallet();
    const t = await paidTopup(w.id, 5000);
    await api.post(`/v1/wallets/${w.id}/debit`, { amount: 1000, description: 'usage', reference: 'spent' });
    const r = await api.post('/v1/refunds', { payment_id: t.payment_id });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ type: 'state_error', code: 'refund_exceeds_wallet_balance', param: 'amount' });
    expect(r.body.error.message).toContain('$40.00');
    expect((await api.get(`/v1/payments/${t.payment_id}`)).body.amount_refunded).toBe(0);
    expect((await api.get(`/v1/refunds?payment_id=${t.payment_id}`)).body.data).toHaveLength(0);
    expect((await api.post('/v1/refunds', { payment_id: t.payment_id, amount: 4000 })).status).toBe(201);
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(0);

    const w2 = await wallet();
    const t2 = await paidTopup(w2.id, 700);
    expect((await api.post(`/v1/wallets/${w2.id}/close`)).status).toBe(200);
    const closed = await api.post('/v1/refunds', { payment_id: t2.payment_id });
    expect(closed.status).toBe(409);
    expect(closed.body.error.code).toBe('wallet_closed');
    expect((await api.get(`/v1/payments/${t2.payment_id}`)).body.amount_refunded).toBe(0);
  });

  it('expiring credit is not refundable money; a refused refund puts the money back', async () => {
    const w = await wallet();
    const now = new Date((await api.get('/v1/test-helpers/clock')).body.now);
    await api.post(`/v1/wallets/${w.id}/credit`, { amount: 3000, description: 'promo', reference: 'promo', expires_at: new Date(now.getTime() + 86_400_000).toISOString() });
    const t = await paidTopup(w.id, 5000);
    await api.post(`/v1/wallets/${w.id}/debit`, { amount: 4000, description: 'usage', reference: 'use' }); // 3000 promo first, then 1000
    expect((await api.post('/v1/refunds', { payment_id: t.payment_id })).body.error.code).toBe('refund_exceeds_wallet_balance');

    proc.mode = 'decline-refund';
    const declined = await api.post('/v1/refunds', { payment_id: t.payment_id, amount: 4000 });
    expect(declined.body).toMatchObject({ status: 'failed', failure_code: 'refund_declined' });
    const l = await ledger(api, w.id);
    expect(l.rows.slice(0, 2).map((r) => [r.type, r.amount])).toEqual([['refund_reversal', 4000], ['refund', 4000]]);
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(4000);
    expect(l.sum).toBe(4000);
  });

  it('works through GraphQL with the same rule', async () => {
    const w = await wallet();
    const t = await paidTopup(w.id, 900);
    const q = `mutation($input: CreateRefundInput!) { createRefund(input: $input) { __typename ... on CreateRefundSuccess { refund { amount status } } ... on Error { code } } }`;
    const ok = await api.gql(q, { input: { paymentId: t.payment_id, amount: 400 } });
    expect(ok.data.createRefund).toEqual({ __typename: 'CreateRefundSuccess', refund: { amount: 400, status: 'succeeded' } });
    const tooMuch = await api.gql(q, { input: { paymentId: t.payment_id, amount: 500 } });
    expect(tooMuch.data.createRefund).toEqual({ __typename: 'CreateRefundSuccess', refund: { amount: 500, status: 'succeeded' } });
    const w2 = await wallet();
    const t2 = await paidTopup(w2.id, 900);
    await api.post(`/v1/wallets/${w2.id}/debit`, { amount: 1, description: 'x', reference: 'x' });
    const refused = await api.gql(q, { input: { paymentId: t2.payment_id } });
    expect(refused.data.createRefund).toEqual({ __typename: 'StateError', code: 'refund_exceeds_wallet_balance' });
    const txs = await api.gql(`{ wallet(id: "${w.id}") { balance transactions(first: 5, type: refund) { edges { node { type amount } } } } }`);
    expect(txs.data.wallet.balance).toBe(0);
    expect(txs.data.wallet.transactions.edges.map((e: any) => e.node)).toEqual([
      { type: 'refund', amount: 500 },
      { type: 'refund', amount: 400 },
    ]);
  });
});

describe('closing a wallet while its top-up is being paid', () => {
  it('is refused with 409 while the charge is in flight; the top-up then lands and close succeeds', async () => {
    const w = await wallet();
    const t = (await api.post(`/v1/wallets/${w.id}/topups`, { amount: 1500, redirect_url: REDIRECT })).body;
    proc.hold();
    const called = proc.called();
    const paying = api.post(`/v1/test-helpers/wallet-topups/${t.id}/complete`, { outcome: 'succeeded' });
    await called;
    const close = await api.post(`/v1/wallets/${w.id}/close`);
    expect(close.status).toBe(409);
    expect(close.body.error.code).toBe('wallet_topup_in_progress');
    proc.release();
    expect((await paying).body.status).toBe('succeeded');
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(1500);
    const closed = await api.post(`/v1/wallets/${w.id}/close`);
    expect(closed.body.status).toBe('closed');
    expect((await ledger(api, w.id)).sum).toBe(0);
  });

  it('is refused while a top-up refund is at the processor', async () => {
    const w = await wallet();
    const t = await paidTopup(w.id, 600);
    proc.hold();
    const called = proc.called();
    const refunding = api.post('/v1/refunds', { payment_id: t.payment_id });
    await called;
    const close = await api.post(`/v1/wallets/${w.id}/close`);
    expect(close.status).toBe(409);
    expect(close.body.error.code).toBe('wallet_topup_in_progress');
    proc.release();
    expect((await refunding).body.status).toBe('succeeded');
    expect((await api.post(`/v1/wallets/${w.id}/close`)).status).toBe(200);
  });

  it(`raced ${usingPostgres ? 40 : 10} times: never a stuck payment, never a 500, the books balance`, async () => {
    proc.jitterMs = 15;
    const tries = usingPostgres ? 40 : 10;
    const outcomes: Record<string, number> = {};
    for (let i = 0; i < tries; i++) {
      const w = await wallet();
      await api.post(`/v1/wallets/${w.id}/credit`, { amount: 100, description: 'seed', reference: 'seed' });
      const t = (await api.post(`/v1/wallets/${w.id}/topups`, { amount: 1000, redirect_url: REDIRECT })).body;
      // Spread the starts so that close lands before, during and after the charge.
      const wait = (ms: number) => new Promise((r) => setTimeout(r, Math.random() * ms));
      const [pay, close] = await Promise.all([
        wait(40).then(() => api.post(`/v1/test-helpers/wallet-topups/${t.id}/complete`, { outcome: 'succeeded' })),
        wait(80).then(() => api.post(`/v1/wallets/${w.id}/close`)),
      ]);
      expect(pay.status, JSON.stringify(pay.body)).toBeLessThan(500);
      expect(close.status, JSON.stringify(close.body)).toBeLessThan(500);
      const payment = (await api.get(`/v1/payments/${t.payment_id}`)).body;
      const topup = (await api.get(`/v1/wallets/${w.id}/topups`)).body.data.find((x: any) => x.id === t.id);
      const wal = (await api.get(`/v1/wallets/${w.id}`)).body;
      expect(payment.status).not.toBe('processing');
      expect(['succeeded', 'cancelled']).toContain(payment.status);
      if (payment.status === 'succeeded') {
        expect(topup.status).toBe('succeeded');
        const l = await ledger(api, w.id);
        expect(l.rows.some((r) => r.type === 'topup' && r.reference === t.id)).toBe(true);
      } else {
        expect(topup.status).toBe('cancelled');
      }
      if (close.status === 200) expect(wal.balance).toBe(0);
      else expect(close.body.error.code).toBe('wallet_topup_in_progress');
      expect((await ledger(api, w.id)).sum).toBe(wal.balance);
      const k = `${payment.status}/${close.status}`;
      outcomes[k] = (outcomes[k] ?? 0) + 1;
    }
    // The race was real: more than one interleaving happened.
    expect(Object.keys(outcomes).length, JSON.stringify(outcomes)).toBeGreaterThan(1);
  });
});

describe('debits and credits racing with the same reference', () => {
  it('30 concurrent debits with one reference all answer with the one transaction, also across two servers', async () => {
    const w = await wallet();
    await api.post(`/v1/wallets/${w.id}/credit`, { amount: 1000, description: 'seed', reference: 'seed' });
    // On PostgreSQL a second server (its own pool) shares the database; PGlite is one process.
    const other = usingPostgres ? await startApp({}, { worker: false }) : null;
    try {
      const api2 = other ? (new (api.constructor as any)(other.url, api.creds) as Client) : api;
      const body = { amount: 7, description: 'usage', reference: 'same-ref' };
      const rs = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? api2 : api).post(`/v1/wallets/${w.id}/debit`, body)));
      for (const r of rs) expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(new Set(rs.map((r) => r.body.id)).size).toBe(1);
      const cs = await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 ? api2 : api).post(`/v1/wallets/${w.id}/credit`, { amount: 5, description: 'bonus', reference: 'same-credit' })),
      );
      for (const r of cs) expect([200, 201], JSON.stringify(r.body)).toContain(r.status);
      expect(cs.filter((r) => r.status === 201)).toHaveLength(1);
      expect(new Set(cs.map((r) => r.body.id)).size).toBe(1);
    } finally {
      await other?.close();
    }
    const l = await ledger(api, w.id);
    expect(l.rows).toHaveLength(3);
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(1000 - 7 + 5);
  });
});

describe('an idempotent replay returns what the first call returned', () => {
  it('createWebhookEndpoint replayed after a rotation shows the original secret (GraphQL and REST)', async () => {
    const m = `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { __typename ... on WebhookEndpointWithSecret { secret webhookEndpoint { id } } } }`;
    const input = { url: 'https://hooks.example/x', idempotencyKey: 'we-replay-1' };
    const first = (await api.gql(m, { input })).data.createWebhookEndpoint;
    const rot = `mutation($input: WebhookEndpointIdInput!) { rotateWebhookEndpointSecret(input: $input) { ... on WebhookEndpointWithSecret { secret } } }`;
    const rotated = (await api.gql(rot, { input: { id: first.webhookEndpoint.id } })).data.rotateWebhookEndpointSecret.secret;
    expect(rotated).not.toBe(first.secret);
    const replay = (await api.gql(m, { input })).data.createWebhookEndpoint;
    expect(replay).toEqual(first);

    const h = { 'Idempotency-Key': 'we-replay-rest' };
    const r1 = await api.post('/v1/webhook-endpoints', { url: 'https://hooks.example/y' }, h);
    await api.post(`/v1/webhook-endpoints/${r1.body.id}/rotate-secret`);
    const r2 = await api.post('/v1/webhook-endpoints', { url: 'https://hooks.example/y' }, h);
    expect(r2.body.secret).toBe(r1.body.secret);
  });
});

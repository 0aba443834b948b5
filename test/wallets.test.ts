import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, usingPostgres, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
});
afterAll(() => app?.close());

async function wallet(c: Client = api, currency = 'USD', email = `w${Math.random()}@example.com`) {
  const cus = (await c.post('/v1/customers', { email })).body;
  const w = await c.post('/v1/wallets', { customer_id: cus.id, currency });
  expect(w.status).toBe(201);
  return w.body;
}
const credit = (c: Client, id: string, amount: number, reference: string, extra: Record<string, unknown> = {}) =>
  c.post(`/v1/wallets/${id}/credit`, { amount, description: 'Admin credit', reference, ...extra });
const debit = (c: Client, id: string, amount: number, reference: string) => c.post(`/v1/wallets/${id}/debit`, { amount, description: 'Usage', reference });
const balance = async (c: Client, id: string) => (await c.get(`/v1/wallets/${id}`)).body.balance;

/** balance = sum of the ledger (credits and top-ups up, debits and expiries down) */
async function ledgerSum(c: Client, id: string) {
  let sum = 0;
  let after: string | null = null;
  let rows = 0;
  do {
    const r: any = await c.get(`/v1/wallets/${id}/transactions?limit=100${after ? `&after=${after}` : ''}`);
    for (const t of r.body.data) sum += t.type === 'credit' || t.type === 'topup' ? t.amount : -t.amount;
    rows += r.body.data.length;
    after = r.body.next_cursor;
  } while (after);
  return { sum, rows };
}

describe('wallets', () => {
  it('creates one open wallet per customer and currency', async () => {
    const cus = (await api.post('/v1/customers', { email: 'one@example.com' })).body;
    const w = await api.post('/v1/wallets', { customer_id: cus.id, currency: 'usd', metadata: { plan: 'pro' } });
    expect(w.status).toBe(201);
    expect(w.body).toMatchObject({ object: 'wallet', customer_id: cus.id, currency: 'USD', balance: 0, balance_formatted: '$0.00', status: 'active', metadata: { plan: 'pro' } });
    expect(w.body.id).toMatch(/^wal_/);
    const dup = await api.post('/v1/wallets', { customer_id: cus.id, currency: 'USD' });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ type: 'state_error', code: 'wallet_exists' });
    expect((await api.post('/v1/wallets', { customer_id: cus.id, currency: 'EUR' })).status).toBe(201);
    await api.post(`/v1/wallets/${w.body.id}/close`);
    expect((await api.post('/v1/wallets', { customer_id: cus.id, currency: 'USD' })).status).toBe(201);
    const missing = await api.post('/v1/wallets', { customer_id: 'cus_0000000000000000000000', currency: 'USD' });
    expect(missing.body.error).toMatchObject({ code: 'resource_missing', param: 'customer_id' });
    for (const [body, code, param] of [
      [{ currency: 'USD' }, 'parameter_missing', 'customer_id'],
      [{ customer_id: cus.id, currency: 'ZZZ' }, 'parameter_invalid', 'currency'],
      [{ customer_id: cus.id, currency: 'USD', balance: 5 }, 'parameter_unknown', 'balance'],
    ] as const) {
      const r = await api.post('/v1/wallets', body);
      expect({ code: r.body.error?.code, param: r.body.error?.param }).toEqual({ code, param });
    }
    const list = await api.get(`/v1/wallets?customer_id=${cus.id}&status=closed`);
    expect(list.body.data.map((x: any) => x.id)).toEqual([w.body.id]);
    expect((await api.get(`/v1/wallets?customer_id=${cus.id}&currency=eur`)).body.data).toHaveLength(1);
  });

  it('formats balances with ISO decimals', async () => {
    const jpy = await wallet(api, 'JPY');
    await credit(api, jpy.id, 1200, 'j1');
    expect((await api.get(`/v1/wallets/${jpy.id}`)).body.balance_formatted).toBe('¥1,200');
    const kwd = await wallet(api, 'KWD');
    await credit(api, kwd.id, 1250, 'k1');
    expect((await api.get(`/v1/wallets/${kwd.id}`)).body.balance_formatted).toBe('KWD 1.250');
    const xaf = await wallet(api, 'XAF');
    await credit(api, xaf.id, 1000, 'x1');
    expect((await api.get(`/v1/wallets/${xaf.id}`)).body.balance_formatted).toBe('FCFA 1,000');
  });

  it('debits and credits with references that make retries safe', async () => {
    const w = await wallet();
    const c = await credit(api, w.id, 1000, 'c-1');
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ object: 'wallet_transaction', wallet_id: w.id, type: 'credit', amount: 1000, balance_before: 0, balance_after: 1000, reference: 'c-1', expires_at: null });
    const again = await credit(api, w.id, 1000, 'c-1');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(c.body);

    const d = await debit(api, w.id, 300, 'd-1');
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ type: 'debit', amount: 300, balance_before: 1000, balance_after: 700, reference: 'd-1', description: 'Usage' });
    const dAgain = await debit(api, w.id, 300, 'd-1');
    expect(dAgain.status).toBe(200);
    expect(dAgain.body.id).toBe(d.body.id);
    expect(await balance(api, w.id)).toBe(700);

    const reused = await debit(api, w.id, 301, 'd-1');
    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatchObject({ type: 'state_error', code: 'reference_reused', param: 'reference' });
    expect((await debit(api, w.id, 1000, 'c-1')).body.error.code).toBe('reference_reused');

    const poor = await debit(api, w.id, 701, 'd-2');
    expect(poor.status).toBe(402);
    expect(poor.body.error).toMatchObject({ type: 'wallet_error', code: 'insufficient_balance', balance: 700 });
    expect(await balance(api, w.id)).toBe(700);
    expect((await ledgerSum(api, w.id)).rows).toBe(2);
    // the reference of a refused debit is still free
    expect((await debit(api, w.id, 700, 'd-2')).body.balance_after).toBe(0);

    for (const [body, code, param] of [
      [{ amount: 5, description: 'x' }, 'parameter_missing', 'reference'],
      [{ amount: 0, description: 'x', reference: 'r' }, 'parameter_invalid', 'amount'],
      [{ amount: 100_000_000_000, description: 'x', reference: 'r' }, 'amount_too_large', 'amount'],
      [{ amount: 5, description: '', reference: 'r' }, 'parameter_invalid', 'description'],
      [{ amount: 5, reference: 'r' }, 'parameter_missing', 'description'],
    ] as const) {
      const r = await api.post(`/v1/wallets/${w.id}/debit`, body);
      expect({ code: r.body.error?.code, param: r.body.error?.param }).toEqual({ code, param });
    }
    expect((await debit(api, 'wal_0000000000000000000000', 1, 'x')).status).toBe(404);
  });

  it('freeze blocks debits only; close is final', async () => {
    const w = await wallet();
    await credit(api, w.id, 500, 'seed');
    const f = await api.post(`/v1/wallets/${w.id}/freeze`);
    expect(f.body.status).toBe('frozen');
    expect((await api.post(`/v1/wallets/${w.id}/freeze`)).body.error.code).toBe('wallet_not_active');
    const blocked = await debit(api, w.id, 1, 'while-frozen');
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.code).toBe('wallet_frozen');
    expect((await credit(api, w.id, 100, 'frozen-credit')).status).toBe(201);
    const top = await api.post(`/v1/wallets/${w.id}/topups`, { amount: 50, redirect_url: 'https://app.example/w' });
    expect(top.status).toBe(201);
    expect((await api.post(`/v1/wallets/${w.id}/unfreeze`)).body.status).toBe('active');
    expect((await api.post(`/v1/wallets/${w.id}/unfreeze`)).body.error.code).toBe('wallet_not_frozen');
    expect((await debit(api, w.id, 100, 'after-unfreeze')).status).toBe(200);

    const closed = await api.post(`/v1/wallets/${w.id}/close`);
    expect(closed.body).toMatchObject({ status: 'closed', balance: 0 });
    // the pending top-up's checkout was cancelled
    expect((await api.get(`/v1/wallets/${w.id}/topups`)).body.data[0].status).toBe('cancelled');
    // the 500 left is not lost: it is the last ledger entry
    const last = (await api.get(`/v1/wallets/${w.id}/transactions?limit=1`)).body.data[0];
    expect(last).toMatchObject({ type: 'expiry', amount: 500, balance_after: 0, metadata: { reason: 'wallet_closed' } });
    expect((await ledgerSum(api, w.id)).sum).toBe(0);
    for (const r of [
      await debit(api, w.id, 1, 'x'),
      await credit(api, w.id, 1, 'y'),
      await api.post(`/v1/wallets/${w.id}/topups`, { amount: 5, redirect_url: 'https://app.example/w' }),
      await api.post(`/v1/wallets/${w.id}/freeze`),
      await api.post(`/v1/wallets/${w.id}/close`),
    ]) {
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('wallet_closed');
    }
    const types = (await api.get('/v1/events?type=wallet.*&limit=100')).body.data.filter((e: any) => (e.data.object.wallet_id ?? e.data.object.id) === w.id).map((e: any) => e.type);
    expect(types).toEqual(['wallet.closed', 'wallet.debited', 'wallet.unfrozen', 'wallet.credited', 'wallet.frozen', 'wallet.credited', 'wallet.created']);
  });

  it('expiring credit is used first and only its unused part expires', async () => {
    const m = await app.merchant();
    const w = await wallet(m);
    const now = new Date((await m.get('/v1/test-helpers/clock')).body.now);
    const in10d = new Date(now.getTime() + 10 * 86400_000).toISOString();
    const in20d = new Date(now.getTime() + 20 * 86400_000).toISOString();
    expect((await credit(m, w.id, 100, 'plain')).status).toBe(201);
    const g1 = await credit(m, w.id, 500, 'exp-10', { expires_at: in10d });
    expect(g1.body.expires_at).toBe(in10d);
    await credit(m, w.id, 300, 'exp-20', { expires_at: in20d });
    // 200 comes out of the grant expiring first
    await debit(m, w.id, 200, 'use-1');
    await m.post('/v1/test-helpers/clock/advance', { seconds: 10 * 86400 });
    let ledger = (await m.get(`/v1/wallets/${w.id}/transactions?type=expiry`)).body.data;
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ type: 'expiry', amount: 300, balance_before: 700, balance_after: 400 });
    expect(await balance(m, w.id)).toBe(400);
    // 350 more: the 300 of the second grant first, then 50 of the plain credit
    await debit(m, w.id, 350, 'use-2');
    await m.post('/v1/test-helpers/clock/advance', { seconds: 11 * 86400 });
    ledger = (await m.get(`/v1/wallets/${w.id}/transactions?type=expiry`)).body.data;
    expect(ledger).toHaveLength(1);
    expect(await balance(m, w.id)).toBe(50);
    const expired = (await m.get('/v1/events?type=wallet.credit.expired')).body.data;
    expect(expired).toHaveLength(1);
    expect(expired[0].data.object).toMatchObject({ amount: 300, wallet_id: w.id });
    const past = await credit(m, w.id, 5, 'too-late', { expires_at: now.toISOString() });
    expect(past.body.error).toMatchObject({ code: 'parameter_invalid', param: 'expires_at' });
    expect((await ledgerSum(m, w.id)).sum).toBe(50);
  });

  it('lists the ledger newest first with a type filter and pages', async () => {
    const w = await wallet();
    for (let i = 0; i < 5; i++) await credit(api, w.id, 10, `l${i}`);
    await debit(api, w.id, 5, 'ld');
    const all = (await api.get(`/v1/wallets/${w.id}/transactions?limit=4`)).body;
    expect(all.data.map((t: any) => t.reference)).toEqual(['ld', 'l4', 'l3', 'l2']);
    const rest = (await api.get(`/v1/wallets/${w.id}/transactions?limit=4&after=${all.next_cursor}`)).body;
    expect(rest.data.map((t: any) => t.reference)).toEqual(['l1', 'l0']);
    expect((await api.get(`/v1/wallets/${w.id}/transactions?type=debit`)).body.data).toHaveLength(1);
    expect((await api.get(`/v1/wallets/${w.id}/transactions?type=refund`)).body.data).toHaveLength(0);
    expect((await api.get(`/v1/wallets/${w.id}/transactions?type=bonus`)).status).toBe(400);
  });
});

describe('top-ups', () => {
  it('a paid top-up credits the wallet exactly once', async () => {
    const w = await wallet();
    const t = await api.post(`/v1/wallets/${w.id}/topups`, { amount: 2500, redirect_url: 'https://app.example/wallet', cancel_url: 'https://app.example/c' });
    expect(t.status).toBe(201);
    expect(t.body).toMatchObject({ object: 'wallet_topup', wallet_id: w.id, amount: 2500, currency: 'USD', status: 'pending', transaction_id: null });
    expect(t.body.id).toMatch(/^wtu_/);
    expect(t.body.checkout_url).toMatch(/\/hosted\/checkout\/[0-9A-Za-z]{40}$/);
    const page = await (await fetch(t.body.checkout_url.replace(app.services.config.publicBaseUrl, app.url))).text();
    expect(page).toContain('Wallet top-up');
    expect(page).toContain('$25.00');

    const done = await api.post(`/v1/test-helpers/wallet-topups/${t.body.id}/complete`, { outcome: 'succeeded' });
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('succeeded');
    expect(done.body.transaction_id).toMatch(/^wtx_/);
    expect(await balance(api, w.id)).toBe(2500);
    // completion delivered again: refused, nothing credited twice
    expect((await api.post(`/v1/test-helpers/wallet-topups/${t.body.id}/complete`, { outcome: 'succeeded' })).status).toBe(409);
    expect((await api.post(`/v1/test-helpers/payments/${t.body.payment_id}/complete`, { outcome: 'succeeded' })).status).toBe(409);
    expect(await balance(api, w.id)).toBe(2500);
    const ledger = (await api.get(`/v1/wallets/${w.id}/transactions`)).body.data;
    expect(ledger).toEqual([expect.objectContaining({ type: 'topup', amount: 2500, reference: t.body.id, balance_after: 2500 })]);
    const evt = (await api.get('/v1/events?type=wallet.topup.succeeded')).body.data.find((e: any) => e.data.object.id === t.body.id);
    expect(evt.data.object.status).toBe('succeeded');

    const failed = (await api.post(`/v1/wallets/${w.id}/topups`, { amount: 100, redirect_url: 'https://app.example/wallet' })).body;
    expect((await api.post(`/v1/test-helpers/wallet-topups/${failed.id}/complete`, { outcome: 'failed' })).body.status).toBe('failed');
    expect(await balance(api, w.id)).toBe(2500);
    const list = (await api.get(`/v1/wallets/${w.id}/topups`)).body.data.map((x: any) => x.status);
    expect(list).toEqual(['failed', 'succeeded']);
    // The failed top-up's checkout takes another attempt until it expires: paid, it credits once.
    const retried = await api.post(`/v1/test-helpers/wallet-topups/${failed.id}/complete`, { outcome: 'succeeded' });
    expect(retried.body).toMatchObject({ status: 'succeeded', transaction_id: expect.any(String) });
    expect(await balance(api, w.id)).toBe(2600);
    expect((await api.post(`/v1/test-helpers/wallet-topups/${failed.id}/complete`, { outcome: 'succeeded' })).status).toBe(409);
    expect(await balance(api, w.id)).toBe(2600);
  });

  it('a top-up paid through the hosted checkout credits the wallet, even while frozen', async () => {
    const w = await wallet();
    await api.post(`/v1/wallets/${w.id}/freeze`);
    const t = (await api.post(`/v1/wallets/${w.id}/topups`, { amount: 700, redirect_url: 'https://app.example/wallet' })).body;
    const url = t.checkout_url.replace(app.services.config.publicBaseUrl, app.url);
    const res = await fetch(url);
    const html = await res.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const paid = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ csrf, method: 'card', card_number: '4242424242424242', card_expiry: '12/34', card_cvc: '123' }).toString(),
    });
    expect(paid.status).toBe(303);
    expect(await balance(api, w.id)).toBe(700);
    expect((await api.get(`/v1/wallets/${w.id}/topups`)).body.data[0].status).toBe('succeeded');
  });
});

describe('concurrency and integrity', () => {
  it('50 parallel debits of 1 on a balance of 20: exactly 20 succeed and the balance ends at 0', async () => {
    const w = await wallet();
    await credit(api, w.id, 20, 'seed');
    const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => debit(api, w.id, 1, `p${i}`)));
    expect(rs.filter((r) => r.status === 200)).toHaveLength(20);
    const refused = rs.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(30);
    for (const r of refused) expect(r.body.error.code).toBe('insufficient_balance');
    expect(await balance(api, w.id)).toBe(0);
  });

  it('200 concurrent mixed debits and credits keep balance = sum(ledger) with one row per success', async () => {
    const w = await wallet();
    await credit(api, w.id, 500, 'seed');
    const ops = Array.from({ length: 200 }, (_, i) =>
      i % 3 === 0 ? { kind: 'credit', amount: 7, ref: `m${i}` } : { kind: 'debit', amount: 5 + (i % 4), ref: `m${i}` },
    );
    // a few retried references in the mix
    const retries = ops.slice(0, 20).map((o) => ({ ...o }));
    const rs = await Promise.all(
      [...ops, ...retries].map((o) => (o.kind === 'credit' ? credit(api, w.id, o.amount, o.ref) : debit(api, w.id, o.amount, o.ref)).then((r) => ({ o, r }))),
    );
    // 503 (with Retry-After) is the answer of a saturated machine: 220 requests on one wallet queue
    // for its row lock and for pooled connections. Such a request must have moved nothing.
    for (const { r } of rs) expect([200, 201, 402, 503]).toContain(r.status);
    for (const { r } of rs.filter(({ r }) => r.status === 503)) expect(r.headers.get('retry-after')).toBe('5');
    const okRefs = new Set(rs.filter(({ r }) => r.status < 300).map(({ o }) => o.ref));
    const { sum, rows } = await ledgerSum(api, w.id);
    expect(await balance(api, w.id)).toBe(sum);
    expect(rows).toBe(okRefs.size + 1);
    const ledger = [];
    let after: string | null = null;
    do {
      const r: any = await api.get(`/v1/wallets/${w.id}/transactions?limit=100${after ? `&after=${after}` : ''}`);
      ledger.push(...r.body.data);
      after = r.body.next_cursor;
    } while (after);
    const refs = ledger.map((t: any) => t.reference);
    expect(new Set(refs).size).toBe(refs.length);
    // The ledger lists in the order its rows were applied (newest first): walked oldest first, every
    // row starts where the one before it ended, back to 0 — also under this much concurrency on one
    // wallet (each row is stamped after the wallet's latest: docs/wallets.md, "Order").
    let at = 0;
    for (const t of [...ledger].reverse()) {
      expect(t.balance_before, `ledger row ${t.id} lists out of the order it was applied in`).toBe(at);
      at = t.balance_after;
    }
    const times = ledger.map((t: any) => Date.parse(t.created_at));
    for (let i = 1; i < times.length; i++) expect(times[i - 1]!).toBeGreaterThan(times[i]!);
    // What each movement answered is what the ledger holds.
    const byRef = new Map(ledger.map((t: any) => [t.reference, t]));
    for (const { o, r } of rs.filter(({ r }) => r.status < 300)) {
      const listed: any = byRef.get(o.ref);
      const answered = r.body.transaction ?? r.body;
      expect({ id: answered.id, created_at: answered.created_at, balance_after: answered.balance_after }).toEqual({
        id: listed.id,
        created_at: listed.created_at,
        balance_after: listed.balance_after,
      });
    }
    expect(at).toBe(await balance(api, w.id));
    expect(Math.min(...ledger.map((t: any) => t.balance_after))).toBeGreaterThanOrEqual(0);
  });

  it('the database refuses writes that would break the ledger', async () => {
    const w = await wallet();
    await credit(api, w.id, 100, 'seed');
    const prisma = app.services.db.prisma;
    await expect(prisma.$executeRawUnsafe(`UPDATE wallets SET balance = 1000000 WHERE id = '${w.id}'`)).rejects.toThrow(/only through wallet_transactions/);
    await expect(prisma.$executeRawUnsafe(`UPDATE wallet_transactions SET amount = 1 WHERE wallet_id = '${w.id}'`)).rejects.toThrow(/append-only/);
    await expect(prisma.$executeRawUnsafe(`DELETE FROM wallet_transactions WHERE wallet_id = '${w.id}'`)).rejects.toThrow(/append-only/);
    const row = (sql: string) => prisma.$executeRawUnsafe(sql);
    await expect(
      row(`INSERT INTO wallet_transactions (id, merchant_id, wallet_id, type, amount, balance_before, balance_after) VALUES ('wtx_bad000000000000000001', '${api.creds.merchant_id}', '${w.id}', 'credit', 5, 0, 5)`),
    ).rejects.toThrow(/starts at 0 but the balance is 100/);
    await expect(
      row(`INSERT INTO wallet_transactions (id, merchant_id, wallet_id, type, amount, balance_before, balance_after) VALUES ('wtx_bad000000000000000002', '${api.creds.merchant_id}', '${w.id}', 'debit', 500, 100, -400)`),
    ).rejects.toThrow();
    expect(await balance(api, w.id)).toBe(100);
  });

  it('a ledger row stamped before the wallet\'s latest one lists after it (the trigger stamps it 1 ms later)', async () => {
    const w = await wallet();
    const first: any = (await credit(api, w.id, 100, 'seed')).body;
    const firstRow = first.transaction ?? first;
    const prisma = app.services.db.prisma;
    const late = `wtx_late${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
    // A writer whose clock is behind the wallet's latest row (as a request stamped before it waited for the lock).
    await prisma.$executeRawUnsafe(
      `INSERT INTO wallet_transactions (id, merchant_id, wallet_id, type, amount, balance_before, balance_after, created_at)
       VALUES ('${late}', '${api.creds.merchant_id}', '${w.id}', 'debit', 30, 100, 70, '${new Date(Date.parse(firstRow.created_at) - 60_000).toISOString()}')`,
    );
    const d: any = (await debit(api, w.id, 10, 'after-late')).body;
    const list: any = (await api.get(`/v1/wallets/${w.id}/transactions`)).body.data;
    expect(list.map((t: any) => t.id)).toEqual([d.id, late, firstRow.id]);
    expect(Date.parse(list[1].created_at)).toBe(Date.parse(firstRow.created_at) + 1);
    expect(Date.parse(d.created_at)).toBeGreaterThan(Date.parse(list[1].created_at));
    expect(list.map((t: any) => [t.balance_before, t.balance_after])).toEqual([[70, 60], [100, 70], [0, 100]]);
  });
});

describe('the plain debit and the plain create are one statement each (issue 22)', () => {
  let quiet: TestApp;
  let m: Client;
  beforeAll(async () => {
    quiet = await startApp({}, { worker: false }); // nothing else in its query log
    m = await quiet.merchant();
  });
  afterAll(() => quiet?.close());

  it('locks, checks, writes the ledger row, the event and its outbox in one statement, with no transaction around it', async () => {
    const w = await wallet(m);
    expect((await credit(m, w.id, 1000, 'seed')).status).toBe(201);
    quiet.queries.reset();
    const d = await debit(m, w.id, 300, 'd-one');
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ type: 'debit', amount: 300, balance_before: 1000, balance_after: 700, reference: 'd-one', description: 'Usage' });
    const ledgerWrites = quiet.queries.sql.filter((q) => /INSERT INTO wallet_transactions/.test(q));
    expect(ledgerWrites).toHaveLength(1);
    expect(ledgerWrites[0]).toMatch(/FOR UPDATE OF w/);
    expect(ledgerWrites[0]).toMatch(/INSERT INTO events/);
    // PGlite runs a merchant's statement in a transaction of its own (its one connection is shared)
    if (usingPostgres) expect(quiet.queries.sql.filter((q) => /^\s*(BEGIN|COMMIT)/i.test(q))).toEqual([]);
    // the event carries what the statement wrote (balances and time set in SQL)
    const [evt] = (await m.get('/v1/events?type=wallet.debited')).body.data;
    expect(evt.data.object).toEqual(d.body);
    expect(evt.created_at).toBe(d.body.created_at);
    expect((await m.get(`/v1/wallets/${w.id}/transactions?limit=1`)).body.data[0]).toEqual(d.body);
    expect(await balance(m, w.id)).toBe(700);

    quiet.queries.reset();
    const c = await m.post('/v1/customers', { email: 'one-statement@example.com' });
    expect(c.status).toBe(201);
    const creates = quiet.queries.sql.filter((q) => /INSERT INTO customers/.test(q));
    expect(creates).toHaveLength(1);
    expect(creates[0]).toMatch(/INSERT INTO events/);
    if (usingPostgres) expect(quiet.queries.sql.filter((q) => /^\s*(BEGIN|COMMIT)/i.test(q))).toEqual([]);
    const [created] = (await m.get('/v1/events?type=customer.created')).body.data;
    expect(created.data.object).toEqual(c.body);
  });

  it('what one statement cannot decide goes the transaction path, with the same answers', async () => {
    const w = await wallet(m);
    expect((await credit(m, w.id, 100, 'seed')).status).toBe(201);
    // short: nothing written, 402 with the balance
    const short = await debit(m, w.id, 101, 's-1');
    expect(short.status).toBe(402);
    expect(short.body.error.code).toBe('insufficient_balance');
    // a repeat returns the first debit; another amount under the same reference is refused
    const first = await debit(m, w.id, 40, 'r-1');
    expect(first.status).toBe(200);
    expect((await debit(m, w.id, 40, 'r-1')).body).toEqual(first.body);
    expect((await debit(m, w.id, 41, 'r-1')).body.error.code).toBe('reference_reused');
    // another merchant's wallet is not found, and keeps its balance
    const stranger = await quiet.merchant({ name: 'Stranger' });
    expect((await debit(stranger, w.id, 1, 'x-1')).status).toBe(404);
    expect(await balance(m, w.id)).toBe(60);
    // more endpoints than one statement schedules deliveries for: every one gets its attempt
    for (let i = 0; i < 10; i++) expect((await m.post('/v1/webhook-endpoints', { url: `http://127.0.0.1:9/hook${i}`, events: ['wallet.debited'] })).status).toBe(201);
    const many = await debit(m, w.id, 10, 'm-1');
    expect(many.status).toBe(200);
    expect(many.body).toMatchObject({ balance_before: 60, balance_after: 50 });
    const [evt] = (await m.get('/v1/events?type=wallet.debited')).body.data;
    expect(evt.data.object).toEqual(many.body);
    const attempts = (await m.get(`/v1/events/${evt.id}/delivery-attempts?limit=100`)).body.data;
    expect(new Set(attempts.map((a: any) => a.endpoint_id)).size).toBe(10);
    expect(await ledgerSum(m, w.id)).toEqual({ sum: 50, rows: 3 });
  });

  it('concurrent debits with one reference move the balance once and all answer the same transaction', async () => {
    const w = await wallet(m);
    expect((await credit(m, w.id, 1000, 'seed')).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 12 }, () => debit(m, w.id, 7, 'same-ref')));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await balance(m, w.id)).toBe(993);
    expect(await ledgerSum(m, w.id)).toEqual({ sum: 993, rows: 2 });
  });
});

describe('wallets over GraphQL', () => {
  it('runs the lifecycle with typed errors', async () => {
    const m = await app.merchant();
    const cus = (await m.post('/v1/customers', { email: 'gw@example.com' })).body;
    const created = await m.gql(`mutation { createWallet(input: { customerId: "${cus.id}", currency: "kwd" }) {
      __typename ... on CreateWalletSuccess { wallet { id balance balanceFormatted status currency } } ... on Error { code } } }`);
    const w = created.data.createWallet.wallet;
    expect(w).toMatchObject({ balance: 0, balanceFormatted: 'KWD 0.000', status: 'active', currency: 'KWD' });
    const dup = await m.gql(`mutation { createWallet(input: { customerId: "${cus.id}", currency: "KWD" }) { __typename ... on Error { code } } }`);
    expect(dup.data.createWallet).toEqual({ __typename: 'StateError', code: 'wallet_exists' });

    const cr = await m.gql(`mutation { creditWallet(input: { id: "${w.id}", amount: 20, description: "gift", reference: "g1" }) {
      __typename ... on CreditWalletSuccess { transaction { type amount balanceAfter } } } }`);
    expect(cr.data.creditWallet.transaction).toEqual({ type: 'credit', amount: 20, balanceAfter: 20 });
    const poor = await m.gql(`mutation { debitWallet(input: { id: "${w.id}", amount: 50, description: "x", reference: "d1" }) {
      __typename ... on InsufficientBalanceError { code balance message } } }`);
    expect(poor.data.debitWallet).toMatchObject({ __typename: 'InsufficientBalanceError', code: 'insufficient_balance', balance: 20 });
    const ok = await m.gql(`mutation { debitWallet(input: { id: "${w.id}", amount: 5, description: "x", reference: "d1" }) {
      __typename ... on DebitWalletSuccess { transaction { balanceBefore balanceAfter } } } }`);
    expect(ok.data.debitWallet.transaction).toEqual({ balanceBefore: 20, balanceAfter: 15 });

    expect((await m.gql(`mutation { freezeWallet(input: { id: "${w.id}" }) { __typename ... on FreezeWalletSuccess { wallet { status } } } }`)).data.freezeWallet.wallet.status).toBe('frozen');
    const frozen = await m.gql(`mutation { debitWallet(input: { id: "${w.id}", amount: 1, description: "x", reference: "d2" }) { __typename ... on Error { code } } }`);
    expect(frozen.data.debitWallet).toEqual({ __typename: 'StateError', code: 'wallet_frozen' });
    expect((await m.gql(`mutation { unfreezeWallet(input: { id: "${w.id}" }) { __typename } }`)).data.unfreezeWallet.__typename).toBe('UnfreezeWalletSuccess');
    const top = await m.gql(`mutation { createWalletTopup(input: { walletId: "${w.id}", amount: 1000, redirectUrl: "https://app.example/w" }) {
      __typename ... on CreateWalletTopupSuccess { topup { id status checkoutUrl amount } } } }`);
    expect(top.data.createWalletTopup.topup).toMatchObject({ status: 'pending', amount: 1000 });
    const done = await m.gql(`mutation { completeTestWalletTopup(input: { id: "${top.data.createWalletTopup.topup.id}", outcome: succeeded }) {
      __typename ... on CompleteTestWalletTopupSuccess { topup { status } } ... on Error { code } } }`);
    expect(done.data.completeTestWalletTopup).toEqual({ __typename: 'CompleteTestWalletTopupSuccess', topup: { status: 'succeeded' } });
    const twice = await m.gql(`mutation { completeTestWalletTopup(input: { id: "${top.data.createWalletTopup.topup.id}", outcome: succeeded }) { __typename ... on Error { code } } }`);
    expect(twice.data.completeTestWalletTopup).toEqual({ __typename: 'StateError', code: 'topup_not_pending' });

    const q = await m.gql(`{ wallet(id: "${w.id}") { balance transactions(first: 10) { edges { node { type amount } } } topups { edges { node { status } } } customer { wallets { id } } } }`);
    expect(q.data.wallet.balance).toBe(1015);
    expect(q.data.wallet.transactions.edges.map((e: any) => e.node.type)).toEqual(['topup', 'debit', 'credit']);
    expect(q.data.wallet.topups.edges[0].node.status).toBe('succeeded');
    expect(q.data.wallet.customer.wallets.map((x: any) => x.id)).toEqual([w.id]);
    const closed = await m.gql(`mutation { closeWallet(input: { id: "${w.id}" }) { __typename ... on CloseWalletSuccess { wallet { status balance } } } }`);
    expect(closed.data.closeWallet.wallet).toEqual({ status: 'closed', balance: 0 });
    const list = await m.gql(`{ wallets(customerId: "${cus.id}", status: closed) { edges { node { id } } } }`);
    expect(list.data.wallets.edges.map((e: any) => e.node.id)).toEqual([w.id]);
  });
});

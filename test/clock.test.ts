// One clock (issue 22, item 5): every record made by clock-driven work carries billing time in
// created_at, so lists sort as the clock ran; API-created records of a test merchant get the
// clock's time too; inside a job the clock is the job's time. Unit tests of the rule below.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { listAll } from './helpers/list.ts';
import { billingNowSql, billingTime, Clock, clockNow, clockOf } from '../src/platform/clock.ts';

const DAY_MS = 86_400_000;

describe('the clock rule', () => {
  const test = { id: 'mer_x', mode: 'test' as const };
  const live = { id: 'mer_y', mode: 'live' as const };
  /** A stand-in for the database: the merchant's offset, and how often it was read. */
  function fakeDb(offsetMs: number) {
    const db = { reads: 0, merchant: { findUnique: async () => (db.reads++, { clockOffsetMs: BigInt(offsetMs) }) } };
    return db;
  }

  it('billingTime: live is real time, test is real time plus the offset, a job is its time', () => {
    const real = Date.parse('2030-01-01T00:00:00.000Z');
    const at = new Date('2031-06-01T12:00:00.000Z');
    expect(billingTime('live', 5 * DAY_MS, undefined, real).getTime()).toBe(real);
    expect(billingTime('test', 5 * DAY_MS, undefined, real).getTime()).toBe(real + 5 * DAY_MS);
    expect(billingTime('test', null, undefined, real).getTime()).toBe(real);
    expect(billingTime('test', 5 * DAY_MS, at, real).getTime()).toBe(at.getTime());
    expect(billingTime('live', 0, at, real).getTime()).toBe(at.getTime());
  });

  it('billingTime: a parked test clock stands at its park end plus the offset until real time reaches it, then runs on from there', () => {
    const real = Date.parse('2030-01-01T00:00:00.000Z');
    const until = new Date(real + 10_000);
    const standing = until.getTime() + 5 * DAY_MS;
    expect(billingTime('test', 5 * DAY_MS, undefined, real, until).getTime()).toBe(standing);
    expect(billingTime('test', 5 * DAY_MS, undefined, real + 9_999, until).getTime()).toBe(standing);
    expect(billingTime('test', 5 * DAY_MS, undefined, real + 10_500, until).getTime()).toBe(standing + 500); // on from there, no jump
    expect(billingTime('test', 5 * DAY_MS, undefined, real, null).getTime()).toBe(real + 5 * DAY_MS);
    expect(billingTime('live', 0, undefined, real, until).getTime()).toBe(real);
    // A clock that learnt a park reads the same.
    const clock = new Clock(test);
    clock.learn(5 * DAY_MS - 60_000, new Date(Date.now() + 60_000));
    const a = clock.peek()!.getTime();
    expect(Math.abs(a - (Date.now() + 5 * DAY_MS))).toBeLessThan(1000);
    expect(clock.peek()!.getTime()).toBe(a); // standing still
  });

  it('a live merchant: real time, never a read', async () => {
    const db = fakeDb(30 * DAY_MS);
    const clock = new Clock(live);
    expect(Math.abs(clock.peek()!.getTime() - Date.now())).toBeLessThan(1000);
    expect(Math.abs((await clock.now(db as never)).getTime() - Date.now())).toBeLessThan(1000);
    expect(db.reads).toBe(0);
  });

  it('a test merchant: real time plus its offset, read once per clock (one clock per request)', async () => {
    const db = fakeDb(30 * DAY_MS);
    const clock = new Clock(test);
    expect(clock.peek()).toBeNull(); // not known before the offset is read
    const a = await clock.now(db as never);
    const b = await clock.now(db as never);
    expect(db.reads).toBe(1);
    expect(Math.abs(a.getTime() - (Date.now() + 30 * DAY_MS))).toBeLessThan(1000);
    expect(b.getTime()).toBeGreaterThanOrEqual(a.getTime()); // time still runs
    // A Ctx spread into a transaction's shares the request's clock.
    const ctx = { merchant: test, clock, db: db as never };
    await clockNow({ ...ctx, db: db as never });
    expect(db.reads).toBe(1);
    // An offset a statement read anyway (the wallet's lock) or an advance set is learnt.
    const fresh = new Clock(test);
    fresh.learn(2 * DAY_MS);
    expect(Math.abs(fresh.peek()!.getTime() - (Date.now() + 2 * DAY_MS))).toBeLessThan(1000);
  });

  it('inside a job: the clock is frozen at the job time, for test and live merchants alike, without a read', async () => {
    const db = fakeDb(30 * DAY_MS);
    const at = new Date('2031-06-01T12:00:00.000Z');
    for (const m of [test, live]) {
      const clock = Clock.frozen(m, at);
      clock.learn(99 * DAY_MS); // an offset read under a lock does not move a job's time
      expect(clock.peek()!.toISOString()).toBe(at.toISOString());
      expect((await clockNow({ merchant: m, clock, db: db as never })).toISOString()).toBe(at.toISOString());
    }
    expect(db.reads).toBe(0);
  });

  it('a Ctx without a clock (built by hand) gets a fresh one each time: correct, just not shared', () => {
    const ctx = { merchant: test };
    expect(clockOf(ctx)).not.toBe(clockOf(ctx));
  });
});

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

async function clockOfMerchant(api: Client): Promise<number> {
  return Date.parse((await api.get('/v1/test-helpers/clock')).body.now);
}

const all = listAll;

/** Newest first by (created_at, id), the order every list is in. */
function inListOrder(rows: { created_at: string }[]): boolean {
  return rows.every((r, i) => i === 0 || Date.parse(rows[i - 1]!.created_at) >= Date.parse(r.created_at));
}

describe('records made by clock-driven work carry billing time', () => {
  it('a month on the test clock: the renewal invoice, its payment, its events and a credit expiry are stamped with the job time; lists sort as the clock ran', async () => {
    const api = await app.merchant();
    const customer = (await api.post('/v1/customers', { email: 'clock@example.com' })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: customer.id })).body;
    expect((await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4242424242424242' })).status).toBe(200);
    const plan = (await api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id })).body;
    expect(sub.status).toBe('active');
    const wallet = (await api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD' })).body;
    const start = await clockOfMerchant(api);
    const expiresAt = new Date(start + 10 * DAY_MS).toISOString();
    const credit = await api.post(`/v1/wallets/${wallet.id}/credit`, { amount: 500, description: 'Promo', reference: 'promo-1', expires_at: expiresAt });
    expect(credit.status, JSON.stringify(credit.body)).toBe(201);

    const advanced = await api.post('/v1/test-helpers/clock/advance', { seconds: 40 * 86_400 });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    const realNow = Date.now();

    // The renewal: made by the cycle job due at the period's end, so stamped with exactly that.
    const invoices = await all(api, `/v1/invoices?subscription_id=${sub.id}`);
    const renewal = invoices.find((i) => i.billing_reason === 'subscription_cycle');
    expect(renewal, JSON.stringify(invoices.map((i) => i.billing_reason))).toBeDefined();
    expect(renewal.created_at).toBe(sub.current_period_end);
    expect(renewal.period_start).toBe(sub.current_period_end);
    expect(Date.parse(renewal.created_at)).toBeGreaterThan(realNow + 25 * DAY_MS); // not real time
    // Its payment (made by the charge in the same job) carries the same time.
    expect(renewal.payment_id).toBeTruthy();
    const payment = (await api.get(`/v1/payments/${renewal.payment_id}`)).body;
    expect(payment.created_at).toBe(renewal.created_at);

    // The events: the invoice's at the job's time; the whole list in clock order.
    const events = await all(api, '/v1/events');
    expect(inListOrder(events)).toBe(true);
    const ofRenewal = events.filter((e) => e.type.startsWith('invoice.') && e.data.object.id === renewal.id);
    expect(ofRenewal.map((e) => e.type)).toEqual(expect.arrayContaining(['invoice.created', 'invoice.paid']));
    for (const e of ofRenewal) expect(e.created_at).toBe(renewal.created_at);
    const paymentEvents = events.filter((e) => e.type.startsWith('payment.') && e.data.object.id === payment.id);
    expect(paymentEvents.length).toBeGreaterThan(0);
    for (const e of paymentEvents) expect(e.created_at).toBe(renewal.created_at);

    // The credit expiry: a ledger row and its event at the grant's expiry (the job's due time).
    const ledger = await all(api, `/v1/wallets/${wallet.id}/transactions`);
    const expiry = ledger.find((t) => t.type === 'expiry');
    expect(expiry, JSON.stringify(ledger)).toBeDefined();
    expect(expiry.created_at).toBe(expiresAt);
    expect(inListOrder(ledger)).toBe(true);
    expect(ledger[0].type).toBe('expiry'); // newest: it happened ten days after the credit
    const expired = events.find((e) => e.type === 'wallet.credit.expired');
    expect(expired.created_at).toBe(expiresAt);
    // The expiry happened (on the clock) before the renewal, and the list says so.
    expect(events.indexOf(expired)).toBeGreaterThan(events.indexOf(ofRenewal[0]));
  });

  it('records the API creates for a test merchant carry the clock time (the customer row on one clock), and sort after the work of an advance', async () => {
    const api = await app.merchant();
    const early = (await api.post('/v1/customers', { email: 'early@example.com' })).body;
    await api.post('/v1/test-helpers/clock/advance', { seconds: 30 * 86_400 });
    const clock = await clockOfMerchant(api);
    const c = await api.post('/v1/customers', { email: 'late@example.com' });
    expect(c.status).toBe(201);
    const after = await clockOfMerchant(api);
    // POST /v1/customers reads the offset in its own statement: the answer, the row and the event agree.
    expect(Date.parse(c.body.created_at)).toBeGreaterThanOrEqual(clock);
    expect(Date.parse(c.body.created_at)).toBeLessThanOrEqual(after);
    expect(c.body.updated_at).toBe(c.body.created_at);
    const got = (await api.get(`/v1/customers/${c.body.id}`)).body;
    expect(got.created_at).toBe(c.body.created_at);
    expect(got.updated_at).toBe(c.body.created_at);
    const events = await all(api, '/v1/events?type=customer.created');
    expect(events[0].data.object.id).toBe(c.body.id);
    expect(events[0].created_at).toBe(c.body.created_at);
    expect(events[0].data.object.created_at).toBe(c.body.created_at);
    expect(events[0].data.object.updated_at).toBe(c.body.created_at);
    // An update is on the same clock.
    const upd = (await api.patch(`/v1/customers/${early.id}`, { name: 'Ada' })).body;
    expect(Date.parse(upd.updated_at)).toBeGreaterThanOrEqual(clock);
    // Customers list newest first: the one made after the advance first.
    const list = await all(api, '/v1/customers');
    expect(list.map((x) => x.id)).toEqual([c.body.id, early.id]);
    // Other records made through the API: on the clock as well.
    const plan = (await api.post('/v1/plans', { name: 'P', amount: 100, currency: 'USD', interval: 'month' })).body;
    expect(Date.parse(plan.created_at)).toBeGreaterThanOrEqual(clock);
  });

  it('the one SQL expression agrees with the rule: test merchants add their offset, live ones do not, a known time wins', async () => {
    const api = await app.merchant();
    const liveApi = await app.merchant({ mode: 'live' });
    await api.post('/v1/test-helpers/clock/advance', { seconds: 7 * 86_400 });
    const q = (id: string, at: Date | null) =>
      app.services.db.prisma.$queryRawUnsafe<{ at: Date }[]>(`SELECT ${billingNowSql('m', '$2::timestamptz')} AS at FROM merchants m WHERE m.id = $1`, id, at);
    const [t] = await q(api.creds.merchant_id, null);
    expect(Math.abs(t!.at.getTime() - (await clockOfMerchant(api)))).toBeLessThan(2000);
    expect(Math.abs(t!.at.getTime() - (Date.now() + 7 * DAY_MS))).toBeLessThan(2000);
    expect(t!.at.getTime() % 1).toBe(0);
    const [l] = await q(liveApi.creds.merchant_id, null);
    expect(Math.abs(l!.at.getTime() - Date.now())).toBeLessThan(2000);
    const at = new Date('2031-06-01T12:00:00.123Z');
    const [j] = await q(api.creds.merchant_id, at);
    expect(j!.at.toISOString()).toBe(at.toISOString());
    // A parked clock (an unfinished advance): it stands at clock_parked_until + offset, in SQL as in
    // JavaScript, and the test clock's GET reads the same.
    await app.services.db.prisma.$executeRawUnsafe(
      `UPDATE merchants SET clock_parked_until = date_trunc('milliseconds', now()) + interval '1 minute', clock_offset_ms = 3 * 86400000 WHERE id = $1`,
      api.creds.merchant_id,
    );
    const [row] = await app.services.db.prisma.$queryRawUnsafe<{ until: Date }[]>(`SELECT clock_parked_until AS until FROM merchants WHERE id = $1`, api.creds.merchant_id);
    const until = row!.until;
    const standing = new Date(until.getTime() + 3 * DAY_MS).toISOString();
    const [p1] = await q(api.creds.merchant_id, null);
    expect(p1!.at.toISOString()).toBe(standing);
    expect(billingTime('test', 3 * DAY_MS, undefined, Date.now(), until).toISOString()).toBe(standing);
    expect((await api.get('/v1/test-helpers/clock')).body.now).toBe(standing);
    const [p2] = await q(api.creds.merchant_id, null);
    expect(p2!.at.toISOString()).toBe(standing);
  });
});

describe('the clock costs the hot paths nothing', () => {
  let quiet: TestApp;
  beforeAll(async () => {
    quiet = await startApp({}, { worker: false }); // no worker: the statement log is the request's alone
  });
  afterAll(() => quiet?.close());

  /** Statements per hot-path request for one merchant (its key already verified and cached). */
  async function costs(api: Client) {
    const statements = async (f: () => Promise<unknown>) => {
      quiet.queries.reset();
      await f();
      return quiet.queries.count;
    };
    const c = (await api.post('/v1/customers', { email: 'warm@example.com' })).body;
    const w = (await api.post('/v1/wallets', { customer_id: c.id, currency: 'USD' })).body;
    await api.post(`/v1/wallets/${w.id}/credit`, { amount: 1000, description: 'x', reference: 'r0' });
    let n = 0;
    return {
      create: await statements(async () => expect((await api.post('/v1/customers', { email: 'a@example.com' })).status).toBe(201)),
      get: await statements(async () => expect((await api.get(`/v1/customers/${c.id}`)).status).toBe(200)),
      debit: await statements(async () => expect((await api.post(`/v1/wallets/${w.id}/debit`, { amount: 1, description: 'u', reference: `d${n++}` })).status).toBe(200)),
      node: await statements(async () => expect((await api.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: c.id })).errors).toBeUndefined()),
    };
  }

  it('POST /v1/customers, GET /v1/customers/:id, a debit and node(id:) of a test merchant on an advanced clock cost what a live merchant’s do', async () => {
    const test = await quiet.merchant();
    const advanced = await test.post('/v1/test-helpers/clock/advance', { seconds: 86_400 });
    expect(advanced.status).toBe(200);
    const live = await quiet.merchant({ mode: 'live' });
    const [t, l] = [await costs(test), await costs(live)];
    expect(t).toEqual(l);
  });
});

// Setup intents, saved payment methods and off-session charges over REST, and the hosted setup
// page over plain HTTP, as a browser posts its forms.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;
let other: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant({ name: 'Kampala Coffee' });
  other = await app.merchant({ name: 'Other merchant' });
});
afterAll(() => app?.close());

async function customer(client = api, extra: Record<string, unknown> = {}) {
  const r = await client.post('/v1/customers', { email: `c${Math.random().toString(36).slice(2)}@example.com`, phone: '+256700000001', ...extra });
  expect(r.status).toBe(201);
  return r.body;
}

async function savedCard(customerId: string, cardNumber?: string, client = api) {
  const si = (await client.post('/v1/setup-intents', { customer_id: customerId })).body;
  const done = await client.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, cardNumber ? { card_number: cardNumber } : {});
  expect(done.status).toBe(200);
  return (await client.get(`/v1/payment-methods/${done.body.payment_method_id}`)).body;
}

const eventsOf = async (id: string, client = api) =>
  (await client.get('/v1/events?limit=100')).body.data.filter((e: any) => e.data.object.id === id).map((e: any) => e.type);

const local = (url: string) => url.replace(app.services.config.publicBaseUrl, app.url);

describe('setup intents', () => {
  it('creates one with an absolute setup_url that expires in 24 h on the merchant clock', async () => {
    const c = await customer();
    const r = await api.post('/v1/setup-intents', { customer_id: c.id, return_url: 'https://coffee.example/account', metadata: { plan: 'gold' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      id: expect.stringMatching(/^seti_[0-9A-Za-z]{22}$/),
      object: 'setup_intent',
      customer_id: c.id,
      status: 'requires_payment_method',
      return_url: 'https://coffee.example/account',
      payment_method_types: ['card', 'mobile_money'],
      payment_method_id: null,
      metadata: { plan: 'gold' },
      completed_at: null,
    });
    expect(r.body.setup_url).toMatch(new RegExp(`^${app.services.config.publicBaseUrl}/hosted/setup/[0-9A-Za-z]{40}$`));
    const now = new Date((await api.get('/v1/test-helpers/clock')).body.now).getTime();
    expect(new Date(r.body.expires_at).getTime() - now).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(new Date(r.body.expires_at).getTime() - now).toBeLessThanOrEqual(24 * 3600_000);
    expect((await api.get(`/v1/setup-intents/${r.body.id}`)).body).toEqual(r.body);
  });

  it('refuses bad input with the error body', async () => {
    const c = await customer();
    const cases: [unknown, number, string, string | null][] = [
      [{}, 400, 'parameter_missing', 'customer_id'],
      [{ customer_id: 'cus_doesnotexist0000000000' }, 404, 'resource_missing', 'customer_id'],
      [{ customer_id: c.id, return_url: 'javascript:alert(1)' }, 400, 'parameter_invalid', 'return_url'],
      [{ customer_id: c.id, return_url: 'ftp://x.example/' }, 400, 'parameter_invalid', 'return_url'],
      [{ customer_id: c.id, payment_method_types: ['cash'] }, 400, 'parameter_invalid', 'payment_method_types[0]'],
      [{ customer_id: c.id, metadata: { a: 'nul\u0000' } }, 400, 'parameter_invalid', 'metadata[a]'],
      [{ customer_id: c.id, extra: 1 }, 400, 'parameter_unknown', 'extra'],
    ];
    for (const [body, status, code, param] of cases) {
      const r = await api.post('/v1/setup-intents', body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.error).toMatchObject({ code, param });
    }
    // Another merchant's customer does not exist for this one.
    const theirs = await customer(other);
    expect((await api.post('/v1/setup-intents', { customer_id: theirs.id })).status).toBe(404);
    expect((await api.get('/v1/setup-intents/seti_nope')).status).toBe(404);
  });

  it('the test helper saves a card: the intent succeeds, the method is attached and becomes the default, with events', async () => {
    const c = await customer();
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const done = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {});
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'succeeded', payment_method_id: expect.stringMatching(/^pm_/), completed_at: expect.any(String) });
    const pm = (await api.get(`/v1/payment-methods/${done.body.payment_method_id}`)).body;
    expect(pm).toEqual({
      id: done.body.payment_method_id,
      object: 'payment_method',
      customer_id: c.id,
      type: 'card',
      card: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: expect.any(Number) },
      mobile_money: null,
      created_at: expect.any(String),
    });
    expect((await api.get(`/v1/customers/${c.id}`)).body).toMatchObject({ default_payment_method_id: pm.id, payment_methods: [pm], subscriptions: [] });
    expect(await eventsOf(si.id)).toEqual(['setup_intent.succeeded']);
    expect(await eventsOf(pm.id)).toEqual(['payment_method.attached']);
    expect(await eventsOf(c.id)).toEqual(['customer.updated', 'customer.created']);
    // Done is done.
    expect((await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).body.error.code).toBe('setup_intent_not_pending');
  });

  it('refuses the declined test card and saves nothing; a bad number is a 400', async () => {
    const c = await customer();
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const r = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4000000000000002' });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: 'card_declined', param: 'card_number' });
    const luhn = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4242424242424241' });
    expect(luhn.status).toBe(400);
    expect(luhn.body.error).toMatchObject({ code: 'parameter_invalid', param: 'card_number' });
    expect((await api.get(`/v1/setup-intents/${si.id}`)).body.status).toBe('requires_payment_method');
    expect((await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data).toEqual([]);
    expect(await eventsOf(si.id)).toEqual([]);
  });

  it('concurrent completions of one intent save exactly one method', async () => {
    const c = await customer();
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const results = await Promise.all(Array.from({ length: 10 }, () => api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((x) => x === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((x) => x === 200 || x === 409)).toBe(true);
    expect((await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data).toHaveLength(1);
    expect(await eventsOf(si.id)).toEqual(['setup_intent.succeeded']);
  });

  it('concurrent detaches of a customer’s methods leave a consistent default', async () => {
    const c = await customer();
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await savedCard(c.id)).id);
    const results = await Promise.all(ids.slice(0, 3).map((id) => api.del(`/v1/payment-methods/${id}`)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    const after = (await api.get(`/v1/customers/${c.id}`)).body;
    expect(after.payment_methods.map((m: any) => m.id)).toEqual([ids[3]]);
    expect(after.default_payment_method_id).toBe(ids[3]);
  });

  it('expires after 24 h on the merchant clock, by the due-work mechanism; then saves nothing', async () => {
    const m = await app.merchant();
    const c = await customer(m);
    const si = (await m.post('/v1/setup-intents', { customer_id: c.id })).body;
    const page = await fetch(local(si.setup_url));
    expect(page.status).toBe(200);
    await m.post('/v1/test-helpers/clock/advance', { seconds: 24 * 3600 + 1 });
    expect((await m.get(`/v1/setup-intents/${si.id}`)).body.status).toBe('expired');
    expect((await m.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).status).toBe(409);
    const expired = await fetch(local(si.setup_url));
    expect(expired.status).toBe(404);
    expect(await expired.text()).toContain('This link has expired');
    expect((await m.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data).toEqual([]);
  });
});

describe('payment methods', () => {
  it('lists a customer’s methods newest first, paginated; customer_id is required', async () => {
    const c = await customer();
    const a = await savedCard(c.id);
    const b = await savedCard(c.id, '5555555555554444');
    const d = await savedCard(c.id, '4000000000009995');
    const first = await api.get(`/v1/payment-methods?customer_id=${c.id}&limit=2`);
    expect(first.body.data.map((x: any) => x.id)).toEqual([d.id, b.id]);
    expect(first.body.has_more).toBe(true);
    const second = await api.get(`/v1/payment-methods?customer_id=${c.id}&limit=2&after=${first.body.next_cursor}`);
    expect(second.body.data.map((x: any) => x.id)).toEqual([a.id]);
    expect(b.card.brand).toBe('mastercard');
    expect((await api.get('/v1/payment-methods')).body.error).toMatchObject({ code: 'parameter_missing', param: 'customer_id' });
    expect((await api.get('/v1/payment-methods?customer_id=cus_unknown')).status).toBe(404);
    // The first saved method stays the default.
    expect((await api.get(`/v1/customers/${c.id}`)).body.default_payment_method_id).toBe(a.id);
  });

  it('detaches: customer_id null, the default moves to the newest remaining, a detached method cannot be charged', async () => {
    const c = await customer();
    const a = await savedCard(c.id);
    const b = await savedCard(c.id);
    const r = await api.del(`/v1/payment-methods/${a.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: a.id, customer_id: null });
    expect((await api.get(`/v1/customers/${c.id}`)).body).toMatchObject({ default_payment_method_id: b.id, payment_methods: [expect.objectContaining({ id: b.id })] });
    expect(await eventsOf(a.id)).toEqual(['payment_method.detached', 'payment_method.attached']);
    const again = await api.del(`/v1/payment-methods/${a.id}`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('payment_method_detached');
    const charge = await api.post('/v1/payments', { amount: 500, currency: 'USD', payment_method_id: a.id });
    expect(charge.status).toBe(409);
    expect(charge.body.error).toMatchObject({ code: 'payment_method_detached', param: 'payment_method_id' });
    expect((await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data.map((x: any) => x.id)).toEqual([b.id]);
  });

  it('another merchant’s method is not found, to read, detach or charge', async () => {
    const c = await customer(other);
    const theirs = await savedCard(c.id, undefined, other);
    expect((await api.get(`/v1/payment-methods/${theirs.id}`)).status).toBe(404);
    expect((await api.del(`/v1/payment-methods/${theirs.id}`)).status).toBe(404);
    expect((await api.post('/v1/payments', { amount: 500, currency: 'USD', payment_method_id: theirs.id })).status).toBe(404);
    expect((await other.get(`/v1/payment-methods/${theirs.id}`)).body.customer_id).toBe(c.id);
  });

  it('PATCH default_payment_method_id accepts the customer’s own attached method only', async () => {
    const c = await customer();
    const a = await savedCard(c.id);
    const b = await savedCard(c.id);
    const ok = await api.patch(`/v1/customers/${c.id}`, { default_payment_method_id: b.id });
    expect(ok.status).toBe(200);
    expect(ok.body.default_payment_method_id).toBe(b.id);
    const stranger = await customer();
    const theirs = await savedCard(stranger.id);
    const bad = await api.patch(`/v1/customers/${c.id}`, { default_payment_method_id: theirs.id });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'default_payment_method_id' });
    expect((await api.patch(`/v1/customers/${c.id}`, { default_payment_method_id: 'pm_nope' })).status).toBe(404);
    expect((await api.patch(`/v1/customers/${c.id}`, { default_payment_method_id: null })).body.default_payment_method_id).toBeNull();
    expect(a.id).not.toBe(b.id);
  });

  it('deleting a customer detaches its methods', async () => {
    const c = await customer();
    const a = await savedCard(c.id);
    expect((await api.del(`/v1/customers/${c.id}`)).status).toBe(200);
    expect((await api.get(`/v1/payment-methods/${a.id}`)).body.customer_id).toBeNull();
    expect(await eventsOf(a.id)).toEqual(['payment_method.detached', 'payment_method.attached']);
  });

  it('never stores, logs or sends the full card number or CVC', async () => {
    const c = await customer();
    await savedCard(c.id, '5555555555554444');
    const page = await fetch(local((await api.post('/v1/setup-intents', { customer_id: c.id })).body.setup_url));
    const html = await page.text();
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const setupUrl = page.url;
    await fetch(setupUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ csrf, method: 'card', card_number: '3782 822463 10005', card_expiry: '11/39', card_cvc: '9876' }).toString(),
    });
    // This merchant's rows only (the PostgreSQL test database is shared), and the CVC as a value of
    // its own, not as four digits inside some random id.
    const secret = `5555555555554444|378282246310005|(^|[^0-9A-Za-z])9876([^0-9A-Za-z]|$)`;
    const rows = await app.services.db.prisma.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT (SELECT count(*) FROM payment_methods WHERE merchant_id = $1 AND (details::text ~ $2 OR processor_token ~ $2))
            + (SELECT count(*) FROM events WHERE merchant_id = $1 AND data::text ~ $2)
            + (SELECT count(*) FROM setup_intents WHERE merchant_id = $1 AND metadata::text ~ $2) AS n`,
      api.creds.merchant_id,
      secret,
    );
    expect(Number(rows[0]!.n)).toBe(0);
    const saved = (await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data;
    expect(saved.map((m: any) => m.card.last4).sort()).toEqual(['0005', '4444']);
    expect(saved.find((m: any) => m.card.last4 === '0005').card.brand).toBe('amex');
  });
});

describe('charging saved methods off-session', () => {
  it('charges a saved card at once; …9995 saves but every charge fails with insufficient_funds', async () => {
    const c = await customer();
    const ok = await savedCard(c.id);
    const r = await api.post('/v1/payments', { amount: 1500, currency: 'USD', payment_method_id: ok.id, metadata: { invoice: '7' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      status: 'succeeded',
      customer_id: c.id,
      payment_method_id: ok.id,
      redirect_url: null,
      payment_method: { type: 'card', card: { last4: '4242', brand: 'visa' } },
    });
    expect(await eventsOf(r.body.id)).toEqual(['payment.succeeded', 'payment.created']);

    const nsf = await savedCard(c.id, '4000000000009995');
    for (let i = 0; i < 2; i++) {
      const f = await api.post('/v1/payments', { amount: 900, currency: 'USD', customer_id: c.id, payment_method_id: nsf.id });
      expect(f.status).toBe(201);
      expect(f.body).toMatchObject({ status: 'failed', failure_code: 'insufficient_funds', payment_method_id: nsf.id });
    }
    // Refunds work on an off-session payment as on any other.
    expect((await api.post('/v1/refunds', { payment_id: r.body.id, amount: 500 })).body.status).toBe('succeeded');
  });

  it('retries with the same Idempotency-Key never charge twice, also when concurrent', async () => {
    const c = await customer();
    const pm = await savedCard(c.id);
    const body = { amount: 2500, currency: 'USD', payment_method_id: pm.id };
    const first = await api.post('/v1/payments', body, { 'Idempotency-Key': `charge-${pm.id}` });
    const retry = await api.post('/v1/payments', body, { 'Idempotency-Key': `charge-${pm.id}` });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.id).toBe(first.body.id);
    const racing = await Promise.all(Array.from({ length: 8 }, () => api.post('/v1/payments', body, { 'Idempotency-Key': `race-${pm.id}` })));
    expect(racing.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    const ids = new Set(racing.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(ids.size).toBe(1);
    const charged = (await api.get(`/v1/payments?customer_id=${c.id}`)).body.data;
    expect(charged.map((p: any) => p.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('a failed off-session charge can still be paid at its checkout until it expires', async () => {
    const c = await customer();
    const nsf = await savedCard(c.id, '4000000000009995');
    const f = (await api.post('/v1/payments', { amount: 900, currency: 'USD', payment_method_id: nsf.id, redirect_url: 'https://coffee.example/paid' })).body;
    expect(f.status).toBe('failed');
    const done = await api.post(`/v1/test-helpers/payments/${f.id}/complete`, { outcome: 'succeeded' });
    expect(done.body).toMatchObject({ status: 'succeeded', failure_code: null });
  });

  it('a saved mobile-money number shows only its last digits and charges by its outcome', async () => {
    const c = await customer();
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id, payment_method_types: ['mobile_money'] })).body;
    const page = await fetch(local(si.setup_url));
    const html = await page.text();
    expect(html).not.toContain('name="card_number"');
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const post = await fetch(page.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ csrf, method: 'mobile_money', phone: '+256 700 120 000' }).toString(),
    });
    expect(post.status).toBe(200);
    expect(await post.text()).toContain('Mobile money ending in 0000');
    const pm = (await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data[0];
    expect(pm).toMatchObject({ type: 'mobile_money', card: null, mobile_money: { phone_last4: '0000', provider: 'test' } });
    const charge = (await api.post('/v1/payments', { amount: 5000, currency: 'UGX', payment_method_id: pm.id })).body;
    expect(charge).toMatchObject({ status: 'failed', failure_code: 'mobile_money_declined', payment_method: { type: 'mobile_money', mobile_money: { phone: '••••0000' } } });
  });

  it('needs a redirect_url or a payment_method_id', async () => {
    const r = await api.post('/v1/payments', { amount: 100, currency: 'USD', customer: { email: 'x@example.com' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_missing', param: 'redirect_url' });
  });
});

describe('the hosted setup page', () => {
  async function open(url: string) {
    const res = await fetch(url);
    const html = await res.text();
    return { url, res, html, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '' };
  }
  const post = (p: { url: string; cookie: string; csrf: string }, fields: Record<string, string>) =>
    fetch(p.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: p.cookie },
      body: new URLSearchParams({ csrf: p.csrf, ...fields }).toString(),
    });

  it('saves a card and redirects to return_url; a declined card is refused on the page and saves nothing', async () => {
    const c = await customer();
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id, return_url: 'https://coffee.example/account?tab=billing' })).body;
    const page = await open(local(si.setup_url));
    expect(page.res.status).toBe(200);
    expect(page.html).toContain('Save a payment method for Kampala Coffee');
    expect(page.html).toMatch(/<label for="card_number">/);
    expect(page.res.headers.get('content-security-policy')).toContain('https://coffee.example');

    const declined = await post(page, { method: 'card', card_number: '4000 0000 0000 0002', card_expiry: '12/34', card_cvc: '123' });
    expect(declined.status).toBe(402);
    const dHtml = await declined.text();
    expect(dHtml).toContain('The card was declined.');
    expect(dHtml).toContain('value="12/34"');
    expect((await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data).toEqual([]);

    const bad = await post(page, { method: 'card', card_number: '4242 4242 4242 4242', card_expiry: '13/34', card_cvc: '123' });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain('value="4242 4242 4242 4242"');

    const noCsrf = await post({ ...page, csrf: 'x'.repeat(32) }, { method: 'card', card_number: '4242424242424242', card_expiry: '12/34', card_cvc: '123' });
    expect(noCsrf.status).toBe(403);

    const ok = await post(page, { method: 'card', card_number: '4242 4242 4242 4242', card_expiry: '12/34', card_cvc: '123' });
    expect(ok.status).toBe(303);
    const to = new URL(ok.headers.get('location')!);
    expect(Object.fromEntries(to.searchParams)).toEqual({ tab: 'billing', setup_intent_id: si.id, status: 'succeeded' });
    const after = (await api.get(`/v1/setup-intents/${si.id}`)).body;
    expect(after.status).toBe('succeeded');
    // A second submission saves nothing more; the page now says it is saved.
    const twice = await post(page, { method: 'card', card_number: '5555 5555 5555 4444', card_expiry: '12/34', card_cvc: '123' });
    expect(twice.status).toBe(200);
    expect(await twice.text()).toContain('VISA ending in 4242');
    expect((await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data).toHaveLength(1);
  });

  it('unknown tokens and deleted customers get the not-found page', async () => {
    expect((await fetch(`${app.url}/hosted/setup/${'x'.repeat(40)}`)).status).toBe(404);
    expect((await fetch(`${app.url}/hosted/setup/short`)).status).toBe(404);
    const c = await customer();
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    await api.del(`/v1/customers/${c.id}`);
    const r = await fetch(local(si.setup_url));
    expect(r.status).toBe(404);
  });
});

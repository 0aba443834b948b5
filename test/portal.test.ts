// The customer portal over REST (sessions) and plain HTTP (the hosted pages, as a browser posts
// their forms): what the session's customer can do, and that nothing reaches anyone else.
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

async function customer(client = api) {
  return (await client.post('/v1/customers', { email: `p${Math.random().toString(36).slice(2)}@example.com`, name: 'Amina', phone: '+256700000001' })).body;
}

async function savedCard(customerId: string, client = api, cardNumber = '4242424242424242') {
  const si = (await client.post('/v1/setup-intents', { customer_id: customerId })).body;
  const done = await client.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: cardNumber });
  return done.body.payment_method_id as string;
}

async function session(customerId: string, client = api, extra: Record<string, unknown> = {}) {
  const r = await client.post('/v1/customer-portal/sessions', { customer_id: customerId, return_url: 'https://coffee.example/account', ...extra });
  expect(r.status).toBe(201);
  return r.body;
}

const local = (url: string) => url.replace(app.services.config.publicBaseUrl, app.url);

async function open(url: string) {
  const res = await fetch(local(url));
  const html = await res.text();
  return { url: local(url), res, html, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '' };
}

const post = (p: { url: string; cookie: string; csrf: string }, path: string, fields: Record<string, string> = {}) =>
  fetch(p.url + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: p.cookie },
    body: new URLSearchParams({ csrf: p.csrf, ...fields }).toString(),
  });

describe('portal sessions', () => {
  it('creates one for an hour with an absolute url', async () => {
    const c = await customer();
    const s = await session(c.id, api, { locale: 'fr' });
    expect(s).toMatchObject({
      id: expect.stringMatching(/^cps_[0-9A-Za-z]{22}$/),
      object: 'customer_portal_session',
      customer_id: c.id,
      return_url: 'https://coffee.example/account',
      locale: 'fr',
    });
    expect(s.url).toMatch(new RegExp(`^${app.services.config.publicBaseUrl}/hosted/portal/[0-9A-Za-z]{40}$`));
    expect(new Date(s.expires_at).getTime() - new Date(s.created_at).getTime()).toBeGreaterThanOrEqual(3600_000 - 1000);
    expect(new Date(s.expires_at).getTime() - new Date(s.created_at).getTime()).toBeLessThanOrEqual(3600_000 + 1000);
    const page = await open(s.url);
    expect(page.res.status).toBe(200);
    expect(page.html).toMatch(/<html lang="fr">/);
    expect(page.html).toContain('Votre compte chez Kampala Coffee');
  });

  it('refuses bad input with the error body', async () => {
    const c = await customer();
    const theirs = await customer(other);
    const cases: [unknown, number, string, string | null][] = [
      [{ customer_id: c.id }, 400, 'parameter_missing', 'return_url'],
      [{ return_url: 'https://a.example' }, 400, 'parameter_missing', 'customer_id'],
      [{ customer_id: c.id, return_url: 'javascript:alert(1)' }, 400, 'parameter_invalid', 'return_url'],
      [{ customer_id: c.id, return_url: 'https://a.example/\u0000' }, 400, 'parameter_invalid', 'return_url'],
      [{ customer_id: 'cus_nope', return_url: 'https://a.example' }, 404, 'resource_missing', 'customer_id'],
      [{ customer_id: theirs.id, return_url: 'https://a.example' }, 404, 'resource_missing', 'customer_id'],
      [{ customer_id: c.id, return_url: 'https://a.example', locale: 'de' }, 400, 'parameter_invalid', 'locale'],
    ];
    for (const [body, status, code, param] of cases) {
      const r = await api.post('/v1/customer-portal/sessions', body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.error).toMatchObject({ code, param });
    }
  });
});

describe('the hosted portal', () => {
  it('shows the customer, their methods (default marked), wallets with activity, and the way back', async () => {
    const c = await customer();
    await savedCard(c.id);
    const w = (await api.post('/v1/wallets', { customer_id: c.id, currency: 'USD' })).body;
    const credit = await api.post(`/v1/wallets/${w.id}/credit`, { amount: 2500, description: 'Welcome credit', reference: 'welcome' });
    expect(credit.status).toBe(201);
    const s = await session(c.id);
    const page = await open(s.url);
    expect(page.res.status).toBe(200);
    expect(page.res.headers.get('cache-control')).toBe('no-store');
    expect(page.res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(page.html).toContain('value="Amina"');
    expect(page.html).toContain(c.email);
    expect(page.html).toContain('VISA ending in 4242');
    expect(page.html).toContain('Default');
    expect(page.html).toContain('$25.00');
    expect(page.html).toContain('Welcome credit');
    expect(page.html).toContain('Subscriptions');
    expect(page.html).toContain('Invoices');
    expect(page.html).toContain('href="https://coffee.example/account"');
    expect(page.html).toContain('Return to Kampala Coffee');
  });

  it('edits the profile through the customer domain (same validation, same event)', async () => {
    const c = await customer();
    const s = await session(c.id);
    const page = await open(s.url);
    const ok = await post(page, '/profile', { name: 'Amina N.', email: 'amina.new@example.com', phone: '+256 700 000 002' });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toMatch(/\?done=profile$/);
    expect((await api.get(`/v1/customers/${c.id}`)).body).toMatchObject({ name: 'Amina N.', email: 'amina.new@example.com', phone: '+256700000002' });
    const evt = (await api.get('/v1/events?type=customer.updated')).body.data.find((e: any) => e.data.object.id === c.id);
    expect(evt.data.previous_attributes).toMatchObject({ name: 'Amina', phone: '+256700000001' });

    const bad = await post(page, '/profile', { name: 'X', email: 'not-an-email', phone: '' });
    expect(bad.status).toBe(422);
    const html = await bad.text();
    expect(html).toContain('role="alert"');
    expect(html).toContain('value="not-an-email"');
    const nul = await post(page, '/profile', { name: 'a\u0000b', email: 'x@example.com', phone: '' });
    expect(nul.status).toBeGreaterThanOrEqual(400);
    expect(nul.status).toBeLessThan(500);
    expect(await nul.text()).not.toMatch(/at .*\.ts:\d+/);
    expect((await api.get(`/v1/customers/${c.id}`)).body.email).toBe('amina.new@example.com');
  });

  it('adds a method through the setup page, which returns to the portal; makes it default; removes the first', async () => {
    const c = await customer();
    const first = await savedCard(c.id);
    const s = await session(c.id);
    const page = await open(s.url);
    const add = await post(page, '/methods/add');
    expect(add.status).toBe(303);
    const setupUrl = add.headers.get('location')!;
    expect(setupUrl).toMatch(/\/hosted\/setup\/[0-9A-Za-z]{40}$/);
    const setup = await open(setupUrl);
    const saved = await fetch(setup.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: setup.cookie },
      body: new URLSearchParams({ csrf: setup.csrf, method: 'card', card_number: '5555 5555 5555 4444', card_expiry: '10/33', card_cvc: '123' }).toString(),
    });
    expect(saved.status).toBe(303);
    const back = new URL(saved.headers.get('location')!);
    expect(back.pathname).toBe(new URL(s.url).pathname);
    expect(back.searchParams.get('done')).toBe('added');
    const methods = (await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data;
    expect(methods).toHaveLength(2);
    const second = methods[0].id;

    expect((await post(page, `/methods/${second}/default`)).status).toBe(303);
    expect((await api.get(`/v1/customers/${c.id}`)).body.default_payment_method_id).toBe(second);
    expect((await post(page, `/methods/${first}/remove`)).status).toBe(303);
    expect((await api.get(`/v1/payment-methods/${first}`)).body.customer_id).toBeNull();
    const events = (await api.get('/v1/events?limit=100')).body.data.filter((e: any) => [first, second, c.id].includes(e.data.object.id)).map((e: any) => e.type);
    expect(events.slice(0, 3)).toEqual(['payment_method.detached', 'customer.updated', 'payment_method.attached']);
    const now = await open(s.url);
    expect(now.html).not.toContain(`data-payment-method="${first}"`);
    expect(now.html).toContain('MASTERCARD ending in 4444, expires 10/33');
  });

  it('a session of customer A cannot read or change customer B, nor another merchant’s records', async () => {
    const a = await customer();
    const b = await customer();
    const bMethod = await savedCard(b.id);
    const bSecond = await savedCard(b.id);
    const theirs = await customer(other);
    const theirMethod = await savedCard(theirs.id, other);
    const s = await session(a.id);
    const page = await open(s.url);
    expect(page.html).not.toContain(b.email);
    for (const id of [bMethod, theirMethod]) {
      const remove = await post(page, `/methods/${id}/remove`);
      expect(remove.status).toBe(404);
      const def = await post(page, `/methods/${id}/default`);
      expect(def.status).toBe(404);
    }
    expect((await api.get(`/v1/payment-methods/${bMethod}`)).body.customer_id).toBe(b.id);
    expect((await api.get(`/v1/customers/${b.id}`)).body.default_payment_method_id).toBe(bMethod);
    expect((await other.get(`/v1/payment-methods/${theirMethod}`)).body.customer_id).toBe(theirs.id);
    // Fields naming another customer are not read: the profile form changes A only.
    const r = await post(page, '/profile', { name: 'Mallory', email: 'a-owner@example.com', phone: '', customer_id: b.id });
    expect(r.status).toBe(303);
    expect((await api.get(`/v1/customers/${b.id}`)).body.name).toBe('Amina');
    expect((await api.get(`/v1/customers/${a.id}`)).body.name).toBe('Mallory');
    expect(bSecond).not.toBe(bMethod);
  });

  it('expired and unknown sessions show a clear page and change nothing; forms need the CSRF token', async () => {
    const m = await app.merchant();
    const c = await customer(m);
    const pm = await savedCard(c.id, m);
    const s = await session(c.id, m);
    const page = await open(s.url);
    const noCsrf = await post({ ...page, csrf: 'y'.repeat(32) }, `/methods/${pm}/remove`);
    expect(noCsrf.status).toBe(403);
    const noCookie = await fetch(page.url + `/methods/${pm}/remove`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: page.csrf }).toString(),
    });
    expect(noCookie.status).toBe(403);
    expect((await m.get(`/v1/payment-methods/${pm}`)).body.customer_id).toBe(c.id);

    await m.post('/v1/test-helpers/clock/advance', { seconds: 3601 });
    const expired = await fetch(page.url);
    expect(expired.status).toBe(404);
    expect(await expired.text()).toContain('This session has expired');
    const late = await post(page, `/methods/${pm}/remove`);
    expect(late.status).toBe(404);
    const lateProfile = await post(page, '/profile', { name: 'Late', email: 'late@example.com', phone: '' });
    expect(lateProfile.status).toBe(404);
    expect((await m.get(`/v1/payment-methods/${pm}`)).body.customer_id).toBe(c.id);
    expect((await m.get(`/v1/customers/${c.id}`)).body.name).toBe('Amina');

    expect((await fetch(`${app.url}/hosted/portal/${'z'.repeat(40)}`)).status).toBe(404);
    expect((await fetch(`${app.url}/hosted/portal/${'z'.repeat(40)}/profile`, { method: 'POST' })).status).toBe(404);
    // A deleted customer's session is gone too.
    const d = await customer();
    const ds = await session(d.id);
    await api.del(`/v1/customers/${d.id}`);
    expect((await fetch(local(ds.url))).status).toBe(404);
  });
});

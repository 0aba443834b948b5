// The customer portal over REST (sessions) and plain HTTP (the hosted pages, as a browser posts
// their forms): what the session's customer can do, and that nothing reaches anyone else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { loggedPath } from '../src/hosted/kit.ts';

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

const cookieOf = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith(`${name}=`)) ?? '';

interface PortalPage {
  url: string;
  res: Response;
  html: string;
  /** the portal session cookie (name=value) */
  session: string;
  /** the Cookie header the browser sends: session and CSRF cookies */
  cookie: string;
  csrf: string;
}

/** Opens a session's url as a browser does: once, for the session cookie, then the token-less portal. */
async function open(url: string): Promise<PortalPage> {
  const first = await fetch(local(url), { redirect: 'manual' });
  expect(first.status).toBe(303);
  expect(first.headers.get('location')).toBe('/hosted/portal');
  const session = cookieOf(first, 'billing_portal');
  expect(session).toMatch(/^billing_portal=[0-9A-Za-z]{40}$/);
  return view({ session });
}

/** The portal again in the same browser (its session cookie), with an optional query string. */
async function view(p: { session: string }, query = ''): Promise<PortalPage> {
  const url = `${app.url}/hosted/portal`;
  const res = await fetch(url + query, { headers: { cookie: p.session } });
  const html = await res.text();
  const cookie = [p.session, cookieOf(res, 'billing_csrf')].filter(Boolean).join('; ');
  return { url, res, html, session: p.session, cookie, csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '' };
}

/** Another hosted page (the setup page). */
async function openPage(url: string) {
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
    // Each row's buttons say which method they act on.
    expect(page.html).toContain('aria-label="Remove – VISA •••• 4242"');
    expect(page.html).toContain('No subscription.');
    expect(page.html).toContain('No invoice.');
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
    expect(html).toContain('Enter a valid email address, e.g. name@example.com.');
    expect(html).not.toContain('Invalid email');
    expect(html).toMatch(/<div role="alert" aria-live="assertive" tabindex="-1" data-error><p class="error" id="profile-error">/);
    const badPhone = await post(page, '/profile', { name: 'X', email: 'x@example.com', phone: '0700' });
    expect(badPhone.status).toBe(422);
    expect(await badPhone.text()).toContain('Enter the phone number in international format');
    // NUL (which the database cannot store) is the same inline error as any invalid name, before anything is saved.
    for (const name of ['Al\u0000ice', '\u0000']) {
      const nul = await post(page, '/profile', { name, email: 'x@example.com', phone: '' });
      expect(nul.status).toBe(422);
      const nulHtml = await nul.text();
      expect(nulHtml).toContain('role="alert"');
      expect(nulHtml).toContain('Enter your name again: it is too long or contains characters that cannot be saved.');
      expect(nulHtml).toContain('value="x@example.com"');
      expect(nulHtml).not.toContain('\u0000');
    }
    expect((await api.get(`/v1/customers/${c.id}`)).body).toMatchObject({ name: 'Amina N.', email: 'amina.new@example.com' });
  });

  it('adds a method through the setup page, which returns to the portal as the default; removes the first', async () => {
    const c = await customer();
    const first = await savedCard(c.id);
    const s = await session(c.id);
    const page = await open(s.url);
    const add = await post(page, '/methods/add');
    expect(add.status).toBe(303);
    const setupUrl = add.headers.get('location')!;
    expect(setupUrl).toMatch(/\/hosted\/setup\/[0-9A-Za-z]{40}$/);
    const setup = await openPage(setupUrl);
    // The way back without saving claims nothing; it is the token-less portal (the cookie says whose).
    expect(setup.html).toContain(`class="back" href="${app.services.config.publicBaseUrl}/hosted/portal"`);
    expect(setup.html).not.toContain(s.url);
    expect(setup.html).not.toContain('done=added');
    const saved = await fetch(setup.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: setup.cookie },
      body: new URLSearchParams({ csrf: setup.csrf, method: 'card', card_number: '5555 5555 5555 4444', card_expiry: '10/33', card_cvc: '123' }).toString(),
    });
    expect(saved.status).toBe(303);
    const back = new URL(saved.headers.get('location')!);
    expect(back.pathname).toBe('/hosted/portal');
    expect(back.searchParams.get('done')).toBeNull();
    expect(back.searchParams.get('status')).toBe('succeeded');
    const returned = (await view(page, back.search)).html;
    expect(returned).toContain('Your new payment method was saved and is now your default');
    const methods = (await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data;
    expect(methods).toHaveLength(2);
    const second = methods[0].id;

    // Added in the portal: the default at once, as Stripe's portal does (no "Make default" on it).
    expect((await api.get(`/v1/customers/${c.id}`)).body.default_payment_method_id).toBe(second);
    expect(returned).not.toContain('aria-label="Make default – MASTERCARD •••• 4444"');
    expect(returned).toContain('aria-label="Make default – VISA •••• 4242"');
    const changed = (await api.get('/v1/events?type=customer.updated&limit=100')).body.data.find((e: any) => e.data.object.id === c.id);
    expect(changed.data.previous_attributes).toEqual({ default_payment_method_id: first });
    expect((await post(page, `/methods/${first}/remove`)).status).toBe(303);
    expect((await api.get(`/v1/payment-methods/${first}`)).body.customer_id).toBeNull();
    const events = (await api.get('/v1/events?limit=100')).body.data.filter((e: any) => [first, second, c.id].includes(e.data.object.id)).map((e: any) => e.type);
    expect(events.slice(0, 3)).toEqual(['payment_method.detached', 'customer.updated', 'payment_method.attached']);
    const now = await view(page);
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
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.session },
      body: new URLSearchParams({ csrf: page.csrf }).toString(),
    });
    expect(noCookie.status).toBe(403);
    expect((await m.get(`/v1/payment-methods/${pm}`)).body.customer_id).toBe(c.id);

    await m.post('/v1/test-helpers/clock/advance', { seconds: 3601 });
    const expired = await fetch(page.url, { headers: { cookie: page.cookie } });
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
    // Without the session cookie (or with an unknown one) the portal is the "session ended" page.
    for (const cookie of ['', `billing_portal=${'z'.repeat(40)}`, 'billing_portal=%00']) {
      const r = await fetch(`${app.url}/hosted/portal`, { headers: { cookie } });
      expect(r.status, cookie).toBe(404);
      expect(await r.text()).toContain('This session has expired');
      const p = await fetch(`${app.url}/hosted/portal/profile`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: [cookie, page.cookie.split('; ')[1]].join('; ') },
        body: new URLSearchParams({ csrf: page.csrf, name: 'X', email: 'x@example.com' }).toString(),
      });
      expect(p.status, cookie).toBe(404);
    }
    // A deleted customer's session is gone too.
    const d = await customer();
    const ds = await session(d.id);
    await api.del(`/v1/customers/${d.id}`);
    expect((await fetch(local(ds.url))).status).toBe(404);
  });
});

describe('the hosted portal refuses what it cannot read', () => {
  const broken = (url: string, cookie = '') =>
    fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'multipart/form-data; boundary=XX', cookie }, body: '--XX\r\nbroken' });

  it('a malformed form body is a 400 page, never a 500 (portal and setup page)', async () => {
    const c = await customer();
    const s = await session(c.id, api, { locale: 'fr' });
    const page = await open(s.url);
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const setup = await openPage(si.setup_url);
    for (const url of [`${page.url}/profile`, `${page.url}/methods/add`, `${page.url}/methods/pm_x/remove`, setup.url]) {
      const r = await broken(url, page.cookie);
      expect(r.status, url).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/text\/html/);
      const html = await r.text();
      expect(html).toMatch(/n’a pas pu être lu|could not be read/);
      expect(html).not.toMatch(/at .*\.ts:\d+|TypeError/);
    }
    expect((await api.get(`/v1/setup-intents/${si.id}`)).body.status).toBe('requires_payment_method');
  });

  it('a path id the database cannot store is the not-found page', async () => {
    const c = await customer();
    await savedCard(c.id);
    const s = await session(c.id);
    const page = await open(s.url);
    for (const path of ['/methods/pm_%00/default', '/methods/pm_%00/remove', '/methods/pm_%ED%A0%80/remove', '/subscriptions/sub_%00/cancel', '/subscriptions/sub_%00/reactivate']) {
      const r = await post(page, path);
      expect(r.status, path).toBe(404);
      expect(await r.text()).toContain('Page not found');
    }
    expect((await api.get(`/v1/customers/${c.id}`)).body.payment_methods).toHaveLength(1);
  });

  it('says "saved" only for a setup intent of this customer that really succeeded', async () => {
    const c = await customer();
    const s = await session(c.id);
    const page = await open(s.url);
    expect((await view(page, '?done=added')).html).not.toContain('Your new payment method was saved');
    const pending = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    expect((await view(page, `?setup_intent_id=${pending.id}&status=succeeded`)).html).not.toContain('Your new payment method was saved');
    const b = await customer();
    const theirs = (await api.post('/v1/setup-intents', { customer_id: b.id })).body;
    await api.post(`/v1/test-helpers/setup-intents/${theirs.id}/complete`, {});
    expect((await view(page, `?setup_intent_id=${theirs.id}&status=succeeded`)).html).not.toContain('Your new payment method was saved');
    expect((await view(page, '?setup_intent_id=seti_%00&status=succeeded')).res.status).toBe(200);
    await api.post(`/v1/test-helpers/setup-intents/${pending.id}/complete`, {});
    expect((await view(page, `?setup_intent_id=${pending.id}&status=succeeded`)).html).toContain('Your new payment method was saved');
  });

  it('speaks the portal’s language in its validation messages', async () => {
    const c = await customer();
    const s = await session(c.id, api, { locale: 'fr' });
    const page = await open(s.url);
    const email = await post(page, '/profile', { name: 'Amina', email: 'pas-un-email', phone: '' });
    expect(email.status).toBe(422);
    const html = await email.text();
    expect(html).toContain('Saisissez une adresse e-mail valide');
    expect(html).not.toContain('Invalid');
    const phone = await post(page, '/profile', { name: 'Amina', email: c.email, phone: '12' });
    expect(phone.status).toBe(422);
    expect(await phone.text()).toContain('Saisissez le numéro au format international');
    const nul = await post(page, '/profile', { name: 'Al\u0000ice', email: c.email, phone: '' });
    expect(nul.status).toBe(422);
    expect(await nul.text()).toContain('Saisissez à nouveau votre nom');
  });

  it('the access log path never holds a hosted token', () => {
    const token = 'A'.repeat(40);
    expect(loggedPath(`/hosted/portal/${token}`)).toBe('/hosted/portal/[token]');
    expect(loggedPath(`/hosted/portal/${token}/methods/pm_1/remove`)).toBe('/hosted/portal/[token]/methods/pm_1/remove');
    expect(loggedPath(`/hosted/setup/${token}`)).toBe('/hosted/setup/[token]');
    expect(loggedPath(`/hosted/checkout/${token}/cancel`)).toBe('/hosted/checkout/[token]/cancel');
    expect(loggedPath('/hosted/invoices/in_1/pdf')).toBe('/hosted/invoices/in_1/pdf');
    // The hosted invoice page and the e-mails' durable links are bearer links too.
    expect(loggedPath(`/hosted/invoice/${token}`)).toBe('/hosted/invoice/[token]');
    expect(loggedPath(`/hosted/invoice/${token}/pay`)).toBe('/hosted/invoice/[token]/pay');
    expect(loggedPath(`/hosted/email-links/${token}`)).toBe('/hosted/email-links/[token]');
    // Control characters a client percent-encoded stay encoded; a huge path is cut.
    expect(loggedPath('/v1/customers\n{"level":"fatal"}')).toBe('/v1/customers%0A{"level":"fatal"}');
    expect(loggedPath(`/${'x'.repeat(5000)}`)).toHaveLength(513);
    // The portal's token-less pages are logged as they are.
    expect(loggedPath('/hosted/portal')).toBe('/hosted/portal');
    expect(loggedPath('/hosted/portal/methods/pm_1/remove')).toBe('/hosted/portal/methods/pm_1/remove');
    expect(loggedPath('/hosted/portal/profile')).toBe('/hosted/portal/profile');
    expect(loggedPath('/v1/customers/cus_1')).toBe('/v1/customers/cus_1');
  });
});

describe('subscriptions and invoices in the portal', () => {
  async function plan(client = api, extra: Record<string, unknown> = {}) {
    const r = await client.post('/v1/plans', { name: 'Coffee club', amount: 1500, currency: 'USD', interval: 'month', ...extra });
    expect(r.status).toBe(201);
    return r.body;
  }

  async function subscribed(client = api) {
    const c = await customer(client);
    await savedCard(c.id, client);
    const p = await plan(client);
    const r = await client.post('/v1/subscriptions', { customer_id: c.id, plan_id: p.id });
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('active');
    const invoice = (await client.get(`/v1/invoices/${r.body.latest_invoice_id}`)).body;
    expect(invoice.status).toBe('paid');
    return { c, plan: p, sub: r.body, invoice };
  }

  const subOf = async (id: string, client = api) => (await client.get(`/v1/subscriptions/${id}`)).body;
  const eventsOf = async (id: string, type: string) =>
    (await api.get(`/v1/events?type=${type}&limit=100`)).body.data.filter((e: any) => e.data.object.id === id);
  const unescape = (v: string) => v.replace(/&amp;/g, '&');

  it('shows the plan, price, status and next payment, and the invoices with a working signed PDF link', async () => {
    const { c, sub, invoice } = await subscribed();
    const s = await session(c.id);
    const page = await open(s.url);
    expect(page.res.status).toBe(200);
    expect(page.html).toContain(`data-subscription="${sub.id}"`);
    expect(page.html).toContain('Coffee club');
    expect(page.html).toContain('$15.00 per month');
    expect(page.html).toContain('Active');
    expect(page.html).toContain('Next payment on');
    expect(page.html).toContain('aria-label="Cancel at period end – Coffee club"');
    expect(page.html).toContain(invoice.number);
    expect(page.html).toContain('PDF links are valid for 5 minutes; reload the page to refresh them.');
    const href = unescape(new RegExp(`data-invoice="${invoice.id}".*?<a href="([^"]+)"`, 's').exec(page.html)![1]!);
    expect(href).not.toContain('/v1/');
    expect(href).toMatch(new RegExp(`^${app.services.config.publicBaseUrl}/hosted/invoices/${invoice.id}/pdf\\?expires=\\d+&signature=`));
    const pdf = await fetch(local(href));
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 4).toString()).toBe('%PDF');
    // A plain same-origin link: the page's CSP (no navigate-to) does not get in its way.
    expect(page.res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
  });

  it('cancels at period end and keeps the subscription, with the API’s events; a second "keep" is a friendly notice', async () => {
    const { c, sub } = await subscribed();
    const s = await session(c.id);
    const page = await open(s.url);
    const updated = (await eventsOf(sub.id, 'subscription.updated')).length; // incomplete → active at creation
    // Cancel asks first, saying when it ends (the period's end), and changes nothing until confirmed.
    const ask = await post(page, `/subscriptions/${sub.id}/cancel`);
    expect(ask.status).toBe(200);
    const askHtml = await ask.text();
    const end = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(sub.current_period_end));
    expect(askHtml).toContain(`Your subscription to Coffee club will end on ${end}, at the end of the current period.`);
    expect(askHtml).toContain('name="confirm" value="1"');
    expect(askHtml).toContain('Go back without changing anything');
    expect(await subOf(sub.id)).toMatchObject({ status: 'active', cancel_at_period_end: false });
    expect(await eventsOf(sub.id, 'subscription.updated')).toHaveLength(updated);
    const cancel = await post(page, `/subscriptions/${sub.id}/cancel`, { confirm: '1' });
    expect(cancel.status).toBe(303);
    expect(cancel.headers.get('location')).toMatch(/\?done=cancelling$/);
    expect(await subOf(sub.id)).toMatchObject({ status: 'active', cancel_at_period_end: true });
    const [event] = await eventsOf(sub.id, 'subscription.updated');
    expect(await eventsOf(sub.id, 'subscription.updated')).toHaveLength(updated + 1);
    expect(event.data.object.cancel_at_period_end).toBe(true);
    expect(event.data.previous_attributes).toMatchObject({ cancel_at_period_end: false });
    const cancelling = await view(page, '?done=cancelling');
    expect(cancelling.html).toContain('Your subscription will end at the end of the current period.');
    expect(cancelling.html).toContain('Cancels on');
    expect(cancelling.html).toContain('Keep my subscription');
    expect(cancelling.html).not.toContain('aria-label="Cancel at period end');
    // Clicking cancel twice (two tabs) changes nothing more.
    expect((await post(page, `/subscriptions/${sub.id}/cancel`)).status).toBe(303);
    expect(await eventsOf(sub.id, 'subscription.updated')).toHaveLength(updated + 1);
    expect(await subOf(sub.id)).toMatchObject({ cancel_at_period_end: true, current_period_end: sub.current_period_end });

    const keep = await post(page, `/subscriptions/${sub.id}/reactivate`);
    expect(keep.status).toBe(303);
    expect(keep.headers.get('location')).toMatch(/\?done=kept$/);
    expect(await subOf(sub.id)).toMatchObject({ status: 'active', cancel_at_period_end: false });
    expect(await eventsOf(sub.id, 'subscription.reactivated')).toHaveLength(1);

    const again = await post(page, `/subscriptions/${sub.id}/reactivate`);
    expect(again.status).toBe(409);
    const html = await again.text();
    expect(html).toContain('This could not be done: it changed in the meantime.');
    expect(html).toContain('id="subscriptions-error"');
    expect(html).not.toContain('subscription_not_cancelling');
    expect(html).not.toContain(sub.id + ' is not');
  });

  it('another customer’s (or merchant’s) subscription is not found; a missing or wrong CSRF token changes nothing', async () => {
    const mine = await subscribed();
    const b = await subscribed();
    const theirs = await subscribed(other);
    const s = await session(mine.c.id);
    const page = await open(s.url);
    const updated = (await eventsOf(mine.sub.id, 'subscription.updated')).length;
    expect(page.html).not.toContain(b.sub.id);
    for (const id of [b.sub.id, theirs.sub.id, 'sub_nope']) {
      const r = await post(page, `/subscriptions/${id}/cancel`);
      expect(r.status, id).toBe(404);
      expect(await r.text()).toContain('Page not found');
      expect((await post(page, `/subscriptions/${id}/reactivate`)).status).toBe(404);
    }
    expect((await subOf(b.sub.id)).cancel_at_period_end).toBe(false);
    expect((await subOf(theirs.sub.id, other)).cancel_at_period_end).toBe(false);

    const wrong = await post({ ...page, csrf: 'y'.repeat(32) }, `/subscriptions/${mine.sub.id}/cancel`);
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain('Your session expired. Reload the page and try again.');
    const noCookie = await fetch(`${page.url}/subscriptions/${mine.sub.id}/cancel`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.session },
      body: new URLSearchParams({ csrf: page.csrf }).toString(),
    });
    expect(noCookie.status).toBe(403);
    const noField = await fetch(`${page.url}/subscriptions/${mine.sub.id}/cancel`, { method: 'POST', redirect: 'manual', headers: { cookie: page.cookie } });
    expect(noField.status).toBe(403);
    expect((await subOf(mine.sub.id)).cancel_at_period_end).toBe(false);
    expect(await eventsOf(mine.sub.id, 'subscription.updated')).toHaveLength(updated);
  });

  it('"Make default" with a working card retries at once what a past_due subscription owes: the invoice paid, the subscription active', async () => {
    const m = await app.merchant({ name: 'Recovery merchant' }); // its own clock
    const c = await customer(m);
    await savedCard(c.id, m, '4000000000009995'); // the default; every charge of it fails
    const p = (await m.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month', trial_period_days: 7 })).body;
    const sub = (await m.post('/v1/subscriptions', { customer_id: c.id, plan_id: p.id })).body;
    expect((await m.post('/v1/test-helpers/clock/advance', { to: sub.trial_end })).status).toBe(200);
    const due = (await m.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(due.status).toBe('past_due');
    expect((await m.get(`/v1/invoices/${due.latest_invoice_id}`)).body).toMatchObject({ status: 'open', attempt_count: 1 });
    const good = await savedCard(c.id, m);
    const page = await open((await session(c.id, m)).url);
    expect((await post(page, `/methods/${good}/default`)).status).toBe(303);
    expect((await m.get(`/v1/customers/${c.id}`)).body.default_payment_method_id).toBe(good);
    const inv = (await m.get(`/v1/invoices/${due.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'paid', attempt_count: 2, last_payment_error: null });
    expect((await m.get(`/v1/payments/${inv.payment_id}`)).body).toMatchObject({ status: 'succeeded', payment_method_id: good });
    expect((await m.get(`/v1/subscriptions/${sub.id}`)).body).toMatchObject({ status: 'active', current_period_end: due.current_period_end });
  });

  /** Adds a card through the portal as a browser does: "Add a payment method", the setup page's form, back to the portal. */
  async function addThroughPortal(page: PortalPage, cardNumber: string) {
    const add = await post(page, '/methods/add');
    expect(add.status).toBe(303);
    const setup = await openPage(add.headers.get('location')!);
    const saved = await fetch(setup.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: setup.cookie },
      body: new URLSearchParams({ csrf: setup.csrf, method: 'card', card_number: cardNumber, card_expiry: '10/33', card_cvc: '123' }).toString(),
    });
    expect(saved.status).toBe(303);
    const back = new URL(saved.headers.get('location')!);
    expect(back.pathname).toBe('/hosted/portal');
    return view(page, back.search);
  }

  /** A subscription of its own merchant (its own clock) whose first invoice after the trial was declined: past_due. */
  async function pastDue(name: string) {
    const m = await app.merchant({ name });
    const c = await customer(m);
    const failing = await savedCard(c.id, m, '4000000000009995'); // the default; every charge of it fails
    const p = (await m.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month', trial_period_days: 7 })).body;
    const sub = (await m.post('/v1/subscriptions', { customer_id: c.id, plan_id: p.id })).body;
    expect((await m.post('/v1/test-helpers/clock/advance', { to: sub.trial_end })).status).toBe(200);
    const due = (await m.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(due.status).toBe('past_due');
    expect((await m.get(`/v1/invoices/${due.latest_invoice_id}`)).body).toMatchObject({ status: 'open', attempt_count: 1 });
    return { m, c, failing, due };
  }

  it('adding a working card in the portal makes it the default and retries at once what a past_due subscription owes: paid, active, and the page says so', async () => {
    const { m, c, failing, due } = await pastDue('Added-card recovery');
    const page = await open((await session(c.id, m)).url);
    const back = await addThroughPortal(page, '5555 5555 5555 4444');
    const customerNow = (await m.get(`/v1/customers/${c.id}`)).body;
    const good = customerNow.default_payment_method_id;
    expect(good).not.toBe(failing);
    expect((await m.get(`/v1/payment-methods/${good}`)).body.card.last4).toBe('4444');
    const inv = (await m.get(`/v1/invoices/${due.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'paid', attempt_count: 2, last_payment_error: null });
    expect((await m.get(`/v1/payments/${inv.payment_id}`)).body).toMatchObject({ status: 'succeeded', payment_method_id: good });
    expect((await m.get(`/v1/subscriptions/${due.id}`)).body).toMatchObject({ status: 'active', current_period_end: due.current_period_end });
    // The same events as "Make default": the default changed, then the retry paid the invoice.
    const types = (await m.get('/v1/events?limit=100')).body.data.map((e: any) => e.type);
    expect(types.indexOf('invoice.paid')).toBeLessThan(types.indexOf('customer.updated'));
    expect(types.indexOf('customer.updated')).toBeLessThan(types.indexOf('payment_method.attached'));
    expect(back.html).toContain('Your new payment method was saved and is now your default: it is the one charged from now on. The payment that was due was charged to it: your invoice is paid.');
    expect(back.html).not.toContain('An invoice is still unpaid');
  });

  it('adding a card after removing the only one (it becomes the default by being the first) retries too; a declined retry says so, in French', async () => {
    const { m, c, failing, due } = await pastDue('Added-card recovery FR');
    const page = await open((await session(c.id, m, { locale: 'fr' })).url);
    expect((await post(page, `/methods/${failing}/remove`, { confirm: '1' })).status).toBe(303);
    expect((await m.get(`/v1/customers/${c.id}`)).body.default_payment_method_id).toBeNull();
    // A card that saves, but whose every charge fails: the retry is made, and declined.
    const back = await addThroughPortal(page, '4000 0000 0000 9995');
    const added = (await m.get(`/v1/customers/${c.id}`)).body.default_payment_method_id;
    expect(added).toMatch(/^pm_/);
    const inv = (await m.get(`/v1/invoices/${due.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'open', attempt_count: 2, last_payment_error: { code: 'insufficient_funds' } });
    expect((await m.get(`/v1/payments/${inv.payment_id}`)).body).toMatchObject({ status: 'failed', payment_method_id: added });
    expect((await m.get(`/v1/subscriptions/${due.id}`)).body.status).toBe('past_due');
    expect(back.html).toContain('Votre nouveau moyen de paiement a été enregistré et devient votre moyen par défaut');
    expect(back.html).toContain('Une facture reste impayée : son dernier paiement n’a pas abouti (voir Factures ci-dessous).');
    expect(back.html).not.toContain('votre facture est payée');
  });

  it('"Pay now" on an open invoice charges the default method: the decline reason in the page, then paid with a working default', async () => {
    const c = await customer();
    await savedCard(c.id, api, '4000000000009995'); // the default; every charge of it fails
    const p = await plan();
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: p.id })).body;
    expect(sub.status).toBe('incomplete');
    const inv = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    const s = await session(c.id);
    const page = await open(s.url);
    expect(page.html).toContain(`aria-label="Pay now – ${inv.number}"`);
    const failedBefore = (await eventsOf(inv.id, 'invoice.payment_failed')).length;
    const declined = await post(page, `/invoices/${inv.id}/pay`);
    expect(declined.status).toBe(402);
    const html = await declined.text();
    expect(html).toContain('id="invoices-error"');
    expect(html).toContain('The payment did not go through: the card has insufficient funds.');
    expect(html).not.toContain('insufficient_funds');
    expect(await eventsOf(inv.id, 'invoice.payment_failed')).toHaveLength(failedBefore + 1);
    expect((await api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'open', last_payment_error: { code: 'insufficient_funds' } });

    // In French too.
    const fr = await open((await session(c.id, api, { locale: 'fr' })).url);
    expect(fr.html).toContain('Payer maintenant');
    const refused = await post(fr, `/invoices/${inv.id}/pay`);
    expect(refused.status).toBe(402);
    expect(await refused.text()).toContain('Le paiement n’a pas abouti : le solde de la carte est insuffisant.');

    const good = await savedCard(c.id);
    expect((await api.patch(`/v1/customers/${c.id}`, { default_payment_method_id: good })).status).toBe(200);
    const paid = await post(page, `/invoices/${inv.id}/pay`);
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toMatch(/\?done=paid$/);
    expect((await api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'paid', last_payment_error: null });
    expect((await subOf(sub.id)).status).toBe('active');
    const after = await view(page, '?done=paid');
    expect(after.html).toContain('Thank you: the invoice is paid.');
    expect(after.html).not.toContain('Pay now');
    // Paid already (a second tab): a friendly conflict, nothing charged.
    const again = await post(page, `/invoices/${inv.id}/pay`);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('This could not be done: it changed in the meantime.');
  });

  it('"Pay now" on another customer’s (or merchant’s) invoice is not found; a wrong CSRF token charges nothing', async () => {
    const mine = await subscribed();
    const c = await customer();
    await savedCard(c.id, api, '4000000000009995');
    const theirSub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: mine.plan.id })).body;
    const otherMerchants = await subscribed(other);
    const page = await open((await session(mine.c.id)).url);
    for (const id of [theirSub.latest_invoice_id, otherMerchants.invoice.id, 'in_nope']) {
      const r = await post(page, `/invoices/${id}/pay`);
      expect(r.status, id).toBe(404);
    }
    const failed = (await eventsOf(theirSub.latest_invoice_id, 'invoice.payment_failed')).length;
    const theirPage = await open((await session(c.id)).url);
    expect((await post({ ...theirPage, csrf: 'y'.repeat(32) }, `/invoices/${theirSub.latest_invoice_id}/pay`)).status).toBe(403);
    expect(await eventsOf(theirSub.latest_invoice_id, 'invoice.payment_failed')).toHaveLength(failed);
  });

  it('speaks French', async () => {
    const { c, invoice } = await subscribed();
    const s = await session(c.id, api, { locale: 'fr' });
    const page = await open(s.url);
    expect(page.html).toContain('par mois');
    expect(page.html).toContain('Actif');
    expect(page.html).toContain('Résilier en fin de période');
    expect(page.html).toContain('Payée');
    expect(page.html).toContain(`PDF de la facture ${invoice.number}`);
    expect(page.html).toContain('Les liens PDF sont valables 5 minutes');
  });

  it('removing the only method an active subscription uses asks first, with the consequence; another method left: no question', async () => {
    const { c, sub } = await subscribed();
    const [only] = (await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data;
    const s = await session(c.id);
    const page = await open(s.url);
    const ask = await post(page, `/methods/${only.id}/remove`);
    expect(ask.status).toBe(200);
    const html = await ask.text();
    expect(html).toContain('<h1>Remove your only payment method?</h1>');
    expect(html).toContain('VISA ending in 4242');
    expect(html).toContain('and Coffee club still needs one. Without it, the next payment cannot be taken');
    expect(html).toContain(`action="/hosted/portal/methods/${only.id}/remove"`);
    expect(html).toContain('name="confirm" value="1"');
    expect(html).toContain('Keep this payment method');
    // Nothing changed until confirmed.
    expect((await api.get(`/v1/payment-methods/${only.id}`)).body.customer_id).toBe(c.id);
    expect(await eventsOf(only.id, 'payment_method.detached')).toHaveLength(0);
    const done = await post(page, `/methods/${only.id}/remove`, { confirm: '1' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toMatch(/\?done=removed$/);
    expect((await api.get(`/v1/payment-methods/${only.id}`)).body.customer_id).toBeNull();
    expect(await eventsOf(only.id, 'payment_method.detached')).toHaveLength(1);
    expect((await subOf(sub.id)).status).toBe('active');

    // Two methods: removing one leaves the subscription a method (the other becomes the default), so no question.
    const two = await subscribed();
    const second = await savedCard(two.c.id, api, '5555555555554444');
    const page2 = await open((await session(two.c.id)).url);
    const direct = await post(page2, `/methods/${second}/remove`);
    expect(direct.status).toBe(303);
    expect((await api.get(`/v1/payment-methods/${second}`)).body.customer_id).toBeNull();

    // Set to end at the period's end: nothing more will be charged, so no question either.
    const ending = await subscribed();
    const [endingMethod] = (await api.get(`/v1/payment-methods?customer_id=${ending.c.id}`)).body.data;
    expect((await api.post(`/v1/subscriptions/${ending.sub.id}/cancel`, { cancel_at_period_end: true })).status).toBe(200);
    const page3 = await open((await session(ending.c.id)).url);
    expect((await post(page3, `/methods/${endingMethod.id}/remove`)).status).toBe(303);
  });

  it('asks in French before removing the only method and before cancelling', async () => {
    const { c, sub } = await subscribed();
    const [only] = (await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data;
    const page = await open((await session(c.id, api, { locale: 'fr' })).url);
    const remove = await (await post(page, `/methods/${only.id}/remove`)).text();
    expect(remove).toContain('<html lang="fr">');
    expect(remove).toContain('Supprimer votre seul moyen de paiement ?');
    expect(remove).toContain('est le seul moyen de paiement de votre compte, et Coffee club en a encore besoin.');
    expect(remove).toContain('Supprimer quand même');
    const cancel = await (await post(page, `/subscriptions/${sub.id}/cancel`)).text();
    const end = new Intl.DateTimeFormat('fr', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(sub.current_period_end));
    expect(cancel).toContain(`Votre abonnement Coffee club prendra fin le ${end}, à la fin de la période en cours.`);
    expect(cancel).toContain('Résilier mon abonnement');
    expect((await subOf(sub.id)).cancel_at_period_end).toBe(false);
  });
});

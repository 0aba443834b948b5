// Card testing on the hosted pages, tried over HTTP the way a script posting the pages' forms would
// (GET the page for its CSRF cookie and field, then POST them back): a setup link and a checkout
// take a bounded number of attempts (counted in the database), failed attempts per source address
// are limited across every hosted page (429 with Retry-After), and a portal session mints a
// bounded number of setup links.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testProcessor, type Processor } from '../src/platform/processor.ts';
import { SETUP_MAX_ATTEMPTS } from '../src/domain/payment-methods/index.ts';
import { PORTAL_MAX_SETUP_LINKS } from '../src/domain/portal/index.ts';
import { CHECKOUT_MAX_ATTEMPTS } from '../src/hosted/checkout.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

const DECLINED = '4000000000000002';
const GOOD = '4242424242424242';

/** The test processor (every call of it), counting the saves and charges that reach it. */
const saves: string[] = [];
const charges: string[] = [];
const processor: Processor = {
  ...testProcessor,
  name: 'counting',
  save(req) {
    saves.push(req.reference);
    return testProcessor.save(req);
  },
  charge(req) {
    charges.push(req.reference);
    return testProcessor.charge(req);
  },
};

let app: TestApp;
let api: Client;

beforeAll(async () => {
  // Each test comes from its own address (X-Forwarded-For, trusted here), so the per-address
  // limit of one test never refuses another's attempts.
  app = await startApp({ TRUST_PROXY: '1', PAYMENT_FAILURES_PER_ADDRESS_PER_MINUTE: '12', PAYMENT_FAILURES_PER_ADDRESS_PER_HOUR: '100' });
  app.services.runtime.processorFor = () => processor;
  api = await app.merchant({ name: 'Kampala Coffee' });
});
afterAll(() => app?.close());

let lastAddress = 10;
const newAddress = () => `198.51.100.${lastAddress++}`;
const local = (url: string) => url.replace(app.services.config.publicBaseUrl, app.url);
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const cookieOf = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith(`${name}=`)) ?? '';

/** A browser at `address` on a hosted page: its cookies and the form's CSRF field. */
interface Visit {
  url: string;
  address: string;
  cookie: string;
  csrf: string;
}

async function visit(url: string, address: string, cookie = ''): Promise<Visit & { status: number; html: string }> {
  const res = await fetch(local(url), { headers: { 'x-forwarded-for': address, cookie } });
  const html = await res.text();
  const csrf = cookieOf(res, 'billing_csrf');
  return { url: local(url), address, cookie: [cookie, csrf].filter(Boolean).join('; '), csrf: csrfOf(html), status: res.status, html };
}

async function submit(v: Visit, fields: Record<string, string>, path = '') {
  const res = await fetch(v.url + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: v.cookie, 'x-forwarded-for': v.address },
    body: new URLSearchParams({ csrf: v.csrf, ...fields }).toString(),
  });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

const card = (number: string) => ({ method: 'card', card_number: number, card_expiry: '12/34', card_cvc: '123' });

async function customer() {
  return (await api.post('/v1/customers', { email: `ct${Math.random().toString(36).slice(2)}@example.com`, name: 'Amina' })).body;
}

async function setupIntent(customerId?: string) {
  const r = await api.post('/v1/setup-intents', { customer_id: customerId ?? (await customer()).id, return_url: 'https://coffee.example/account' });
  expect(r.status).toBe(201);
  return r.body;
}

async function payment() {
  const r = await api.post('/v1/payments', {
    amount: 2500,
    currency: 'USD',
    customer: { email: 'reader@example.com' },
    redirect_url: 'https://coffee.example/done',
    cancel_url: 'https://coffee.example/cart',
  });
  expect(r.status).toBe(201);
  return r.body;
}

const savesOf = (id: string) => saves.filter((r) => r === id || r.startsWith(`${id}_`));
const chargesOf = (id: string) => charges.filter((r) => r === id || r.startsWith(`${id}_`));

describe('a setup link', () => {
  it(`takes ${SETUP_MAX_ATTEMPTS} attempts: of 60 declined cards only ${SETUP_MAX_ATTEMPTS} reach the processor, then a good card is refused too`, async () => {
    const c = await customer();
    const si = await setupIntent(c.id);
    const page = await visit(si.setup_url, newAddress());
    expect(page.status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await submit(page, card(DECLINED))).status);
    expect(statuses.slice(0, SETUP_MAX_ATTEMPTS)).toEqual(Array(SETUP_MAX_ATTEMPTS).fill(402));
    expect(new Set(statuses.slice(SETUP_MAX_ATTEMPTS))).toEqual(new Set([429]));
    // Each attempt had its own idempotency key (a real processor would replay the first decline otherwise).
    expect(savesOf(si.id)).toEqual([si.id, `${si.id}_2`, `${si.id}_3`, `${si.id}_4`, `${si.id}_5`]);

    const good = await submit(page, card(GOOD));
    expect(good.status).toBe(429);
    expect(good.html).toContain('Too many payment methods were refused on this link, so it no longer accepts any. Ask Kampala Coffee for a new link.');
    expect(good.html).not.toContain('name="card_number"');
    expect(savesOf(si.id)).toHaveLength(SETUP_MAX_ATTEMPTS);
    expect((await api.get(`/v1/setup-intents/${si.id}`)).body).toMatchObject({ status: 'requires_payment_method', payment_method_id: null });
    expect((await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data).toEqual([]);

    // The page says so without a form, also when opened again; the test helper is refused as well.
    const again = await visit(si.setup_url, newAddress());
    expect(again.status).toBe(200);
    expect(again.html).toContain('Too many attempts');
    expect(again.html).not.toContain('name="card_number"');
    const helper = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {});
    expect(helper.status).toBe(409);
    expect(helper.body.error.code).toBe('setup_intent_attempts_exceeded');
    // It still expires normally.
    await api.post('/v1/test-helpers/clock/advance', { seconds: 24 * 3600 + 1 });
    expect((await api.get(`/v1/setup-intents/${si.id}`)).body.status).toBe('expired');
  });

  it('the fifth decline ends the form; a good card within the attempts is saved', async () => {
    const si = await setupIntent();
    const page = await visit(si.setup_url, newAddress());
    for (let i = 1; i < SETUP_MAX_ATTEMPTS; i++) {
      const r = await submit(page, card(DECLINED));
      expect(r.status).toBe(402);
      expect(r.html).toContain('name="card_number"');
    }
    const ok = await submit(page, card(GOOD));
    expect(ok.status).toBe(303);
    expect((await api.get(`/v1/setup-intents/${si.id}`)).body.status).toBe('succeeded');
    expect(savesOf(si.id).at(-1)).toBe(`${si.id}_${SETUP_MAX_ATTEMPTS}`);

    const other = await setupIntent();
    const p2 = await visit(other.setup_url, newAddress(), '');
    for (let i = 1; i < SETUP_MAX_ATTEMPTS; i++) await submit(p2, card(DECLINED));
    const last = await submit(p2, card(DECLINED));
    expect(last.status).toBe(402);
    expect(last.html).toContain('The card was declined. Too many payment methods were refused on this link');
    expect(last.html).not.toContain('name="card_number"');
  });

  it('concurrent submissions cannot get past the cap', async () => {
    const si = await setupIntent();
    const page = await visit(si.setup_url, newAddress());
    const statuses = await Promise.all(Array.from({ length: 20 }, () => submit(page, card(DECLINED)).then((r) => r.status)));
    expect(savesOf(si.id)).toHaveLength(SETUP_MAX_ATTEMPTS);
    expect(new Set(savesOf(si.id)).size).toBe(SETUP_MAX_ATTEMPTS);
    expect(statuses.filter((s) => s === 402)).toHaveLength(SETUP_MAX_ATTEMPTS);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20 - SETUP_MAX_ATTEMPTS);
  });

  it('speaks the page’s language (a link made in a French portal)', async () => {
    const c = await customer();
    const s = (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://coffee.example/account', locale: 'fr' })).body;
    const address = newAddress();
    const first = await fetch(local(s.url), { redirect: 'manual', headers: { 'x-forwarded-for': address } });
    const portal = await visit(`${app.url}/hosted/portal`, address, cookieOf(first, 'billing_portal'));
    const add = await submit(portal, {}, '/methods/add');
    expect(add.status).toBe(303);
    const page = await visit(add.headers.get('location')!, address, portal.cookie);
    for (let i = 0; i < SETUP_MAX_ATTEMPTS; i++) await submit(page, card(DECLINED));
    const refused = await submit(page, card(GOOD));
    expect(refused.status).toBe(429);
    expect(refused.html).toMatch(/<html lang="fr">/);
    expect(refused.html).toContain('Trop de moyens de paiement ont été refusés sur ce lien : il n’en accepte plus. Demandez un nouveau lien à Kampala Coffee.');
  });
});

describe('a checkout', () => {
  it(`takes ${CHECKOUT_MAX_ATTEMPTS} attempts: of 60 declined cards only ${CHECKOUT_MAX_ATTEMPTS} reach the processor, then a good card is refused too; cancelling still works`, async () => {
    const p = await payment();
    const page = await visit(p.checkout_url, newAddress());
    expect(page.status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await submit(page, card(DECLINED))).status);
    expect(statuses.slice(0, CHECKOUT_MAX_ATTEMPTS)).toEqual(Array(CHECKOUT_MAX_ATTEMPTS).fill(402));
    expect(new Set(statuses.slice(CHECKOUT_MAX_ATTEMPTS))).toEqual(new Set([429]));
    expect(chargesOf(p.id)).toHaveLength(CHECKOUT_MAX_ATTEMPTS);

    const good = await submit(page, card(GOOD));
    expect(good.status).toBe(429);
    expect(good.html).toContain('This payment was declined too many times, so it no longer accepts any attempt. Return to Kampala Coffee to start again.');
    expect(good.html).not.toContain('name="card_number"');
    expect(chargesOf(p.id)).toHaveLength(CHECKOUT_MAX_ATTEMPTS);
    expect((await api.get(`/v1/payments/${p.id}`)).body.status).toBe('failed');

    const again = await visit(p.checkout_url, newAddress());
    expect(again.status).toBe(200);
    expect(again.html).toContain('Too many attempts');
    expect(again.html).not.toContain('name="card_number"');
    const cancel = await submit(again, {}, '/cancel');
    expect(cancel.status).toBe(303);
    expect(new URL(cancel.headers.get('location')!).searchParams.get('status')).toBe('cancelled');
  });

  it('a top-up checkout is the same page with the same cap', async () => {
    const c = await customer();
    const w = (await api.post('/v1/wallets', { customer_id: c.id, currency: 'USD' })).body;
    const topup = (await api.post(`/v1/wallets/${w.id}/topups`, { amount: 1000, redirect_url: 'https://coffee.example/wallet' })).body;
    const page = await visit(topup.checkout_url, newAddress());
    for (let i = 0; i < CHECKOUT_MAX_ATTEMPTS + 3; i++) await submit(page, card(DECLINED));
    expect(chargesOf(topup.payment_id)).toHaveLength(CHECKOUT_MAX_ATTEMPTS);
    const good = await submit(page, card(GOOD));
    expect(good.status).toBe(429);
    expect(chargesOf(topup.payment_id)).toHaveLength(CHECKOUT_MAX_ATTEMPTS);
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(0);
  });
});

describe('failed attempts per source address', () => {
  it('are limited across setup links and checkouts: 429 with Retry-After, nothing reaches the processor; another address goes on', async () => {
    const address = newAddress();
    const a = await setupIntent();
    const b = await setupIntent();
    const p = await payment();
    const onA = await visit(a.setup_url, address);
    const onB = await visit(b.setup_url, address);
    const onP = await visit(p.checkout_url, address);
    // 12 per minute here: 4 on link A, 4 on link B, 4 at the checkout.
    for (let i = 0; i < 4; i++) expect((await submit(onA, card(DECLINED))).status).toBe(402);
    for (let i = 0; i < 4; i++) expect((await submit(onB, card(DECLINED))).status).toBe(402);
    for (let i = 0; i < 4; i++) expect((await submit(onP, card(DECLINED))).status).toBe(402);
    const before = saves.length + charges.length;

    for (const [v, fields] of [
      [onB, card(DECLINED)],
      [onB, card(GOOD)],
      [onA, card(GOOD)],
      [onP, card(GOOD)],
    ] as const) {
      const r = await submit(v, fields);
      expect(r.status).toBe(429);
      const retryAfter = Number(r.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(r.html).toContain('Too many payment attempts from your network were refused. Try again in 1 minute.');
      // The form stays (this is not the link's fault), the card number too, never the CVC.
      expect(r.html).toContain('name="card_number"');
      expect(r.html).not.toContain('value="123"');
    }
    expect(saves.length + charges.length).toBe(before);
    expect((await api.get(`/v1/setup-intents/${b.id}`)).body.status).toBe('requires_payment_method');

    // Another address may still use link B (and its attempts are not spent).
    const elsewhere = await visit(b.setup_url, newAddress());
    expect((await submit(elsewhere, card(GOOD))).status).toBe(303);
    expect((await api.get(`/v1/setup-intents/${b.id}`)).body.status).toBe('succeeded');
  });

  it('only failures count: saved methods and paid checkouts are given back', async () => {
    const address = newAddress();
    for (let i = 0; i < 14; i++) {
      const si = await setupIntent();
      const v = await visit(si.setup_url, address);
      expect((await submit(v, card(GOOD))).status).toBe(303);
    }
    const p = await payment();
    expect((await submit(await visit(p.checkout_url, address), card(GOOD))).status).toBe(303);
  });

  it('IPv6 addresses are limited by their /64', async () => {
    const si = await setupIntent();
    for (let i = 0; i < 12; i++) {
      const s = await setupIntent();
      const v = await visit(s.setup_url, `2001:db8:1:2::${(i + 1).toString(16)}`);
      expect((await submit(v, card(DECLINED))).status).toBe(402);
    }
    const v = await visit(si.setup_url, '2001:db8:1:2:ffff::1');
    expect((await submit(v, card(GOOD))).status).toBe(429);
    const other = await visit(si.setup_url, '2001:db8:1:3::1');
    expect((await submit(other, card(GOOD))).status).toBe(303);
  });
});

describe('a portal session', () => {
  async function portal() {
    const c = await customer();
    const s = (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://coffee.example/account' })).body;
    const address = newAddress();
    const first = await fetch(local(s.url), { redirect: 'manual', headers: { 'x-forwarded-for': address } });
    expect(first.status).toBe(303);
    const page = await visit(`${app.url}/hosted/portal`, address, cookieOf(first, 'billing_portal'));
    expect(page.status).toBe(200);
    return { c, s, page };
  }

  it(`mints at most ${PORTAL_MAX_SETUP_LINKS} setup links, then says so`, async () => {
    const { s, page } = await portal();
    const links: string[] = [];
    for (let i = 0; i < PORTAL_MAX_SETUP_LINKS; i++) {
      const r = await submit(page, {}, '/methods/add');
      expect(r.status).toBe(303);
      links.push(r.headers.get('location')!);
    }
    expect(new Set(links).size).toBe(PORTAL_MAX_SETUP_LINKS);
    for (let i = 0; i < 3; i++) {
      const r = await submit(page, {}, '/methods/add');
      expect(r.status).toBe(429);
      expect(r.headers.get('location')).toBeNull();
      expect(r.html).toContain('You started adding a payment method too many times in this session. Open your account again from Kampala Coffee to add another.');
      expect(r.html).toContain('id="methods-error"');
    }
    expect(await app.services.db.prisma.setupIntent.count({ where: { portalSessionId: s.id } })).toBe(PORTAL_MAX_SETUP_LINKS);
    // The links it minted still work.
    expect((await visit(links[0]!, newAddress())).status).toBe(200);
  });

  it('the cap holds under concurrent clicks', async () => {
    const { s, page } = await portal();
    const statuses = await Promise.all(Array.from({ length: 12 }, () => submit(page, {}, '/methods/add').then((r) => r.status)));
    expect(statuses.filter((x) => x === 303)).toHaveLength(PORTAL_MAX_SETUP_LINKS);
    expect(statuses.filter((x) => x === 429)).toHaveLength(12 - PORTAL_MAX_SETUP_LINKS);
    expect(await app.services.db.prisma.setupIntent.count({ where: { portalSessionId: s.id } })).toBe(PORTAL_MAX_SETUP_LINKS);
  });
});

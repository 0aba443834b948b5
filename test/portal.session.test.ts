// The portal's url is a bearer token: it opens once, for a session cookie, and never travels
// further — not in a setup intent's return_url, its events or webhooks. Over HTTP, as a browser
// follows the link; the cookie in a real browser is in hosted.browser.test.ts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant({ name: 'Kampala Coffee' });
});
afterAll(() => app?.close());

const local = (url: string, to = app) => url.replace(to.services.config.publicBaseUrl, to.url);
const tokenOf = (url: string) => /\/hosted\/portal\/([0-9A-Za-z]{40})$/.exec(url)![1]!;
const setCookies = (res: Response) => res.headers.getSetCookie();
const portalCookie = (res: Response) => setCookies(res).find((c) => c.startsWith('billing_portal='));
const pair = (cookie: string | undefined) => cookie?.split(';')[0] ?? '';
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

async function customer(client = api) {
  return (await client.post('/v1/customers', { email: `s${Math.random().toString(36).slice(2)}@example.com`, name: 'Amina' })).body;
}

async function session(customerId: string, client = api, extra: Record<string, unknown> = {}) {
  const r = await client.post('/v1/customer-portal/sessions', { customer_id: customerId, return_url: 'https://coffee.example/account', ...extra });
  expect(r.status).toBe(201);
  return r.body;
}

describe('the portal url opens once', () => {
  it('the first open gives a session cookie and a token-less address; a second open gives nothing', async () => {
    const c = await customer();
    const s = await session(c.id);
    const first = await fetch(local(s.url), { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/hosted/portal');
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('referrer-policy')).toBe('no-referrer');
    const cookie = portalCookie(first)!;
    expect(cookie).toMatch(/^billing_portal=[0-9A-Za-z]{40}; /);
    expect(cookie).not.toContain(tokenOf(s.url));
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\/hosted\/portal(;|$)/);
    expect(cookie).not.toMatch(/; Secure/); // http here: see the https test below
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookie)![1]);
    expect(maxAge).toBeGreaterThan(3500);
    expect(maxAge).toBeLessThanOrEqual(3600);
    const page = await fetch(`${app.url}/hosted/portal`, { headers: { cookie: pair(cookie) } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Your account with Kampala Coffee');
    // Nothing on the page carries the token.
    expect(html).not.toContain(tokenOf(s.url));

    // The same url again, from anyone else: a clear page, no session.
    for (const headers of [{}, { cookie: 'billing_portal=' + 'x'.repeat(40) }] as Record<string, string>[]) {
      const again = await fetch(local(s.url), { redirect: 'manual', headers });
      expect(again.status).toBe(410);
      expect(portalCookie(again)).toBeUndefined();
      const text = await again.text();
      expect(text).toContain('This link was already used');
      expect(text).toContain('For your security, a link to your account opens only once. Ask Kampala Coffee for a new one.');
      expect(text).toContain('href="https://coffee.example/account"');
    }
    // The browser that opened it may click it again: it goes on with its own session.
    const mine = await fetch(local(s.url), { redirect: 'manual', headers: { cookie: pair(cookie) } });
    expect(mine.status).toBe(303);
    expect(mine.headers.get('location')).toBe('/hosted/portal');
    expect(portalCookie(mine)).toBeUndefined();
  });

  it('two browsers opening it at once: exactly one gets a session', async () => {
    const s = await session((await customer()).id);
    const answers = await Promise.all(Array.from({ length: 6 }, () => fetch(local(s.url), { redirect: 'manual' })));
    expect(answers.map((r) => r.status).sort()).toEqual([303, 410, 410, 410, 410, 410]);
    expect(answers.filter((r) => portalCookie(r))).toHaveLength(1);
  });

  it('speaks the session’s language on the "already used" page', async () => {
    const s = await session((await customer()).id, api, { locale: 'fr' });
    await fetch(local(s.url), { redirect: 'manual' });
    const again = await fetch(local(s.url), { redirect: 'manual' });
    expect(again.status).toBe(410);
    const text = await again.text();
    expect(text).toMatch(/<html lang="fr">/);
    expect(text).toContain('Ce lien a déjà été utilisé');
  });

  it('an unopened url that expired shows the expired page and gives no cookie; the cookie lives no longer than the session', async () => {
    const m = await app.merchant();
    const late = await session((await customer(m)).id, m);
    const early = await session((await customer(m)).id, m);
    const opened = await fetch(local(early.url), { redirect: 'manual' });
    const cookie = pair(portalCookie(opened));
    await m.post('/v1/test-helpers/clock/advance', { seconds: 1800 });
    // A session opened 1799 s after it was made (merchant's clock): its cookie gets what is left.
    const halfway = await session((await customer(m)).id, m);
    await m.post('/v1/test-helpers/clock/advance', { seconds: 1799 });
    const short = await fetch(local(halfway.url), { redirect: 'manual' });
    expect(short.status).toBe(303);
    const left = Number(/Max-Age=(\d+)/.exec(portalCookie(short)!)![1]);
    expect(left).toBeGreaterThan(1700);
    expect(left).toBeLessThanOrEqual(1801);
    await m.post('/v1/test-helpers/clock/advance', { seconds: 2 });
    const r = await fetch(local(late.url), { redirect: 'manual' });
    expect(r.status).toBe(404);
    expect(portalCookie(r)).toBeUndefined();
    expect(await r.text()).toContain('This session has expired');
    const page = await fetch(`${app.url}/hosted/portal`, { headers: { cookie } });
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('This session has expired');
  });

  it('with an https public address the cookie is Secure', async () => {
    const secure = await startApp({ PUBLIC_BASE_URL: 'https://pay.example.com' }, { worker: false });
    try {
      const m = await secure.merchant();
      const s = await session((await customer(m)).id, m);
      expect(s.url).toMatch(/^https:\/\/pay\.example\.com\/hosted\/portal\//);
      const first = await fetch(`${secure.url}/hosted/portal/${tokenOf(s.url)}`, { redirect: 'manual' });
      expect(first.status).toBe(303);
      expect(portalCookie(first)).toMatch(/; Secure/);
      expect(portalCookie(first)).toMatch(/; HttpOnly/);
    } finally {
      await secure.close();
    }
  });
});

describe('the portal token goes nowhere else', () => {
  let receiver: Server;
  const received: string[] = [];
  let hookUrl = '';

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  });
  afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

  it('a setup intent made in the portal returns to the token-less portal: its events and webhooks hold no token', async () => {
    const m = await app.merchant({ name: 'Kampala Coffee' });
    expect((await m.post('/v1/webhook-endpoints', { url: hookUrl })).status).toBe(201);
    const c = await customer(m);
    const s = await session(c.id, m);
    const token = tokenOf(s.url);
    const first = await fetch(local(s.url), { redirect: 'manual' });
    const sessionCookie = pair(portalCookie(first));
    const page = await fetch(`${app.url}/hosted/portal`, { headers: { cookie: sessionCookie } });
    const csrfCookie = pair(setCookies(page).find((x) => x.startsWith('billing_csrf=')));
    const cookie = `${sessionCookie}; ${csrfCookie}`;
    const csrf = csrfOf(await page.text());
    const form = (fields: Record<string, string>) => ({
      method: 'POST',
      redirect: 'manual' as const,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ csrf, ...fields }).toString(),
    });

    const add = await fetch(`${app.url}/hosted/portal/methods/add`, form({}));
    expect(add.status).toBe(303);
    const setupUrl = local(add.headers.get('location')!);
    const setup = await fetch(setupUrl, { headers: { cookie } });
    const setupHtml = await setup.text();
    expect(setupHtml).not.toContain(token);
    const saved = await fetch(setupUrl, {
      ...form({ method: 'card', card_number: '4242 4242 4242 4242', card_expiry: '12/34', card_cvc: '123' }),
      body: new URLSearchParams({ csrf: csrfOf(setupHtml), method: 'card', card_number: '4242 4242 4242 4242', card_expiry: '12/34', card_cvc: '123' }).toString(),
    });
    expect(saved.status).toBe(303);
    const back = new URL(saved.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(`${app.services.config.publicBaseUrl}/hosted/portal`);
    expect(back.toString()).not.toContain(token);
    // Back in the portal (same browser): the method was saved.
    const home = await fetch(`${app.url}/hosted/portal${back.search}`, { headers: { cookie } });
    expect(await home.text()).toContain('Your new payment method was saved and is now your default');

    const setupIntentId = back.searchParams.get('setup_intent_id')!;
    const intent = (await m.get(`/v1/setup-intents/${setupIntentId}`)).body;
    expect(intent.status).toBe('succeeded');
    expect(intent.return_url).toBe(`${app.services.config.publicBaseUrl}/hosted/portal`);
    const events = (await m.get('/v1/events?limit=100')).body.data;
    const succeeded = events.find((e: any) => e.type === 'setup_intent.succeeded' && e.data.object.id === setupIntentId);
    expect(succeeded).toBeDefined();
    expect(JSON.stringify(events)).not.toContain(token);

    // The webhook of setup_intent.succeeded (and every other delivery) holds no token either.
    const deadline = Date.now() + 10_000;
    while (!received.some((b) => b.includes(succeeded.id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const delivery = received.find((b) => b.includes(succeeded.id));
    expect(delivery).toBeDefined();
    expect(JSON.parse(delivery!).data.object.return_url).toBe(`${app.services.config.publicBaseUrl}/hosted/portal`);
    for (const body of received) expect(body).not.toContain(token);
  });
});

// The hosted checkout over plain HTTP, as a browser would post its forms.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant({ name: 'Nile Books & Café' });
});
afterAll(() => app?.close());

interface Page {
  url: string;
  status: number;
  html: string;
  headers: Headers;
  cookie: string;
  csrf: string;
}

async function createPayment(extra: Record<string, unknown> = {}) {
  const r = await api.post('/v1/payments', {
    amount: 123456,
    currency: 'UGX',
    customer: { email: 'reader@example.com', phone: '+256700000001' },
    redirect_url: 'https://books.example/done?order=7',
    cancel_url: 'https://books.example/cart',
    ...extra,
  });
  expect(r.status).toBe(201);
  return { ...r.body, local: r.body.checkout_url.replace(app.services.config.publicBaseUrl, app.url) as string };
}

async function open(url: string): Promise<Page> {
  const res = await fetch(url);
  const html = await res.text();
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  return { url, status: res.status, html, headers: res.headers, cookie, csrf };
}

function submit(page: Page, fields: Record<string, string>, path = '') {
  return fetch(page.url + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie },
    body: new URLSearchParams({ csrf: page.csrf, ...fields }).toString(),
  });
}

const card = (number: string) => ({ method: 'card', card_number: number, card_expiry: '12/34', card_cvc: '123' });
const status = async (id: string) => (await api.get(`/v1/payments/${id}`)).body;

describe('hosted checkout', () => {
  it('shows the merchant, the formatted amount and an accessible form, with strict headers', async () => {
    const p = await createPayment({ checkout: { description: 'Two books' } });
    const page = await open(p.local);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Nile Books &amp; Café');
    expect(page.html).toContain('UGX'.length ? 'UGX' : '');
    expect(page.html).toContain('123,456');
    expect(page.html).toContain('Two books');
    expect(page.html).toMatch(/<html lang="en">/);
    expect(page.html).toMatch(/<label for="card_number">/);
    expect(page.html).toMatch(/autocomplete="cc-number"/);
    expect(page.html).toMatch(/value="\+256700000001"/);
    expect(page.html).toContain('Test mode');
    expect(page.csrf).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(page.cookie).toMatch(/^billing_csrf=/);
    expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get('content-security-policy')).toContain('https://books.example');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
  });

  it('pays with the success card and redirects with payment_id and status', async () => {
    const p = await createPayment();
    const page = await open(p.local);
    const res = await submit(page, card('4242 4242 4242 4242'));
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get('location')!);
    expect(to.origin + to.pathname).toBe('https://books.example/done');
    expect(Object.fromEntries(to.searchParams)).toEqual({ order: '7', payment_id: p.id, status: 'succeeded' });
    expect(await status(p.id)).toMatchObject({ status: 'succeeded', payment_method: { type: 'card', card: { last4: '4242', exp_month: 12, exp_year: 2034 } } });
    // the page now shows the outcome, not a form
    const after = await open(p.local);
    expect(after.html).toContain('Payment received');
    expect(after.html).not.toContain('name="card_number"');
  });

  it('maps the test cards and phones to their outcomes', async () => {
    const cases: [Record<string, string>, string, string | null][] = [
      [card('4000000000000002'), 'failed', 'card_declined'],
      [card('4000 0000 0000 9995'), 'failed', 'insufficient_funds'],
      [card('5555555555554444'), 'succeeded', null],
      [{ method: 'mobile_money', phone: '+256 700 000 000' }, 'failed', 'mobile_money_declined'],
      [{ method: 'mobile_money', phone: '+256700123456' }, 'succeeded', null],
    ];
    for (const [fields, expected, code] of cases) {
      const p = await createPayment();
      const res = await submit(await open(p.local), fields);
      if (expected === 'succeeded') {
        expect(res.status).toBe(303);
        expect(new URL(res.headers.get('location')!).searchParams.get('status')).toBe(expected);
      } else {
        // A decline shows the page again with the reason, to try another card or method.
        expect(res.status).toBe(402);
        const html = await res.text();
        expect(html).toContain('Try another card or method below.');
        expect(html).toContain('name="card_number"');
        expect(html).not.toMatch(/value="4000[ 0-9]*"/); // the declined number is not echoed back
      }
      expect(await status(p.id)).toMatchObject({ status: expected, failure_code: code });
    }
  });

  it('after a decline the customer pays with another card on the same page, once', async () => {
    const p = await createPayment();
    const page = await open(p.local);
    const declined = await submit(page, card('4000000000000002'));
    expect(declined.status).toBe(402);
    expect(await status(p.id)).toMatchObject({ status: 'failed', failure_code: 'card_declined' });
    // Reopening shows the form with the decline as a notice (nothing was just sent), not a final outcome.
    const again = await open(p.local);
    expect(again.html).toContain('role="status" id="form-notice">Your last payment attempt failed: the card was declined.');
    expect(again.html).toContain('name="card_number"');
    const ok = await submit(again, card('4242424242424242'));
    expect(ok.status).toBe(303);
    expect(new URL(ok.headers.get('location')!).searchParams.get('status')).toBe('succeeded');
    expect(await status(p.id)).toMatchObject({ status: 'succeeded', failure_code: null, failure_message: null });
    const events = (await api.get(`/v1/events?limit=100`)).body.data.filter((e: any) => e.data.object.id === p.id).map((e: any) => e.type);
    expect(events).toEqual(['payment.succeeded', 'payment.failed', 'payment.created']);
    // A third submission charges nothing more.
    const third = await submit(again, card('4242424242424242'));
    expect(third.status).toBe(303);
    expect((await api.get(`/v1/events?limit=100`)).body.data.filter((e: any) => e.data.object.id === p.id)).toHaveLength(3);
  });

  it('re-renders the form for invalid input without touching the payment', async () => {
    const p = await createPayment();
    const page = await open(p.local);
    for (const [fields, message] of [
      [card('4242424242424241'), 'card number is incorrect'],
      [card('0000 0000 0000'), 'card number is incorrect'],
      [card('000000000000000000'), 'card number is incorrect'],
      // The input rule for every hosted form: a field the database could not store is refused before anything happens.
      [{ ...card('4242424242424242'), note: 'a\u0000b' }, 'cannot be saved'],
      [{ ...card('4242424242424242'), card_expiry: '01/20' }, 'expired'],
      [{ ...card('4242424242424242'), card_expiry: '13/30' }, 'The expiry month must be between 01 and 12.'],
      [{ ...card('4242424242424242'), card_expiry: '1230' }, 'MM/YY'],
      [{ ...card('4242424242424242'), card_cvc: '1' }, 'security code'],
      [{ method: 'mobile_money', phone: '0700' }, 'international format'],
      [{ method: 'bitcoin' }, 'Choose a payment method'],
    ] as const) {
      const res = await submit(page, fields as Record<string, string>);
      expect(res.status).toBe(422);
      const html = await res.text();
      expect(html).toContain(message);
      expect(html).toContain('role="alert"');
    }
    expect((await status(p.id)).status).toBe('created');
  });

  it('answers a malformed form body with a 400 page, never a 500', async () => {
    const p = await createPayment({ checkout: { locale: 'fr' } });
    const page = await open(p.local);
    for (const path of ['', '/cancel']) {
      const res = await fetch(page.url + path, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'multipart/form-data; boundary=XX', cookie: page.cookie },
        body: '--XX\r\nbroken',
      });
      expect(res.status, path).toBe(400);
      const html = await res.text();
      expect(html).toContain('<html lang="fr">');
      expect(html).toContain('Le formulaire n’a pas pu être lu');
    }
    expect((await status(p.id)).status).toBe('created');
  });

  it('rejects a post without the CSRF cookie and token', async () => {
    const p = await createPayment();
    const page = await open(p.local);
    const noCookie = await fetch(page.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: page.csrf, ...card('4242424242424242') }).toString(),
    });
    expect(noCookie.status).toBe(403);
    const wrongToken = await submit({ ...page, csrf: 'x'.repeat(32) }, card('4242424242424242'));
    expect(wrongToken.status).toBe(403);
    expect((await status(p.id)).status).toBe('created');
  });

  it('charges once when the form is submitted twice at the same time', async () => {
    const p = await createPayment();
    const page = await open(p.local);
    const rs = await Promise.all(Array.from({ length: 5 }, () => submit(page, card('4242424242424242'))));
    for (const r of rs) expect(r.status).toBe(303);
    const locations = rs.map((r) => new URL(r.headers.get('location')!).searchParams.get('status'));
    expect(locations.filter((s) => s === 'succeeded').length).toBeGreaterThanOrEqual(1);
    const events = (await api.get('/v1/events?type=payment.succeeded&limit=100')).body.data.filter((e: any) => e.data.object.id === p.id);
    expect(events).toHaveLength(1);
  });

  it('cancels from the page and goes to cancel_url', async () => {
    const p = await createPayment();
    const page = await open(p.local);
    const res = await submit(page, {}, '/cancel');
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get('location')!);
    expect(to.pathname).toBe('/cart');
    expect(to.searchParams.get('status')).toBe('cancelled');
    expect((await status(p.id)).status).toBe('cancelled');
    const after = await open(p.local);
    expect(after.html).toContain('Payment cancelled');
    // paying after cancelling charges nothing
    const late = await submit(page, card('4242424242424242'));
    expect(new URL(late.headers.get('location')!).searchParams.get('status')).toBe('cancelled');
  });

  it('offers only the configured methods and speaks French when asked', async () => {
    const p = await createPayment({ checkout: { locale: 'fr', payment_methods: ['mobile_money'], title: 'Commande 12' } });
    const page = await open(p.local);
    expect(page.html).toMatch(/<html lang="fr">/);
    expect(page.html).toContain('Commande 12');
    expect(page.html).toContain('Payer');
    expect(page.html).not.toContain('name="card_number"');
    const res = await submit(page, card('4242424242424242'));
    expect(res.status).toBe(422);
    expect((await status(p.id)).status).toBe('created');
  });

  it('answers 404 pages for unknown tokens', async () => {
    for (const path of ['checkout/nope', `checkout/${'A'.repeat(40)}`, 'checkout/..%2F..%2Fv1%2Fcustomers', 'nothing-here']) {
      const res = await fetch(`${app.url}/hosted/${path}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(await res.text()).toMatch(/not (found|valid)/i);
    }
  });
});

// The hosted pages' polish over plain HTTP, as a browser without JavaScript posts them: every
// refused card field at once (each next to its field), the expiry month checked by the server,
// decline reasons in the page's language (the code kept), an invoice's checkout opened after its
// automatic charge failed (a notice, not an error), and live mode (no test card, no configuration
// talk). The same in Chromium: test/hosted.polish.browser.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBrand, cardNumberValid } from '../src/platform/processor.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;
let live: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant({ name: 'Dakar Books' });
  live = await app.merchant({ name: 'Dakar Live', mode: 'live' });
});
afterAll(() => app?.close());

const local = (url: string) => url.replace(app.services.config.publicBaseUrl, app.url);

interface Page {
  url: string;
  status: number;
  html: string;
  cookie: string;
  csrf: string;
}

async function open(url: string): Promise<Page> {
  const res = await fetch(local(url));
  const html = await res.text();
  return { url: local(url), status: res.status, html, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '' };
}

async function submit(page: Page, fields: Record<string, string>) {
  const res = await fetch(page.url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie },
    body: new URLSearchParams({ csrf: page.csrf, ...fields }).toString(),
  });
  return { status: res.status, html: await res.text(), location: res.headers.get('location') };
}

async function payment(client: Client, extra: Record<string, unknown> = {}) {
  const r = await client.post('/v1/payments', { amount: 2500, currency: 'EUR', customer: { email: `r${Date.now()}@example.com` }, redirect_url: 'https://books.example/done', ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

/** The message slot of a field and the field's own attributes. */
function field(html: string, id: string) {
  const input = new RegExp(`<input[^>]*id="${id}"[^>]*>`).exec(html)?.[0] ?? '';
  const message = new RegExp(`<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(html)?.[1];
  return { input, message };
}

describe('card rules (one table for the server and the pages’ script)', () => {
  it('detects the brands and checks each brand’s lengths', () => {
    expect(
      ['4242424242424242', '5555555555554444', '2223003122003222', '378282246310005', '6011111111111117', '6445644564456445', '6500000000000002', '30569309025904', '3530111333300000', '6200000000000005'].map(cardBrand),
    ).toEqual(['visa', 'mastercard', 'mastercard', 'amex', 'discover', 'discover', 'discover', 'diners', 'jcb', 'unionpay']);
    expect(cardBrand('6011')).toBe('discover');
    expect(cardBrand('6430')).toBe('unknown'); // 643 is not Discover
    expect(cardNumberValid('378282246310005')).toBe(true);
    expect(cardNumberValid('6011111111111117')).toBe(true);
    // Luhn-valid, but 16 digits is no Amex number.
    expect(cardNumberValid('3782822463100003')).toBe(false);
  });
});

describe('the hosted card form without JavaScript', () => {
  it('refuses every wrong field at once, each message next to its field (aria-invalid, aria-describedby), listed in the alert', async () => {
    const p = await payment(api);
    const page = await open(p.checkout_url);
    const res = await submit(page, { method: 'card', card_number: '4242 4242 4242 4241', card_expiry: '13/30', card_cvc: '1' });
    expect(res.status).toBe(422);
    const number = field(res.html, 'card_number');
    expect(number.message).toBe('Your card number is incorrect.');
    expect(number.input).toContain('aria-invalid="true"');
    expect(number.input).toContain('aria-describedby="card_brand card_number-error"');
    const expiry = field(res.html, 'card_expiry');
    expect(expiry.message).toBe('The expiry month must be between 01 and 12.');
    expect(expiry.input).toContain('aria-invalid="true"');
    expect(expiry.input).toContain('aria-describedby="card_expiry-error"');
    const cvc = field(res.html, 'card_cvc');
    expect(cvc.message).toBe('Enter the 3 or 4 digit security code.');
    expect(cvc.input).toContain('aria-invalid="true"');
    const alert = /<div role="alert"[^>]*data-error>(.*?)<\/div><\/div>/s.exec(res.html)?.[1] ?? '';
    expect(alert).toContain('Check the following:');
    expect([...alert.matchAll(/<a href="#(\w+)">/g)].map((m) => m[1])).toEqual(['card_number', 'card_expiry', 'card_cvc']);
    expect((await api.get(`/v1/payments/${p.id}`)).body).toMatchObject({ status: 'created' });

    // One field wrong: only that one is marked.
    const one = await submit(page, { method: 'card', card_number: '4242424242424242', card_expiry: '00/30', card_cvc: '123' });
    expect(one.status).toBe(422);
    expect(field(one.html, 'card_expiry').message).toBe('The expiry month must be between 01 and 12.');
    expect(field(one.html, 'card_number').input).not.toContain('aria-invalid');
    expect(field(one.html, 'card_number').message).toBe('');
  });

  it('the setup page refuses month 13 too, in French on a French portal’s page, and saves nothing', async () => {
    const c = (await api.post('/v1/customers', { email: `s${Date.now()}@example.com` })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const page = await open(si.setup_url);
    const res = await submit(page, { method: 'card', card_number: '4242424242424242', card_expiry: '13/40', card_cvc: '123' });
    expect(res.status).toBe(422);
    expect(field(res.html, 'card_expiry').message).toBe('The expiry month must be between 01 and 12.');
    expect((await api.get(`/v1/setup-intents/${si.id}`)).body.status).toBe('requires_payment_method');

    const fr = await payment(api, { checkout: { locale: 'fr' } });
    const frPage = await open(fr.checkout_url);
    const frRes = await submit(frPage, { method: 'card', card_number: '', card_expiry: '13/40', card_cvc: '' });
    expect(frRes.status).toBe(422);
    expect(field(frRes.html, 'card_number').message).toBe('Saisissez le numéro de carte.');
    expect(field(frRes.html, 'card_expiry').message).toBe('Le mois d’expiration doit être compris entre 01 et 12.');
    expect(field(frRes.html, 'card_cvc').message).toBe('Saisissez le code de sécurité à 3 ou 4 chiffres.');
    expect(frRes.html).toContain('Vérifiez les points suivants :');
  });

  it('the test helper that saves a card without the page applies the same number rule (400 parameter_invalid)', async () => {
    const c = (await api.post('/v1/customers', { email: `h${Date.now()}@example.com` })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    for (const number of ['4242424242424241', '3782822463100003']) {
      const r = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: number });
      expect(r.status, number).toBe(400);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'card_number' });
    }
    const amex = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '378282246310005' });
    expect(amex.status).toBe(200);
    expect((await api.get(`/v1/payment-methods/${amex.body.payment_method_id}`)).body.card).toMatchObject({ brand: 'amex', last4: '0005' });
  });

  it('says a decline in the page’s language and keeps its code', async () => {
    const p = await payment(api, { checkout: { locale: 'fr' } });
    const page = await open(p.checkout_url);
    const declined = await submit(page, { method: 'card', card_number: '4000000000000002', card_expiry: '12/34', card_cvc: '123' });
    expect(declined.status).toBe(402);
    expect(declined.html).toContain('data-decline-code="card_declined"');
    expect(declined.html).toContain('La carte a été refusée. Essayez une autre carte ou un autre moyen ci-dessous.');
    expect(declined.html).not.toContain('The card was declined');
    const nsf = await submit(page, { method: 'card', card_number: '4000000000009995', card_expiry: '12/34', card_cvc: '123' });
    expect(nsf.html).toContain('Le solde de la carte est insuffisant.');
    expect(nsf.html).toContain('data-decline-code="insufficient_funds"');
    expect((await api.get(`/v1/payments/${p.id}`)).body).toMatchObject({ status: 'failed', failure_code: 'insufficient_funds' });

    // The setup page of a French portal session too.
    const c = (await api.post('/v1/customers', { email: `f${Date.now()}@example.com` })).body;
    const portal = (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://books.example/account', locale: 'fr' })).body;
    const first = await fetch(local(portal.url), { redirect: 'manual' });
    const cookie = first.headers.getSetCookie().map((x) => x.split(';')[0]).join('; ');
    const home = await fetch(`${app.url}/hosted/portal`, { headers: { cookie } });
    const homeHtml = await home.text();
    const csrfCookie = home.headers.getSetCookie().map((x) => x.split(';')[0]).join('; ');
    const add = await fetch(`${app.url}/hosted/portal/methods/add`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${cookie}; ${csrfCookie}` },
      body: new URLSearchParams({ csrf: /name="csrf" value="([^"]+)"/.exec(homeHtml)![1]! }).toString(),
    });
    expect(add.status).toBe(303);
    const setup = await open(add.headers.get('location')!);
    const refused = await submit(setup, { method: 'card', card_number: '4000000000000002', card_expiry: '12/34', card_cvc: '123' });
    expect(refused.status).toBe(402);
    expect(refused.html).toContain('La carte a été refusée.');
    expect(refused.html).toContain('data-decline-code="card_declined"');
  });

  it('an invoice’s checkout opened after its automatic charge failed shows a neutral notice with the reason, not an error', async () => {
    const c = (await api.post('/v1/customers', { email: `i${Date.now()}@example.com` })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    expect((await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4000000000009995' })).status).toBe(200);
    const plan = (await api.post('/v1/plans', { name: 'Reading club', amount: 900, currency: 'EUR', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    const invoice = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    expect(invoice.last_payment_error).toMatchObject({ code: 'insufficient_funds' });
    const pay = (await api.get(`/v1/payments/${invoice.payment_id}`)).body;
    expect(pay.status).toBe('failed');

    const page = await open(pay.checkout_url);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<p class="info" role="status" id="form-notice">Your last payment attempt failed: the card has insufficient funds. Enter a card or another method below to pay.</p>');
    // The alert box is empty (nothing was just refused): no red error, no focus grab.
    expect(page.html).toMatch(/<div role="alert" aria-live="assertive" tabindex="-1"><\/div>/);
    expect(page.html).not.toContain('class="error"');
    expect(page.html).toContain('aria-describedby="form-notice"');

    // Paying there works and settles the invoice.
    const paid = await submit(page, { method: 'card', card_number: '4242424242424242', card_expiry: '12/34', card_cvc: '123' });
    expect(paid.status).toBe(200);
    expect((await api.get(`/v1/invoices/${invoice.id}`)).body.status).toBe('paid');
  });

  it('live mode: no test card anywhere, and a customer-facing message when payments cannot be taken', async () => {
    const p = await payment(live, { checkout: { locale: 'en' } });
    const page = await open(p.checkout_url);
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('4242');
    expect(page.html).not.toContain('Test mode');
    expect(page.html).toContain('placeholder="1234 1234 1234 1234"');
    const res = await submit(page, { method: 'card', card_number: '4242424242424242', card_expiry: '12/34', card_cvc: '123' });
    expect(res.status).toBe(402);
    expect(res.html).toContain('The payment service is unavailable for now. Nothing was charged. Try again in a few minutes.');
    expect(res.html).not.toMatch(/configured|live payment processor/i);
    expect(res.html).toContain('data-decline-code="processor_unavailable"');
    expect((await live.get(`/v1/payments/${p.id}`)).body.failure_code).toBe('processor_unavailable');
    // Reopened: the notice is customer-facing too.
    const again = await open(p.checkout_url);
    expect(again.html).toContain('Your last payment attempt failed: the payment service is unavailable for now.');
    expect(again.html).not.toMatch(/configured|live payment processor/i);

    const c = (await live.post('/v1/customers', { email: `l${Date.now()}@example.com` })).body;
    const si = (await live.post('/v1/setup-intents', { customer_id: c.id })).body;
    const setup = await open(si.setup_url);
    expect(setup.html).not.toContain('4242');
    expect(setup.html).not.toContain('Test mode');
    const refused = await submit(setup, { method: 'card', card_number: '4242424242424242', card_expiry: '12/34', card_cvc: '123' });
    expect(refused.status).toBe(402);
    expect(refused.html).toContain('The payment service is unavailable for now. Nothing was charged.');
    expect(refused.html).not.toMatch(/configured|live payment processor/i);
  });
});

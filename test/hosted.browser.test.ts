// The hosted setup page and customer portal in headless Chromium, as a customer uses them, and
// every hosted page photographed at 1280 and 390 px wide (checkout, top-up, setup, portal with a
// subscription and its invoice, the expired page) without console errors and without horizontal
// scrolling on a phone.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';

const available = requireChromium('hosted.browser.test');

describe.runIf(available)('hosted setup and portal in a browser', () => {
  let app: TestApp;
  let api: Client;
  let browser: Browser;
  const errors: string[] = [];

  beforeAll(async () => {
    app = await startApp();
    api = await app.merchant({ name: 'Kampala Coffee' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function newPage(width = 1280): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      // Refused forms (402, 403, 409, 422) and the not-found page (404) are documents answered with a
      // 4xx on purpose; Chromium logs exactly this line for the document itself. Anything else is an error.
      const documentAnswered4xx = /^Failed to load resource: the server responded with a status of 4\d\d \(/.test(m.text()) && m.location().url === page.url();
      if (!documentAnswered4xx) errors.push(`${page.url()}: ${m.text()} (${m.location().url})`);
    });
    page.on('response', (r) => {
      if (r.request().resourceType() !== 'document' && r.status() >= 400) errors.push(`${r.url()}: ${r.status()}`);
    });
    return page;
  }

  async function customer() {
    return (await api.post('/v1/customers', { email: `amina${Date.now()}@example.com`, name: 'Amina', phone: '+256700000001' })).body;
  }

  /** A customer with a saved card and an active subscription (its first invoice paid). */
  async function subscriber() {
    const c = await customer();
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {});
    const plan = (await api.post('/v1/plans', { name: 'Coffee club', amount: 1500, currency: 'USD', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    expect(sub.status).toBe('active');
    return { c, sub };
  }

  async function fillCard(page: Page, number: string, expiry = '1233') {
    await page.getByLabel('Card number').pressSequentially(number.replace(/ /g, ''));
    await page.getByLabel('Expiry (MM/YY)').pressSequentially(expiry);
    await page.getByLabel('Security code (CVC)').fill('123');
  }

  const typesOf = async (ids: string[]) =>
    (await api.get('/v1/events?limit=100')).body.data.filter((e: any) => ids.includes(e.data.object.id)).map((e: any) => e.type);

  it('saves a card on the setup page; a declined card is refused there and the customer tries another', async () => {
    const c = await customer();
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const page = await newPage();
    await page.goto(si.setup_url);
    expect(await page.title()).toBe('Save a payment method for Kampala Coffee');
    await fillCard(page, '4000000000000002');
    expect(await page.locator('#card_brand').textContent()).toBe('VISA');
    await page.getByRole('button', { name: 'Save payment method' }).click();
    await page.getByRole('alert').getByText('The card was declined.').waitFor();
    expect((await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data).toEqual([]);
    await fillCard(page, '5555555555554444', '');
    expect(await page.locator('#card_brand').textContent()).toBe('MASTERCARD');
    await page.getByRole('button', { name: 'Save payment method' }).click();
    await page.getByRole('heading', { name: 'Payment method saved' }).waitFor();
    expect(await page.getByText('MASTERCARD ending in 4444, expires 12/33 is saved.').count()).toBe(1);
    expect((await api.get(`/v1/setup-intents/${si.id}`)).body.status).toBe('succeeded');
    const customerNow = (await api.get(`/v1/customers/${c.id}`)).body;
    expect(customerNow.payment_methods).toHaveLength(1);
    expect(customerNow.default_payment_method_id).toBe(customerNow.payment_methods[0].id);
    expect((await typesOf([si.id, customerNow.payment_methods[0].id])).sort()).toEqual(['payment_method.attached', 'setup_intent.succeeded']);
    await page.close();
  });

  it('in the portal: edit the name, add a second card, make it default, remove the first; the API shows each change', async () => {
    const c = await customer();
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {});
    const first = (await api.get(`/v1/setup-intents/${si.id}`)).body.payment_method_id;
    const session = (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://coffee.example/account' })).body;

    const page = await newPage();
    await page.goto(session.url);
    expect(await page.title()).toBe('Your account with Kampala Coffee');
    // A refused form (422) puts the focus on its error, which says what to fix.
    await page.getByLabel('Email').fill('not-an-email');
    await page.getByRole('button', { name: 'Save details' }).click();
    await page.getByRole('alert').getByText('Enter a valid email address, e.g. name@example.com.').waitFor();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('alert');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Enter a valid email address, e.g. name@example.com.');
    await page.getByLabel('Email').fill(c.email);
    await page.getByLabel('Name').fill('Amina Nakato');
    await page.getByRole('button', { name: 'Save details' }).click();
    await page.getByRole('status').getByText('Your details were saved.').waitFor();
    expect((await api.get(`/v1/customers/${c.id}`)).body.name).toBe('Amina Nakato');

    await page.getByRole('button', { name: 'Add a payment method' }).click();
    await page.waitForURL('**/hosted/setup/**');
    await fillCard(page, '5555555555554444', '0934');
    await page.getByRole('button', { name: 'Save payment method' }).click();
    // Added in the portal: it becomes the default at once (as Stripe's portal does).
    await page.getByRole('status').getByText('Your new payment method was saved and is now your default').waitFor();
    const methods = (await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data;
    expect(methods.map((m: any) => m.card.last4)).toEqual(['4444', '4242']);
    const second = methods[0].id;

    const row = page.locator(`li[data-payment-method="${second}"]`);
    expect(await row.getByRole('button', { name: 'Make default' }).count()).toBe(0);
    expect((await api.get(`/v1/customers/${c.id}`)).body.default_payment_method_id).toBe(second);
    expect(await page.locator(`li[data-payment-method="${second}"] .badge`).textContent()).toBe('Default');

    await page.locator(`li[data-payment-method="${first}"]`).getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('status').getByText('The payment method was removed.').waitFor();
    expect((await api.get(`/v1/payment-methods/${first}`)).body.customer_id).toBeNull();
    expect(await page.locator(`li[data-payment-method="${first}"]`).count()).toBe(0);

    // (Events of one transaction share its timestamp, so only the multiset is compared.)
    expect((await typesOf([c.id, first, second])).sort()).toEqual(
      [
        'payment_method.detached',
        'customer.updated', // default → second
        'payment_method.attached',
        'customer.updated', // name
        'payment_method.attached',
        'customer.updated', // first default
        'customer.created',
      ].sort(),
    );
    expect(await page.getByRole('link', { name: 'Return to Kampala Coffee' }).getAttribute('href')).toBe('https://coffee.example/account');
    await page.close();
  });

  it('in the portal: the customer sees the subscription, cancels it at period end, then keeps it; the API shows each change', async () => {
    const { c, sub } = await subscriber();
    const invoice = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    const session = (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://coffee.example/account' })).body;
    const page = await newPage();
    await page.goto(session.url);
    const row = page.locator(`li[data-subscription="${sub.id}"]`);
    await row.getByText('Coffee club').waitFor();
    expect(await row.textContent()).toContain('$15.00 per month');
    expect(await row.getByText(/^Next payment on /).count()).toBe(1);
    expect(await page.locator(`tr[data-invoice="${invoice.id}"]`).textContent()).toContain(invoice.number);
    expect(await page.getByRole('link', { name: `PDF of invoice ${invoice.number}` }).getAttribute('href')).toMatch(/\/hosted\/invoices\/in_\w+\/pdf\?expires=\d+&signature=/);

    await row.getByRole('button', { name: 'Cancel at period end' }).click();
    // A confirmation step says when it ends; nothing changes until it is confirmed.
    await page.getByRole('heading', { name: 'Cancel your subscription?' }).waitFor();
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.cancel_at_period_end).toBe(false);
    await page.getByRole('button', { name: 'Cancel my subscription' }).click();
    await page.getByRole('status').getByText('Your subscription will end at the end of the current period.').waitFor();
    await page.locator(`li[data-subscription="${sub.id}"]`).getByText(/^Cancels on /).waitFor();
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body).toMatchObject({ status: 'active', cancel_at_period_end: true });

    await page.locator(`li[data-subscription="${sub.id}"]`).getByRole('button', { name: 'Keep my subscription' }).click();
    await page.getByRole('status').getByText('Your subscription will continue.').waitFor();
    expect(await page.locator(`li[data-subscription="${sub.id}"]`).getByText(/^Cancels on /).count()).toBe(0);
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body).toMatchObject({ status: 'active', cancel_at_period_end: false });
    const types = await typesOf([sub.id]);
    expect(types.slice(0, 2)).toEqual(['subscription.reactivated', 'subscription.updated']);
    await page.close();
  });

  it('every hosted page at 1280 and 390 px: no console errors, no sideways scrolling on a phone', async () => {
    const { c } = await subscriber();
    const w = (await api.post('/v1/wallets', { customer_id: c.id, currency: 'UGX' })).body;
    await api.post(`/v1/wallets/${w.id}/credit`, { amount: 50000, description: 'Loyalty bonus', reference: 'bonus-1' });
    await api.post(`/v1/wallets/${w.id}/debit`, { amount: 12000, description: 'Two lattes', reference: 'order-1' });
    const topup = (await api.post(`/v1/wallets/${w.id}/topups`, { amount: 20000, redirect_url: 'https://coffee.example/wallet' })).body;
    const payment = (await api.post('/v1/payments', { amount: 2599, currency: 'EUR', customer_id: c.id, redirect_url: 'https://coffee.example/thanks', checkout: { description: 'Two bags of beans', locale: 'fr' } })).body;
    const setup = (await api.post('/v1/setup-intents', { customer_id: c.id, return_url: 'https://coffee.example/account' })).body;
    // A portal url opens once (then the browser's cookie holds the session): one per width.
    const portals = [
      (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://coffee.example/account' })).body,
      (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://coffee.example/account' })).body,
    ];
    const expired = (await api.post('/v1/payments', { amount: 100, currency: 'USD', customer_id: c.id, redirect_url: 'https://coffee.example/' })).body;
    await api.post(`/v1/test-helpers/payments/${expired.id}/complete`, { outcome: 'cancelled' });

    const pages = (portalUrl: string): [string, string][] => [
      ['checkout', payment.checkout_url],
      ['topup', topup.checkout_url],
      ['setup', setup.setup_url],
      ['portal', portalUrl],
      ['portal-link-used', portalUrl],
      ['not-found', `${app.url}/hosted/portal/${'x'.repeat(40)}`],
    ];
    for (const [i, width] of [1280, 390].entries()) {
      const page = await newPage(width);
      for (const [name, url] of pages(portals[i]!.url)) {
        // The second visit of the portal url is from another browser: "already used".
        if (name === 'portal-link-used') await page.context().clearCookies();
        const res = await page.goto(url);
        if (name === 'portal') expect(await page.title()).toBe('Your account with Kampala Coffee');
        if (name === 'portal-link-used') expect(res!.status()).toBe(410);
        await page.screenshot({ path: `/tmp/hosted-${name}-${width}.png`, fullPage: true });
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${name} at ${width}px scrolls sideways`).toBeLessThanOrEqual(0);
        // Every form control has a label (accessible name).
        const unlabeled = await page.evaluate(() =>
          [...document.querySelectorAll('input:not([type=hidden]), button')].filter((el) => !(el as HTMLInputElement).labels?.length && !el.textContent?.trim()).length,
        );
        expect(unlabeled, `${name}: controls without a label`).toBe(0);
      }
      // Keyboard order on the checkout: the method choice, then the card fields in order, then Pay.
      await page.goto(payment.checkout_url);
      const order: string[] = [];
      for (let i = 0; i < 6; i++) {
        await page.keyboard.press('Tab');
        order.push(await page.evaluate(() => (document.activeElement as HTMLInputElement).name || document.activeElement!.tagName));
      }
      expect(order).toEqual(['method', 'card_number', 'card_expiry', 'card_cvc', 'BUTTON', 'BUTTON']);
      await page.close();
    }
    expect(errors).toEqual([]);
  });

  it('the portal url followed from the merchant’s site: the session cookie (HttpOnly, Lax) carries the customer through the portal and the setup page; another browser gets nothing', async () => {
    const c = await customer();
    const session = (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://coffee.example/account' })).body;
    const token = /\/hosted\/portal\/([0-9A-Za-z]{40})$/.exec(session.url)![1]!;
    // The merchant's account page, on another site (localhost, while the service is 127.0.0.1).
    const merchant = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Coffee account</title><a href="${session.url}">Manage billing</a>`);
    });
    await new Promise<void>((r) => merchant.listen(0, r));
    try {
      const page = await newPage();
      await page.goto(`http://localhost:${(merchant.address() as AddressInfo).port}/account`);
      await page.getByRole('link', { name: 'Manage billing' }).click();
      await page.waitForURL(`${app.url}/hosted/portal`);
      expect(await page.title()).toBe('Your account with Kampala Coffee');
      expect(page.url()).not.toContain(token);

      const cookies = await page.context().cookies(`${app.url}/hosted/portal`);
      const portalCookie = cookies.find((k) => k.name === 'billing_portal')!;
      expect(portalCookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/hosted/portal' });
      expect(portalCookie.value).not.toBe(token);
      expect(portalCookie.expires * 1000 - Date.now()).toBeLessThanOrEqual(3600_000 + 5000);
      // Scripts on the page cannot read it.
      expect(await page.evaluate(() => document.cookie)).not.toContain('billing_portal');

      // Through the setup page and back: the cookie (not a token in the address) finds the session.
      await page.getByRole('button', { name: 'Add a payment method' }).click();
      await page.waitForURL('**/hosted/setup/**');
      await fillCard(page, '5555555555554444', '0934');
      await page.getByRole('button', { name: 'Save payment method' }).click();
      await page.getByRole('status').getByText('Your new payment method was saved and is now your default').waitFor();
      expect(new URL(page.url()).pathname).toBe('/hosted/portal');
      expect(page.url()).not.toContain(token);
      expect((await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data).toHaveLength(1);
      await page.getByLabel('Name').fill('Amina N.');
      await page.getByRole('button', { name: 'Save details' }).click();
      await page.getByRole('status').getByText('Your details were saved.').waitFor();
      expect((await api.get(`/v1/customers/${c.id}`)).body.name).toBe('Amina N.');

      // Another browser (no cookie) opening the same url: the "already used" page, no session.
      const other = await newPage();
      const res = await other.goto(session.url);
      expect(res!.status()).toBe(410);
      await other.getByRole('heading', { name: 'This link was already used' }).waitFor();
      expect((await other.context().cookies(`${app.url}/hosted/portal`)).some((k) => k.name === 'billing_portal')).toBe(false);
      const home = await other.goto(`${app.url}/hosted/portal`);
      expect(home!.status()).toBe(404);
      await other.close();
      await page.close();
    } finally {
      await new Promise<void>((r) => merchant.close(() => r()));
    }
    expect(errors).toEqual([]);
  });
});

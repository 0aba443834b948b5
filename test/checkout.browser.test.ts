// A customer pays through the real hosted checkout in headless Chromium (Debian's chromium,
// driven by playwright-core). Skipped, with a message, only outside CI when chromium is absent;
// in CI .ci/run installs it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';

const available = requireChromium('checkout.browser.test');

describe.runIf(available)('hosted checkout in a browser', () => {
  let app: TestApp;
  let api: Client;
  let browser: Browser;
  let shop: Server;
  let shopUrl: string;

  beforeAll(async () => {
    app = await startApp();
    api = await app.merchant({ name: 'Browser Shop' });
    // the merchant's site the customer comes back to
    shop = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>Back at the shop</h1><p>${req.url}</p>`));
    await new Promise<void>((r) => shop.listen(0, '127.0.0.1', r));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    shop?.close();
    await app?.close();
  });

  async function newPayment(extra: Record<string, unknown> = {}) {
    const r = await api.post('/v1/payments', {
      amount: 2599,
      currency: 'EUR',
      customer: { email: 'b@example.com', phone: '+33612345678' },
      redirect_url: `${shopUrl}/return`,
      cancel_url: `${shopUrl}/cancelled`,
      ...extra,
    });
    return { ...r.body, local: r.body.checkout_url.replace(app.services.config.publicBaseUrl, app.url) as string };
  }

  it('pays with the test card and lands on redirect_url with the outcome', async () => {
    const p = await newPayment({ checkout: { title: 'Order 1001', description: 'A blue mug' } });
    const page = await browser.newPage();
    await page.goto(p.local);
    await expect(page.getByRole('heading', { name: 'Order 1001' }).isVisible()).resolves.toBe(true);
    expect(await page.getByText('€25.99').first().isVisible()).toBe(true);
    await page.getByLabel('Card number').fill('4242 4242 4242 4242');
    await page.getByLabel('Expiry (MM/YY)').fill('12/34');
    await page.getByLabel('Security code (CVC)').fill('123');
    await page.screenshot({ path: '/tmp/checkout-browser.png', fullPage: true });
    await Promise.all([page.waitForURL(`${shopUrl}/return**`), page.getByRole('button', { name: 'Pay €25.99' }).click()]);
    const url = new URL(page.url());
    expect(url.searchParams.get('payment_id')).toBe(p.id);
    expect(url.searchParams.get('status')).toBe('succeeded');
    expect((await api.get(`/v1/payments/${p.id}`)).body.status).toBe('succeeded');
    const events = (await api.get('/v1/events?type=payment.succeeded')).body.data;
    expect(events.some((e: any) => e.data.object.id === p.id)).toBe(true);
    await page.close();
  });

  it('a declined card lets the customer try another on the same page, and mobile money works', async () => {
    const declined = await newPayment();
    const page = await browser.newPage();
    await page.goto(declined.local);
    // The number is grouped and its brand shown as it is typed; the expiry gets its slash.
    await page.getByLabel('Card number').pressSequentially('4000000000000002');
    expect(await page.getByLabel('Card number').inputValue()).toBe('4000 0000 0000 0002');
    expect(await page.locator('#card_brand').textContent()).toBe('VISA');
    await page.getByLabel('Expiry (MM/YY)').pressSequentially('1234');
    expect(await page.getByLabel('Expiry (MM/YY)').inputValue()).toBe('12/34');
    await page.getByLabel('Security code (CVC)').fill('123');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByRole('alert').getByText('The card was declined.').waitFor();
    expect((await api.get(`/v1/payments/${declined.id}`)).body.status).toBe('failed');
    // The expiry is kept, the card number and CVC are not; focus order: the fields, then Pay.
    expect(await page.getByLabel('Expiry (MM/YY)').inputValue()).toBe('12/34');
    expect(await page.getByLabel('Card number').inputValue()).toBe('');
    await page.getByLabel('Card number').fill('4242 4242 4242 4242');
    await page.getByLabel('Security code (CVC)').fill('123');
    await Promise.all([page.waitForURL(`${shopUrl}/return**`), page.getByRole('button', { name: /^Pay/ }).click()]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('succeeded');
    expect((await api.get(`/v1/payments/${declined.id}`)).body.status).toBe('succeeded');

    const mm = await newPayment();
    await page.goto(mm.local);
    await page.getByLabel('Mobile money', { exact: true }).check();
    expect(await page.getByLabel('Mobile money phone number').inputValue()).toBe('+33612345678');
    await Promise.all([page.waitForURL(`${shopUrl}/return**`), page.getByRole('button', { name: /^Pay/ }).click()]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('succeeded');
    expect((await api.get(`/v1/payments/${mm.id}`)).body.payment_method.type).toBe('mobile_money');

    // an invalid card number is explained on the page, nothing is charged
    const bad = await newPayment();
    await page.goto(bad.local);
    await page.getByLabel('Card number').fill('1234 5678 9012 3456');
    await page.getByLabel('Expiry (MM/YY)').fill('12/34');
    await page.getByLabel('Security code (CVC)').fill('123');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('card number is incorrect');
    expect((await api.get(`/v1/payments/${bad.id}`)).body.status).toBe('created');
    await page.close();
  });

  it('cancels through the cancel link', async () => {
    const p = await newPayment();
    const page = await browser.newPage();
    await page.goto(p.local);
    await Promise.all([page.waitForURL(`${shopUrl}/cancelled**`), page.getByRole('button', { name: /Cancel/ }).click()]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('cancelled');
    expect((await api.get(`/v1/payments/${p.id}`)).body.status).toBe('cancelled');
    await page.close();
  });
});

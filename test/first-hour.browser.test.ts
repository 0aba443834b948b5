// The first hour in a browser (issue 24): the landing page renders under its policy with no console
// error and leads to the reference; on /docs a developer authorises with a test key, runs
// "Try it out" on POST /v1/payments with the prefilled body, and gets the payment (201), whose
// checkout_url is on the configured origin — also when the browser knows the server by another name.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';
import { dashboardBrowser } from './helpers/dashboard-browser.ts';

const available = requireChromium('first-hour.browser.test');
const ORIGIN = 'https://billing.example.test';

describe.runIf(available)('the first hour in Chromium', () => {
  let app: TestApp;
  let browser: Browser;
  let merchant: Client;

  beforeAll(async () => {
    // The configured origin is not the address the browser uses (as 127.0.0.1 is not localhost):
    // Try it out still reaches this server, and the answer's addresses are the configured origin's.
    app = await startApp({ PUBLIC_BASE_URL: ORIGIN }, { worker: false });
    merchant = await app.merchant();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const watch = (page: Page) => {
    const errors: string[] = [];
    const outside: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(msg.text());
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(app.url) && !r.url().startsWith('data:')) outside.push(r.url());
    });
    return { errors, outside };
  };

  it('GET / renders with no policy violation and leads to the API reference', { timeout: 60_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    const seen = watch(page);
    const response = await page.goto(`${app.url}/`);
    expect(response?.status()).toBe(200);
    await expect(page.title()).resolves.toBe('open-billing');
    const nav = page.getByRole('navigation', { name: 'Start here' });
    for (const name of ['Dashboard', 'GraphiQL', 'API reference', 'OpenAPI document', 'Liveness', 'Readiness']) {
      expect(await nav.getByRole('link', { name }).count(), name).toBe(1);
    }
    // The inline stylesheet applied (its nonce matched): the links are styled, not default blue.
    const color = await nav.getByRole('link', { name: 'API reference' }).evaluate((a) => getComputedStyle(a).color);
    expect(color).toBe('rgb(58, 79, 216)');
    await page.screenshot({ path: '/tmp/first-hour-landing.png', fullPage: true });
    await nav.getByRole('link', { name: 'API reference' }).click();
    await page.waitForURL(`${app.url}/docs`);
    expect(seen.errors).toEqual([]);
    expect(seen.outside).toEqual([]);
    await context.close();
  });

  it('GET / at 1280 and 390 px: no serious or critical axe violation (the example request scrolls sideways on a phone, so it takes the focus)', { timeout: 60_000 }, async () => {
    const { axe } = dashboardBrowser(() => browser, () => app.url);
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 844 } });
      const page = await context.newPage();
      await page.goto(`${app.url}/`);
      expect(await axe(page), `${width} px`).toEqual([]);
      await context.close();
    }
  });

  it('/docs: authorise with a test key, Try it out on POST /v1/payments with the prefilled body, 201', { timeout: 120_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const seen = watch(page);
    await page.goto(`${app.url}/docs`);
    await page.locator('.swagger-ui .info .title').getByText('Billing API').waitFor();

    await page.locator('.swagger-ui .auth-wrapper .authorize').click();
    const modal = page.locator('.swagger-ui .modal-ux');
    await modal.locator('input[type=text]').fill(merchant.creds.client_id);
    await modal.locator('input[type=password]').fill(merchant.creds.client_secret);
    await modal.locator('.auth-btn-wrapper .authorize').click();
    await modal.getByText('Authorized').waitFor();
    await modal.locator('.auth-btn-wrapper .btn-done').click();

    const op = page.locator('#operations-Payments-createPayment');
    await op.locator('.opblock-summary').click();
    await op.locator('.try-out__btn').click();
    const body = op.locator('textarea.body-param__text');
    await body.waitFor();
    const prefilled = JSON.parse(await body.inputValue());
    expect(prefilled).toMatchObject({ amount: 2599, currency: 'EUR', customer: { email: 'jane@example.com' }, redirect_url: 'https://shop.example.com/thanks' });
    // The documented error examples differ per status (not one parameter_missing for all).
    const errorExamples = await op.locator('.responses-inner tr.response[data-code="404"] .microlight').first().textContent();
    expect(errorExamples).toContain('resource_missing');

    const answered = page.waitForResponse((r) => r.url() === `${app.url}/v1/payments` && r.request().method() === 'POST');
    await op.locator('button.execute').click();
    const res = await answered;
    expect(res.status()).toBe(201);
    const live = op.locator('.live-responses-table tr.response .response-col_status').first();
    await expect.poll(async () => (await live.textContent())?.trim()).toBe('201');
    const payment = await res.json();
    expect(payment).toMatchObject({ object: 'payment', status: 'created', amount: 2599, currency: 'EUR' });
    expect(payment.checkout_url).toMatch(new RegExp(`^${ORIGIN.replaceAll('.', '\\.')}/hosted/checkout/[0-9A-Za-z]{40}$`));
    // The reference names the configured origin.
    expect(await page.locator('.swagger-ui .servers select').inputValue()).toBe(ORIGIN);
    // It is a real payment of this merchant.
    expect((await merchant.get(`/v1/payments/${payment.id}`)).body.id).toBe(payment.id);
    await op.screenshot({ path: '/tmp/first-hour-try-it.png' });
    expect(seen.errors).toEqual([]);
    expect(seen.outside).toEqual([]);
    await context.close();
  });
});

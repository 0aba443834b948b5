// A customer pays a send_invoice invoice on its hosted page in headless Chromium: the page (the
// merchant's branding, the amount, the due date), Pay → the card checkout → back on the page, paid.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';

const available = requireChromium('invoice-page.browser.test');

describe.runIf(available)('the hosted invoice page in a browser', () => {
  let app: TestApp;
  let api: Client;
  let browser: Browser;

  beforeAll(async () => {
    app = await startApp();
    api = await app.merchant({ name: 'Invoice Shop' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('shows the invoice in the merchant’s colours and is paid by card at the checkout it opens', async () => {
    expect((await api.patch('/v1/account', { branding: { accent_color: '#0A7C66' } })).status).toBe(200);
    const c = (await api.post('/v1/customers', { email: 'pay-page@example.com', name: 'Page Payer' })).body;
    await api.post('/v1/invoice-items', { customer_id: c.id, amount: 2500, currency: 'EUR', description: 'Design review', quantity: 2 });
    const draft = (await api.post('/v1/invoices', { customer_id: c.id, currency: 'EUR', collection_method: 'send_invoice', days_until_due: 14 })).body;
    const inv = (await api.post(`/v1/invoices/${draft.id}/finalize`)).body;
    expect(inv.status).toBe('open');
    const local = (inv.hosted_invoice_url as string).replace(app.services.config.publicBaseUrl, app.url);

    const page = await browser.newPage();
    await page.goto(local);
    await expect(page.getByRole('heading', { name: `Invoice ${inv.number} from Invoice Shop` }).isVisible()).resolves.toBe(true);
    expect(await page.getByText('Design review (2 × €25.00)').isVisible()).toBe(true);
    expect(await page.locator('#due-date').textContent()).toMatch(/\d{4}/);
    const accent = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--accent').trim());
    expect(accent.toUpperCase()).toBe('#0A7C66');
    await page.screenshot({ path: '/tmp/invoice-page-browser.png', fullPage: true });

    await Promise.all([page.waitForURL(/\/hosted\/checkout\//), page.getByRole('button', { name: 'Pay €50.00' }).click()]);
    await page.getByLabel('Card number').fill('4242 4242 4242 4242');
    await page.getByLabel('Expiry (MM/YY)').fill('12/34');
    await page.getByLabel('Security code (CVC)').fill('123');
    await Promise.all([page.waitForURL(/\/hosted\/invoice\//), page.getByRole('button', { name: 'Pay €50.00' }).click()]);
    expect(await page.locator('#outcome').textContent()).toContain('This invoice is paid');
    expect(await page.locator('#invoice-status').getAttribute('data-status')).toBe('paid');
    await page.close();

    const after = (await api.get(`/v1/invoices/${inv.id}`)).body;
    expect(after).toMatchObject({ status: 'paid', amount_paid: 5000, attempt_count: 1 });
    const payment = (await api.get(`/v1/payments/${after.payment_id}`)).body;
    expect(payment).toMatchObject({ status: 'succeeded', amount: 5000, currency: 'EUR' });
  });
});

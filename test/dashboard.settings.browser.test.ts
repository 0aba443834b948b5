// The dashboard's overview (home page) and settings page in headless Chromium: the overview's
// numbers match what was made through the API (MRR, active subscriptions, revenue, failed payments;
// per currency), its empty and error states and its chart's text alternative; the settings page
// renames and brands the merchant (seen on a hosted checkout page), switches customer e-mails
// (seen through REST), creates an API key whose secret is shown once and works, and revokes it
// (then 401). Both widths, axe-core (no serious or critical violation), zero console errors.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardUser } from '../src/domain/merchants/dashboard.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';
import { PASSWORD, dashboardBrowser } from './helpers/dashboard-browser.ts';

const available = requireChromium('dashboard.settings.browser.test');
// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

describe.runIf(available)('the dashboard’s overview and settings in a browser', () => {
  let app: TestApp;
  let api: Client;
  let fresh: Client;
  let browser: Browser;
  let email: string;
  let freshEmail: string;

  beforeAll(async () => {
    app = await startApp();
    api = await app.merchant({ name: 'Nile Roasters' });
    fresh = await app.merchant({ name: 'Fresh Start' });
    const stamp = Date.now();
    email = (await createDashboardUser(app.services.db.prisma, { merchantId: api.creds.merchant_id, email: `owner.${stamp}@nile.example`, password: PASSWORD })).email;
    freshEmail = (await createDashboardUser(app.services.db.prisma, { merchantId: fresh.creds.merchant_id, email: `owner.${stamp}@fresh.example`, password: PASSWORD })).email;

    // Two customers with saved test cards: one on a monthly USD plan, one on a yearly EUR plan.
    const card = async (who: string) => {
      const c = (await api.post('/v1/customers', { email: `${who}.${stamp}@example.com`, name: who })).body;
      const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
      const pm = (await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).body.payment_method_id as string;
      return { c, pm };
    };
    const a = await card('amina');
    const b = await card('bruno');
    const monthly = (await api.post('/v1/plans', { name: 'Beans monthly', amount: 4900, currency: 'USD', interval: 'month' })).body;
    const yearly = (await api.post('/v1/plans', { name: 'Beans yearly', amount: 12000, currency: 'EUR', interval: 'year' })).body;
    expect((await api.post('/v1/subscriptions', { customer_id: a.c.id, plan_id: monthly.id })).body.status).toBe('active');
    expect((await api.post('/v1/subscriptions', { customer_id: b.c.id, plan_id: yearly.id })).body.status).toBe('active');
    // A one-off USD payment, and a checkout payment that fails.
    expect((await api.post('/v1/payments', { amount: 2599, currency: 'USD', payment_method_id: a.pm })).body.status).toBe('succeeded');
    const failing = (await api.post('/v1/payments', { amount: 1200, currency: 'USD', customer: { email: `dembe.${stamp}@example.com` }, redirect_url: 'https://shop.example/thanks' })).body;
    await api.post(`/v1/test-helpers/payments/${failing.id}/complete`, { outcome: 'failed' });
    await app.idle(api);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const b = dashboardBrowser(
    () => browser,
    () => app.url,
  );
  const { settled, checkPage } = b;
  const signedIn = (width: number, errors: string[], who = email, path = '') => b.signedIn(width, errors, who, path);

  const kpi = (page: import('playwright-core').Page, name: string) => page.getByTestId(`kpi-${name}`).textContent();

  it('the API’s own overview has the numbers the pages below must show', async () => {
    const o = (await api.gql(`{ overview { activeSubscriptions mrr { currency amount subscriptions } days { failedPayments revenue { currency amount } } } }`)).data.overview;
    expect(o.activeSubscriptions).toBe(2);
    expect(o.mrr).toEqual([
      { currency: 'EUR', amount: 1000, subscriptions: 1 },
      { currency: 'USD', amount: 4900, subscriptions: 1 },
    ]);
    const revenue = (c: string) => o.days.flatMap((d: any) => d.revenue).filter((r: any) => r.currency === c).reduce((n: number, r: any) => n + r.amount, 0);
    expect(revenue('USD')).toBe(4900 + 2599);
    expect(revenue('EUR')).toBe(12000);
    expect(o.days.reduce((n: number, d: any) => n + d.failedPayments, 0)).toBe(1);
  });

  for (const width of [1280, 390]) {
    it(`the overview at ${width} px: it is the home page, MRR and the 30 days as created, per currency, a chart with a text alternative`, async () => {
      const errors: string[] = [];
      const { ctx, page } = await signedIn(width, errors);
      // /dashboard is the overview, first in the navigation and marked as the current page.
      await settled(page, 'Overview');
      const nav = page.getByRole('navigation', { name: 'Main' });
      expect((await nav.getByRole('link').allTextContents())[0]).toBe('Overview');
      expect(await nav.getByRole('link', { name: 'Overview' }).getAttribute('aria-current')).toBe('page');
      expect(await nav.getByRole('link').allTextContents()).toContain('Settings');

      // USD first (as many subscriptions as EUR, more payments).
      expect(await kpi(page, 'mrr')).toBe('$49.00');
      expect(await kpi(page, 'active')).toBe('2');
      expect(await kpi(page, 'revenue')).toBe('$74.99');
      expect(await kpi(page, 'failed')).toBe('1');
      // The chart draws on a canvas; its container is an image named by a summary, and the
      // numbers are in a table too.
      await page.locator('.chart canvas').first().waitFor();
      const chart = page.getByRole('img', { name: /^Revenue in USD and failed payments per day from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d: \$74\.99 in total/ });
      expect(await chart.getAttribute('aria-label')).toContain('1 failed payment.');
      await page.getByText('The numbers by day').click();
      const table = page.getByRole('table', { name: 'Revenue in USD and failed payments by day' });
      expect(await table.getByRole('row').count()).toBe(31); // a header and 30 days
      expect(await table.getByRole('row').nth(1).textContent()).toContain('$74.99');
      await checkPage(page, 'overview', width);

      // Another currency: the money figures follow, the counts stay for all currencies.
      await page.getByLabel('Currency', { exact: true }).selectOption('EUR');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForURL(/\?currency=EUR$/);
      await page.getByTestId('kpi-mrr').getByText('€10.00').waitFor();
      expect(await kpi(page, 'revenue')).toBe('€120.00');
      expect(await kpi(page, 'active')).toBe('2');
      expect(await kpi(page, 'failed')).toBe('1');
      await page.getByRole('img', { name: /^Revenue in EUR .*: €120\.00 in total/ }).waitFor();
      // The address keeps the choice: a reload shows EUR again.
      await page.reload();
      await settled(page, 'Overview');
      expect(await kpi(page, 'mrr')).toBe('€10.00');
      await checkPage(page, 'overview?currency=EUR', width);
      expect(errors).toEqual([]);
      await ctx.close();
    });
  }

  it('a new merchant’s overview: zeros and a hint where to start, no chart, no currency choice', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(390, errors, freshEmail);
    await settled(page, 'Overview');
    expect(await kpi(page, 'mrr')).toBe('$0.00');
    expect(await kpi(page, 'active')).toBe('0');
    expect(await kpi(page, 'revenue')).toBe('$0.00');
    expect(await kpi(page, 'failed')).toBe('0');
    const hint = page.getByTestId('overview-empty');
    expect(await hint.textContent()).toContain('Nothing to count yet.');
    await hint.getByRole('link', { name: 'plan' }).waitFor();
    expect(await page.locator('.chart').count()).toBe(0);
    expect(await page.getByLabel('Currency', { exact: true }).count()).toBe(0);
    await checkPage(page, 'overview-new-merchant', 390);
    // The hint's link leads on.
    await hint.getByRole('link', { name: 'plan' }).click();
    await settled(page, 'Plans');
    // The first plan appears in the list that was empty, without a reload (a cold try found the
    // list kept saying "No plans yet.": urql's cache knew no type of an empty result to refresh).
    await page.getByText('No plans yet.').waitFor();
    await page.getByLabel('Plan name').fill('Starter');
    await page.getByLabel('Price (smallest unit)').fill('900');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.getByRole('main').getByText('Starter', { exact: true }).waitFor();
    expect(await page.getByText('No plans yet.').count()).toBe(0);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('the overview says so when its query fails, and shows the numbers once it works again', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors, email, '/plans');
    await settled(page, 'Plans');
    let failing = true;
    await page.route('**/graphql', async (route) => {
      if (failing && route.request().postData()?.includes('DashboardOverview')) {
        await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ errors: [{ message: 'The overview is unavailable right now.' }] }) });
      } else {
        await route.continue();
      }
    });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('alert').getByText('Could not load this: The overview is unavailable right now.').waitFor();
    expect(await page.getByTestId('kpi-mrr').count()).toBe(0);
    failing = false;
    await page.reload();
    await settled(page, 'Overview');
    expect(await kpi(page, 'mrr')).toBe('$49.00');
    expect(errors).toEqual([]);
    await ctx.close();
  });

  for (const width of [1280, 390]) {
    it(`the settings page at ${width} px: axe clean, no console error, no sideways scrolling`, async () => {
      const errors: string[] = [];
      const { ctx, page } = await signedIn(width, errors, email, '/settings');
      await settled(page, 'Settings');
      await page.getByRole('table', { name: 'API keys' }).waitFor();
      expect(await page.getByLabel('Business name').inputValue()).toBeTruthy();
      await page.getByRole('checkbox', { name: /^Receipts/ }).waitFor();
      await checkPage(page, 'settings', width);
      // With a new key's secret on show, and a revoke that asks first.
      await page.getByRole('button', { name: 'Create an API key' }).click();
      await page.getByTestId('new-api-key').waitFor();
      await checkPage(page, 'settings-new-key', width);
      const clientId = (await page.getByTestId('new-api-key').locator('code').first().textContent())!;
      await page.getByRole('button', { name: `Revoke ${clientId}` }).click();
      await page.getByRole('button', { name: 'Yes, revoke' }).waitFor();
      await checkPage(page, 'settings-revoke', width);
      await page.getByRole('button', { name: 'Yes, revoke' }).click();
      await page.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: clientId }).getByText('revoked').waitFor();
      expect(errors).toEqual([]);
      await ctx.close();
    });
  }

  it('renames and brands the merchant: an invalid colour and a non-image logo are refused next to the form, then the new name is in the banner and on a hosted checkout page', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors, email, '/settings');
    await settled(page, 'Settings');
    const form = page.getByRole('form', { name: 'Name and branding' });
    expect(await page.getByLabel('Business name').inputValue()).toBe('Nile Roasters');

    // Errors come back as data and are shown next to the form; nothing changes.
    await page.getByLabel('Business name').fill('Nile Roasters & Co');
    await page.getByLabel('Accent colour').fill('blue');
    await form.getByRole('button', { name: 'Save name and branding' }).click();
    await form.getByRole('alert').getByText(/accent/i).waitFor();
    await page.getByLabel('Accent colour').fill('#0a7d4f');
    await page.getByLabel('Logo', { exact: true }).setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from('not an image at all') });
    await form.getByRole('button', { name: 'Save name and branding' }).click();
    await form.getByRole('alert').getByText('Invalid branding[logo]: the data is not a PNG image.').waitFor();
    expect((await api.get('/v1/account')).body).toMatchObject({ name: 'Nile Roasters', branding: { accent_color: null, logo: null } });

    await page.getByLabel('Logo', { exact: true }).setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: PNG });
    await form.getByRole('button', { name: 'Save name and branding' }).click();
    await form.getByRole('status').getByText(/^Saved\./).waitFor();
    expect(await form.getByRole('alert').count()).toBe(0);
    const account = (await api.get('/v1/account')).body;
    expect(account).toMatchObject({ name: 'Nile Roasters & Co', branding: { accent_color: '#0A7D4F', logo: `data:image/png;base64,${PNG.toString('base64')}` } });
    // The banner follows, and the saved logo is shown.
    await page.getByTestId('merchant-name').getByText('Nile Roasters & Co').waitFor();
    await page.getByRole('img', { name: 'The logo of Nile Roasters & Co' }).waitFor();

    // A customer's hosted checkout page carries the new name, colour and logo.
    const p = (await api.post('/v1/payments', { amount: 1500, currency: 'USD', customer: { email: `buyer.${Date.now()}@example.com` }, redirect_url: 'https://shop.example/done' })).body;
    const checkout = await ctx.newPage();
    await checkout.goto(p.checkout_url.replace(app.services.config.publicBaseUrl, app.url));
    await checkout.getByRole('heading', { level: 1, name: 'Nile Roasters & Co' }).waitFor();
    await checkout.getByRole('img', { name: 'Nile Roasters & Co' }).waitFor();
    expect(await checkout.content()).toContain('--accent:#0A7D4F');

    // Removing the logo and clearing the colour bring back the defaults.
    await page.getByLabel('Remove the logo').check();
    await page.getByLabel('Accent colour').fill('');
    await form.getByRole('button', { name: 'Save name and branding' }).click();
    await page.getByText('No logo yet: the name is shown instead.').waitFor();
    expect((await api.get('/v1/account')).body).toMatchObject({ name: 'Nile Roasters & Co', branding: { accent_color: null, logo: null } });
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('switches customer e-mails: the change is what REST GET /v1/email-settings answers, and a reload shows it', async () => {
    const errors: string[] = [];
    const before = (await api.get('/v1/email-settings')).body;
    expect(before).toMatchObject({ receipts: true, upcoming_renewal: false });
    const { ctx, page } = await signedIn(390, errors, email, '/settings');
    await settled(page, 'Settings');
    const receipts = page.getByRole('checkbox', { name: /^Receipts/ });
    const upcoming = page.getByRole('checkbox', { name: /^Upcoming renewal/ });
    expect(await receipts.isChecked()).toBe(true);
    expect(await upcoming.isChecked()).toBe(false);
    await receipts.uncheck();
    await upcoming.check();
    await page.getByRole('button', { name: 'Save e-mail settings' }).click();
    await page.getByRole('status').getByText('E-mail settings saved.').waitFor();
    expect((await api.get('/v1/email-settings')).body).toEqual({ ...before, receipts: false, upcoming_renewal: true });
    await page.reload();
    await settled(page, 'Settings');
    await page.getByRole('checkbox', { name: /^Upcoming renewal/ }).waitFor();
    expect(await page.getByRole('checkbox', { name: /^Receipts/ }).isChecked()).toBe(false);
    expect(await page.getByRole('checkbox', { name: /^Upcoming renewal/ }).isChecked()).toBe(true);
    // And back, so the other tests see the defaults.
    await page.getByRole('checkbox', { name: /^Receipts/ }).check();
    await page.getByRole('checkbox', { name: /^Upcoming renewal/ }).uncheck();
    await page.getByRole('button', { name: 'Save e-mail settings' }).click();
    await page.getByRole('status').getByText('E-mail settings saved.').waitFor();
    expect((await api.get('/v1/email-settings')).body).toEqual(before);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('creates an API key whose secret is shown once and works on /v1/customers, then revokes it (401)', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors, email, '/settings');
    await settled(page, 'Settings');
    await page.getByRole('button', { name: 'Create an API key' }).click();
    const shown = page.getByTestId('new-api-key');
    await shown.getByText('Copy the secret now: it is shown only this once.').waitFor();
    const clientId = (await shown.locator('code').first().textContent())!;
    const secret = (await page.getByTestId('new-api-key-secret').textContent())!;
    expect(clientId).toMatch(/^ck_/);
    expect(secret).toMatch(/^sk_test_/);
    const basic = 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64');
    const listed = await fetch(`${app.url}/v1/customers`, { headers: { authorization: basic } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as any).data.some((c: any) => c.name === 'amina')).toBe(true);
    // The list shows the key by its last four characters only.
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: clientId });
    await row.getByText(`…${secret.slice(-4)}`).waitFor();

    // Never shown again: not after "I have stored it", not after a reload.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await settled(page, 'Settings');
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);

    // Revoking asks first; "Keep it" keeps it.
    await page.getByRole('button', { name: `Revoke ${clientId}` }).click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect((await fetch(`${app.url}/v1/customers`, { headers: { authorization: basic } })).status).toBe(200);
    await page.getByRole('button', { name: `Revoke ${clientId}` }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.getByText('revoked').waitFor();
    expect(await row.getByRole('button').count()).toBe(0);
    // "Stops working within seconds" (the API's promise): poll for up to 10 s.
    let status = 0;
    for (let i = 0; i < 50 && status !== 401; i++) {
      status = (await fetch(`${app.url}/v1/customers`, { headers: { authorization: basic } })).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(401);
    // The merchant's other key is untouched.
    expect((await api.get('/v1/customers')).status).toBe(200);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('refuses to revoke the last active key, with the API’s message on its row', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors, freshEmail, '/settings');
    await settled(page, 'Settings');
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: fresh.creds.client_id });
    await row.getByRole('button', { name: `Revoke ${fresh.creds.client_id}` }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.getByRole('alert').waitFor();
    expect(await row.getByRole('alert').textContent()).toMatch(/last/i);
    expect((await fresh.get('/v1/customers')).status).toBe(200);
    expect(errors).toEqual([]);
    await ctx.close();
  });
});

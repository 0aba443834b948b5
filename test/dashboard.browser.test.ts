// The merchant dashboard (dashboard/, served at /dashboard) in headless Chromium: how it is served
// (CSP, caching, the SPA fallback), sign-in and sign-out, every page at 1280 and 390 px wide with
// axe-core (no serious or critical violation) and zero console errors, the actions (refund, portal
// link, rotate a secret, replay an event, advance the clock, pay and void an invoice) with their
// errors shown next to the control, pagination and filters, a session that ends, and another
// merchant's data never shown.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardUser } from '../src/domain/merchants/dashboard.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';
import { PASSWORD, dashboardBrowser } from './helpers/dashboard-browser.ts';
import { receivers } from './helpers/receivers.ts';

const available = requireChromium('dashboard.browser.test');

describe.runIf(available)('the merchant dashboard in a browser', () => {
  let app: TestApp;
  let api: Client;
  let other: Client;
  let browser: Browser;
  const hooks = receivers();
  let email: string;
  let otherEmail: string;
  const seed = {} as { subscription: any; wallet: any; newest: any; customer: any; payment: any; failed: any; invoice: any; endpoint: any; rare: any; theirs: any; event: any; otherCustomer: any; otherPayment: any };

  beforeAll(async () => {
    app = await startApp();
    api = await app.merchant({ name: 'Kampala Coffee' });
    other = await app.merchant({ name: 'Other Shop' });
    const stamp = Date.now();
    email = (await createDashboardUser(app.services.db.prisma, { merchantId: api.creds.merchant_id, email: `owner.${stamp}@kampala.example`, password: PASSWORD })).email;
    otherEmail = (await createDashboardUser(app.services.db.prisma, { merchantId: other.creds.merchant_id, email: `owner.${stamp}@other.example`, password: PASSWORD })).email;

    const url = await hooks.listen((_req, res) => res.writeHead(200).end('ok'));
    seed.endpoint = (await api.post('/v1/webhook-endpoints', { url, description: 'Shop backend' })).body;
    // Subscribed to payment.failed only: its one attempt is older than the newest page of events.
    seed.rare = (await api.post('/v1/webhook-endpoints', { url, events: ['payment.failed'], description: 'Dunning' })).body;
    seed.customer = (await api.post('/v1/customers', { email: `amina.${stamp}@example.com`, name: 'Amina Nakato' })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: seed.customer.id })).body;
    const pm = (await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).body.payment_method_id;
    seed.payment = (await api.post('/v1/payments', { amount: 2599, currency: 'USD', payment_method_id: pm })).body;
    expect(seed.payment.status).toBe('succeeded');
    seed.failed = (await api.post('/v1/payments', { amount: 1200, currency: 'EUR', customer: { email: `dembe.${stamp}@example.com` }, redirect_url: 'https://shop.example/thanks' })).body;
    await api.post(`/v1/test-helpers/payments/${seed.failed.id}/complete`, { outcome: 'failed' });
    const plan = (await api.post('/v1/plans', { name: 'Coffee club', amount: 1500, currency: 'USD', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: seed.customer.id, plan_id: plan.id })).body;
    expect(sub.status).toBe('active');
    seed.subscription = sub;
    seed.invoice = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    seed.wallet = (await api.post('/v1/wallets', { customer_id: seed.customer.id, currency: 'KES' })).body;
    expect(seed.wallet.id).toMatch(/^wal/);
    // 22 more customers: the customers list has a second page.
    for (let i = 0; i < 22; i++) seed.newest = (await api.post('/v1/customers', { email: `c${i}.${stamp}@example.com` })).body;
    await app.idle(api);
    seed.event = (await api.get('/v1/events?limit=100')).body.data.find((e: any) => e.type === 'payment.succeeded' && e.data.object.id === seed.payment.id);
    expect(seed.event).toBeTruthy();

    seed.otherCustomer = (await other.post('/v1/customers', { email: `secret.${stamp}@other.example`, name: 'Other Customer' })).body;
    seed.otherPayment = (await other.post('/v1/payments', { amount: 999, currency: 'USD', customer: { email: seed.otherCustomer.email } })).body;
    seed.theirs = (await other.post('/v1/webhook-endpoints', { url: 'https://hooks.other.example/secret-hook' })).body;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    hooks.close();
    await app?.close();
  });

  const b = dashboardBrowser(
    () => browser,
    () => app.url,
  );
  const { context, settled, axe } = b;
  const signIn = (page: Parameters<typeof b.signIn>[0], who = email, password?: string) => b.signIn(page, who, password);
  const signedIn = (width: number, errors: string[], who = email) => b.signedIn(width, errors, who);

  it('is served by the same process: index for every client route (no-cache, strict CSP), hashed assets cached, the session API left alone', async () => {
    for (const path of ['/dashboard', '/dashboard/', '/dashboard/payments/pay_x', '/dashboard/customers']) {
      const res = await fetch(app.url + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
      const html = await res.text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//); // nothing from another origin
    }
    const index = await (await fetch(`${app.url}/dashboard`)).text();
    const asset = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(index)![1]!;
    const a = await fetch(app.url + asset);
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toMatch(/javascript/);
    expect(a.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${app.url}/dashboard/assets/nope.js`)).status).toBe(404);
    const s = await fetch(`${app.url}/dashboard/api/session`);
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toMatch(/json/);
    expect(await s.json()).toEqual({ signed_in: false });
  });

  it('signs in (a wrong password is refused on the page), shows the merchant, signs out', async () => {
    const errors: string[] = [];
    const ctx = await context(1280, errors, (text, url) => /status of 401/.test(text) && url.endsWith('/dashboard/api/session'));
    const page = await ctx.newPage();
    await page.goto(`${app.url}/dashboard/customers`);
    await page.getByRole('heading', { name: 'Sign in to your dashboard' }).waitFor();
    // The cursor is in the email field, ready to type.
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name)).toBe('email');
    await signIn(page, email, 'not the password at all');
    await page.getByRole('alert').getByText('Invalid email or password.').waitFor();
    await signIn(page);
    // The route asked for before signing in is the one shown after.
    await settled(page, 'Customers');
    expect(await page.getByTestId('merchant-name').textContent()).toContain('Kampala Coffee');
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).toEqual([
      'Overview',
      'Payments',
      'Customers',
      'Invoices',
      'Credit notes',
      'Subscriptions',
      'Plans',
      'Coupons',
      'Tax rates',
      'Wallets',
      'Events',
      'Webhooks',
      'Test clock',
      'Settings',
    ]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to your dashboard' }).waitFor();
    // The session is over on the server too: a reload stays signed out.
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect((await ctx.cookies()).find((c) => c.name === 'billing_session')).toBeUndefined();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  for (const width of [1280, 390]) {
    it(`every page at ${width} px: data shown, no serious or critical axe violation, no console error, no sideways scrolling`, async () => {
      const errors: string[] = [];
      const { ctx, page } = await signedIn(width, errors);
      const pages: [string, string | RegExp, string][] = [
        ['/payments', 'Payments', seed.payment.id],
        [`/payments/${seed.payment.id}`, 'Payment $25.99', 'Refund this payment'],
        ['/customers', 'Customers', seed.newest.email],
        [`/customers/${seed.customer.id}`, 'Amina Nakato', 'Coffee club'],
        ['/invoices', 'Invoices', seed.invoice.number],
        ['/subscriptions', 'Subscriptions', 'Coffee club'],
        [`/subscriptions/${seed.subscription.id}`, 'Subscription to Coffee club', seed.invoice.number],
        ['/plans', 'Plans', 'Coffee club'],
        ['/wallets', 'Wallets', seed.wallet.id],
        [`/wallets/${seed.wallet.id}`, /^Wallet /, 'Credit this wallet'],
        ['/events', 'Events', 'customer.created'],
        [`/events/${seed.event.id}`, 'payment.succeeded', seed.payment.id],
        ['/webhooks', 'Webhooks', seed.endpoint.url],
        [`/webhooks/${seed.endpoint.id}`, /^Endpoint /, 'customer.created'],
        ['/test-clock', 'Test clock', 'Billing clock now'],
        ['/nowhere', 'Page not found', 'There is no such page'],
      ];
      for (const [path, heading, text] of pages) {
        await page.goto(`${app.url}/dashboard${path}`);
        await settled(page, heading);
        await page.getByRole('main').getByText(text).first().waitFor();
        expect(await axe(page), path).toEqual([]);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${path} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
        await page.screenshot({ path: `/tmp/dashboard-${path.replace(/\//g, '_')}-${width}.png`, fullPage: false });
      }
      // The sign-in page too.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await axe(page)).toEqual([]);
      expect(errors).toEqual([]);
      await ctx.close();
    });
  }

  it('never shows another merchant’s data: lists, and a detail page by id', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors);
    await page.goto(`${app.url}/dashboard/customers`);
    await settled(page, 'Customers');
    await page.getByText(seed.newest.email).waitFor();
    expect(await page.content()).not.toContain(seed.otherCustomer.email);
    await page.goto(`${app.url}/dashboard/customers?search=${encodeURIComponent(seed.otherCustomer.email)}`);
    await page.getByText('No customers match.').waitFor();
    await page.goto(`${app.url}/dashboard/customers/${seed.otherCustomer.id}`);
    await page.getByText(`No customer ${seed.otherCustomer.id}.`).waitFor();
    expect(await page.content()).not.toContain('Other Customer');
    await page.goto(`${app.url}/dashboard/payments/${seed.otherPayment.id}`);
    await page.getByText(`No payment ${seed.otherPayment.id}.`).waitFor();
    await page.goto(`${app.url}/dashboard/payments`);
    await settled(page, 'Payments');
    expect(await page.content()).not.toContain(seed.otherPayment.id);
    // A long unbroken id typed into a URL or a filter wraps in the message saying it is unknown
    // (the empty state and the filter's error), at both widths: no sideways scrolling.
    const long = `cus_${'x'.repeat(500)}`;
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const [path, text] of [[`/customers/${long}`, `No customer ${long}.`], [`/subscriptions?plan=${long}`, long]] as const) {
        await page.goto(`${app.url}/dashboard${path}`);
        await page.getByText(text, { exact: false }).first().waitFor();
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${path.slice(0, 20)}… scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
      }
    }
    await ctx.close();

    // …and the other merchant, signed in, sees theirs and not Kampala Coffee's.
    const b = await signedIn(1280, errors, otherEmail);
    await b.page.goto(`${app.url}/dashboard/customers`);
    await settled(b.page, 'Customers');
    await b.page.getByText(seed.otherCustomer.email).waitFor();
    expect(await b.page.getByTestId('merchant-name').textContent()).toContain('Other Shop');
    expect(await b.page.content()).not.toContain(seed.customer.email);
    await b.ctx.close();
    expect(errors).toEqual([]);
  });

  it('pages through customers with Relay cursors and filters by email; filters payments by status', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors);
    await page.goto(`${app.url}/dashboard/customers`);
    await settled(page, 'Customers');
    const total = (await api.get('/v1/customers?limit=100')).body.data.length;
    expect(total).toBeGreaterThan(20);
    expect(total).toBeLessThanOrEqual(40);
    const rows = page.getByRole('table', { name: 'Customers' }).locator('tbody tr');
    expect(await rows.count()).toBe(20);
    const first = await rows.first().textContent();
    await page.getByText(`${total} customers · page 1`).waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText(`${total} customers · page 2`).waitFor();
    await expect.poll(() => rows.count()).toBe(total - 20);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByText(/page 1/).waitFor();
    expect(await rows.first().textContent()).toBe(first);

    // Search as the API does it: an email prefix, or a word prefix of the name ("amina nak").
    await page.getByLabel('Email or name').fill(seed.customer.email);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText(/^1 customer ·/).waitFor();
    expect(page.url()).toContain('search=');
    await page.getByLabel('Email or name').fill('Amina Nak');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: seed.customer.email }).waitFor();
    await page.getByText(/^1 customer ·/).waitFor();
    await page.getByLabel('Email or name').fill('nobody@example.com');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No customers match.').waitFor();

    await page.goto(`${app.url}/dashboard/payments`);
    await settled(page, 'Payments');
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('link', { name: seed.payment.id }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: seed.failed.id }).waitFor();
    expect(page.url()).toContain('status=failed');
    await page.getByLabel('Status').selectOption('expired');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No payments match.').waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('refunds a payment: a refused amount is explained next to the control, then a refund is made', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(390, errors);
    await page.goto(`${app.url}/dashboard/payments/${seed.payment.id}`);
    await settled(page, 'Payment $25.99');
    // A payment with an outcome has no checkout left to expire.
    expect((await page.locator('dl.details > div', { hasText: 'Checkout expires' }).locator('dd').textContent())?.trim()).toBe('—');
    await page.getByLabel('Refund amount (smallest unit)').fill('999999');
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    const refused = page.locator('form', { has: page.getByRole('button', { name: 'Refund', exact: true }) }).getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/exceed|more than|remain/i);
    await page.getByLabel('Refund amount (smallest unit)').fill('500');
    await page.getByLabel('Reason').selectOption('customer_request');
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    await page.getByText(/^Refund re_\w+ created/).waitFor();
    const refunds = (await api.get(`/v1/refunds?payment_id=${seed.payment.id}`)).body.data;
    expect(refunds.map((r: any) => [r.amount, r.reason])).toEqual([[500, 'customer_request']]);
    await page.getByRole('table', { name: 'Refunds' }).getByText(refunds[0].id).waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('customer detail: creates a portal link; webhooks: rotates a secret; events: filters by type, replays', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors);
    await page.goto(`${app.url}/dashboard/customers/${seed.customer.id}`);
    await settled(page, 'Amina Nakato');
    await page.getByRole('button', { name: 'Create portal link' }).click();
    const link = page.getByRole('link', { name: 'Open portal link' });
    await link.waitFor();
    expect(await link.getAttribute('href')).toMatch(/\/hosted\/portal\//);

    await page.goto(`${app.url}/dashboard/webhooks/${seed.endpoint.id}`);
    await settled(page, /^Endpoint /);
    // The endpoint's own attempts, with their total.
    expect(await page.getByRole('navigation', { name: 'Pages of attempts' }).locator('span').textContent()).toMatch(/^\d+ attempts · page 1$/);
    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    await page.getByText(/^whsec_/).waitFor();

    await page.goto(`${app.url}/dashboard/webhooks`);
    await settled(page, 'Webhooks');
    await page.getByLabel('Endpoint URL').fill('http://example.com/hooks');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    // Errors as data: the API's message, next to the form.
    const refused = page.locator('form', { has: page.getByRole('button', { name: 'Add endpoint' }) }).getByRole('alert');
    await refused.waitFor();
    expect((await refused.textContent())!.length).toBeGreaterThan(10);

    await page.goto(`${app.url}/dashboard/events`);
    await settled(page, 'Events');
    // A type the catalogue does not have is refused, as a webhook endpoint's, not an empty list.
    await page.getByLabel('Event type').fill('nope.nope');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('alert').getByText(/Invalid type: must be an event type of the catalogue/).waitFor();
    await page.getByLabel('Event type').fill('customer.*');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    // Only customer events once the filtered page has come (the unfiltered one has payments' too).
    const firstColumn = page.getByRole('table', { name: 'Events' }).locator('tbody tr td:first-child');
    await expect.poll(async () => (await firstColumn.allTextContents()).filter((t) => !t.startsWith('customer.')).length).toBe(0);
    expect(await firstColumn.count()).toBeGreaterThan(0);
    expect(page.url()).toContain('type=customer.*');

    await page.goto(`${app.url}/dashboard/events/${seed.event.id}`);
    await settled(page, 'payment.succeeded');
    const json = await page.getByLabel('Event object as JSON').textContent();
    expect(JSON.parse(json!).id).toBe(seed.payment.id);
    await page.getByRole('button', { name: 'Replay to webhook endpoints' }).click();
    await page.getByText('Sent again to 1 endpoint.').waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it("an endpoint's page lists its own delivery attempts: however many newer events, paged both ways, filtered by status, replayed from there; never another merchant's", async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors);
    // The rare endpoint's one attempt (payment.failed) is not among the newest page of events …
    const failedEvent = (await api.get(`/v1/events?type=payment.failed&object_id=${seed.failed.id}`)).body.data[0];
    expect((await api.get('/v1/events?limit=10')).body.data.map((e: any) => e.id)).not.toContain(failedEvent.id);
    // … and its page shows it, succeeded.
    await page.goto(`${app.url}/dashboard/webhooks/${seed.rare.id}`);
    await settled(page, /^Endpoint /);
    const table = page.getByRole('table', { name: 'Delivery attempts to this endpoint' });
    await table.getByRole('link', { name: 'payment.failed' }).waitFor();
    expect(await table.locator('tbody tr').count()).toBe(1);
    expect(await table.locator('tbody tr').first().textContent()).toContain('succeeded');
    await page.getByRole('heading', { name: 'Recent deliveries (1)' }).waitFor();

    // Status filter: none failed.
    await page.getByRole('search', { name: 'Filter delivery attempts' }).getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No failed delivery attempts to this endpoint.').waitFor();
    expect(page.url()).toContain('status=failed');
    await page.getByRole('search', { name: 'Filter delivery attempts' }).getByLabel('Status').selectOption('succeeded');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await table.getByRole('link', { name: 'payment.failed' }).waitFor();

    // Replay from the row: a new pending attempt appears at the top.
    await page.goto(`${app.url}/dashboard/webhooks/${seed.rare.id}`);
    await settled(page, /^Endpoint /);
    await page.getByRole('button', { name: `Replay payment.failed ${failedEvent.id}` }).click();
    await page.getByText(`payment.failed ${failedEvent.id} sent again to 2 endpoints.`).waitFor(); // this one and the one for every event
    await expect.poll(async () => table.locator('tbody tr').count()).toBe(2);
    await app.idle(api);
    expect((await api.get(`/v1/webhook-endpoints/${seed.rare.id}/delivery-attempts`)).body.data).toHaveLength(2);

    // The busy endpoint has more than a page of attempts: next and previous page.
    const all = (await api.get(`/v1/webhook-endpoints/${seed.endpoint.id}/delivery-attempts?limit=100`)).body.data;
    expect(all.length).toBeGreaterThan(20);
    await page.goto(`${app.url}/dashboard/webhooks/${seed.endpoint.id}`);
    await settled(page, /^Endpoint /);
    const pager = page.getByRole('navigation', { name: 'Pages of attempts' });
    await expect.poll(async () => pager.locator('span').textContent()).toBe(`${all.length} attempts · page 1`);
    const firstEvent = async () => (await table.locator('tbody tr').first().getByRole('link').getAttribute('href'))!;
    expect(await firstEvent()).toBe(`/dashboard/events/${all[0].event_id}`);
    await pager.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(async () => pager.locator('span').textContent()).toBe(`${all.length} attempts · page 2`);
    await expect.poll(firstEvent).toBe(`/dashboard/events/${all[20].event_id}`);
    await pager.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(firstEvent).toBe(`/dashboard/events/${all[0].event_id}`);

    // Another merchant's endpoint: not found, nothing of it shown.
    await page.goto(`${app.url}/dashboard/webhooks/${seed.theirs.id}`);
    await page.getByText(`No webhook endpoint ${seed.theirs.id}.`).waitFor();
    expect(await page.getByRole('main').textContent()).not.toContain('secret-hook');
    expect(await page.getByRole('table').count()).toBe(0);

    // A delivery that got no HTTP answer (nothing listens on port 1): the row says why, from the
    // API's response_body, and when it is tried again — on the endpoint's page and the event's.
    const down = (await api.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:1/hooks', events: ['customer.updated'], description: 'Down' })).body;
    await api.patch(`/v1/customers/${seed.newest.id}`, { metadata: { tier: 'gold' } });
    const firstAttempt = async () => (await api.get(`/v1/webhook-endpoints/${down.id}/delivery-attempts`)).body.data.at(-1);
    await expect.poll(async () => (await firstAttempt())?.status, { timeout: 10_000 }).toBe('failed');
    const refused = await firstAttempt();
    expect(refused).toMatchObject({ status: 'failed', response_status: null, response_body: expect.stringMatching(/ECONNREFUSED/) });
    expect(refused.next_retry_at).toBeTruthy();
    await page.goto(`${app.url}/dashboard/webhooks/${down.id}`);
    await settled(page, /^Endpoint /);
    const row = table.locator('tbody tr').last(); // attempt 1 (its retry may have come meanwhile)
    await row.getByText(/ECONNREFUSED/).waitFor();
    expect(await row.textContent()).toMatch(/failed.*connect ECONNREFUSED 127\.0\.0\.1:1.*Next try/);
    expect(await row.locator('.next-retry time').getAttribute('datetime')).toBe(refused.next_retry_at);
    await page.goto(`${app.url}/dashboard/events/${refused.event_id}`);
    await settled(page, 'customer.updated');
    const onEvent = page.getByRole('table', { name: 'Delivery attempts' }).locator('tbody tr', { hasText: down.url }).filter({ hasText: /ECONNREFUSED/ }).first();
    await onEvent.waitFor();
    expect(await onEvent.textContent()).toMatch(/connect ECONNREFUSED 127\.0\.0\.1:1.*Next try/);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('advances the test clock; pays and voids invoices from the list', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors);
    await page.goto(`${app.url}/dashboard/test-clock`);
    await settled(page, 'Test clock');
    const before = (await api.get('/v1/test-helpers/clock')).body;
    await page.getByRole('button', { name: 'Advance 1 day' }).click();
    await page.getByText('The clock moved on; the work that became due has run.').waitFor();
    const after = (await api.get('/v1/test-helpers/clock')).body;
    const moved = Date.parse(after.now) - Date.parse(before.now);
    expect(moved).toBeGreaterThanOrEqual(86_400_000);
    expect(moved).toBeLessThan(86_400_000 + 60_000);

    // An open invoice: a subscription whose first charge fails stays incomplete with it open.
    const c = (await api.post('/v1/customers', { email: `dunning.${Date.now()}@example.com` })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4000000000009995' });
    const plan = (await api.post('/v1/plans', { name: 'Beans', amount: 900, currency: 'USD', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    const inv = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    await page.goto(`${app.url}/dashboard/invoices?customer=${c.id}`);
    await settled(page, 'Invoices');
    if (inv.status === 'open') {
      const name = inv.number ?? inv.id;
      await page.getByRole('button', { name: `Pay ${name}` }).click();
      // The saved card declines: the error is shown on the row.
      await page.getByRole('table', { name: 'Invoices' }).getByRole('alert').waitFor();
      await page.getByRole('button', { name: `Void ${name}` }).click();
      // Asked first: nothing is voided by one press.
      expect((await api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('open');
      await page.getByRole('button', { name: `Yes, void ${name}` }).click();
      await page.getByRole('table', { name: 'Invoices' }).locator('.status', { hasText: /^void$/ }).waitFor();
      expect((await api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('void');
    } else {
      throw new Error(`expected an open invoice, got ${inv.status}`);
    }
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('creates a plan, subscribes a customer with a saved card, cancels at period end, reactivates, archives the plan', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors);
    await page.goto(`${app.url}/dashboard/plans`);
    await settled(page, 'Plans');
    // Refused by the API (a currency that is none): its message next to the form.
    await page.getByLabel('Plan name').fill('Espresso');
    await page.getByLabel('Price (smallest unit)').fill('2900');
    await page.getByLabel('Plan currency').fill('ZZZ');
    await page.getByRole('button', { name: 'Create plan' }).click();
    const refused = page.locator('form', { has: page.getByRole('button', { name: 'Create plan' }) }).getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/currency/i);
    await page.getByLabel('Plan currency').fill('USD');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.getByText('Plan Espresso created.').waitFor();
    await page.getByRole('table', { name: 'Plans' }).getByText('Espresso').waitFor();
    const plan = (await api.get('/v1/plans?limit=100')).body.data.find((p: any) => p.name === 'Espresso');
    expect([plan.amount, plan.currency, plan.interval]).toEqual([2900, 'USD', 'month']);

    await page.goto(`${app.url}/dashboard/subscriptions`);
    await settled(page, 'Subscriptions');
    await page.getByRole('main').getByRole('link', { name: 'Subscribe a customer' }).click();
    await settled(page, 'Subscribe a customer');
    await page.getByLabel('Find a customer').fill('amina nak');
    await page.getByRole('radio', { name: new RegExp(`^Amina Nakato · ${seed.customer.email.replace(/\./g, '\\.')}`) }).check();
    await page.getByLabel('Find a plan').fill('espresso');
    await page.getByRole('radio', { name: /^Espresso/ }).check();
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.getByText(`${seed.customer.email} is subscribed to Espresso: active`).waitFor();
    await page.goto(`${app.url}/dashboard/subscriptions?plan=${plan.id}`);
    await settled(page, 'Subscriptions');
    const who = `the subscription of ${seed.customer.email}`;
    await page.getByRole('button', { name: `Cancel at period end ${who}` }).click();
    await page.getByRole('button', { name: `Reactivate ${who}` }).waitFor();
    const sub = (await api.get(`/v1/subscriptions?customer_id=${seed.customer.id}&limit=100`)).body.data.find((x: any) => x.plan_id === plan.id || x.plan?.id === plan.id);
    expect(sub.cancel_at_period_end).toBe(true);
    await page.getByRole('button', { name: `Reactivate ${who}` }).click();
    await page.getByRole('button', { name: `Cancel at period end ${who}` }).waitFor();
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.cancel_at_period_end).toBe(false);

    await page.goto(`${app.url}/dashboard/plans?active=true`);
    await settled(page, 'Plans');
    await page.getByRole('button', { name: 'Archive Espresso' }).click();
    await page.getByRole('button', { name: 'Archive Espresso' }).waitFor({ state: 'detached' });
    expect((await api.get(`/v1/plans/${plan.id}`)).body.active).toBe(false);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('subscription detail: changes the plan (an archived plan refused on the page; invoiced now, then without proration), pauses, resumes, cancels now', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors);
    const stamp = Date.now().toString(36);
    const plan = async (name: string, amount: number, interval = 'month') => (await api.post('/v1/plans', { name: `${name} ${stamp}`, amount, currency: 'USD', interval })).body;
    const basic = await plan('Basic', 1000);
    const pro = await plan('Pro', 3000);
    const max = await plan('Max', 5000);
    const yearly = await plan('Yearly', 10000, 'year');
    const sub = (await api.post('/v1/subscriptions', { customer_id: seed.customer.id, plan_id: basic.id })).body;
    expect(sub.status).toBe('active');

    // From the list (filtered by plan) to the detail page.
    await page.goto(`${app.url}/dashboard/subscriptions?plan=${basic.id}`);
    await settled(page, 'Subscriptions');
    await page.getByRole('link', { name: `${basic.name} · $10.00: the subscription of ${seed.customer.email}` }).click();
    await settled(page, `Subscription to ${basic.name}`);
    const main = page.getByRole('main');
    await main.getByText(sub.id).waitFor();
    const invoices = page.getByRole('table', { name: 'Invoices of this subscription' });
    expect(await invoices.locator('tbody tr').count()).toBe(1);
    await invoices.getByText('subscription create').waitFor();
    await page.getByRole('link', { name: /^Payment of INV-/ }).first().waitFor();
    // Only the plans it can move to: same currency and billing period, active, not its own.
    const options = await page.getByLabel('New plan').locator('option').allTextContents();
    expect(options).toEqual(expect.arrayContaining([`${pro.name} · $30.00`, `${max.name} · $50.00`]));
    expect(options.join('|')).not.toContain(yearly.name);
    expect(options.join('|')).not.toContain(basic.name);

    // A plan archived meanwhile: the API's error, next to the form; nothing changed.
    expect((await api.post(`/v1/plans/${max.id}/archive`, {})).status).toBe(200);
    await page.getByLabel('New plan').selectOption(max.id);
    await page.getByRole('button', { name: 'Change plan' }).click();
    const form = page.locator('form', { has: page.getByRole('button', { name: 'Change plan' }) });
    await form.getByRole('alert').waitFor();
    expect(await form.getByRole('alert').textContent()).toMatch(/archived|active/i);
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.plan_id).toBe(basic.id);

    // To Pro, invoiced and charged now: the heading, the message and a new paid invoice.
    await page.getByLabel('New plan').selectOption(pro.id);
    await page.getByRole('radio', { name: /^Prorate and invoice now/ }).check();
    await page.getByRole('button', { name: 'Change plan' }).click();
    await page.getByText(new RegExp(`^Plan changed to ${pro.name} \\(\\$30\\.00\\)\\. Latest invoice: INV-\\d+, \\$[\\d.]+, paid\\.`)).waitFor();
    await settled(page, `Subscription to ${pro.name}`);
    await invoices.getByText('subscription update').waitFor();
    expect(await invoices.locator('tbody tr').count()).toBe(2);
    expect(await form.getByRole('alert').count()).toBe(0);
    let now = (await api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(now.plan_id).toBe(pro.id);
    const update = (await api.get(`/v1/invoices?subscription_id=${sub.id}&limit=10`)).body.data.find((i: any) => i.billing_reason === 'subscription_update');
    expect(update.status).toBe('paid');
    expect(update.total).toBeGreaterThan(0);

    // Back to Basic without proration: no new invoice.
    await page.getByLabel('New plan').selectOption(basic.id);
    await page.getByRole('radio', { name: /^No proration/ }).check();
    await page.getByRole('button', { name: 'Change plan' }).click();
    await settled(page, `Subscription to ${basic.name}`);
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.plan_id).toBe(basic.id);
    expect(await invoices.locator('tbody tr').count()).toBe(2);

    // Pause, resume, cancel now (after the confirmation).
    const who = `the subscription of ${seed.customer.email}`;
    await page.getByRole('button', { name: `Pause ${who}` }).click();
    await page.getByRole('button', { name: `Resume ${who}` }).waitFor();
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('paused');
    await page.getByRole('button', { name: `Resume ${who}` }).click();
    await page.getByRole('button', { name: `Pause ${who}` }).waitFor();
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    await page.getByRole('button', { name: `Cancel now ${who}` }).click();
    await page.getByRole('button', { name: 'Yes, cancel now' }).click();
    await page.getByRole('button', { name: 'Change plan' }).waitFor({ state: 'detached' });
    now = (await api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(now.status).toBe('cancelled');
    await main.locator('.status', { hasText: /^cancelled$/ }).waitFor();
    expect(await axe(page)).toEqual([]);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('credits a wallet (a refused credit explained next to the form), freezes, unfreezes and closes it', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(390, errors);
    const w = (await api.post('/v1/wallets', { customer_id: seed.customer.id, currency: 'EUR' })).body;
    await page.goto(`${app.url}/dashboard/wallets/${w.id}`);
    await settled(page, /^Wallet /);
    await page.getByLabel('Credit amount (smallest unit)').fill('0');
    await page.getByLabel('Description').fill('Goodwill');
    await page.getByRole('button', { name: 'Credit', exact: true }).click();
    await page.locator('form', { has: page.getByRole('button', { name: 'Credit', exact: true }) }).getByRole('alert').waitFor();
    await page.getByLabel('Credit amount (smallest unit)').fill('1250');
    await page.getByRole('button', { name: 'Credit', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Wallet €12.50' }).waitFor();
    await page.getByRole('table', { name: 'Ledger' }).getByText('Goodwill').waitFor();
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(1250);
    await page.getByRole('button', { name: 'Freeze wallet' }).click();
    await page.getByRole('button', { name: 'Unfreeze wallet' }).waitFor();
    expect((await api.get(`/v1/wallets/${w.id}`)).body.status).toBe('frozen');
    await page.getByRole('button', { name: 'Unfreeze wallet' }).click();
    await page.getByRole('button', { name: 'Freeze wallet' }).waitFor();
    expect(await page.getByRole('alert').allTextContents()).toEqual([]);
    await expect.poll(async () => (await api.get(`/v1/wallets/${w.id}`)).body.status).toBe('active');
    await page.getByRole('button', { name: 'Close wallet' }).click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    await page.getByRole('button', { name: 'Close wallet' }).click();
    expect((await api.get(`/v1/wallets/${w.id}`)).body.status).toBe('active');
    await page.getByRole('button', { name: 'Yes, close this wallet' }).click();
    await page.getByRole('button', { name: 'Close wallet' }).waitFor({ state: 'detached' });
    expect((await api.get(`/v1/wallets/${w.id}`)).body.status).toBe('closed');
    await page.locator('.status', { hasText: /^closed$/ }).waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('the story, through the UI only: plan → subscription with the saved card → clock → paid renewal → refund → webhook delivery', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors);
    const main = page.getByRole('main');
    const nav = page.getByRole('navigation', { name: 'Main' });
    // The customer, found by email.
    await nav.getByRole('link', { name: 'Customers' }).click();
    await settled(page, 'Customers');
    await page.getByLabel('Email or name').fill(seed.customer.email);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText(/^1 customer ·/).waitFor();
    await main.getByRole('link', { name: seed.customer.email }).click();
    await settled(page, 'Amina Nakato');
    const customerId = (await main.locator('dd code').first().textContent())!;
    // A plan.
    await nav.getByRole('link', { name: 'Plans' }).click();
    await settled(page, 'Plans');
    await page.getByLabel('Plan name').fill('Story plan');
    await page.getByLabel('Price (smallest unit)').fill('1000');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.getByText('Plan Story plan created.').waitFor();
    // The subscription, charged to the saved card: the customer and the plan found by name.
    await nav.getByRole('link', { name: 'Subscriptions' }).click();
    await settled(page, 'Subscriptions');
    await main.getByRole('link', { name: 'Subscribe a customer' }).click();
    await settled(page, 'Subscribe a customer');
    await page.getByLabel('Find a customer').fill(seed.customer.email);
    await page.getByRole('radio', { name: /^Amina Nakato/ }).check();
    await page.getByLabel('Find a plan').fill('story');
    await page.getByRole('radio', { name: /^Story plan/ }).check();
    await page.getByRole('button', { name: 'Create subscription' }).click();
    const subscribed = page.getByRole('status').filter({ hasText: 'is subscribed to Story plan: active' });
    await subscribed.waitFor();
    await subscribed.getByRole('link', { name: 'Open the subscription' }).click();
    await settled(page, 'Subscription to Story plan');
    // A month later: the renewal is invoiced and paid.
    await nav.getByRole('link', { name: 'Test clock' }).click();
    await settled(page, 'Test clock');
    await page.getByRole('button', { name: 'Advance 31 days' }).click();
    await page.getByText('The clock moved on; the work that became due has run.').waitFor({ timeout: 60_000 });
    await nav.getByRole('link', { name: 'Invoices' }).click();
    await settled(page, 'Invoices');
    await page.getByLabel('Customer ID').fill(customerId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const paid = page.getByRole('table', { name: 'Invoices' }).getByRole('row').filter({ hasText: '$10.00' }).filter({ hasText: /paid/ });
    await expect.poll(() => paid.count()).toBeGreaterThanOrEqual(2);
    // Refund the renewal's payment.
    await nav.getByRole('link', { name: 'Payments' }).click();
    await settled(page, 'Payments');
    await page.getByLabel('Customer ID').fill(customerId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('table', { name: 'Payments' }).getByRole('row').filter({ hasText: '$10.00' }).first().getByRole('link').first().click();
    await settled(page, 'Payment $10.00');
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    const outcome = page.getByText(/^Refund re_\w+ created/).or(page.getByRole('main').getByRole('alert'));
    await outcome.first().waitFor();
    expect(await outcome.first().textContent()).toMatch(/^Refund re_\w+ created/);
    // The webhook endpoint got the refund's event.
    await nav.getByRole('link', { name: 'Events' }).click();
    await settled(page, 'Events');
    await page.getByLabel('Event type').fill('refund.*');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('table', { name: 'Events' }).getByRole('link', { name: /^refund\./ }).first().click();
    await settled(page, /^refund\./);
    await expect
      .poll(async () => {
        await page.reload();
        await settled(page, /^refund\./);
        return page.getByRole('table', { name: 'Delivery attempts' }).locator('.status', { hasText: /^succeeded$/ }).count();
      })
      .toBeGreaterThanOrEqual(1);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('a page on another origin can do nothing with a signed-in browser: a form post and a no-cors fetch to /graphql change nothing', async () => {
    const errors: string[] = [];
    const { ctx, page } = await signedIn(1280, errors);
    const victim = `forged.${Date.now()}@example.com`;
    const mutation = `mutation { createCustomer(input: { email: "${victim}" }) { __typename } }`;
    // Another origin on the same host (same site, so even SameSite=Strict sends the cookie): only the
    // server's checks (JSON, the dashboard header, the Origin) stand between it and the API.
    const evil = await hooks.listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html lang="en"><title>Win a prize</title>
        <form id="f" method="POST" action="${app.url}/graphql" enctype="text/plain"><input name='{"query":"${mutation.replace(/"/g, '\\&quot;')}","x":"' value='"}'></form>
        <script>
          fetch('${app.url}/graphql', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ query: ${JSON.stringify(mutation)} }) })
            .finally(() => document.getElementById('f').submit());
        </script></html>`);
    });
    const attacker = await ctx.newPage();
    const answers: number[] = [];
    attacker.on('response', (r) => {
      if (r.url() === `${app.url}/graphql`) answers.push(r.status());
    });
    await attacker.goto(evil);
    await expect.poll(() => answers.length).toBe(2);
    expect(answers.every((s) => s === 403 || s === 415)).toBe(true);
    expect((await api.get(`/v1/customers?email=${encodeURIComponent(victim)}`)).body.data).toEqual([]);
    // The session itself is untouched: the dashboard still works.
    await page.goto(`${app.url}/dashboard/customers`);
    await settled(page, 'Customers');
    // (The attacker's page logs its refusals; the dashboard's pages log nothing.)
    expect(errors.filter((e) => e.startsWith(`${app.url}/dashboard`))).toEqual([]);
    await ctx.close();
  });

  it('a session that ends (signed out elsewhere) brings the next request back to sign-in', async () => {
    const errors: string[] = [];
    const ctx = await context(1280, errors, (text, url) => /status of 401/.test(text) && url.endsWith('/graphql'));
    const page = await ctx.newPage();
    await page.goto(`${app.url}/dashboard/payments`);
    await signIn(page);
    await settled(page, 'Payments');
    // Another tab signs out: the cookie is gone, this tab does not know yet.
    await page.evaluate(() => fetch('/dashboard/api/session', { method: 'DELETE' }));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Customers' }).click();
    await page.getByText('Your session has ended. Sign in again.').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });
});

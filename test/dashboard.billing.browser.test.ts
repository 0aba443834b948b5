// The dashboard's billing-depth pages and a merchant's first hour without curl, in headless
// Chromium (issue 24): coupons (list with Relay paging, create — a taken code refused on the page —,
// delete), tax rates (create, archive, the active filter), one-off invoices (items added and deleted
// on the customer's page, a draft made from them, finalized and sent, then credited), credit notes
// (list, filters, a PDF that opens), and, through the UI only, a new customer with a test card, a
// wallet credited, and a subscription made with the customer and plan pickers (keyboard only),
// whose success message links to it; a replay to a disabled endpoint says why nothing was sent.
// Every page at 1280 and 390 px: data, empty and error states, axe-core (no serious or critical
// violation), no console error, no sideways scrolling.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardUser } from '../src/domain/merchants/dashboard.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';
import { PASSWORD, dashboardBrowser } from './helpers/dashboard-browser.ts';

const available = requireChromium('dashboard.billing.browser.test');

describe.runIf(available)('the dashboard’s billing pages and the first hour, in a browser', () => {
  let app: TestApp;
  let api: Client;
  let fresh: Client;
  let browser: Browser;
  let email: string;
  let freshEmail: string;
  const stamp = Date.now().toString(36);
  const seed = {} as { customer: any; plan: any; open: any; paid: any; draft: any; note: any; refundNote: any; vat: any; endpoint: any; event: any; quietEvent: any };
  const b = dashboardBrowser(
    () => browser,
    () => app.url,
  );
  const { settled, checkPage } = b;

  beforeAll(async () => {
    app = await startApp();
    api = await app.merchant({ name: 'Lake Bakery' });
    fresh = await app.merchant({ name: 'Empty Shop' });
    email = (await createDashboardUser(app.services.db.prisma, { merchantId: api.creds.merchant_id, email: `owner.${stamp}@lake.example`, password: PASSWORD })).email;
    freshEmail = (await createDashboardUser(app.services.db.prisma, { merchantId: fresh.creds.merchant_id, email: `owner.${stamp}@empty.example`, password: PASSWORD })).email;
    const ok = async (p: Promise<{ status: number; body: any }>) => {
      const r = await p;
      expect([200, 201], JSON.stringify(r.body)).toContain(r.status);
      return r.body;
    };

    // A customer with a saved card, and plans.
    seed.customer = await ok(api.post('/v1/customers', { email: `grace.${stamp}@example.com`, name: 'Grace Hopper', currency: 'USD' }));
    const si = await ok(api.post('/v1/setup-intents', { customer_id: seed.customer.id }));
    await ok(api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {}));
    seed.plan = await ok(api.post('/v1/plans', { name: 'Bread club', amount: 1500, currency: 'USD', interval: 'month' }));
    await ok(api.post('/v1/plans', { name: 'Cake club', amount: 4000, currency: 'USD', interval: 'month' }));
    // 22 coupons: the list has a second page.
    for (let i = 0; i < 22; i++) await ok(api.post('/v1/coupons', { id: `SEED${String(i).padStart(2, '0')}`, name: `Seed ${i}`, percent_off: 5, duration: 'once' }));
    seed.vat = await ok(api.post('/v1/tax-rates', { display_name: 'VAT', percentage: 20, country: 'FR' }));
    // A sent invoice (open) with a credit note; a paid one with a refunded note; a draft.
    const invoice = async (collection: string, items: [string, number][]) => {
      for (const [description, amount] of items) await ok(api.post('/v1/invoice-items', { customer_id: seed.customer.id, amount, currency: 'USD', description }));
      const d = await ok(api.post('/v1/invoices', { customer_id: seed.customer.id, currency: 'USD', collection_method: collection }));
      return d;
    };
    seed.open = await ok(api.post(`/v1/invoices/${(await invoice('send_invoice', [['Catering', 12000]])).id}/finalize`));
    expect(seed.open.status).toBe('open');
    seed.note = await ok(api.post('/v1/credit-notes', { invoice_id: seed.open.id, amount: 2000, reason: 'order_change' }));
    seed.paid = await ok(api.post(`/v1/invoices/${(await invoice('charge_automatically', [['Wedding cake', 30000]])).id}/finalize`));
    expect(seed.paid.status).toBe('paid');
    seed.refundNote = await ok(api.post('/v1/credit-notes', { invoice_id: seed.paid.id, amount: 5000, refund_amount: 5000, reason: 'product_unsatisfactory' }));
    seed.draft = await invoice('charge_automatically', [['Bagels', 900], ['Croissants', 1100]]);
    // A webhook endpoint for customer events, disabled; an event it is subscribed to, and one no endpoint is.
    seed.endpoint = await ok(api.post('/v1/webhook-endpoints', { url: 'https://hooks.lake.example/billing', events: ['customer.created'] }));
    await ok(api.patch(`/v1/webhook-endpoints/${seed.endpoint.id}`, { status: 'disabled' }));
    await app.idle(api);
    seed.event = (await api.get('/v1/events?type=customer.created&limit=1')).body.data[0];
    seed.quietEvent = (await api.get('/v1/events?type=coupon.created&limit=1')).body.data[0];
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  for (const width of [1280, 390]) {
    it(`every new page at ${width} px: its data, axe-clean, no console error, no sideways scrolling`, async () => {
      const errors: string[] = [];
      const { ctx, page } = await b.signedIn(width, errors, email);
      const pages: [string, string | RegExp, string][] = [
        ['/coupons', 'Coupons', 'SEED21'],
        ['/tax-rates', 'Tax rates', 'VAT'],
        ['/credit-notes', 'Credit notes', seed.note.number],
        [`/invoices/${seed.open.id}`, `Invoice ${seed.open.number}`, seed.note.number],
        [`/invoices/${seed.paid.id}`, `Invoice ${seed.paid.number}`, 'Refunded'],
        [`/invoices/${seed.draft.id}`, `Invoice Draft ${seed.draft.id}`, 'Finalize and charge'],
        ['/subscriptions/new', 'Subscribe a customer', 'Bread club'],
        [`/subscriptions/new?customer=${seed.customer.id}`, 'Subscribe a customer', 'Grace Hopper'],
        [`/customers/${seed.customer.id}`, 'Grace Hopper', 'Add a test card'],
        ['/customers', 'Customers', 'Create a customer'],
        [`/events/${seed.event.id}`, 'customer.created', 'Replay to webhook endpoints'],
      ];
      for (const [path, heading, text] of pages) {
        await page.goto(`${app.url}/dashboard${path}`);
        await settled(page, heading);
        await page.getByRole('main').getByText(text).first().waitFor();
        await checkPage(page, path, width);
      }
      // The navigation has the new pages.
      const nav = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
      expect(nav).toEqual(expect.arrayContaining(['Credit notes', 'Coupons', 'Tax rates']));
      expect(errors).toEqual([]);
      await ctx.close();
    });
  }

  it('a new merchant sees each new list empty, and a list whose query fails says so (then loads after a reload)', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(390, errors, freshEmail);
    for (const [path, heading, empty] of [
      ['/coupons', 'Coupons', 'No coupons yet.'],
      ['/tax-rates', 'Tax rates', 'No tax rates yet.'],
      ['/credit-notes', 'Credit notes', 'No credit notes yet.'],
      ['/customers', 'Customers', 'No customers yet: create the first one below.'],
      ['/subscriptions/new', 'Subscribe a customer', 'No active plans yet: create one on the Plans page.'],
    ] as const) {
      await page.goto(`${app.url}/dashboard${path}`);
      await settled(page, heading);
      await page.getByText(empty).waitFor();
      await checkPage(page, `empty${path}`, 390);
    }
    let failing = true;
    await page.route('**/graphql', async (route) => {
      if (failing && /DashboardCoupons|DashboardPickPlans/.test(route.request().postData() ?? '')) {
        await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ errors: [{ message: 'The service is busy right now.' }] }) });
      } else await route.continue();
    });
    await page.goto(`${app.url}/dashboard/coupons`);
    await page.getByRole('alert').getByText('Could not load this: The service is busy right now.').waitFor();
    await page.goto(`${app.url}/dashboard/subscriptions/new`);
    await page.getByRole('alert').getByText('Could not load this: The service is busy right now.').waitFor();
    failing = false;
    await page.reload();
    await settled(page, 'Subscribe a customer');
    await page.getByText('No active plans yet: create one on the Plans page.').waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('coupons: pages with cursors, a taken code refused next to the form, a coupon created and deleted after asking', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(1280, errors, email, '/coupons');
    await settled(page, 'Coupons');
    const rows = page.getByRole('table', { name: 'Coupons' }).locator('tbody tr');
    await page.getByText('22 coupons · page 1').waitFor();
    expect(await rows.count()).toBe(20);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('22 coupons · page 2').waitFor();
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.allTextContents()).toEqual([expect.stringContaining('SEED01'), expect.stringContaining('SEED00')]);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByText('22 coupons · page 1').waitFor();

    // A code that is taken: the API's refusal, next to the form.
    await page.getByLabel('Coupon name').fill('Spring');
    await page.getByLabel('Code').fill('SEED03');
    await page.getByLabel('Percent off').fill('10');
    await page.getByRole('button', { name: 'Create coupon' }).click();
    const form = page.locator('form', { has: page.getByRole('button', { name: 'Create coupon' }) });
    await form.getByRole('alert').waitFor();
    expect(await form.getByRole('alert').textContent()).toMatch(/SEED03|already|exists|taken/i);
    // An amount off, repeating for 3 months, at most 50 redemptions, until a day.
    await page.getByLabel('Code').fill(`SPRING${stamp}`);
    await page.getByRole('radio', { name: 'A fixed amount' }).check();
    await page.getByLabel('Amount off (smallest unit)').fill('500');
    await page.getByLabel('Duration').selectOption('repeating');
    await page.getByLabel('Months').fill('3');
    await page.getByLabel('Maximum redemptions').fill('50');
    await page.getByLabel('Redeem by').fill('2099-06-30');
    await page.getByRole('button', { name: 'Create coupon' }).click();
    await page.getByText(`Coupon SPRING${stamp} created.`).waitFor();
    const made = (await api.get(`/v1/coupons/SPRING${stamp}`)).body;
    expect(made).toMatchObject({ name: 'Spring', amount_off: 500, currency: 'USD', duration: 'repeating', duration_in_months: 3, max_redemptions: 50, redeem_by: '2099-06-30T23:59:59.000Z', valid: true });
    const row = page.getByRole('row').filter({ hasText: `SPRING${stamp}` });
    await row.getByText('$5.00 off').waitFor();
    await row.getByText('3 months').waitFor();
    await page.getByText('23 coupons · page 1').waitFor();

    // Delete: asked first.
    await page.getByRole('button', { name: `Delete SPRING${stamp}` }).click();
    expect((await api.get(`/v1/coupons/SPRING${stamp}`)).status).toBe(200);
    await page.getByRole('button', { name: `Yes, delete SPRING${stamp}` }).click();
    await row.waitFor({ state: 'detached' });
    expect((await api.get(`/v1/coupons/SPRING${stamp}`)).status).toBe(404);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('tax rates: created (inclusive), archived after asking, filtered by status; an archived rate is not offered when subscribing', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(390, errors, email, '/tax-rates');
    await settled(page, 'Tax rates');
    await page.getByLabel('Tax name').fill('TVA réduite');
    await page.getByLabel('Percentage').fill('5.5');
    await page.getByLabel(/Included in prices/).check();
    await page.getByLabel('Country').fill('fr');
    await page.getByRole('button', { name: 'Create tax rate' }).click();
    await page.getByText('Tax rate TVA réduite 5.5% created.').waitFor();
    const rate = (await api.get('/v1/tax-rates')).body.data.find((t: any) => t.display_name === 'TVA réduite');
    expect(rate).toMatchObject({ percentage: 5.5, inclusive: true, country: 'FR', active: true });
    const label = 'TVA réduite 5.5% (included)';
    await page.getByRole('button', { name: `Archive ${label}` }).click();
    await page.getByRole('button', { name: `Yes, archive ${label}` }).click();
    await page.getByRole('button', { name: `Archive ${label}` }).waitFor({ state: 'detached' });
    expect((await api.get(`/v1/tax-rates/${rate.id}`)).body.active).toBe(false);
    await page.getByLabel('Show').selectOption('false');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('1 tax rate · page 1').waitFor();
    expect(page.url()).toContain('active=false');
    await page.getByRole('table', { name: 'Tax rates' }).getByText('TVA réduite').waitFor();

    await page.goto(`${app.url}/dashboard/subscriptions/new`);
    await settled(page, 'Subscribe a customer');
    await page.getByRole('checkbox', { name: 'VAT 20%' }).waitFor();
    expect(await page.getByRole('checkbox', { name: /TVA réduite/ }).count()).toBe(0);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('the first hour, through the UI only: a customer, a test card, a wallet credited, a subscription chosen with the pickers (keyboard only), linked from its success message', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(1280, errors, email);
    const main = page.getByRole('main');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Customers' }).click();
    await settled(page, 'Customers');
    const who = `ada.${stamp}@example.com`;
    await page.getByLabel('Customer email').fill(who);
    await page.getByLabel('Customer name').fill('Ada Lovelace');
    await page.getByLabel('Customer currency').fill('usd');
    await page.getByRole('button', { name: 'Create customer' }).click();
    await page.getByText(`Customer ${who} created.`).waitFor();
    // The list shows it at once (it was created after the page loaded).
    await page.getByRole('table', { name: 'Customers' }).getByRole('link', { name: who }).waitFor();
    await main.getByRole('link', { name: 'Open Ada Lovelace' }).click();
    await settled(page, 'Ada Lovelace');

    // A declined test card is refused and saves nothing; the good one is saved and is the default.
    await page.getByLabel('Card to save').selectOption('4000000000000002');
    await page.getByRole('button', { name: 'Add test card' }).click();
    await page.locator('form', { has: page.getByRole('button', { name: 'Add test card' }) }).getByRole('alert').waitFor();
    await page.getByLabel('Card to save').selectOption('4242424242424242');
    await page.getByRole('button', { name: 'Add test card' }).click();
    await page.getByText('Test card visa •••• 4242 saved.').waitFor();
    const methods = page.getByRole('table', { name: 'Payment methods' });
    await methods.getByText('visa •••• 4242').waitFor();
    await methods.getByRole('cell', { name: 'Default', exact: true }).waitFor();
    const customer = (await api.get(`/v1/customers?email=${encodeURIComponent(who)}`)).body.data[0];
    expect(customer.default_payment_method_id).toMatch(/^pm_/);

    // A wallet, then credited on its page.
    await page.getByLabel('Wallet currency').fill('USD');
    await page.getByRole('button', { name: 'Create wallet' }).click();
    await page.getByText('USD wallet created.').waitFor();
    await page.getByRole('table', { name: 'Wallets' }).getByText('$0.00').waitFor();
    await page.getByRole('button', { name: 'Create wallet' }).click();
    await page.locator('form', { has: page.getByRole('button', { name: 'Create wallet' }) }).getByRole('alert').waitFor(); // one per currency
    await page.getByRole('table', { name: 'Wallets' }).getByRole('link').click();
    await settled(page, /^Wallet /);
    await page.getByLabel('Credit amount (smallest unit)').fill('2500');
    await page.getByLabel('Description').fill('Welcome credit');
    await page.getByRole('button', { name: 'Credit', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Wallet $25.00' }).waitFor();
    await main.getByRole('link', { name: who }).click();
    await settled(page, 'Ada Lovelace');
    await page.getByRole('table', { name: 'Wallets' }).getByText('$25.00').waitFor();

    // Subscribe: the customer is chosen already; the plan is found by typing, with the keyboard only.
    await main.getByRole('link', { name: 'Subscribe this customer' }).click();
    await settled(page, 'Subscribe a customer');
    await page.getByRole('radio', { name: /Ada Lovelace/ }).waitFor();
    expect(await page.getByRole('radio', { name: /Ada Lovelace/ }).isChecked()).toBe(true);
    await page.getByLabel('Find a plan').focus();
    await page.keyboard.type('bread');
    const plans = page.getByRole('group', { name: 'Plan' }).getByRole('radio');
    await expect.poll(() => plans.count()).toBe(1);
    await page.getByRole('radio', { name: /Bread club/ }).waitFor();
    expect(await page.getByRole('radio', { name: /Cake club/ }).count()).toBe(0);
    await page.keyboard.press('Tab'); // to the only plan
    await page.keyboard.press('Space');
    expect(await page.getByRole('radio', { name: /Bread club/ }).isChecked()).toBe(true);
    await page.keyboard.press('Tab'); // quantity
    await page.keyboard.press('Control+A');
    await page.keyboard.type('2');
    await page.keyboard.press('Tab'); // the coupon picker's search box
    await page.keyboard.press('Tab'); // its choices: "No coupon", chosen
    await page.keyboard.press('Tab'); // the tax-rate picker's search box
    await page.keyboard.press('Tab'); // its choices: VAT 20 %
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab'); // the button
    await page.keyboard.press('Enter');
    const done = page.getByRole('status').filter({ hasText: 'is subscribed to Bread club' });
    await done.waitFor();
    expect(await done.textContent()).toMatch(new RegExp(`^${who.replace(/\./g, '\\.')} is subscribed to Bread club: active, first invoice INV-\\d+ paid\\.`));
    const sub = (await api.get(`/v1/subscriptions?customer_id=${customer.id}`)).body.data[0];
    expect(sub).toMatchObject({ plan_id: seed.plan.id, quantity: 2, status: 'active', default_tax_rates: [seed.vat.id] });
    // 2 × $15.00 + 20 % VAT.
    const first = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    expect(first).toMatchObject({ total: 3600, status: 'paid' });
    await done.getByRole('link', { name: 'Open the subscription' }).click();
    await settled(page, 'Subscription to Bread club');
    await main.getByText(sub.id).waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('one-off invoicing on the customer’s page: items added (one deleted after asking), a draft, finalized and sent, then credited; the note listed with a PDF that opens', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(390, errors, email);
    const c = (await api.post('/v1/customers', { email: `linus.${stamp}@example.com`, name: 'Linus Pauling', currency: 'EUR' })).body;
    await page.goto(`${app.url}/dashboard/customers/${c.id}`);
    await settled(page, 'Linus Pauling');
    await page.getByText('No items waiting.').waitFor();
    const add = async (description: string, amount: string, quantity: string) => {
      await page.getByLabel('Item description').fill(description);
      await page.getByLabel('Unit price (smallest unit)').fill(amount);
      await page.getByLabel('Quantity').fill(quantity);
      await page.getByRole('button', { name: 'Add item' }).click();
      await page.getByRole('table', { name: 'Waiting invoice items' }).getByText(description).waitFor();
    };
    await add('Workshop', '50000', '1');
    await add('Seats', '2500', '3');
    await add('Mistake', '100', '1');
    await page.getByText(/^Waiting invoice items \(3\)/).waitFor();
    await page.getByRole('button', { name: 'Delete Mistake' }).click();
    await page.getByRole('button', { name: 'Yes, delete Mistake' }).click();
    await page.getByRole('table', { name: 'Waiting invoice items' }).getByText('Mistake').waitFor({ state: 'detached' });
    expect((await api.get(`/v1/invoice-items?customer_id=${c.id}&pending=true`)).body.data.map((i: any) => i.description)).toEqual(['Seats', 'Workshop']);

    // A draft of both, to be sent: then its page, finalized and sent.
    await page.getByLabel('Invoice currency').fill('EUR');
    await page.getByRole('radio', { name: /^Send the invoice by e-mail/ }).check();
    await page.getByLabel('Days until due').fill('14');
    await page.getByRole('button', { name: 'Create draft invoice' }).click();
    await page.getByText('Draft invoice of 2 items, €575.00.').waitFor();
    await page.getByText('No items waiting.').waitFor();
    await page.getByRole('link', { name: 'Open the draft to finalize it' }).click();
    await settled(page, /^Invoice Draft in_/);
    await page.getByRole('table', { name: 'Invoice lines' }).getByText('Seats (3 × €25.00)').waitFor();
    await page.getByRole('button', { name: 'Finalize and send' }).click();
    await page.getByText(/^Invoice INV-\d+ finalized: open\.$/).waitFor();
    await settled(page, /^Invoice INV-\d+$/);
    const invoiceId = new URL(page.url()).pathname.split('/').pop()!;
    const inv = (await api.get(`/v1/invoices/${invoiceId}`)).body;
    expect(inv).toMatchObject({ status: 'open', collection_method: 'send_invoice', total: 57500, days_until_due: 14 });
    expect(await page.getByRole('link', { name: 'Hosted invoice page' }).getAttribute('href')).toBe(inv.hosted_invoice_url);
    await expect.poll(async () => (await api.get(`/v1/test-helpers/emails?to=${encodeURIComponent(c.email)}`)).body.data.length).toBeGreaterThanOrEqual(1);

    // Credited: more than is left is refused on the page; then €75.00 off.
    await page.getByLabel('Credit amount (smallest unit)').fill('999999');
    await page.getByRole('button', { name: 'Issue credit note' }).click();
    const form = page.locator('form', { has: page.getByRole('button', { name: 'Issue credit note' }) });
    await form.getByRole('alert').waitFor();
    await page.getByLabel('Credit amount (smallest unit)').fill('7500');
    await page.getByLabel('Credit reason').selectOption('order_change');
    await page.getByLabel('Memo').fill('One seat fewer');
    await page.getByRole('button', { name: 'Issue credit note' }).click();
    await page.getByText(/^Credit note CN-\d+ issued for €75\.00\.$/).waitFor();
    expect(await form.getByRole('alert').count()).toBe(0);
    const note = (await api.get(`/v1/credit-notes?invoice_id=${invoiceId}`)).body.data[0];
    expect(note).toMatchObject({ amount: 7500, type: 'pre_payment', reason: 'order_change', memo: 'One seat fewer' });
    const notes = page.getByRole('table', { name: 'Credit notes of this invoice' });
    await notes.getByText(note.number).waitFor();
    expect((await api.get(`/v1/invoices/${invoiceId}`)).body.amount_remaining).toBe(50000);

    // The credit notes page: filtered by the invoice, with the PDF.
    await page.goto(`${app.url}/dashboard/credit-notes?invoice=${invoiceId}`);
    await settled(page, 'Credit notes');
    await page.getByText('1 credit note · page 1').waitFor();
    const href = (await page.getByRole('link', { name: `PDF of ${note.number}` }).getAttribute('href'))!;
    const pdf = await fetch(href);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toMatch(/application\/pdf/);
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
    // Filtered by the customer of the seeded notes: theirs only.
    await page.getByLabel('Invoice ID').fill('');
    await page.getByLabel('Customer ID').fill(seed.customer.id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('2 credit notes · page 1').waitFor();
    await page.getByRole('table', { name: 'Credit notes' }).getByText(/^Refunded\s/).waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('a paid invoice credited from its page: refunded to its payment', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(1280, errors, email, `/invoices/${seed.draft.id}`);
    await settled(page, `Invoice Draft ${seed.draft.id}`);
    await page.getByRole('button', { name: 'Finalize and charge' }).click();
    await page.getByText(/^Invoice INV-\d+ finalized: paid\.$/).waitFor();
    await page.getByLabel('Credit amount (smallest unit)').fill('900');
    await page.getByLabel('Refund to the payment (smallest unit)').fill('900');
    await page.getByRole('button', { name: 'Issue credit note' }).click();
    await page.getByText(/^Credit note CN-\d+ issued for \$9\.00\.$/).waitFor();
    const note = (await api.get(`/v1/credit-notes?invoice_id=${seed.draft.id}`)).body.data[0];
    expect(note).toMatchObject({ type: 'post_payment', refund_amount: 900, credit_amount: 0, refund_id: expect.stringMatching(/^re_/) });
    await page.getByRole('table', { name: 'Credit notes of this invoice' }).getByText('Refunded $9.00').waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('a replay to a disabled endpoint says why nothing was sent; with no endpoint subscribed, it says that', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(1280, errors, email, `/events/${seed.event.id}`);
    await settled(page, 'customer.created');
    await page.getByRole('button', { name: 'Replay to webhook endpoints' }).click();
    const why = page.getByRole('status').filter({ hasText: 'Nothing was sent' });
    await why.waitFor();
    expect(await why.textContent()).toBe(`Nothing was sent to the disabled endpoint ${seed.endpoint.url} subscribed to customer.created: enable it on its page, then replay.`);
    expect((await api.get(`/v1/events/${seed.event.id}/delivery-attempts`)).body.data).toEqual([]);
    await why.getByRole('link', { name: seed.endpoint.url }).click();
    await settled(page, `Endpoint ${seed.endpoint.url}`);

    await page.goto(`${app.url}/dashboard/events/${seed.quietEvent.id}`);
    await settled(page, 'coupon.created');
    await page.getByRole('button', { name: 'Replay to webhook endpoints' }).click();
    await page.getByText('Nothing was sent: no webhook endpoint is subscribed to coupon.created.').waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });
});

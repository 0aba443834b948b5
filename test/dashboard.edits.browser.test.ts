// The dashboard's remaining pages and edits (issue 24), in headless Chromium, through the UI:
// a subscription's quantity, coupon and tax rates changed after a preview of what it bills today
// and next (what is charged is what was shown); a customer's credit balance, its ledger (paged)
// and adjustments (a refusal shown as the API says it); every list of a customer's page paged with
// cursors; lists filtered by an id typed or pasted (another kind, a mistyped id and one this
// account does not have each said plainly); the coupon and tax-rate pickers found by searching
// past the newest ones; a draft invoice's total never shown as a misleading $0.00. Every view at
// 1280 and 390 px: axe-core (no serious or critical violation), no console error, no sideways
// scrolling.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardUser } from '../src/domain/merchants/dashboard.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';
import { PASSWORD, dashboardBrowser } from './helpers/dashboard-browser.ts';

const available = requireChromium('dashboard.edits.browser.test');

const usd = (minor: number) => new Intl.NumberFormat('en', { style: 'currency', currency: 'USD' }).format(minor / 100);

describe.runIf(available)('the dashboard’s subscription edits, credit balance, paged customer lists, id filters and pickers, in a browser', () => {
  let app: TestApp;
  let api: Client;
  let browser: Browser;
  let email: string;
  const stamp = Date.now().toString(36);
  const seed = {} as {
    customer: any;
    plan: any;
    sub: any;
    subs: any[];
    welcome: any;
    euro: any;
    used: any;
    vat: any;
    paid: any;
    draft: any;
    other: any;
  };
  const b = dashboardBrowser(
    () => browser,
    () => app.url,
  );
  const { settled, checkPage } = b;
  const ok = async (p: Promise<{ status: number; body: any }>) => {
    const r = await p;
    expect([200, 201], JSON.stringify(r.body)).toContain(r.status);
    return r.body;
  };

  beforeAll(async () => {
    app = await startApp();
    api = await app.merchant({ name: 'Harbor Books' });
    email = (await createDashboardUser(app.services.db.prisma, { merchantId: api.creds.merchant_id, email: `owner.${stamp}@harbor.example`, password: PASSWORD })).email;
    const c = (seed.customer = await ok(api.post('/v1/customers', { email: `rosalind.${stamp}@example.com`, name: 'Rosalind Franklin', currency: 'USD' })));
    // 12 saved cards, 12 subscriptions (each with its paid invoice and payment), 11 wallets, 11
    // credit notes to the balance and an adjustment (12 ledger entries): every list has a second page.
    for (let i = 0; i < 12; i++) {
      const si = await ok(api.post('/v1/setup-intents', { customer_id: c.id }));
      await ok(api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {}));
    }
    seed.plan = await ok(api.post('/v1/plans', { name: 'Reading club', amount: 2000, currency: 'USD', interval: 'month' }));
    seed.subs = [];
    for (let i = 0; i < 11; i++) seed.subs.push(await ok(api.post('/v1/subscriptions', { customer_id: c.id, plan_id: seed.plan.id })));
    seed.sub = await ok(api.post('/v1/subscriptions', { customer_id: c.id, plan_id: seed.plan.id, quantity: 2 }));
    expect(seed.sub.status).toBe('active');
    for (const currency of ['USD', 'EUR', 'GBP', 'KES', 'UGX', 'NGN', 'ZAR', 'JPY', 'KWD', 'CAD', 'AUD']) await ok(api.post('/v1/wallets', { customer_id: c.id, currency }));
    seed.paid = await ok(api.get(`/v1/invoices/${seed.subs[0].latest_invoice_id}`));
    for (let i = 0; i < 11; i++) await ok(api.post('/v1/credit-notes', { invoice_id: seed.paid.id, amount: 10, credit_amount: 10, memo: `Note ${i}` }));
    await ok(api.post(`/v1/customers/${c.id}/balance-transactions`, { amount: 1000, currency: 'USD', description: 'Opening credit' }));
    // A draft with two lines (its total is not computed before it is finalized, or it is: both are shown honestly).
    for (const [description, amount] of [['Atlas', 4500], ['Maps', 1500]] as const) await ok(api.post('/v1/invoice-items', { customer_id: c.id, amount, currency: 'USD', description }));
    seed.draft = await ok(api.post('/v1/invoices', { customer_id: c.id, currency: 'USD' }));
    // Coupons: WELCOME10 first, then 10 newer (the picker shows the newest 8: WELCOME10 is found by searching).
    seed.welcome = await ok(api.post('/v1/coupons', { id: `WELCOME${stamp}`, name: 'Welcome ten', percent_off: 10, duration: 'forever' }));
    seed.euro = await ok(api.post('/v1/coupons', { id: `EURO${stamp}`, name: 'Euro five', amount_off: 500, currency: 'EUR', duration: 'once' }));
    seed.used = await ok(api.post('/v1/coupons', { id: `ONCE${stamp}`, name: 'Used up', percent_off: 50, duration: 'once', max_redemptions: 1 }));
    const spare = await ok(api.post('/v1/customers', { email: `spare.${stamp}@example.com` }));
    const si = await ok(api.post('/v1/setup-intents', { customer_id: spare.id }));
    await ok(api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {}));
    await ok(api.post('/v1/subscriptions', { customer_id: spare.id, plan_id: seed.plan.id, coupon: seed.used.id }));
    for (let i = 0; i < 10; i++) await ok(api.post('/v1/coupons', { id: `FILL${String(i).padStart(2, '0')}${stamp}`, name: `Filler ${i}`, percent_off: 1, duration: 'once' }));
    // Tax rates: VAT first, then 9 newer.
    seed.vat = await ok(api.post('/v1/tax-rates', { display_name: 'VAT', percentage: 20, country: 'GB' }));
    for (let i = 0; i < 9; i++) await ok(api.post('/v1/tax-rates', { display_name: `Levy ${i}`, percentage: 1 }));
    seed.other = await ok(api.post('/v1/customers', { email: `other.${stamp}@example.com`, name: 'Other Reader' }));
    const card = await ok(api.post('/v1/setup-intents', { customer_id: seed.other.id }));
    await ok(api.post(`/v1/test-helpers/setup-intents/${card.id}/complete`, {}));
    browser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  /** The status or alert a form says, once it says it. */
  const said = (page: Page, role: 'status' | 'alert', text: string | RegExp) => page.getByRole(role).filter({ hasText: text }).first();

  for (const width of [1280, 390]) {
    it(`every new view at ${width} px: its data, axe-clean, no console error, no sideways scrolling`, async () => {
      const errors: string[] = [];
      const { ctx, page } = await b.signedIn(width, errors, email);
      const c = seed.customer;
      const views: [string, string | RegExp, string][] = [
        [`/customers/${c.id}`, 'Rosalind Franklin', 'Adjust the credit balance'],
        [`/subscriptions/${seed.sub.id}`, 'Subscription to Reading club', 'Quantity, coupon and tax rates'],
        ['/subscriptions/new', 'Subscribe a customer', 'Find a tax rate'],
        [`/events?object=${c.id}`, 'Events', `Only the events about the customer ${c.id}`],
        [`/invoices?customer=${seed.paid.id}`, 'Invoices', 'is an invoice ID: this filter takes a customer ID'],
        [`/credit-notes?invoice=${seed.paid.id}`, 'Credit notes', `Filtered by invoice: ${seed.paid.number}`],
        [`/invoices/${seed.draft.id}`, `Invoice Draft ${seed.draft.id}`, 'Atlas'],
        ['/coupons?search=welcome', 'Coupons', seed.welcome.id],
        ['/tax-rates?search=vat', 'Tax rates', 'VAT'],
      ];
      for (const [path, heading, text] of views) {
        await page.goto(`${app.url}/dashboard${path}`);
        await settled(page, heading);
        await page.getByRole('main').getByText(text).first().waitFor();
        await checkPage(page, `edits${path}`, width);
      }
      // The subscription's preview open, and the balance form's refusal shown: still axe-clean.
      await page.goto(`${app.url}/dashboard/subscriptions/${seed.sub.id}`);
      await settled(page, 'Subscription to Reading club');
      await page.getByLabel('New quantity').fill('4');
      await page.getByRole('button', { name: 'Preview the change' }).click();
      await page.getByRole('button', { name: 'Confirm the change' }).waitFor();
      await checkPage(page, `edits-preview`, width);
      await page.goto(`${app.url}/dashboard/customers/${c.id}`);
      await settled(page, 'Rosalind Franklin');
      await page.getByLabel('Adjustment amount (smallest unit)').fill('0');
      await page.getByRole('button', { name: 'Credit the balance' }).click();
      await page.locator('form', { has: page.getByRole('button', { name: 'Credit the balance' }) }).getByRole('alert').waitFor();
      await checkPage(page, `edits-balance-refused`, width);
      expect(errors).toEqual([]);
      await ctx.close();
    });
  }

  it('a customer’s lists page with cursors: payment methods, subscriptions, wallets, credit balance, invoices, credit notes, payments', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(1280, errors, email, `/customers/${seed.customer.id}`);
    await settled(page, 'Rosalind Franklin');
    const lists: [string, string, number][] = [
      ['Payment methods', 'payment methods', 12],
      ['Subscriptions', 'subscriptions', 12],
      ['Wallets', 'wallets', 11],
      ['Credit balance ledger', 'balance entries', 12],
      ['Invoices', 'invoices', 13],
      ['Credit notes', 'credit notes', 11],
      ['Payments', 'payments', 12],
    ];
    for (const [caption, noun, total] of lists) {
      const table = page.getByRole('table', { name: caption, exact: true });
      const pager = page.getByRole('navigation', { name: `Pages of ${noun}` });
      await pager.getByText(`${total} ${noun} · page 1`).waitFor();
      expect(await table.locator('tbody tr').count(), caption).toBe(10);
      const firstPage = await table.locator('tbody tr').allTextContents();
      await pager.getByRole('button', { name: 'Next page' }).click();
      await pager.getByText(`${total} ${noun} · page 2`).waitFor();
      await expect.poll(() => table.locator('tbody tr').count(), { message: caption }).toBe(total - 10);
      const secondPage = await table.locator('tbody tr').allTextContents();
      // (The 12 test cards look alike: every other list's rows differ.)
      if (caption !== 'Payment methods') expect(secondPage.filter((r) => firstPage.includes(r)), caption).toEqual([]);
      expect(await pager.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
      await pager.getByRole('button', { name: 'Previous page' }).click();
      await pager.getByText(`${total} ${noun} · page 1`).waitFor();
      expect(await table.locator('tbody tr').allTextContents(), caption).toEqual(firstPage);
    }
    // Paging one list leaves the others where they are.
    await page.getByRole('navigation', { name: 'Pages of payments' }).getByRole('button', { name: 'Next page' }).click();
    await page.getByText('12 payments · page 2').waitFor();
    await page.getByText('13 invoices · page 1').waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('the credit balance: credited with a description, a debit past the balance refused (the API’s message), a debit made; the ledger and REST agree', async () => {
    const errors: string[] = [];
    const c = (await ok(api.post('/v1/customers', { email: `maria.${stamp}@example.com`, name: 'Maria Mitchell', currency: 'USD' })));
    const { ctx, page } = await b.signedIn(390, errors, email, `/customers/${c.id}`);
    await settled(page, 'Maria Mitchell');
    await page.getByText('No credit balance entries.').waitFor();
    const form = page.locator('form', { has: page.getByRole('heading', { name: 'Adjust the credit balance' }) });
    await page.getByLabel('Adjustment amount (smallest unit)').fill('2500');
    await page.getByLabel('Adjustment description').fill('Goodwill for the late parcel');
    await page.getByRole('button', { name: 'Credit the balance' }).click();
    await said(page, 'status', 'Credited $25.00: the USD credit balance is now $25.00.').waitFor();
    const ledger = page.getByRole('table', { name: 'Credit balance ledger' });
    await ledger.getByRole('row').filter({ hasText: 'Goodwill for the late parcel' }).filter({ hasText: '+$25.00' }).waitFor();
    // The page's details show the balance too.
    await page.locator('.details').getByText('$25.00').waitFor();

    // More than the balance: refused, said next to the form, nothing recorded.
    await page.getByRole('radio', { name: /^Debit/ }).check();
    await page.getByLabel('Adjustment amount (smallest unit)').fill('4000');
    await page.getByRole('button', { name: 'Debit the balance' }).click();
    const refusal = form.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/2500|balance/);
    // A sign is refused before asking (the direction says it).
    await page.getByLabel('Adjustment amount (smallest unit)').fill('-100');
    await page.getByRole('button', { name: 'Debit the balance' }).click();
    await said(page, 'alert', 'Give the amount without a sign').waitFor();
    // A debit within it.
    await page.getByLabel('Adjustment amount (smallest unit)').fill('1000');
    await page.getByLabel('Adjustment description').fill('Paid by bank transfer');
    await page.getByRole('button', { name: 'Debit the balance' }).click();
    await said(page, 'status', 'Debited $10.00: the USD credit balance is now $15.00.').waitFor();
    expect(await form.getByRole('alert').count()).toBe(0);
    await ledger.getByRole('row').filter({ hasText: 'Paid by bank transfer' }).filter({ hasText: '−$10.00' }).waitFor();
    const rest = (await api.get(`/v1/customers/${c.id}/balance-transactions`)).body.data;
    expect(rest.map((t: any) => [t.amount, t.ending_balance, t.description, t.type])).toEqual([
      [-1000, 1500, 'Paid by bank transfer', 'adjustment'],
      [2500, 2500, 'Goodwill for the late parcel', 'adjustment'],
    ]);
    expect((await api.get(`/v1/customers/${c.id}`)).body.credit_balance).toEqual({ USD: 1500 });
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('a subscription’s quantity, coupon and tax rates: each previewed (“charged today” or the next invoice), then confirmed and billed as shown', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(1280, errors, email, `/subscriptions/${seed.sub.id}`);
    await settled(page, 'Subscription to Reading club');
    const preview = page.getByRole('region', { name: /^(Invoiced now|The next invoice)$/ });
    const confirm = page.getByRole('button', { name: 'Confirm the change' });

    // Nothing changed: said so, nothing asked.
    await page.getByRole('button', { name: 'Preview the change' }).click();
    await said(page, 'status', 'Nothing to change').waitFor();

    // 2 → 3 seats, invoiced now: the amount charged today, then exactly that charged.
    await page.getByLabel('New quantity').fill('3');
    await page.getByRole('radio', { name: /^Invoiced now/ }).check();
    await page.getByRole('button', { name: 'Preview the change' }).click();
    await preview.waitFor();
    const headline = (await preview.locator('.preview-headline').textContent())!;
    const charged = /^You'll be charged (\$[\d,.]+) today\.$/.exec(headline);
    expect(charged, headline).not.toBeNull();
    expect(await preview.getByRole('table', { name: 'Lines of the previewed invoice' }).getByText(/^Remaining time on 3 × Reading club/).count()).toBe(1);
    await preview.getByText(/^Then \$60\.00 on /).waitFor(); // the renewal: 3 × $20.00
    // A change to the form drops the preview (it no longer says what would be billed).
    await page.getByLabel('New quantity').fill('4');
    await preview.waitFor({ state: 'detached' });
    await page.getByLabel('New quantity').fill('3');
    await page.getByRole('button', { name: 'Preview the change' }).click();
    await confirm.click();
    await said(page, 'status', /^Subscription updated: quantity 3\. Latest invoice: INV-\d+, \$[\d.]+, paid\.$/).waitFor();
    let sub = (await api.get(`/v1/subscriptions/${seed.sub.id}`)).body;
    expect(sub.quantity).toBe(3);
    const invoice = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    expect(invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'paid' });
    expect(usd(invoice.amount_paid)).toBe(charged![1]);
    await page.locator('.details').getByText('3', { exact: true }).waitFor();

    // A coupon found by searching past the newest 8 (a used-up one is listed, not choosable): nothing today, the next invoice 10 % off.
    await page.getByLabel('Find a coupon').fill('welcome');
    await page.getByRole('radio', { name: new RegExp(`^${seed.welcome.id}: Welcome ten`) }).check();
    await page.getByLabel('Find a coupon').fill('used');
    await page.getByRole('radio', { name: new RegExp(`^${seed.used.id}`) }).waitFor();
    expect(await page.getByRole('radio', { name: new RegExp(`^${seed.used.id}`) }).isDisabled()).toBe(true);
    expect(await page.getByRole('radio', { name: new RegExp(`^${seed.welcome.id}`) }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Preview the change' }).click();
    await preview.waitFor();
    expect(await preview.locator('.preview-headline').textContent()).toMatch(/^Nothing is charged today\. The next invoice, on .+, will be \$54\.00\.$/);
    await confirm.click();
    await said(page, 'status', `Subscription updated: coupon ${seed.welcome.id}.`).waitFor();
    sub = (await api.get(`/v1/subscriptions/${seed.sub.id}`)).body;
    expect(sub.discount?.coupon).toBe(seed.welcome.id);
    expect((await api.get(`/v1/invoices/upcoming?subscription_id=${seed.sub.id}`)).body.amount_due).toBe(5400);

    // An amount-off coupon in another currency: the preview's refusal, said next to the form.
    await page.getByLabel('Find a coupon').fill('euro');
    await page.getByRole('radio', { name: new RegExp(`^${seed.euro.id}`) }).check();
    await page.getByRole('button', { name: 'Preview the change' }).click();
    await said(page, 'alert', /^Could not preview this change: .*(EUR|currenc)/i).waitFor();
    expect(await confirm.count()).toBe(0);

    // The discount removed and VAT added (found by searching): the next invoice with 20 % on it.
    await page.getByRole('radio', { name: 'Remove the discount' }).check();
    await page.getByLabel('Find a tax rate').fill('vat');
    await page.getByRole('checkbox', { name: /^VAT 20%/ }).check();
    await page.getByRole('button', { name: 'Preview the change' }).click();
    await preview.waitFor();
    expect(await preview.locator('.preview-headline').textContent()).toMatch(/will be \$72\.00\.$/);
    await confirm.click();
    await said(page, 'status', 'Subscription updated: the discount removed, tax rates VAT 20%.').waitFor();
    sub = (await api.get(`/v1/subscriptions/${seed.sub.id}`)).body;
    expect(sub).toMatchObject({ discount: null, default_tax_rates: [seed.vat.id], quantity: 3 });
    await page.locator('.details').getByText('VAT 20%').waitFor();
    // The form starts again from the subscription as it is now: VAT chosen, no discount.
    expect(await page.getByRole('checkbox', { name: /^VAT 20%/ }).isChecked()).toBe(true);
    await page.getByRole('radio', { name: 'No coupon' }).waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('subscribing with the coupon and tax-rate pickers: both found by searching past the newest ones', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(390, errors, email, `/subscriptions/new?customer=${seed.other.id}`);
    await settled(page, 'Subscribe a customer');
    await page.getByRole('radio', { name: /^Other Reader/ }).waitFor();
    const coupons = page.getByRole('group', { name: 'Coupon' }).getByRole('radio');
    await expect.poll(() => coupons.count()).toBe(9); // "No coupon" and the newest 8
    expect(await page.getByRole('radio', { name: new RegExp(`^${seed.welcome.id}`) }).count()).toBe(0);
    expect(await page.getByRole('radio', { name: 'No coupon' }).isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: /^VAT/ }).count()).toBe(0);
    await page.getByLabel('Find a plan').fill('reading');
    await page.getByRole('radio', { name: /^Reading club/ }).check();
    await page.getByLabel('Find a coupon').fill(`welcome${stamp}`);
    await page.getByRole('radio', { name: new RegExp(`^${seed.welcome.id}`) }).check();
    await page.getByLabel('Find a tax rate').fill('GB');
    await page.getByRole('checkbox', { name: /^VAT 20%/ }).check();
    await page.getByLabel('Find a tax rate').fill('levy 3');
    await page.getByRole('checkbox', { name: /^Levy 3/ }).check();
    // The chosen ones stay listed whatever is searched next.
    await page.getByLabel('Find a tax rate').fill('nothing like it');
    await page.getByText('No active tax rate matches “nothing like it”.').waitFor();
    expect(await page.getByRole('checkbox', { name: /^VAT 20%/ }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await said(page, 'status', `${seed.other.email} is subscribed to Reading club`).waitFor();
    const sub = (await api.get(`/v1/subscriptions?customer_id=${seed.other.id}`)).body.data[0];
    const levy3 = (await api.get('/v1/tax-rates?search=levy%203')).body.data[0];
    expect(sub).toMatchObject({ discount: { coupon: seed.welcome.id }, default_tax_rates: [seed.vat.id, levy3.id] });
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('lists filtered by an id typed or pasted: another kind, a mistyped id and one this account lacks are said plainly; a right one names its record', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(1280, errors, email, '/invoices');
    await settled(page, 'Invoices');
    const c = seed.customer;
    // A payment's id in the invoices' customer filter.
    const payment = (await api.get(`/v1/payments?customer_id=${c.id}&limit=1`)).body.data[0];
    await page.getByLabel('Customer ID').fill(` ${payment.id} `);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await said(page, 'alert', `${payment.id} is a payment ID: this filter takes a customer ID (cus_…).`).waitFor();
    expect(await page.getByRole('table', { name: 'Invoices' }).count()).toBe(0);
    // Not an id at all.
    await page.getByLabel('Customer ID').fill('rosalind');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await said(page, 'alert', '“rosalind” is not a customer ID: customer IDs start with cus_').waitFor();
    // The right kind, but not this account's (another merchant's customer).
    const stranger = await ok((await app.merchant()).post('/v1/customers', { email: `stranger.${stamp}@example.com` }));
    await page.getByLabel('Customer ID').fill(stranger.id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await said(page, 'alert', `No customer ${stranger.id} in this account (a deleted customer’s records are still listed).`).waitFor();
    await page.getByText('No invoices match.').waitFor();
    // A deleted customer is not found either, but its invoices are still listed, under the alert.
    const gone = await ok(api.post('/v1/customers', { email: `gone.${stamp}@example.com` }));
    await ok(api.post('/v1/invoice-items', { customer_id: gone.id, amount: 700, currency: 'USD', description: 'Last order' }));
    const goneDraft = await ok(api.post('/v1/invoices', { customer_id: gone.id, currency: 'USD' }));
    expect((await api.request('DELETE', `/v1/customers/${gone.id}`)).status).toBe(200);
    await page.getByLabel('Customer ID').fill(gone.id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await said(page, 'alert', `No customer ${gone.id} in this account`).waitFor();
    await page.getByRole('table', { name: 'Invoices' }).getByRole('link', { name: `Draft ${goneDraft.id}` }).waitFor();
    // The right one: named, and the list is theirs.
    await page.getByLabel('Customer ID').fill(c.id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await said(page, 'status', `Filtered by customer: Rosalind Franklin (${c.email})`).waitFor();
    const theirs = (await api.get(`/v1/invoices?customer_id=${c.id}&limit=100`)).body.data.length;
    await page.getByText(`${theirs} invoices · page 1`).waitFor();

    // Payments, subscriptions (by plan), wallets and credit notes take the same checks.
    await page.goto(`${app.url}/dashboard/payments?customer=${seed.plan.id}`);
    await settled(page, 'Payments');
    await said(page, 'alert', `${seed.plan.id} is a plan ID: this filter takes a customer ID (cus_…).`).waitFor();
    await page.goto(`${app.url}/dashboard/subscriptions?plan=${c.id}`);
    await settled(page, 'Subscriptions');
    await said(page, 'alert', `${c.id} is a customer ID: this filter takes a plan ID (plan_…).`).waitFor();
    await page.goto(`${app.url}/dashboard/subscriptions?plan=${seed.plan.id}&customer=${c.id}`);
    await settled(page, 'Subscriptions');
    await said(page, 'status', 'Filtered by plan: Reading club · $20.00').waitFor();
    await page.getByText('12 subscriptions · page 1').waitFor();
    await page.goto(`${app.url}/dashboard/wallets?customer=cus_${'x'.repeat(22)}`);
    await settled(page, 'Wallets');
    await said(page, 'alert', `No customer cus_${'x'.repeat(22)} in this account`).waitFor();
    await page.getByText('No wallets match.').waitFor();
    await page.goto(`${app.url}/dashboard/credit-notes?invoice=${encodeURIComponent(seed.paid.number)}`);
    await settled(page, 'Credit notes');
    await said(page, 'alert', `“${seed.paid.number}” is not an invoice ID: invoice IDs start with in_`).waitFor();

    // Events about one record: from the customer's page, then an id typed on the events page.
    await page.goto(`${app.url}/dashboard/customers/${seed.other.id}`);
    await settled(page, 'Other Reader');
    await page.getByRole('link', { name: 'Events about this customer' }).click();
    await settled(page, 'Events');
    await said(page, 'status', `Only the events about the customer ${seed.other.id}`).waitFor();
    const types = await page.getByRole('table', { name: 'Events' }).locator('tbody tr td:first-child').allTextContents();
    expect(types).toContain('customer.created');
    expect(types.every((t) => t.startsWith('customer.'))).toBe(true);
    const objects = await page.getByRole('table', { name: 'Events' }).locator('tbody tr td:nth-child(2)').allTextContents();
    expect(new Set(objects)).toEqual(new Set([seed.other.id]));
    await page.getByLabel('Object ID').fill(seed.sub.id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await said(page, 'status', `Only the events about the subscription ${seed.sub.id}`).waitFor();
    await page.getByRole('table', { name: 'Events' }).getByRole('link', { name: 'subscription.updated' }).first().waitFor();
    await page.getByLabel('Object ID').fill('not an id');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await said(page, 'alert', '“not an id” is not an ID').waitFor();
    await page.getByLabel('Object ID').fill(`cus_${'z'.repeat(22)}`);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText(`No events about the customer cus_${'z'.repeat(22)}.`).waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('a draft invoice: its total as the API computed it, or “—” — never $0.00 for lines that add up to more', async () => {
    const errors: string[] = [];
    const { ctx, page } = await b.signedIn(390, errors, email, `/invoices?customer=${seed.customer.id}&status=draft`);
    await settled(page, 'Invoices');
    const draft = (await api.get(`/v1/invoices/${seed.draft.id}`)).body;
    const lines = draft.lines.reduce((n: number, l: any) => n + l.amount, 0);
    expect(lines).toBe(6000);
    const computed = draft.subtotal === lines && draft.total !== null;
    const shown = computed ? usd(draft.total) : '—';
    const row = page.getByRole('table', { name: 'Invoices' }).getByRole('row').filter({ hasText: seed.draft.id });
    await row.waitFor();
    expect(await row.getByRole('cell').nth(1).textContent()).toContain(shown);
    expect(await row.textContent()).not.toContain('$0.00');
    await page.goto(`${app.url}/dashboard/customers/${seed.customer.id}`);
    await settled(page, 'Rosalind Franklin');
    const onCustomer = page.getByRole('table', { name: 'Invoices', exact: true }).getByRole('row').filter({ hasText: seed.draft.id });
    expect(await onCustomer.textContent()).not.toContain('$0.00');
    await onCustomer.getByRole('link').click();
    await settled(page, `Invoice Draft ${seed.draft.id}`);
    if (computed) await page.locator('.details').getByText(usd(draft.total)).first().waitFor();
    else await page.getByText('The lines add up to $60.00.').waitFor();
    expect(errors).toEqual([]);
    await ctx.close();
  });
});

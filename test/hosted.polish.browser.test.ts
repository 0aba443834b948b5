// The hosted pages' polish in headless Chromium, as the newcomer of issue 23 used them: editing the
// card number in the middle keeps the caret; Amex grouped 4-6-5 and Discover (Diners, JCB,
// UnionPay) detected; every wrong field shown at once next to its field, month 13 refused before
// anything is sent (and by the server without JavaScript); French decline reasons on French pages;
// an invoice's checkout opened after its automatic charge failed shows a neutral notice; live mode
// shows no test card and no configuration talk; the portal asks before removing the only method a
// subscription needs and before cancelling (with and without JavaScript).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';

const available = requireChromium('hosted.polish.browser.test');

describe.runIf(available)('hosted pages polish in a browser', () => {
  let app: TestApp;
  let api: Client;
  let live: Client;
  let browser: Browser;
  let noJs: BrowserContext;
  const errors: string[] = [];

  beforeAll(async () => {
    app = await startApp();
    api = await app.merchant({ name: 'Lomé Tea' });
    live = await app.merchant({ name: 'Lomé Tea Live', mode: 'live' });
    browser = await launchBrowser();
    noJs = await browser.newContext({ javaScriptEnabled: false });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    expect(errors).toEqual([]);
  });

  async function newPage(context?: BrowserContext): Promise<Page> {
    const page = context ? await context.newPage() : await browser.newPage();
    page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
    return page;
  }

  async function payment(client = api, extra: Record<string, unknown> = {}) {
    const r = await client.post('/v1/payments', { amount: 1250, currency: 'EUR', customer: { email: `t${Date.now()}@example.com` }, redirect_url: 'https://tea.example/done', ...extra });
    expect(r.status).toBe(201);
    return r.body;
  }

  const caret = (page: Page) => page.getByLabel('Card number').evaluate((el: HTMLInputElement) => el.selectionStart);

  it('editing the card number in the middle keeps the caret where it was', async () => {
    const page = await newPage();
    await page.goto((await payment()).checkout_url);
    const num = page.getByLabel('Card number');
    await num.pressSequentially('424242424242');
    expect(await num.inputValue()).toBe('4242 4242 4242');
    // A digit typed right after a group's space: the caret stays after it, not at the end.
    await num.evaluate((el: HTMLInputElement) => el.setSelectionRange(5, 5));
    await page.keyboard.type('1');
    expect(await num.inputValue()).toBe('4242 1424 2424 2');
    expect(await caret(page)).toBe(6);
    await page.keyboard.press('Backspace');
    expect(await num.inputValue()).toBe('4242 4242 4242');
    expect(await caret(page)).toBe(4); // after the same four digits (the next Backspace takes the 4th)
    // Inside a group.
    await num.evaluate((el: HTMLInputElement) => el.setSelectionRange(2, 2));
    await page.keyboard.type('9');
    expect(await num.inputValue()).toBe('4294 2424 2424 2');
    expect(await caret(page)).toBe(3);
    // Deleting a digit in the middle of the second group.
    await num.evaluate((el: HTMLInputElement) => el.setSelectionRange(7, 7));
    await page.keyboard.press('Backspace');
    expect(await num.inputValue()).toBe('4294 2242 4242');
    expect(await caret(page)).toBe(6);
    // Typing at the end still runs on.
    await num.evaluate((el: HTMLInputElement) => el.setSelectionRange(el.value.length, el.value.length));
    await page.keyboard.type('12');
    expect(await num.inputValue()).toBe('4294 2242 4242 12');
    await page.close();
  });

  it('groups Amex 4-6-5 and detects Discover, Diners, JCB and UnionPay', async () => {
    const page = await newPage();
    await page.goto((await payment()).checkout_url);
    const num = page.getByLabel('Card number');
    for (const [digits, shown, brand] of [
      ['3782822463100059', '3782 822463 10005', 'AMEX'], // a 16th digit is not taken: Amex has 15
      ['6011111111111117', '6011 1111 1111 1117', 'DISCOVER'],
      ['6500000000000002', '6500 0000 0000 0002', 'DISCOVER'],
      ['6445644564456445', '6445 6445 6445 6445', 'DISCOVER'],
      ['30569309025904', '3056 930902 5904', 'DINERS'],
      ['3530111333300000', '3530 1113 3330 0000', 'JCB'],
      ['6200000000000005', '6200 0000 0000 0005', 'UNIONPAY'],
      ['5555555555554444', '5555 5555 5555 4444', 'MASTERCARD'],
    ] as const) {
      await num.fill('');
      await num.pressSequentially(digits);
      expect(await num.inputValue(), digits).toBe(shown);
      expect(await page.locator('#card_brand').textContent(), digits).toBe(brand);
    }
    await page.close();
  });

  it('shows every wrong field at once next to it, refuses month 13 before sending; the server does the same without JavaScript', async () => {
    const p = await payment();
    const page = await newPage();
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push(r.url());
    });
    await page.goto(p.checkout_url);
    await page.getByLabel('Card number').pressSequentially('4242424242424241');
    await page.getByLabel('Expiry (MM/YY)').pressSequentially('1330');
    expect(await page.getByLabel('Expiry (MM/YY)').inputValue()).toBe('13/30');
    await page.getByRole('button', { name: /^Pay/ }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('Check the following:').waitFor();
    expect(await alert.getByRole('link').allTextContents()).toEqual(['Your card number is incorrect.', 'The expiry month must be between 01 and 12.', 'Enter the 3 or 4 digit security code.']);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('alert');
    for (const [label, message] of [
      ['Card number', 'Your card number is incorrect.'],
      ['Expiry (MM/YY)', 'The expiry month must be between 01 and 12.'],
      ['Security code (CVC)', 'Enter the 3 or 4 digit security code.'],
    ] as const) {
      const input = page.getByLabel(label);
      expect(await input.getAttribute('aria-invalid'), label).toBe('true');
      // Its accessible description is its message, read next to the field.
      const id = await input.getAttribute('id');
      expect(await input.getAttribute('aria-describedby'), label).toContain(`${id}-error`);
      expect(await page.locator(`#${id}-error`).textContent()).toBe(message);
      expect(await page.locator(`#${id}-error`).isVisible()).toBe(true);
    }
    expect(posts).toEqual([]);
    expect((await api.get(`/v1/payments/${p.id}`)).body.status).toBe('created');
    await page.screenshot({ path: '/tmp/hosted-field-errors.png', fullPage: true });

    // Corrected (a past month is refused too), then sent: a decline, with no field marked any more.
    await page.getByLabel('Card number').fill('4000 0000 0000 0002');
    await page.getByLabel('Expiry (MM/YY)').fill('01/20');
    await page.getByLabel('Security code (CVC)').fill('123');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.locator('#card_expiry-error').getByText('Your card has expired.').waitFor();
    expect(await page.getByLabel('Card number').getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByLabel('Security code (CVC)').getAttribute('aria-invalid')).toBeNull();
    expect(posts).toEqual([]);
    await page.getByLabel('Expiry (MM/YY)').fill('12/34');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByRole('alert').getByText('The card was declined. Try another card or method below.').waitFor();
    expect(posts).toHaveLength(1);
    expect(await page.locator('[aria-invalid=true]').count()).toBe(0);
    await page.close();

    // Without JavaScript the server answers the same: every field at once, each next to it.
    const plain = await newPage(noJs);
    await plain.goto((await payment()).checkout_url);
    await plain.getByLabel('Card number').fill('4242 4242 4242 4241');
    await plain.getByLabel('Expiry (MM/YY)').fill('13/30');
    await plain.getByRole('button', { name: /^Pay/ }).click();
    await plain.locator('#card_expiry-error').getByText('The expiry month must be between 01 and 12.').waitFor();
    expect(await plain.locator('#card_number-error').textContent()).toBe('Your card number is incorrect.');
    expect(await plain.locator('#card_cvc-error').textContent()).toBe('Enter the 3 or 4 digit security code.');
    expect(await plain.locator('[aria-invalid=true]').count()).toBe(3);
    expect(await plain.getByRole('alert').getByRole('link').count()).toBe(3);
    await plain.close();
  });

  it('a French page gives the decline reason in French', async () => {
    const page = await newPage();
    await page.goto((await payment(api, { checkout: { locale: 'fr' } })).checkout_url);
    await page.getByLabel('Numéro de carte').pressSequentially('4000000000009995');
    await page.getByLabel('Expiration (MM/AA)').pressSequentially('1234');
    await page.getByLabel('Code de sécurité (CVC)').fill('123');
    await page.getByRole('button', { name: /^Payer/ }).click();
    await page.getByRole('alert').getByText('Le solde de la carte est insuffisant. Essayez une autre carte ou un autre moyen ci-dessous.').waitFor();
    expect(await page.getByRole('alert').getAttribute('data-decline-code')).toBe('insufficient_funds');
    expect(await page.content()).not.toContain('insufficient funds');
    await page.close();
  });

  it('an invoice’s checkout opened for the first time after its automatic charge failed: a neutral notice, not a red error', async () => {
    const c = (await api.post('/v1/customers', { email: `inv${Date.now()}@example.com` })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4000000000009995' });
    const plan = (await api.post('/v1/plans', { name: 'Tea club', amount: 900, currency: 'EUR', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    const invoice = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    expect(invoice.last_payment_error.code).toBe('insufficient_funds');
    const pay = (await api.get(`/v1/payments/${invoice.payment_id}`)).body;

    const page = await newPage();
    await page.goto(pay.checkout_url);
    const notice = page.getByRole('status');
    await notice.getByText('Your last payment attempt failed: the card has insufficient funds. Enter a card or another method below to pay.').waitFor();
    expect(await page.getByRole('alert').textContent()).toBe('');
    expect(await page.locator('.error').count()).toBe(0);
    // Not in the error's red, and the focus is not pulled to it as after a refused submission.
    const colours = await notice.evaluate((el) => ({ text: getComputedStyle(el).color, bad: getComputedStyle(document.documentElement).getPropertyValue('--bad') }));
    expect(colours.text).not.toBe('rgb(180, 35, 24)'); // --bad: #b42318
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('BODY');
    await page.screenshot({ path: '/tmp/hosted-invoice-notice.png', fullPage: true });

    await page.getByLabel('Card number').pressSequentially('4242424242424242');
    await page.getByLabel('Expiry (MM/YY)').pressSequentially('1234');
    await page.getByLabel('Security code (CVC)').fill('123');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByRole('heading', { name: 'Payment received' }).waitFor();
    expect((await api.get(`/v1/invoices/${invoice.id}`)).body.status).toBe('paid');
    await page.close();
  });

  it('live mode: no test card placeholder or note, and a customer-facing message when payments cannot be taken', async () => {
    const p = await payment(live);
    const page = await newPage();
    await page.goto(p.checkout_url);
    expect(await page.getByLabel('Card number').getAttribute('placeholder')).toBe('1234 1234 1234 1234');
    expect(await page.content()).not.toContain('4242');
    expect(await page.getByRole('note').count()).toBe(0);
    await page.getByLabel('Card number').pressSequentially('4242424242424242');
    await page.getByLabel('Expiry (MM/YY)').pressSequentially('1234');
    await page.getByLabel('Security code (CVC)').fill('123');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByRole('alert').getByText('The payment service is unavailable for now. Nothing was charged. Try again in a few minutes.').waitFor();
    expect(await page.content()).not.toMatch(/configured|live payment processor/i);
    await page.screenshot({ path: '/tmp/hosted-live.png', fullPage: true });
    await page.close();
  });

  async function subscriber() {
    const c = (await api.post('/v1/customers', { email: `sub${Date.now()}@example.com`, name: 'Kofi' })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {});
    const plan = (await api.post('/v1/plans', { name: 'Tea club', amount: 1500, currency: 'USD', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    expect(sub.status).toBe('active');
    const [pm] = (await api.get(`/v1/payment-methods?customer_id=${c.id}`)).body.data;
    const session = (await api.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://tea.example/account' })).body;
    return { c, sub, pm, session };
  }

  for (const js of [true, false]) {
    it(`the portal asks before removing the only method a subscription needs, and before cancelling (${js ? 'with' : 'without'} JavaScript)`, async () => {
      const { sub, pm, session } = await subscriber();
      const page = await newPage(js ? undefined : noJs);
      await page.goto(session.url);
      const method = page.locator(`li[data-payment-method="${pm.id}"]`);
      await method.getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('heading', { name: 'Remove your only payment method?' }).waitFor();
      expect(await page.getByText(/is the only payment method on your account, and Tea club still needs one/).count()).toBe(1);
      // "Keep" goes back and changes nothing.
      await page.getByRole('link', { name: 'Keep this payment method' }).click();
      await page.locator(`li[data-payment-method="${pm.id}"]`).waitFor();
      expect((await api.get(`/v1/payment-methods/${pm.id}`)).body.customer_id).not.toBeNull();

      const row = page.locator(`li[data-subscription="${sub.id}"]`);
      await row.getByRole('button', { name: 'Cancel at period end' }).click();
      await page.getByRole('heading', { name: 'Cancel your subscription?' }).waitFor();
      const end = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(sub.current_period_end));
      expect(await page.getByText(`Your subscription to Tea club will end on ${end}, at the end of the current period.`, { exact: false }).count()).toBe(1);
      expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.cancel_at_period_end).toBe(false);
      await page.getByRole('button', { name: 'Cancel my subscription' }).click();
      await page.getByRole('status').getByText('Your subscription will end at the end of the current period.').waitFor();
      expect((await api.get(`/v1/subscriptions/${sub.id}`)).body).toMatchObject({ status: 'active', cancel_at_period_end: true });

      // Cancelling at the period's end: nothing more will be charged, so the last method goes without a question.
      await page.locator(`li[data-payment-method="${pm.id}"]`).getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('status').getByText('The payment method was removed.').waitFor();
      expect((await api.get(`/v1/payment-methods/${pm.id}`)).body.customer_id).toBeNull();
      await page.close();
    });
  }

  it('removing the only method, confirmed, removes it', async () => {
    const { pm, session } = await subscriber();
    const page = await newPage();
    await page.goto(session.url);
    await page.locator(`li[data-payment-method="${pm.id}"]`).getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('button', { name: 'Remove it anyway' }).click();
    await page.getByRole('status').getByText('The payment method was removed.').waitFor();
    expect((await api.get(`/v1/payment-methods/${pm.id}`)).body.customer_id).toBeNull();
    await page.close();
  });
});

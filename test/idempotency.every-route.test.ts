// Real clients send an Idempotency-Key with every POST (Stripe's libraries add a UUID v4 to each
// one, and retry with it on a network error). This client does the same on every mutating route of
// the route table, through a whole billing flow, and sends each request a second time with its key:
// the second answer must be the first one replayed (same status, same body, Idempotent-Replayed),
// with nothing done twice — on PostgreSQL and on the embedded database, REST and GraphQL.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../src/rest/index.ts';
import { startApp, type Client, type Res, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
});
afterAll(() => app?.close());

const covered = new Set<string>();

/** Sends the request with a fresh UUID key, then again with the same key; checks the replay. */
async function twice(method: 'POST' | 'PATCH' | 'DELETE', route: string, path: string, body?: unknown, expected = [200, 201]): Promise<Res> {
  covered.add(`${method} ${route}`);
  const key = { 'Idempotency-Key': randomUUID() };
  const first = await api.request(method, path, body, key);
  expect(expected, `${method} ${path}: ${JSON.stringify(first.body)}`).toContain(first.status);
  expect(first.headers.get('idempotent-replayed'), `${method} ${path}`).toBeNull();
  const again = await api.request(method, path, body, key);
  expect(again.status, `${method} ${path} replay`).toBe(first.status);
  expect(again.headers.get('idempotent-replayed'), `${method} ${path} replay`).toBe('true');
  expect(again.body, `${method} ${path} replay`).toEqual(first.body);
  // byte for byte, key order included (a client may hash or sign what it received)
  expect(again.text, `${method} ${path} replay text`).toBe(first.text);
  return first;
}

const count = (model: 'payment' | 'refund' | 'invoice' | 'subscription' | 'walletTransaction' | 'event', where: object = {}) =>
  (app.services.db.prisma[model] as any).count({ where: { merchantId: api.creds.merchant_id, ...where } }) as Promise<number>;

describe('an Idempotency-Key on every mutating REST route (a UUID per request, each sent twice)', () => {
  it('replays every answer and does every piece of work once', async () => {
    const customer = (await twice('POST', '/v1/customers', '/v1/customers', { email: 'every@example.com', name: 'Every Route' })).body;
    await twice('PATCH', '/v1/customers/{id}', `/v1/customers/${customer.id}`, { name: 'Every Route Ltd' });
    const credit = await twice('POST', '/v1/customers/{id}/balance-transactions', `/v1/customers/${customer.id}/balance-transactions`, { amount: 100, currency: 'USD' });
    expect(credit.body).toMatchObject({ amount: 100, ending_balance: 100 }); // once, not twice

    // Saved method, off-session payment, refund.
    const si = (await twice('POST', '/v1/setup-intents', '/v1/setup-intents', { customer_id: customer.id, return_url: 'https://shop.example/back' })).body;
    const done = (await twice('POST', '/v1/test-helpers/setup-intents/{id}/complete', `/v1/test-helpers/setup-intents/${si.id}/complete`, {})).body;
    const pm = done.payment_method_id;
    const charged = (await twice('POST', '/v1/payments', '/v1/payments', { amount: 2500, currency: 'USD', payment_method_id: pm })).body;
    expect(charged.status).toBe('succeeded');
    expect(await count('payment', { amount: 2500n })).toBe(1);
    const refund = (await twice('POST', '/v1/refunds', '/v1/refunds', { payment_id: charged.id, amount: 700 })).body;
    expect(refund.status).toBe('succeeded');
    expect(await count('refund', { paymentId: charged.id })).toBe(1);

    // A checkout payment completed by the test helper.
    const checkout = (await twice('POST', '/v1/payments', '/v1/payments', { amount: 1300, currency: 'EUR', customer_id: customer.id, redirect_url: 'https://shop.example/thanks' })).body;
    expect((await twice('POST', '/v1/test-helpers/payments/{id}/complete', `/v1/test-helpers/payments/${checkout.id}/complete`, { outcome: 'succeeded' })).body.status).toBe('succeeded');

    // Wallet: create, credit, debit, freeze, unfreeze, top-up, close.
    const w = (await twice('POST', '/v1/wallets', '/v1/wallets', { customer_id: customer.id, currency: 'USD' })).body;
    await twice('POST', '/v1/wallets/{id}/credit', `/v1/wallets/${w.id}/credit`, { amount: 5000, reference: `grant-${randomUUID()}`, description: 'Welcome credit' });
    await twice('POST', '/v1/wallets/{id}/debit', `/v1/wallets/${w.id}/debit`, { amount: 1200, reference: `order-${randomUUID()}`, description: 'Order' });
    await twice('POST', '/v1/wallets/{id}/freeze', `/v1/wallets/${w.id}/freeze`);
    await twice('POST', '/v1/wallets/{id}/unfreeze', `/v1/wallets/${w.id}/unfreeze`);
    const topup = (await twice('POST', '/v1/wallets/{id}/topups', `/v1/wallets/${w.id}/topups`, { amount: 900, redirect_url: 'https://shop.example/topped' })).body;
    await twice('POST', '/v1/test-helpers/wallet-topups/{id}/complete', `/v1/test-helpers/wallet-topups/${topup.id}/complete`, { outcome: 'succeeded' });
    expect((await api.get(`/v1/wallets/${w.id}`)).body.balance).toBe(5000 - 1200 + 900);
    expect(await count('walletTransaction', { walletId: w.id })).toBe(3);

    // Billing: plan, subscription (charged at once), change with an invoice now, pause/resume,
    // cancel at period end and reactivate, the clock, a void, an archive.
    const plan = (await twice('POST', '/v1/plans', '/v1/plans', { name: 'Every', amount: 3000, currency: 'USD', interval: 'month' })).body;
    const big = (await api.post('/v1/plans', { name: 'Every+', amount: 6000, currency: 'USD', interval: 'month' })).body;
    // Coupons and tax rates: created once (times_redeemed counts one redemption), deleted once.
    const coupon = (await twice('POST', '/v1/coupons', '/v1/coupons', { name: 'Every', percent_off: 10, duration: 'forever' })).body;
    const doomed = (await api.post('/v1/coupons', { name: 'Doomed', amount_off: 100, currency: 'USD', duration: 'once' })).body;
    expect((await twice('DELETE', '/v1/coupons/{id}', `/v1/coupons/${doomed.id}`)).body.deleted).toBe(true);
    const tax = (await twice('POST', '/v1/tax-rates', '/v1/tax-rates', { display_name: 'Every VAT', percentage: 20 })).body;
    expect((await api.get('/v1/tax-rates')).body.data.filter((t: any) => t.display_name === 'Every VAT')).toHaveLength(1);
    const sub = (await twice('POST', '/v1/subscriptions', '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, coupon: coupon.id, default_tax_rates: [tax.id] })).body;
    expect(sub.status).toBe('active');
    expect((await api.get(`/v1/coupons/${coupon.id}`)).body.times_redeemed).toBe(1);
    await twice('PATCH', '/v1/subscriptions/{id}', `/v1/subscriptions/${sub.id}`, { plan_id: big.id, proration_behavior: 'always_invoice' });
    expect(await count('invoice', { subscriptionId: sub.id })).toBe(2);
    await twice('POST', '/v1/subscriptions/{id}/pause', `/v1/subscriptions/${sub.id}/pause`, {});
    await twice('POST', '/v1/subscriptions/{id}/resume', `/v1/subscriptions/${sub.id}/resume`);
    await twice('POST', '/v1/subscriptions/{id}/cancel', `/v1/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true });
    await twice('POST', '/v1/subscriptions/{id}/reactivate', `/v1/subscriptions/${sub.id}/reactivate`);
    await twice('POST', '/v1/test-helpers/clock/advance', '/v1/test-helpers/clock/advance', { seconds: 3600 });
    await twice('POST', '/v1/plans/{id}/archive', `/v1/plans/${plan.id}/archive`);
    expect((await twice('POST', '/v1/tax-rates/{id}/archive', `/v1/tax-rates/${tax.id}/archive`)).body.active).toBe(false);

    // An open invoice to void: a subscription whose first charge fails (…9995 saves, then declines).
    const other = (await api.post('/v1/customers', { email: 'void@example.com' })).body;
    const nsf = (await api.post('/v1/setup-intents', { customer_id: other.id })).body;
    await api.post(`/v1/test-helpers/setup-intents/${nsf.id}/complete`, { card_number: '4000000000009995' });
    const unpaid = (await api.post('/v1/subscriptions', { customer_id: other.id, plan_id: big.id })).body;
    expect(unpaid.status).toBe('incomplete');
    await twice('POST', '/v1/invoices/{id}/void', `/v1/invoices/${unpaid.latest_invoice_id}/void`);
    // Paying an invoice now: a declined charge (402) and a paid one (200), each replayed, each charged once.
    const owing = (await api.post('/v1/subscriptions', { customer_id: other.id, plan_id: big.id })).body;
    expect(owing.status).toBe('incomplete');
    const owed = owing.latest_invoice_id;
    await twice('POST', '/v1/invoices/{id}/pay', `/v1/invoices/${owed}/pay`, {}, [402]);
    const good = (await api.post('/v1/setup-intents', { customer_id: other.id })).body;
    const goodPm = (await api.post(`/v1/test-helpers/setup-intents/${good.id}/complete`, {})).body.payment_method_id;
    expect((await twice('POST', '/v1/invoices/{id}/pay', `/v1/invoices/${owed}/pay`, { payment_method_id: goodPm })).body.status).toBe('paid');
    expect(await count('payment', { customerId: other.id, amount: 6000n })).toBe(1 + 1 + 1 + 1); // the void's, and this one's first, declined and paid attempts

    // One-off invoicing and credit notes: each create, finalize and write-off replayed, done once.
    const extra = (await twice('POST', '/v1/invoice-items', '/v1/invoice-items', { customer_id: other.id, amount: 999, currency: 'USD', description: 'Spare' })).body;
    await twice('DELETE', '/v1/invoice-items/{id}', `/v1/invoice-items/${extra.id}`);
    await twice('POST', '/v1/invoice-items', '/v1/invoice-items', { customer_id: other.id, amount: 4000, currency: 'USD', description: 'Workshop' });
    const draft = (await twice('POST', '/v1/invoices', '/v1/invoices', { customer_id: other.id, currency: 'USD', collection_method: 'send_invoice' })).body;
    const sent = (await twice('POST', '/v1/invoices/{id}/finalize', `/v1/invoices/${draft.id}/finalize`)).body;
    expect(sent.status).toBe('open');
    const note = (await twice('POST', '/v1/credit-notes', '/v1/credit-notes', { invoice_id: sent.id, amount: 1000 })).body;
    expect(note.number).toBe('CN-000001');
    expect((await api.get(`/v1/invoices/${sent.id}`)).body.amount_due).toBe(3000);
    await twice('POST', '/v1/invoices/{id}/mark-uncollectible', `/v1/invoices/${sent.id}/mark-uncollectible`);

    // Customer e-mail switches.
    expect((await twice('PATCH', '/v1/email-settings', '/v1/email-settings', { upcoming_renewal: true })).body.upcoming_renewal).toBe(true);

    // The merchant's name and branding: one change, one account.updated event.
    expect((await twice('PATCH', '/v1/account', '/v1/account', { name: 'Every Route Ltd', branding: { accent_color: '#0A7C66' } })).body.name).toBe('Every Route Ltd');
    expect((await api.get('/v1/events?type=account.updated')).body.data).toHaveLength(1);

    // Portal, webhooks, events.
    await twice('POST', '/v1/customer-portal/sessions', '/v1/customer-portal/sessions', { customer_id: customer.id, return_url: 'https://shop.example/account' });
    const ep = (await twice('POST', '/v1/webhook-endpoints', '/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', events: ['customer.updated'] })).body;
    await twice('PATCH', '/v1/webhook-endpoints/{id}', `/v1/webhook-endpoints/${ep.id}`, { description: 'every route' });
    await twice('POST', '/v1/webhook-endpoints/{id}/rotate-secret', `/v1/webhook-endpoints/${ep.id}/rotate-secret`);
    const evt = (await api.get('/v1/events?type=customer.updated')).body.data[0];
    await twice('POST', '/v1/events/{id}/replay', `/v1/events/${evt.id}/replay`);
    await twice('DELETE', '/v1/webhook-endpoints/{id}', `/v1/webhook-endpoints/${ep.id}`);

    await twice('POST', '/v1/wallets/{id}/close', `/v1/wallets/${w.id}/close`);
    await twice('DELETE', '/v1/payment-methods/{id}', `/v1/payment-methods/${pm}`);
    await twice('DELETE', '/v1/customers/{id}', `/v1/customers/${customer.id}`);

    // Every mutating route of the table was exercised (a new route must be added here).
    const all = routes.filter((r) => r.method !== 'get').map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(all.filter((r) => !covered.has(r))).toEqual([]);
  }, 120_000);
});

describe('an idempotencyKey on GraphQL mutations that charge, refund and advance the clock', () => {
  const gql = async (query: string, input: Record<string, unknown>) => {
    const key = randomUUID();
    const a = await api.gql(query, { input: { ...input, idempotencyKey: key } });
    const b = await api.gql(query, { input: { ...input, idempotencyKey: key } });
    expect(a.errors, JSON.stringify(a.errors)).toBeUndefined();
    expect(b.data).toEqual(a.data);
    return a.data;
  };

  it('replays the result and does the work once', async () => {
    const c = (await api.post('/v1/customers', { email: 'gql-every@example.com' })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const setup = await gql(
      'mutation($input: CompleteTestSetupIntentInput!) { completeTestSetupIntent(input: $input) { __typename ... on CompleteTestSetupIntentSuccess { setupIntent { paymentMethod { id } } } ... on Error { code message } } }',
      { id: si.id },
    );
    const pm = setup.completeTestSetupIntent.setupIntent.paymentMethod.id;
    const pay = await gql(
      'mutation($input: CreatePaymentInput!) { createPayment(input: $input) { __typename ... on CreatePaymentSuccess { payment { id status } } ... on Error { code message } } }',
      { amount: 4100, currency: 'USD', paymentMethodId: pm },
    );
    expect(pay.createPayment.payment.status).toBe('succeeded');
    const paymentId = pay.createPayment.payment.id;
    const refund = await gql(
      'mutation($input: CreateRefundInput!) { createRefund(input: $input) { __typename ... on CreateRefundSuccess { refund { id status amount } } ... on Error { code message } } }',
      { paymentId, amount: 100 },
    );
    expect(refund.createRefund.refund).toMatchObject({ status: 'succeeded', amount: 100 });
    expect(await count('refund', { paymentId })).toBe(1);
    await gql('mutation($input: AdvanceTestClockInput!) { advanceTestClock(input: $input) { __typename ... on Error { code message } } }', { seconds: 60 });

    // payInvoice: a declined charge (an error as data) and a paid one, each replayed and charged once.
    const nsf = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const bad = (await api.post(`/v1/test-helpers/setup-intents/${nsf.id}/complete`, { card_number: '4000000000009995' })).body.payment_method_id;
    const plan = (await api.post('/v1/plans', { name: 'Gql pay', amount: 2200, currency: 'USD', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id, payment_method_id: bad })).body;
    expect(sub.status).toBe('incomplete');
    const PAY =
      'mutation($input: PayInvoiceInput!) { payInvoice(input: $input) { __typename ... on PayInvoiceSuccess { invoice { id status } } ... on PaymentFailedError { invoiceId lastPaymentError { code message } } ... on Error { code message } } }';
    const declined = await gql(PAY, { id: sub.latest_invoice_id, paymentMethodId: bad });
    expect(declined.payInvoice).toMatchObject({ __typename: 'PaymentFailedError', code: 'insufficient_funds', invoiceId: sub.latest_invoice_id });
    const paid = await gql(PAY, { id: sub.latest_invoice_id, paymentMethodId: pm });
    expect(paid.payInvoice).toMatchObject({ __typename: 'PayInvoiceSuccess', invoice: { status: 'paid' } });
    expect(await count('payment', { customerId: c.id, amount: 2200n })).toBe(3); // the first attempt, the declined one, the paid one
  });
});

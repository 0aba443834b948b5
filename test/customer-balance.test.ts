// The customer credit balance (API-CONVENTIONS "Billing lifecycle rules": credits owed to a
// customer are never dropped; "Billing depth": credit_balance, credit_applied, the ledger at
// /v1/customers/:id/balance-transactions), through REST on the merchant's test clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractText, getDocumentProxy } from 'unpdf';
import { startApp, type TestApp } from './helpers/app.ts';
import { clockMerchant, type ClockMerchant } from './helpers/clock-merchant.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

const DAY = 86_400;
const GOOD = '4242424242424242';
const DECLINE = '4000000000009995'; // saved fine, every charge declines (insufficient_funds)
type M = ClockMerchant;

async function customerWithCard(m: M, card = GOOD) {
  const c = (await m.api.post('/v1/customers', { email: `c${Math.random()}@example.com` })).body;
  const si = (await m.api.post('/v1/setup-intents', { customer_id: c.id })).body;
  const done = await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: card });
  expect(done.status).toBe(200);
  return { customer: c, pm: done.body.payment_method_id as string };
}

async function plan(m: M, body: Record<string, unknown> = {}) {
  const r = await m.api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month', ...body });
  expect(r.status).toBe(201);
  return r.body;
}

async function ledger(m: M, customerId: string) {
  const r = await m.api.get(`/v1/customers/${customerId}/balance-transactions?limit=100`);
  expect(r.status).toBe(200);
  return r.body.data as any[];
}

/** Every balance equals the sum of its ledger (newest entry's ending_balance, and the sum of amounts). */
async function balanceMatchesLedger(m: M, customerId: string) {
  const entries = await ledger(m, customerId);
  const sums: Record<string, number> = {};
  for (const e of entries) sums[e.currency] = (sums[e.currency] ?? 0) + e.amount;
  const newest: Record<string, number> = {};
  for (const e of entries) if (!(e.currency in newest)) newest[e.currency] = e.ending_balance;
  expect(newest).toEqual(sums);
  const shown = (await m.api.get(`/v1/customers/${customerId}`)).body.credit_balance;
  expect(shown).toEqual(Object.fromEntries(Object.entries(sums).filter(([, v]) => v !== 0)));
}

describe('adjusting the credit balance', () => {
  it('credits and takes back (never below 0), listed newest first, on the customer, with customer.balance_changed', async () => {
    const m = await clockMerchant(app);
    const c = (await m.api.post('/v1/customers', { email: 'bal@example.com' })).body;
    expect((await m.api.get(`/v1/customers/${c.id}`)).body.credit_balance).toEqual({});
    await m.events();
    const a = await m.api.post(`/v1/customers/${c.id}/balance-transactions`, { amount: 1250, currency: 'usd', description: 'Goodwill' });
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(a.body).toMatchObject({
      id: expect.stringMatching(/^cbtxn_/),
      object: 'customer_balance_transaction',
      customer_id: c.id,
      currency: 'USD',
      amount: 1250,
      ending_balance: 1250,
      type: 'adjustment',
      invoice_id: null,
      description: 'Goodwill',
    });
    const events = await m.eventObjects();
    expect(events.map((e) => e.type)).toEqual(['customer.balance_changed']);
    expect(events[0]!.data.object).toEqual(a.body);
    expect((await m.api.post(`/v1/customers/${c.id}/balance-transactions`, { amount: 500, currency: 'EUR' })).status).toBe(201);
    const over = await m.api.post(`/v1/customers/${c.id}/balance-transactions`, { amount: -1251, currency: 'USD' });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'balance_insufficient', param: 'amount' });
    const back = await m.api.post(`/v1/customers/${c.id}/balance-transactions`, { amount: -250, currency: 'USD' });
    expect(back.body).toMatchObject({ amount: -250, ending_balance: 1000 });
    expect((await m.api.get(`/v1/customers/${c.id}`)).body.credit_balance).toEqual({ EUR: 500, USD: 1000 });
    expect((await ledger(m, c.id)).map((e) => [e.currency, e.amount])).toEqual([
      ['USD', -250],
      ['EUR', 500],
      ['USD', 1250],
    ]);
    await balanceMatchesLedger(m, c.id);
  });

  it('refuses bad input with the documented errors, an unknown customer with 404, another merchant’s customer with 404', async () => {
    const m = await clockMerchant(app);
    const c = (await m.api.post('/v1/customers', { email: 'bad@example.com' })).body;
    const path = `/v1/customers/${c.id}/balance-transactions`;
    for (const [body, param] of [
      [{ amount: 0, currency: 'USD' }, 'amount'],
      [{ amount: 1.5, currency: 'USD' }, 'amount'],
      [{ amount: 100, currency: 'XXQ' }, 'currency'],
      [{ amount: 100 }, 'currency'],
      [{ amount: 100_000_000_000, currency: 'USD' }, 'amount'],
      [{ amount: 100, currency: 'USD', extra: 1 }, 'extra'],
    ] as const) {
      const r = await m.api.post(path, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.param, JSON.stringify(r.body)).toBe(param);
    }
    expect((await m.api.post('/v1/customers/cus_0000000000000000000000/balance-transactions', { amount: 1, currency: 'USD' })).status).toBe(404);
    // The balance stays below 2^53 (as a wallet's): 10,000 credits of the largest amount would pass it.
    await app.services.db.prisma.customerBalance.create({
      data: { merchantId: c.merchant_id ?? (await app.services.db.prisma.customer.findUniqueOrThrow({ where: { id: c.id } })).merchantId, customerId: c.id, currency: 'JPY', balance: 999_999_999_999_000n, updatedAt: new Date() },
    });
    const over = await m.api.post(path, { amount: 1000, currency: 'JPY' });
    expect([over.status, over.body.error?.code, over.body.error?.param]).toEqual([400, 'amount_too_large', 'amount']);
    expect((await m.api.post(path, { amount: 999, currency: 'JPY' })).body.ending_balance).toBe(999_999_999_999_999);
    await app.services.db.prisma.customerBalanceTransaction.deleteMany({ where: { customerId: c.id } });
    await app.services.db.prisma.customerBalance.deleteMany({ where: { customerId: c.id } });
    const other = await clockMerchant(app);
    expect((await other.api.post(path, { amount: 1, currency: 'USD' })).status).toBe(404);
    expect((await other.api.get(path)).status).toBe(404);
    expect(await ledger(m, c.id)).toEqual([]);
  });

  it('concurrent take-backs never take more than the balance', async () => {
    const m = await clockMerchant(app);
    const c = (await m.api.post('/v1/customers', { email: 'race@example.com' })).body;
    const path = `/v1/customers/${c.id}/balance-transactions`;
    expect((await m.api.post(path, { amount: 1000, currency: 'USD' })).status).toBe(201);
    const rs = await Promise.all(Array.from({ length: 8 }, () => m.api.post(path, { amount: -300, currency: 'USD' })));
    expect(rs.filter((r) => r.status === 201)).toHaveLength(3);
    expect(rs.filter((r) => r.status === 400)).toHaveLength(5);
    expect((await m.api.get(`/v1/customers/${c.id}`)).body.credit_balance).toEqual({ USD: 100 });
    await balanceMatchesLedger(m, c.id);
  });
});

describe('invoices draw on the credit balance', () => {
  it('before charging: credit_applied, the rest charged; all of it when the credit covers the invoice', async () => {
    const m = await clockMerchant(app);
    const { customer } = await customerWithCard(m);
    const p = await plan(m);
    await m.api.post(`/v1/customers/${customer.id}/balance-transactions`, { amount: 1000, currency: 'USD' });
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    expect(sub.status).toBe('active');
    const inv = (await m.api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'paid', subtotal: 3000, total: 3000, credit_applied: 1000, amount_due: 2000, amount_paid: 2000 });
    expect((await m.api.get(`/v1/payments/${inv.payment_id}`)).body).toMatchObject({ amount: 2000, status: 'succeeded' });
    // The PDF says what the credit paid.
    const redirect = await fetch(`${app.url}/v1/invoices/${inv.id}/pdf`, { headers: { authorization: m.api.auth }, redirect: 'manual' });
    const pdf = new Uint8Array(await (await fetch(redirect.headers.get('location')!)).arrayBuffer());
    const { text } = await extractText(await getDocumentProxy(pdf), { mergePages: true });
    expect(text).toMatch(/Total \$30\.00\s+Credit applied -\$10\.00\s+Amount paid \$20\.00\s+Amount due \$0\.00/);
    const [applied] = await ledger(m, customer.id);
    expect(applied).toMatchObject({ type: 'applied_to_invoice', amount: -1000, ending_balance: 0, invoice_id: inv.id });
    // The next renewal: credit enough for all of it — paid without a charge.
    await m.api.post(`/v1/customers/${customer.id}/balance-transactions`, { amount: 5000, currency: 'USD' });
    await m.events();
    await m.advance({ to: sub.current_period_end });
    const renewal = (await m.api.get(`/v1/invoices/${(await m.api.get(`/v1/subscriptions/${sub.id}`)).body.latest_invoice_id}`)).body;
    expect(renewal).toMatchObject({ status: 'paid', credit_applied: 3000, amount_due: 0, payment_id: null });
    const events = await m.eventObjects();
    expect(events.map((e) => e.type).sort()).toEqual(['customer.balance_changed', 'invoice.created', 'invoice.finalized', 'invoice.paid', 'invoice.upcoming', 'subscription.updated'].sort());
    // Its notice, 3 days before, said so: the credit pays it all, nothing will be charged.
    const notice = events.find((e) => e.type === 'invoice.upcoming')!.data.object;
    expect(notice).toMatchObject({ id: null, subtotal: 3000, credit_applied: 3000, amount_due: 0, period_start: renewal.period_start });
    expect((await m.api.get(`/v1/customers/${customer.id}`)).body.credit_balance).toEqual({ USD: 2000 });
    // Another currency's credit is not drawn.
    await balanceMatchesLedger(m, customer.id);
    await m.nothingMore();
  });

  it('voiding an invoice gives back the credit it drew', async () => {
    const m = await clockMerchant(app);
    const { customer } = await customerWithCard(m, DECLINE);
    const p = await plan(m, { trial_period_days: 3 });
    await m.api.post(`/v1/customers/${customer.id}/balance-transactions`, { amount: 1000, currency: 'USD' });
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    await m.advance({ to: sub.trial_end });
    const s = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(s.status).toBe('past_due');
    const inv = (await m.api.get(`/v1/invoices/${s.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'open', credit_applied: 1000, amount_due: 2000 });
    expect((await m.api.get(`/v1/customers/${customer.id}`)).body.credit_balance).toEqual({});
    const v = await m.api.post(`/v1/invoices/${inv.id}/void`);
    expect(v.status).toBe(200);
    const [back] = await ledger(m, customer.id);
    expect(back).toMatchObject({ type: 'unapplied_from_invoice', amount: 1000, ending_balance: 1000, invoice_id: inv.id });
    expect((await m.api.get(`/v1/customers/${customer.id}`)).body.credit_balance).toEqual({ USD: 1000 });
    await balanceMatchesLedger(m, customer.id);
  });
});

describe('credits owed at a cancel go to the credit balance (never dropped)', () => {
  it('a downgrade’s waiting credit, cancelled at once: the credit lands in the balance and pays the customer’s next subscription', async () => {
    const m = await clockMerchant(app);
    const { customer } = await customerWithCard(m);
    const pro = await plan(m);
    const basic = await plan(m, { name: 'Basic', amount: 1000 });
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: pro.id })).body;
    expect(sub.status).toBe('active');
    await m.advance({ seconds: 10 * DAY });
    // Downgrade: "Unused time on Pro" (−) and "Remaining time on Basic" (+) wait for the next invoice: a net credit.
    const down = await m.api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: basic.id });
    expect(down.status, JSON.stringify(down.body)).toBe(200);
    await m.events();
    const c = await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, {});
    expect(c.status).toBe(200);
    const [credit] = await ledger(m, customer.id);
    expect(credit).toMatchObject({ type: 'subscription_credit', subscription_id: sub.id, currency: 'USD' });
    expect(credit.amount).toBeGreaterThan(0);
    expect(credit.amount).toBeLessThan(2000); // ~2/3 of the 2000 difference
    expect(await m.events()).toEqual(['customer.balance_changed', 'subscription.cancelled']);
    expect((await m.api.get(`/v1/customers/${customer.id}`)).body.credit_balance).toEqual({ USD: credit.amount });
    // The next subscription's first invoice draws it.
    const next = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: pro.id })).body;
    const inv = (await m.api.get(`/v1/invoices/${next.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'paid', credit_applied: credit.amount, amount_due: 3000 - credit.amount });
    expect((await m.api.get(`/v1/customers/${customer.id}`)).body.credit_balance).toEqual({});
    await balanceMatchesLedger(m, customer.id);
  });

  it('a final invoice whose credits exceed its charges (cancel with invoice_now): the rest lands in the balance', async () => {
    const m = await clockMerchant(app);
    const { customer } = await customerWithCard(m);
    const pro = await plan(m);
    const basic = await plan(m, { name: 'Basic', amount: 1000 });
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: pro.id })).body;
    await m.advance({ seconds: 10 * DAY });
    expect((await m.api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: basic.id })).status).toBe(200);
    const c = await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, { invoice_now: true });
    expect(c.status).toBe(200);
    const final = (await m.api.get(`/v1/invoices/${c.body.latest_invoice_id}`)).body;
    expect(final.subtotal).toBeLessThan(0);
    expect(final).toMatchObject({ status: 'paid', amount_due: 0 });
    expect(final.credited_to_balance).toBe(-final.total);
    // The final invoice's total below zero went to the balance when it was finalised (invoice_credit).
    const [credit] = await ledger(m, customer.id);
    expect(credit).toMatchObject({ type: 'invoice_credit', amount: -final.subtotal, invoice_id: final.id, subscription_id: sub.id });
    await balanceMatchesLedger(m, customer.id);
  });
});

describe('GraphQL', () => {
  const RESULT = `__typename ... on Error { code message param }`;

  it('createCustomerBalanceTransaction, Customer.creditBalance and balanceTransactions, Invoice.creditApplied; errors as data', async () => {
    const m = await clockMerchant(app);
    const { customer } = await customerWithCard(m);
    const create = (input: Record<string, unknown>) =>
      m.api.gql(
        `mutation($input: CreateCustomerBalanceTransactionInput!) { createCustomerBalanceTransaction(input: $input) {
           ${RESULT} ... on CreateCustomerBalanceTransactionSuccess { transaction { id amount endingBalance currency type customer { id } } } } }`,
        { input },
      );
    const ok = (await create({ id: customer.id, amount: 700, currency: 'usd', description: 'Sorry' })).data.createCustomerBalanceTransaction;
    expect(ok).toMatchObject({
      __typename: 'CreateCustomerBalanceTransactionSuccess',
      transaction: { amount: 700, endingBalance: 700, currency: 'USD', type: 'adjustment', customer: { id: expect.any(String) } },
    });
    const over = (await create({ id: customer.id, amount: -701, currency: 'USD' })).data.createCustomerBalanceTransaction;
    expect(over).toMatchObject({ code: 'balance_insufficient', param: 'amount' });
    const missing = (await create({ id: 'cus_0000000000000000000000', amount: 1, currency: 'USD' })).data.createCustomerBalanceTransaction;
    expect(missing).toMatchObject({ code: 'resource_missing' });
    const p = await plan(m);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    const q = await m.api.gql(
      `query($id: ID!, $inv: ID!) {
         customer(id: $id) { creditBalance { currency amount } balanceTransactions(first: 10) { totalCount edges { node { amount type invoiceId endingBalance } } } }
         invoice(id: $inv) { creditApplied amountDue }
       }`,
      { id: ok.transaction.customer.id, inv: sub.latest_invoice_id },
    );
    expect(q.errors).toBeUndefined();
    expect(q.data.customer.creditBalance).toEqual([]);
    expect(q.data.customer.balanceTransactions.totalCount).toBe(2);
    expect(q.data.customer.balanceTransactions.edges.map((e: any) => e.node)).toEqual([
      { amount: -700, type: 'applied_to_invoice', invoiceId: sub.latest_invoice_id, endingBalance: 0 },
      { amount: 700, type: 'adjustment', invoiceId: null, endingBalance: 700 },
    ]);
    expect(q.data.invoice).toEqual({ creditApplied: 700, amountDue: 2300 });
    await create({ id: customer.id, amount: 25, currency: 'EUR' });
    const again = await m.api.gql(`query($id: ID!) { customer(id: $id) { creditBalance { currency amount } } }`, { id: ok.transaction.customer.id });
    expect(again.data.customer.creditBalance).toEqual([{ currency: 'EUR', amount: 25 }]);
  });
});

// Issue 25, item 6: a live subscription's invoice whose total is below zero (a downgrade invoiced at
// once, prorations netting to a credit on a renewal) credits the customer's credit balance when it
// is finalised — a ledger entry invoice_credit with the invoice's id and customer.balance_changed
// in the finalising transaction, `credited_to_balance` on the invoice, its total negative and
// nothing due — and the customer's later invoices draw it first: this subscription's, their
// other subscriptions' (same currency). No "Credit carried over" line is made any more. The
// previews say the same. Through REST and GraphQL, on the test clock; credit_balance is on every
// customer object (create, update, list, search, the customer.* events).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { clockMerchant, type ClockMerchant } from './helpers/clock-merchant.ts';
import { moneyOf } from './helpers/billing-model.ts';
import { newId } from '../src/platform/ids.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

const DAY = 86_400;
type M = ClockMerchant;

async function customerWithCard(m: M) {
  const c = (await m.api.post('/v1/customers', { email: `neg${Math.random()}@example.com` })).body;
  const si = (await m.api.post('/v1/setup-intents', { customer_id: c.id })).body;
  expect((await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).status).toBe(200);
  return c as { id: string };
}

async function plan(m: M, name: string, amount: number) {
  // 30-day periods: the proration of 10 days used is exact.
  const r = await m.api.post('/v1/plans', { name, amount, currency: 'USD', interval: 'day', interval_count: 30 });
  expect(r.status).toBe(201);
  return r.body as { id: string };
}

const ledger = async (m: M, id: string) => (await m.api.get(`/v1/customers/${id}/balance-transactions?limit=100`)).body.data as any[];
const balance = async (m: M, id: string) => (await m.api.get(`/v1/customers/${id}`)).body.credit_balance;

async function balanceEqualsLedger(m: M, id: string) {
  const entries = await ledger(m, id);
  const sums: Record<string, number> = {};
  for (const e of entries) sums[e.currency] = (sums[e.currency] ?? 0) + e.amount;
  expect(await balance(m, id)).toEqual(Object.fromEntries(Object.entries(sums).filter(([, v]) => v !== 0)));
  const chain = [...entries].reverse();
  chain.forEach((t, k) => expect(t.ending_balance).toBe((k === 0 ? 0 : chain[k - 1]!.ending_balance) + t.amount));
}

describe('a negative invoice of a live subscription credits the customer credit balance', () => {
  it('a discounted subscription is credited what it paid, not the list price: 100 % off credits nothing, 20 % + 19 % tax back and forth nets to zero; a once coupon is not used up by a credit', async () => {
    const m = await clockMerchant(app);
    const customer = await customerWithCard(m);
    const pro = await plan(m, 'Pro', 3000);
    const code = `FREE${Math.random().toString(36).slice(2, 8)}`;
    expect((await m.api.post('/v1/coupons', { id: code, name: 'Free', percent_off: 100, duration: 'forever' })).status).toBe(201);
    const free = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: pro.id, quantity: 100, coupon: code })).body;
    expect((await m.api.get(`/v1/invoices/${free.latest_invoice_id}`)).body).toMatchObject({ total: 0, discount_amount: 300000 });
    const down = await m.api.patch(`/v1/subscriptions/${free.id}`, { quantity: 1, proration_behavior: 'always_invoice' });
    expect(down.status, JSON.stringify(down.body)).toBe(200);
    const credit = (await m.api.get(`/v1/invoices/${down.body.latest_invoice_id}`)).body;
    // −297,000 of unused free time and +2,970 of the new quantity, both 100 % off: nothing owed either way.
    expect(credit).toMatchObject({ total: 0, credited_to_balance: 0, amount_due: 0 });
    expect(credit.discount_amount).toBeLessThan(0);
    expect(await balance(m, customer.id)).toEqual({});

    // 20 % forever with a 19 % exclusive tax: up and straight back down bills and credits the same.
    const c2 = await customerWithCard(m);
    const twenty = `TWENTY${Math.random().toString(36).slice(2, 8)}`;
    expect((await m.api.post('/v1/coupons', { id: twenty, name: 'Twenty', percent_off: 20, duration: 'forever' })).status).toBe(201);
    const vat = (await m.api.post('/v1/tax-rates', { display_name: 'VAT', percentage: 19, inclusive: false })).body;
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: c2.id, plan_id: pro.id, coupon: twenty, default_tax_rates: [vat.id] })).body;
    expect((await m.api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body.total).toBe(2856); // 3000 − 600 + 456
    await m.advance({ seconds: 10 * DAY });
    const at = new Date(Date.parse(sub.current_period_start) + 10 * DAY * 1000).toISOString();
    const up = await m.api.patch(`/v1/subscriptions/${sub.id}`, { quantity: 4, proration_behavior: 'always_invoice', proration_date: at });
    const upInv = (await m.api.get(`/v1/invoices/${up.body.latest_invoice_id}`)).body;
    const back = await m.api.patch(`/v1/subscriptions/${sub.id}`, { quantity: 1, proration_behavior: 'always_invoice', proration_date: at });
    const backInv = (await m.api.get(`/v1/invoices/${back.body.latest_invoice_id}`)).body;
    expect(upInv.total).toBeGreaterThan(0);
    expect(backInv.total).toBe(-upInv.total);
    expect(backInv.discount_amount).toBe(-upInv.discount_amount);
    expect(backInv.tax_amount).toBe(-upInv.tax_amount);
    expect(backInv.credited_to_balance).toBe(upInv.total);
    await balanceEqualsLedger(m, c2.id);

    // A once coupon applied with a downgrade: the credit (a negative invoice) does not take it; the next invoice does.
    const once = `ONCE${Math.random().toString(36).slice(2, 8)}`;
    expect((await m.api.post('/v1/coupons', { id: once, name: 'Once', amount_off: 500, currency: 'USD', duration: 'once' })).status).toBe(201);
    const lite = await plan(m, 'Lite', 300);
    const c3 = await customerWithCard(m);
    const s3 = (await m.api.post('/v1/subscriptions', { customer_id: c3.id, plan_id: pro.id })).body;
    const withOnce = await m.api.patch(`/v1/subscriptions/${s3.id}`, { coupon: once, plan_id: lite.id, proration_behavior: 'always_invoice' });
    expect(withOnce.status, JSON.stringify(withOnce.body)).toBe(200);
    const neg = (await m.api.get(`/v1/invoices/${withOnce.body.latest_invoice_id}`)).body;
    expect(neg.total).toBeLessThan(0);
    expect(neg).toMatchObject({ discount_amount: 0, coupon_id: null });
    expect((await m.api.get(`/v1/subscriptions/${s3.id}`)).body.discount).toMatchObject({ coupon: once });
  });

  it('REST: a downgrade with always_invoice → total < 0, amount_due 0, the credit in the balance (ledger + event in the same transaction); the renewal draws it, then a second subscription draws what is left', async () => {
    const m = await clockMerchant(app);
    const customer = await customerWithCard(m);
    const pro = await plan(m, 'Pro', 9000);
    const lite = await plan(m, 'Lite', 300);
    const other = await plan(m, 'Other', 5000);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: pro.id })).body;
    expect(sub.status).toBe('active');
    await m.advance({ seconds: 10 * DAY });
    const at = new Date(Date.parse(sub.current_period_start) + 10 * DAY * 1000).toISOString();

    // The preview says what goes to the balance, and that the renewal after it draws it.
    const p = (await m.api.get(`/v1/invoices/upcoming?subscription_id=${sub.id}&plan_id=${lite.id}&proration_behavior=always_invoice&proration_date=${at}`)).body;
    expect(p).toMatchObject({ total: -6000 + 200, amount_due: 0, credited_to_balance: 5800 });
    expect(p.next_invoice).toMatchObject({ total: 300, credit_applied: 300, amount_due: 0, credited_to_balance: 0 });
    expect(p.next_invoice.lines.map((l: any) => l.amount)).toEqual([300]);
    await m.events();

    const down = await m.api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: lite.id, proration_behavior: 'always_invoice', proration_date: at });
    expect(down.status, JSON.stringify(down.body)).toBe(200);
    const inv = (await m.api.get(`/v1/invoices/${down.body.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'paid', total: -5800, amount_due: 0, amount_paid: 0, credit_applied: 0, credited_to_balance: 5800, payment_id: null });
    expect(moneyOf(inv)).toEqual(moneyOf(p));
    // The ledger entry names the invoice; its event is in the change's transaction (recorded with the invoice's).
    const [entry] = await ledger(m, customer.id);
    expect(entry).toMatchObject({ type: 'invoice_credit', amount: 5800, ending_balance: 5800, currency: 'USD', invoice_id: inv.id, subscription_id: sub.id });
    const evs = await m.eventObjects();
    expect(evs.map((e) => e.type).sort()).toEqual(['customer.balance_changed', 'invoice.created', 'invoice.finalized', 'invoice.paid', 'subscription.updated']);
    expect(evs.find((e) => e.type === 'customer.balance_changed')!.data.object).toMatchObject({ id: entry.id, invoice_id: inv.id, amount: 5800 });
    expect(evs.find((e) => e.type === 'invoice.paid')!.data.object).toMatchObject({ credited_to_balance: 5800 });
    expect(await balance(m, customer.id)).toEqual({ USD: 5800 });
    // Nothing waits on the subscription: no carried line.
    const next = (await m.api.get(`/v1/invoices/upcoming?subscription_id=${sub.id}`)).body;
    expect(next.lines.map((l: any) => [l.amount, l.id])).toEqual([[300, null]]);
    expect(next).toMatchObject({ credit_applied: 300, amount_due: 0 });

    // The renewal draws it (credit_applied), as its preview said.
    await m.advance({ to: sub.current_period_end });
    const renewal = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=1`)).body.data[0];
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', total: 300, credit_applied: 300, amount_due: 0, status: 'paid', credited_to_balance: 0 });
    expect(moneyOf(renewal)).toEqual(moneyOf(p.next_invoice));
    expect(await balance(m, customer.id)).toEqual({ USD: 5500 });

    // (The first one ends here, so that only the second draws from now on; an immediate cancel with nothing waiting credits nothing.)
    expect((await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, {})).status).toBe(200);
    expect(await balance(m, customer.id)).toEqual({ USD: 5500 });
    // A second subscription of the same customer and currency draws what is left.
    const sub2 = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: other.id })).body;
    const first = (await m.api.get(`/v1/invoices/${sub2.latest_invoice_id}`)).body;
    expect(first).toMatchObject({ total: 5000, credit_applied: 5000, amount_due: 0, status: 'paid' });
    expect(await balance(m, customer.id)).toEqual({ USD: 500 });
    // … and its next renewal the rest, the card the remainder.
    await m.advance({ to: sub2.current_period_end });
    const r2 = (await m.api.get(`/v1/invoices?subscription_id=${sub2.id}&limit=1`)).body.data[0];
    expect(r2).toMatchObject({ total: 5000, credit_applied: 500, amount_due: 4500, amount_paid: 4500, status: 'paid' });
    expect(await balance(m, customer.id)).toEqual({});
    const entries = await ledger(m, customer.id);
    expect(entries.filter((e) => e.type === 'invoice_credit').map((e) => e.amount)).toEqual([5800]);
    expect(0 - entries.filter((e) => e.type === 'applied_to_invoice').reduce((s, e) => s + e.amount, 0)).toBe(5800);
    await balanceEqualsLedger(m, customer.id);
  });

  it('create_prorations netting to a credit: the renewal that takes them has a total below zero and credits the balance; the next renewal draws it', async () => {
    const m = await clockMerchant(app);
    const customer = await customerWithCard(m);
    const pro = await plan(m, 'Pro', 9000);
    const lite = await plan(m, 'Lite', 300);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: pro.id })).body;
    await m.advance({ seconds: 10 * DAY });
    const at = new Date(Date.parse(sub.current_period_start) + 10 * DAY * 1000).toISOString();
    const down = await m.api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: lite.id, proration_date: at });
    expect(down.status).toBe(200);
    expect(down.body.latest_invoice_id).toBe(sub.latest_invoice_id);
    // −6000 + 200 wait; the renewal adds the 300 period: −5500.
    const p = (await m.api.get(`/v1/invoices/upcoming?subscription_id=${sub.id}`)).body;
    expect(p).toMatchObject({ total: -5500, amount_due: 0, credited_to_balance: 5500 });
    await m.events();
    await m.advance({ to: sub.current_period_end });
    const renewal = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=1`)).body.data[0];
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', total: -5500, amount_due: 0, status: 'paid', credited_to_balance: 5500 });
    expect(moneyOf(renewal)).toEqual(moneyOf(p));
    expect(renewal.lines.map((l: any) => l.amount)).toEqual([300, -6000, 200]);
    const types = await m.events();
    expect(types).toContain('customer.balance_changed');
    expect(await balance(m, customer.id)).toEqual({ USD: 5500 });
    const [entry] = await ledger(m, customer.id);
    expect(entry).toMatchObject({ type: 'invoice_credit', amount: 5500, invoice_id: renewal.id });
    // Nothing waits on the subscription; the next renewal draws 300 of it.
    const period2End = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body.current_period_end;
    await m.advance({ to: period2End });
    const next = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=1`)).body.data[0];
    expect(next).toMatchObject({ total: 300, credit_applied: 300, amount_due: 0, credited_to_balance: 0 });
    expect(next.lines).toHaveLength(1);
    expect(await balance(m, customer.id)).toEqual({ USD: 5200 });
    await balanceEqualsLedger(m, customer.id);
  });

  it('GraphQL: updateSubscription (alwaysInvoice) → Invoice.creditedToBalance, Customer.creditBalance, the ledger entry invoice_credit; upcomingInvoice says the same', async () => {
    const m = await clockMerchant(app);
    const customer = await customerWithCard(m);
    const pro = await plan(m, 'Pro', 9000);
    const lite = await plan(m, 'Lite', 300);
    const other = await plan(m, 'Other', 5000);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: pro.id })).body;
    await m.advance({ seconds: 10 * DAY });
    const at = new Date(Date.parse(sub.current_period_start) + 10 * DAY * 1000).toISOString();
    const preview = await m.api.gql(
      `query($id: ID!, $p: ID!, $d: DateTime) { upcomingInvoice(subscriptionId: $id, planId: $p, prorationBehavior: always_invoice, prorationDate: $d) { total amountDue creditedToBalance nextInvoice { total creditApplied amountDue creditedToBalance } } }`,
      { id: sub.id, p: lite.id, d: at },
    );
    expect(preview.errors).toBeUndefined();
    expect(preview.data.upcomingInvoice).toEqual({ total: -5800, amountDue: 0, creditedToBalance: 5800, nextInvoice: { total: 300, creditApplied: 300, amountDue: 0, creditedToBalance: 0 } });
    const r = await m.api.gql(
      `mutation($input: UpdateSubscriptionInput!) { updateSubscription(input: $input) { __typename ... on Error { code message }
         ... on UpdateSubscriptionSuccess { subscription { latestInvoice { id status total amountDue creditedToBalance } customer { creditBalance { currency amount } balanceTransactions(first: 5) { edges { node { type amount invoiceId } } } } } } } }`,
      { input: { id: sub.id, planId: lite.id, prorationBehavior: 'always_invoice', prorationDate: at } },
    );
    expect(r.errors).toBeUndefined();
    const s = r.data.updateSubscription.subscription;
    expect(s.latestInvoice).toMatchObject({ status: 'paid', total: -5800, amountDue: 0, creditedToBalance: 5800 });
    expect(s.customer.creditBalance).toEqual([{ currency: 'USD', amount: 5800 }]);
    expect(s.customer.balanceTransactions.edges.map((e: any) => e.node)).toEqual([{ type: 'invoice_credit', amount: 5800, invoiceId: s.latestInvoice.id }]);
    // Another subscription's first invoice draws it.
    const g = await m.api.gql(
      `mutation($input: CreateSubscriptionInput!) { createSubscription(input: $input) { __typename ... on CreateSubscriptionSuccess { subscription { latestInvoice { total creditApplied amountDue } customer { creditBalance { amount } } } } } }`,
      { input: { customerId: customer.id, planId: other.id } },
    );
    expect(g.data.createSubscription.subscription).toEqual({ latestInvoice: { total: 5000, creditApplied: 5000, amountDue: 0 }, customer: { creditBalance: [{ amount: 800 }] } });
    await balanceEqualsLedger(m, customer.id);
  });
});

describe('a "Credit carried over" line made before (old data) still bills as it did', () => {
  it('the renewal takes it without discount or tax again, as before; a total it makes negative now goes to the balance', async () => {
    const m = await clockMerchant(app);
    const customer = await customerWithCard(m);
    const pro = await plan(m, 'Pro', 3000);
    expect((await m.api.post('/v1/coupons', { id: 'HALF', name: 'Half', percent_off: 50, duration: 'forever' })).status).toBe(201);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: pro.id, coupon: 'HALF' })).body;
    // A line as the engine made them until now: waiting on the subscription, taxable false.
    const at = new Date(sub.current_period_start);
    await app.services.db.prisma.invoiceItem.create({
      data: {
        id: newId('invoice_line'),
        merchantId: m.api.creds.merchant_id,
        subscriptionId: sub.id,
        invoiceId: null,
        description: 'Credit carried over from INV-000001',
        periodStart: at,
        periodEnd: new Date(sub.current_period_end),
        amount: -5000n,
        proration: false,
        taxable: false,
        createdAt: at,
      },
    });
    const p = (await m.api.get(`/v1/invoices/upcoming?subscription_id=${sub.id}`)).body;
    await m.advance({ to: sub.current_period_end });
    const renewal = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=1`)).body.data[0];
    expect(moneyOf(renewal)).toEqual(moneyOf(p));
    // 3000 − 50 % of 3000 (the old credit gets no share of the discount) − 5000 = −3500: to the balance.
    expect(renewal.lines.map((l: any) => [l.amount, l.discount_amount])).toEqual([[-5000, 0], [3000, 1500]]);
    expect(renewal).toMatchObject({ discount_amount: 1500, total: -3500, amount_due: 0, credited_to_balance: 3500 });
    expect(await balance(m, customer.id)).toEqual({ USD: 3500 });
    await balanceEqualsLedger(m, customer.id);
  });
});

describe('credit_balance on every customer object', () => {
  it('create, update, list, search and the customer.created / updated / deleted events carry it; GraphQL Customer.creditBalance too', async () => {
    const m = await clockMerchant(app);
    const created = await m.api.post('/v1/customers', { email: 'every@example.com', name: 'Every Where' });
    expect(created.body.credit_balance).toEqual({});
    expect((await m.eventObjects()).find((e) => e.type === 'customer.created')!.data.object.credit_balance).toEqual({});
    const id = created.body.id;
    await m.api.post(`/v1/customers/${id}/balance-transactions`, { amount: 1250, currency: 'USD' });
    await m.api.post(`/v1/customers/${id}/balance-transactions`, { amount: 30, currency: 'EUR' });
    await m.events();
    const updated = await m.api.patch(`/v1/customers/${id}`, { name: 'Every Body' });
    expect(updated.body.credit_balance).toEqual({ EUR: 30, USD: 1250 });
    const upd = (await m.eventObjects()).find((e) => e.type === 'customer.updated')!;
    expect(upd.data.object.credit_balance).toEqual({ EUR: 30, USD: 1250 });
    expect(upd.data.previous_attributes).toEqual({ name: 'Every Where' });
    expect((await m.api.get(`/v1/customers?limit=5`)).body.data.find((c: any) => c.id === id).credit_balance).toEqual({ EUR: 30, USD: 1250 });
    expect((await m.api.get(`/v1/customers?search=every`)).body.data.map((c: any) => c.credit_balance)).toEqual([{ EUR: 30, USD: 1250 }]);
    expect((await m.api.get(`/v1/customers?email=every@example.com`)).body.data[0].credit_balance).toEqual({ EUR: 30, USD: 1250 });
    const g = await m.api.gql(`query { customers(first: 5, search: "every") { edges { node { creditBalance { currency amount } } } } }`);
    expect(g.data.customers.edges[0].node.creditBalance).toEqual([{ currency: 'EUR', amount: 30 }, { currency: 'USD', amount: 1250 }]);
    // A new default method (the payment-methods area's customer.updated) carries it too.
    const si = (await m.api.post('/v1/setup-intents', { customer_id: id })).body;
    await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {});
    const viaMethod = (await m.eventObjects()).find((e) => e.type === 'customer.updated');
    expect(viaMethod?.data.object.credit_balance).toEqual({ EUR: 30, USD: 1250 });
    expect((await m.api.del(`/v1/customers/${id}`)).status).toBe(200);
    const del = (await m.eventObjects()).find((e) => e.type === 'customer.deleted')!;
    expect(del.data.object).toMatchObject({ deleted: true, credit_balance: { EUR: 30, USD: 1250 } });
  });
});

// POST /v1/invoices/:id/pay and GraphQL payInvoice: one charge of an open or uncollectible invoice,
// now, through dunning's charging path. On the merchant's test clock, naming the events each step
// must produce (../shared/notes/billing-tests.md) and checking the engine does nothing more after.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { clockMerchant } from './helpers/clock-merchant.ts';
import { injectProcessor } from './helpers/processor.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

const DAY = 86_400;
const GOOD = '4242424242424242';
/** Saves, then every charge of it fails with insufficient_funds. */
const NSF = '4000000000009995';
const sorted = (...t: string[]) => t.sort();

async function merchant() {
  const base = await clockMerchant(app);
  const { api } = base;
  const m = {
    ...base,
    async card(customerId: string, number: string) {
      const si = (await api.post('/v1/setup-intents', { customer_id: customerId })).body;
      const done = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: number });
      expect(done.status).toBe(200);
      return done.body.payment_method_id as string;
    },
    async customer() {
      return (await api.post('/v1/customers', { email: `c${Math.random()}@example.com`, name: 'Ada Lovelace' })).body;
    },
    async plan() {
      const r = await api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month', trial_period_days: 7 });
      expect(r.status).toBe(201);
      return r.body;
    },
    /** A subscription whose renewal card declined: past_due, its invoice open after attempt 1. */
    async pastDue() {
      const c = await m.customer();
      const bad = await m.card(c.id, NSF); // the customer's default: every charge fails
      const p = await m.plan();
      const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: p.id })).body;
      await m.advance({ to: sub.trial_end });
      const s = (await api.get(`/v1/subscriptions/${sub.id}`)).body;
      expect(s.status).toBe('past_due');
      const inv = (await api.get(`/v1/invoices/${s.latest_invoice_id}`)).body;
      expect(inv).toMatchObject({ status: 'open', attempt_count: 1, last_payment_error: { code: 'insufficient_funds', message: expect.any(String) } });
      await m.events();
      return { customer: c, bad, sub: s, inv };
    },
  };
  return m;
}

describe('POST /v1/invoices/:id/pay', () => {
  it('pays a past_due subscription’s invoice with a working card: 200 paid, the subscription active; again 409 invoice_not_open', async () => {
    const m = await merchant();
    const { customer, sub, inv } = await m.pastDue();
    const good = await m.card(customer.id, GOOD);
    await m.events();

    const r = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: good });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ id: inv.id, status: 'paid', amount_paid: 3000, amount_remaining: 0, last_payment_error: null, next_payment_attempt: null });
    expect(r.body.payment_id).not.toBe(inv.payment_id);
    // The failed attempt's checkout closes; the new payment succeeds; the subscription is active.
    expect(await m.events()).toEqual(sorted('payment.cancelled', 'payment.created', 'payment.succeeded', 'invoice.paid', 'subscription.updated'));
    const payment = (await m.api.get(`/v1/payments/${r.body.payment_id}`)).body;
    expect(payment).toMatchObject({ status: 'succeeded', amount: 3000, payment_method_id: good });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');

    const again = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: good });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ type: 'state_error', code: 'invoice_not_open' });
    // The scheduled retry finds the invoice paid: nothing more, ever.
    await m.advance({ seconds: 2 * DAY });
    expect(await m.events()).toEqual([]);
  });

  it('a declining card: 402 card_error with last_payment_error; dunning’s count and schedule stay as they were', async () => {
    const m = await merchant();
    const { bad, sub, inv } = await m.pastDue();

    const r = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: bad });
    expect(r.status, JSON.stringify(r.body)).toBe(402);
    expect(r.body.error).toMatchObject({
      type: 'card_error',
      code: 'insufficient_funds',
      param: null,
      invoice_id: inv.id,
      last_payment_error: { code: 'insufficient_funds', message: r.body.error.message },
    });
    expect(await m.events()).toEqual(sorted('payment.cancelled', 'payment.created', 'payment.failed', 'invoice.payment_failed'));
    const after = (await m.api.get(`/v1/invoices/${inv.id}`)).body;
    // A manual attempt after the first does not count (as Stripe's attempt_count) nor move the next retry.
    expect(after).toMatchObject({
      status: 'open',
      attempt_count: 1,
      next_payment_attempt: inv.next_payment_attempt,
      last_payment_error: { code: 'insufficient_funds' },
    });
    expect(after.payment_id).not.toBe(inv.payment_id);
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('past_due');
    // Without payment_method_id: the method dunning uses (the customer's default, declining here).
    const d = await m.api.post(`/v1/invoices/${inv.id}/pay`);
    expect(d.status).toBe(402);
    expect(await m.events()).toEqual(sorted('payment.cancelled', 'payment.created', 'payment.failed', 'invoice.payment_failed'));
    // The retry still comes when it was due, as attempt 2.
    await m.advance({ to: inv.next_payment_attempt });
    expect(await m.events()).toEqual(sorted('payment.cancelled', 'payment.created', 'payment.failed', 'invoice.payment_failed'));
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ attempt_count: 2, status: 'open' });
    await m.nothingMore();
  });

  it('an uncollectible invoice (unpaid subscription) is paid: 200, the subscription active again in a new period from now, invoiced at once', async () => {
    const m = await merchant();
    const { customer, sub, inv } = await m.pastDue();
    const first = new Date(inv.next_payment_attempt).getTime() - DAY * 1000;
    await m.advance({ to: new Date(first + 5 * DAY * 1000).toISOString() });
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'uncollectible', attempt_count: 4 });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('unpaid');
    // Into the next period, which is not invoiced while unpaid.
    await m.advance({ to: sub.current_period_end });
    await m.advance({ seconds: DAY });
    const good = await m.card(customer.id, GOOD);
    await m.events();
    const before = Date.parse((await m.api.get('/v1/test-helpers/clock')).body.now);
    const r = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: good });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const after = Date.parse((await m.api.get('/v1/test-helpers/clock')).body.now);
    expect(r.body).toMatchObject({ status: 'paid', attempt_count: 4, last_payment_error: null });
    const events = await m.events();
    expect(events).toEqual(expect.arrayContaining(['payment.created', 'payment.succeeded', 'invoice.paid', 'subscription.updated', 'invoice.created', 'invoice.finalized']));
    const restarted = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(Date.parse(restarted.current_period_start)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Date.parse(restarted.current_period_start)).toBeLessThanOrEqual(after);
    expect(restarted.latest_invoice_id).not.toBe(inv.id);
    // The new period's invoice is charged at once, to the customer's default — which still
    // declines (paying one invoice with another card does not change what later ones charge).
    await m.advance({ seconds: 1 });
    expect((await m.api.get(`/v1/invoices/${restarted.latest_invoice_id}`)).body).toMatchObject({
      status: 'open',
      attempt_count: 1,
      period_start: restarted.current_period_start,
      last_payment_error: { code: 'insufficient_funds' },
    });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('past_due');
  });

  it('a cancelled subscription’s open invoice (automatic collection stopped) is still paid by hand; a decline schedules no retry', async () => {
    const m = await merchant();
    const { customer, bad, sub, inv } = await m.pastDue();
    expect((await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, {})).status).toBe(200);
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'open', next_payment_attempt: null });
    await m.events();
    const d = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: bad });
    expect(d.status).toBe(402);
    expect(await m.events()).toEqual(sorted('payment.cancelled', 'payment.created', 'payment.failed', 'invoice.payment_failed'));
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: null });
    await m.advance({ seconds: 6 * DAY });
    expect((await m.events()).filter((e) => e !== 'payment.expired')).toEqual([]);
    const good = await m.card(customer.id, GOOD);
    const r = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: good });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'paid', last_payment_error: null });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('cancelled');
  });

  it('refuses another customer’s method (400), an unknown one (404), a void invoice (409), another merchant’s invoice (404)', async () => {
    const m = await merchant();
    const { inv } = await m.pastDue();
    const other = await m.customer();
    const theirs = await m.card(other.id, GOOD);
    await m.events();
    const r1 = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: theirs });
    expect(r1.status).toBe(400);
    expect(r1.body.error).toMatchObject({ code: 'parameter_invalid', param: 'payment_method_id' });
    const r2 = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: 'pm_nope' });
    expect(r2.status).toBe(404);
    expect(r2.body.error).toMatchObject({ code: 'resource_missing', param: 'payment_method_id' });
    const r3 = await m.api.post(`/v1/invoices/${inv.id}/pay`, { amount: 1 });
    expect(r3.status).toBe(400);
    expect(r3.body.error.code).toBe('parameter_unknown');
    // Nothing was charged or recorded by the refusals.
    expect(await m.events()).toEqual([]);
    const stranger = await merchant();
    expect((await stranger.api.post(`/v1/invoices/${inv.id}/pay`)).status).toBe(404);
    expect((await m.api.post(`/v1/invoices/${inv.id}/void`)).status).toBe(200);
    const r4 = await m.api.post(`/v1/invoices/${inv.id}/pay`);
    expect(r4.status).toBe(409);
    expect(r4.body.error.code).toBe('invoice_not_open');
  });

  it('the same Idempotency-Key replays the answer (200 or 402) and charges once', async () => {
    const m = await merchant();
    const { customer, bad, inv } = await m.pastDue();
    const payments = async () => (await m.api.get(`/v1/payments?customer_id=${customer.id}&limit=100`)).body.data.length;
    const before = await payments();
    const k1 = { 'Idempotency-Key': randomUUID() };
    const a = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: bad }, k1);
    const b = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: bad }, k1);
    expect(a.status).toBe(402);
    expect(b.status).toBe(402);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.text).toBe(a.text);
    expect(await payments()).toBe(before + 1);

    const good = await m.card(customer.id, GOOD);
    const k2 = { 'Idempotency-Key': randomUUID() };
    const c = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: good }, k2);
    const d = await m.api.post(`/v1/invoices/${inv.id}/pay`, { payment_method_id: good }, k2);
    expect(c.status).toBe(200);
    expect(d.status).toBe(200);
    expect(d.headers.get('idempotent-replayed')).toBe('true');
    expect(d.text).toBe(c.text);
    expect(await payments()).toBe(before + 2);
    const succeeded = (await m.api.get(`/v1/payments?customer_id=${customer.id}&status=succeeded`)).body.data;
    expect(succeeded).toHaveLength(1);
  });
});

describe('one charge in flight per invoice', () => {
  it('while a pay is at the processor, another pay (and a void) is 409 invoice_payment_in_progress; the first pays, charged once', async () => {
    const t = await startApp();
    const fake = injectProcessor(t);
    try {
      const api = await t.merchant();
      const c = (await api.post('/v1/customers', { email: `f${Math.random()}@example.com` })).body;
      const card = async (number: string) => {
        const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
        return (await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: number })).body.payment_method_id as string;
      };
      await card(NSF);
      const plan = (await api.post('/v1/plans', { name: 'Pro', amount: 2900, currency: 'USD', interval: 'month' })).body;
      const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
      expect(sub.status).toBe('incomplete');
      const good = await card(GOOD);
      const before = fake.charges.length;
      fake.hold();
      const atProcessor = fake.called();
      const paying = api.post(`/v1/invoices/${sub.latest_invoice_id}/pay`, { payment_method_id: good });
      await atProcessor;
      const second = await api.post(`/v1/invoices/${sub.latest_invoice_id}/pay`, { payment_method_id: good });
      expect(second.status).toBe(409);
      expect(second.body.error.code).toBe('invoice_payment_in_progress');
      const voiding = await api.post(`/v1/invoices/${sub.latest_invoice_id}/void`);
      expect(voiding.status).toBe(409);
      fake.release();
      const first = await paying;
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.status).toBe('paid');
      expect(fake.charges.length - before).toBe(1);
      expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    } finally {
      fake.release();
      await t.close();
    }
  });
});

describe('GraphQL payInvoice', () => {
  const PAY = `mutation($input: PayInvoiceInput!) { payInvoice(input: $input) {
    __typename
    ... on PayInvoiceSuccess { invoice { id status attemptCount lastPaymentError { code message } subscription { status } } }
    ... on PaymentFailedError { code message invoiceId lastPaymentError { code message } invoice { status lastPaymentError { code } } }
    ... on Error { code message param }
  } }`;

  it('a decline is a PaymentFailedError; a working card pays the invoice', async () => {
    const m = await merchant();
    const { customer, bad, inv } = await m.pastDue();
    const declined = await m.api.gql(PAY, { input: { id: inv.id, paymentMethodId: bad } });
    expect(declined.errors).toBeUndefined();
    expect(declined.data.payInvoice).toMatchObject({
      __typename: 'PaymentFailedError',
      code: 'insufficient_funds',
      invoiceId: inv.id,
      lastPaymentError: { code: 'insufficient_funds' },
      invoice: { status: 'open', lastPaymentError: { code: 'insufficient_funds' } },
    });
    expect(await m.events()).toEqual(sorted('payment.cancelled', 'payment.created', 'payment.failed', 'invoice.payment_failed'));

    const good = await m.card(customer.id, GOOD);
    const key = randomUUID();
    const ok = await m.api.gql(PAY, { input: { id: inv.id, paymentMethodId: good, idempotencyKey: key } });
    expect(ok.errors).toBeUndefined();
    expect(ok.data.payInvoice).toMatchObject({
      __typename: 'PayInvoiceSuccess',
      invoice: { id: inv.id, status: 'paid', attemptCount: 1, lastPaymentError: null, subscription: { status: 'active' } },
    });
    const replay = await m.api.gql(PAY, { input: { id: inv.id, paymentMethodId: good, idempotencyKey: key } });
    expect(replay.data.payInvoice.__typename).toBe('PayInvoiceSuccess');
    expect(replay.data.payInvoice.invoice.status).toBe('paid');
    const notOpen = await m.api.gql(PAY, { input: { id: inv.id } });
    expect(notOpen.data.payInvoice).toMatchObject({ __typename: 'StateError', code: 'invoice_not_open' });
  });
});

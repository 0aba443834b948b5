// The billing engine through REST on the merchant's test clock, the way ../shared/notes/billing-tests.md
// says: move the clock (never sleep), name the events each step must produce and check exactly
// those arrived, and after every step run the engine again and check that nothing more happens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { clockMerchant, type ClockMerchant } from './helpers/clock-merchant.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

const DAY = 86_400;

/** A merchant with its event cursor (test/helpers/clock-merchant.ts). */
const merchant = () => clockMerchant(app);
type M = ClockMerchant;

async function customerWithCard(m: M, card = '4242424242424242') {
  const c = (await m.api.post('/v1/customers', { email: `c${Math.random()}@example.com`, name: 'Ada Lovelace' })).body;
  const si = (await m.api.post('/v1/setup-intents', { customer_id: c.id })).body;
  const done = await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: card });
  expect(done.status).toBe(200);
  return { customer: c, pm: done.body.payment_method_id as string };
}

/** A customer with two saved cards: `first` its default, `second` not. */
async function customerWithTwoCards(m: M) {
  const { customer, pm: first } = await customerWithCard(m);
  const si = (await m.api.post('/v1/setup-intents', { customer_id: customer.id })).body;
  const second = (await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '5555555555554444' })).body.payment_method_id as string;
  expect((await m.api.patch(`/v1/customers/${customer.id}`, { default_payment_method_id: first })).status).toBe(200);
  return { customer, first, second };
}

async function plan(m: M, body: Record<string, unknown> = {}) {
  const r = await m.api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month', ...body });
  expect(r.status).toBe(201);
  return r.body;
}

const sorted = (...t: string[]) => t.sort();

describe('subscriptions on the test clock', () => {
  it('without a trial: the first invoice is charged at once → active, paid; renewals follow', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const p = await plan(m);
    await m.events();
    const r = await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id, metadata: { seat: '1' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const sub = r.body;
    expect(sub).toMatchObject({ object: 'subscription', status: 'active', plan_id: p.id, customer_id: customer.id, trial_end: null, metadata: { seat: '1' } });
    expect(await m.events()).toEqual(
      sorted('subscription.created', 'invoice.created', 'invoice.finalized', 'payment.created', 'payment.succeeded', 'invoice.paid', 'subscription.updated'),
    );
    const inv = (await m.api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({
      status: 'paid',
      billing_reason: 'subscription_create',
      number: expect.stringMatching(/^INV-\d{6}$/),
      total: 3000,
      amount_due: 3000,
      amount_paid: 3000,
      attempt_count: 1,
      period_start: sub.current_period_start,
      period_end: sub.current_period_end,
    });
    expect(inv.lines).toHaveLength(1);
    await m.nothingMore();

    // The renewal at the period end (invoice.upcoming 3 days before it): one invoice, charged, paid.
    await m.advance({ to: sub.current_period_end });
    expect(await m.events()).toEqual(sorted('invoice.created', 'invoice.finalized', 'invoice.upcoming', 'payment.created', 'payment.succeeded', 'invoice.paid', 'subscription.updated'));
    const renewed = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(renewed.current_period_start).toBe(sub.current_period_end);
    await m.nothingMore();
    const list = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data;
    expect(list.map((i: any) => i.status)).toEqual(['paid', 'paid']);
    expect(Number(list[0].number.slice(4))).toBe(Number(list[1].number.slice(4)) + 1);
    // The customer embeds it.
    expect((await m.api.get(`/v1/customers/${customer.id}`)).body.subscriptions.map((s: any) => s.id)).toEqual([sub.id]);
  });

  it('trial → trial_will_end 3 days before → active with a paid invoice at the trial end', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const p = await plan(m, { trial_period_days: 14 });
    await m.events();
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    expect(sub.status).toBe('trialing');
    expect(new Date(sub.trial_end).getTime() - new Date(sub.trial_start).getTime()).toBe(14 * DAY * 1000);
    expect(sub.latest_invoice_id).toBeNull();
    expect(await m.events()).toEqual(['subscription.created']);
    await m.nothingMore();

    await m.advance({ seconds: 11 * DAY });
    expect(await m.events()).toEqual(['subscription.trial_will_end']);
    await m.nothingMore();

    await m.advance({ to: sub.trial_end });
    expect(await m.events()).toEqual(sorted('invoice.created', 'invoice.finalized', 'payment.created', 'payment.succeeded', 'invoice.paid', 'subscription.updated'));
    const after = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(after).toMatchObject({ status: 'active', current_period_start: sub.trial_end });
    const inv = (await m.api.get(`/v1/invoices/${after.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'paid', total: 3000, period_start: sub.trial_end, period_end: after.current_period_end });
    await m.nothingMore();
  });

  it('renews monthly for 12 months from a Jan 31 anchor: Feb 28, Feb 29 in a leap year, Mar 31, Apr 30 …', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const p = await plan(m, { amount: 1000 });
    await m.advance({ to: '2027-01-31T10:00:00Z' });
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    // Periods run in whole seconds from the anchor (the creation time, a few ms after the advance).
    expect(sub.current_period_start).toMatch(/^2027-01-31T10:00:0\d\.000Z$/);
    const time = sub.current_period_start.slice(10);
    expect(sub.current_period_end).toBe(`2027-02-28${time}`);
    await m.events();
    // One advance over a whole year runs every renewal in time order.
    await m.advance({ to: '2028-01-31T10:00:10Z' });
    const invoices = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=100`)).body.data.reverse();
    expect(invoices).toHaveLength(13);
    expect(invoices.map((i: any) => i.period_start.slice(0, 10))).toEqual([
      '2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31', '2027-06-30', '2027-07-31',
      '2027-08-31', '2027-09-30', '2027-10-31', '2027-11-30', '2027-12-31', '2028-01-31',
    ]);
    expect(invoices.every((i: any) => i.status === 'paid' && i.total === 1000)).toBe(true);
    const events = await m.events();
    expect(events.filter((t) => t === 'invoice.paid')).toHaveLength(12);
    expect(events.filter((t) => t === 'invoice.created')).toHaveLength(12);
    await m.nothingMore();
    await m.advance({ to: '2028-02-29T10:00:10Z' });
    const leap = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(leap.current_period_start).toBe(`2028-02-29${time}`);
    expect(leap.current_period_end).toBe(`2028-03-31${time}`);
  });

  it('a failing card: past_due, retries 1, 3 and 5 days after the first failure, then unpaid', async () => {
    const m = await merchant();
    const { customer, pm } = await customerWithCard(m);
    const p = await plan(m, { trial_period_days: 7 });
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    // The customer's only card now fails every charge.
    const bad = await customerWithCardFor(m, customer.id, '4000000000009995');
    expect((await m.api.patch(`/v1/subscriptions/${sub.id}`, { payment_method_id: bad })).status).toBe(200);
    expect(pm).not.toBe(bad);
    await m.events();

    await m.advance({ to: sub.trial_end });
    expect(await m.events()).toEqual(
      sorted(
        'subscription.trial_will_end',
        'invoice.created', 'invoice.finalized', 'payment.created', 'payment.failed', 'invoice.payment_failed',
        'subscription.updated', // trialing → active, the new period
        'subscription.updated', // active → past_due
      ),
    );
    let s = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(s.status).toBe('past_due');
    let inv = (await m.api.get(`/v1/invoices/${s.latest_invoice_id}`)).body;
    const firstFailure = new Date(sub.trial_end).getTime();
    expect(inv).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: new Date(firstFailure + DAY * 1000).toISOString() });
    await m.nothingMore();

    for (const [day, attempt, next] of [[1, 2, 3], [3, 3, 5]] as const) {
      await m.advance({ to: new Date(firstFailure + day * DAY * 1000).toISOString() });
      // The previous attempt's checkout expired 24 h after it was created; the new attempt has its own.
      expect(await m.events()).toEqual(sorted('payment.expired', 'payment.created', 'payment.failed', 'invoice.payment_failed'));
      inv = (await m.api.get(`/v1/invoices/${inv.id}`)).body;
      expect(inv).toMatchObject({ status: 'open', attempt_count: attempt, next_payment_attempt: new Date(firstFailure + next * DAY * 1000).toISOString() });
      await m.nothingMore();
    }
    await m.advance({ to: new Date(firstFailure + 5 * DAY * 1000).toISOString() });
    expect(await m.events()).toEqual(sorted('payment.expired', 'payment.created', 'payment.failed', 'invoice.payment_failed', 'subscription.updated'));
    inv = (await m.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(inv).toMatchObject({ status: 'uncollectible', attempt_count: 4, next_payment_attempt: null, amount_paid: 0 });
    s = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(s.status).toBe('unpaid');
    await m.nothingMore();
    // Unpaid: the periods go on without new invoices until the merchant acts.
    await m.advance({ to: s.current_period_end });
    expect(await m.events()).toEqual(sorted('payment.expired', 'subscription.updated'));
    expect((await m.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data).toHaveLength(1);
  });

  it('cancelling an incomplete subscription (invoice_now or not) voids its first invoice and charges nothing', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m, '4000000000009995');
    const p = await plan(m);
    for (const body of [{ invoice_now: true }, {}]) {
      const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
      expect(sub.status).toBe('incomplete');
      await m.events();
      const r = await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, body);
      expect([r.status, r.body.status]).toEqual([200, 'cancelled']);
      expect(await m.events()).toEqual(sorted('subscription.cancelled', 'invoice.voided', 'payment.cancelled'));
      expect((await m.api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body).toMatchObject({ status: 'void', attempt_count: 1 });
    }
    await m.advance({ seconds: 10 * DAY });
    expect(await m.events()).toEqual([]);
  });

  it('a first invoice that cannot be paid leaves it incomplete; 23 h later it is cancelled and the invoice voided', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m, '4000000000009995');
    const p = await plan(m);
    await m.events();
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    expect(sub.status).toBe('incomplete');
    expect(await m.events()).toEqual(sorted('subscription.created', 'invoice.created', 'invoice.finalized', 'payment.created', 'payment.failed', 'invoice.payment_failed'));
    const inv = (await m.api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'open', next_payment_attempt: null });
    await m.nothingMore();
    await m.advance({ seconds: 23 * 3600 });
    expect(await m.events()).toEqual(sorted('subscription.cancelled', 'invoice.voided', 'payment.cancelled'));
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('cancelled');
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('void');
    await m.nothingMore();
  });

  it('incomplete, then paid at the invoice payment’s checkout within 23 h → active; no method at all is a failed attempt too', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m, '4000000000009995');
    const p = await plan(m);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    expect(sub.status).toBe('incomplete');
    const inv = (await m.api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    await m.events();
    // The customer pays the failed attempt's checkout with another card.
    const paid = await m.api.post(`/v1/test-helpers/payments/${inv.payment_id}/complete`, { outcome: 'succeeded' });
    expect(paid.status).toBe(200);
    expect(await m.events()).toEqual(sorted('payment.succeeded', 'invoice.paid', 'subscription.updated'));
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 3000 });
    // The incomplete deadline passes without effect.
    await m.advance({ seconds: 23 * 3600 });
    expect(await m.events()).toEqual([]);

    const c = (await m.api.post('/v1/customers', { email: 'nocard@example.com' })).body;
    const s2 = (await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: p.id })).body;
    expect(s2.status).toBe('incomplete');
    const inv2 = (await m.api.get(`/v1/invoices/${s2.latest_invoice_id}`)).body;
    expect(inv2).toMatchObject({ status: 'open', attempt_count: 1, payment_id: null });
    const v = await m.api.post(`/v1/invoices/${inv2.id}/void`);
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ status: 'void', voided_at: expect.any(String) });
    const again = await m.api.post(`/v1/invoices/${inv2.id}/void`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('invoice_not_open');
  });

  it('pause with resumes_at → no invoices while paused → active again after the advance', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const p = await plan(m);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    await m.events();
    const resumesAt = new Date(new Date(sub.current_period_end).getTime() + 10 * DAY * 1000).toISOString();
    const paused = await m.api.post(`/v1/subscriptions/${sub.id}/pause`, { resumes_at: resumesAt });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', resumes_at: resumesAt, pause_collection: { resumes_at: resumesAt } });
    expect(await m.events()).toEqual(['subscription.paused']);
    expect((await m.api.post(`/v1/subscriptions/${sub.id}/pause`)).body.error.code).toBe('subscription_not_active');
    await m.advance({ to: sub.current_period_end });
    expect(await m.events()).toEqual(['subscription.updated']); // the period moved, no invoice
    await m.advance({ to: resumesAt });
    expect(await m.events()).toEqual(['subscription.resumed']);
    const s = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(s).toMatchObject({ status: 'active', resumes_at: null, pause_collection: null });
    await m.nothingMore();
    const resume = await m.api.post(`/v1/subscriptions/${sub.id}/resume`);
    expect(resume.status).toBe(409);
    expect(resume.body.error.code).toBe('subscription_not_paused');
    expect((await m.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data).toHaveLength(1);
  });

  it('cancel at period end → reactivate → cancel at period end → cancelled at the end; immediate cancel', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const p = await plan(m);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    await m.events();
    const c1 = await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true });
    expect(c1.body).toMatchObject({ status: 'active', cancel_at_period_end: true, cancel_at: sub.current_period_end });
    expect(await m.events()).toEqual(['subscription.updated']);
    const re = await m.api.post(`/v1/subscriptions/${sub.id}/reactivate`);
    expect(re.body).toMatchObject({ status: 'active', cancel_at_period_end: false, cancel_at: null });
    expect(await m.events()).toEqual(['subscription.reactivated']);
    const re2 = await m.api.post(`/v1/subscriptions/${sub.id}/reactivate`);
    expect(re2.status).toBe(409);
    expect(re2.body.error.code).toBe('subscription_not_cancelling');
    await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true });
    await m.events();
    await m.advance({ to: sub.current_period_end });
    expect(await m.events()).toEqual(['subscription.cancelled']);
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body).toMatchObject({ status: 'cancelled', cancelled_at: sub.current_period_end });
    await m.nothingMore();
    expect((await m.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data).toHaveLength(1);

    const other = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    await m.events();
    const now = await m.api.post(`/v1/subscriptions/${other.id}/cancel`, {});
    expect(now.body).toMatchObject({ status: 'cancelled', cancelled_at: expect.any(String) });
    expect(await m.events()).toEqual(['subscription.cancelled']);
    const twice = await m.api.post(`/v1/subscriptions/${other.id}/cancel`, {});
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('subscription_cancelled');
    await m.advance({ to: other.current_period_end });
    expect(await m.events()).toEqual([]);
  });

  it('plan changes: create_prorations on the next invoice, always_invoice at once, none from the next period — exact amounts', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    // 30-day periods make the arithmetic plain: a third of a period left = a third of each price.
    const basic = await plan(m, { name: 'Basic', amount: 3000, interval: 'day', interval_count: 30 });
    const pro = await plan(m, { name: 'Pro', amount: 9000, interval: 'day', interval_count: 30 });
    const mk = async () => (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: basic.id })).body;
    const a = await mk();
    const b = await mk();
    const c = await mk();
    await m.advance({ seconds: 20 * DAY }); // 10 of 30 days left
    await m.events();

    const pa = await m.api.patch(`/v1/subscriptions/${a.id}`, { plan_id: pro.id, proration_behavior: 'create_prorations' });
    expect(pa.status, JSON.stringify(pa.body)).toBe(200);
    expect(pa.body.plan_id).toBe(pro.id);
    expect(await m.events()).toEqual(['subscription.updated']);
    const pb = await m.api.patch(`/v1/subscriptions/${b.id}`, { plan_id: pro.id, proration_behavior: 'always_invoice' });
    expect(pb.status).toBe(200);
    const now = (await m.api.get(`/v1/invoices/${pb.body.latest_invoice_id}`)).body;
    expect(now).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', total: -1000 + 3000, amount_paid: 2000 });
    expect(now.lines.map((l: any) => [l.amount, l.proration])).toEqual([[-1000, true], [3000, true]]);
    expect(await m.events()).toEqual(sorted('subscription.updated', 'invoice.created', 'invoice.finalized', 'payment.created', 'payment.succeeded', 'invoice.paid'));
    const pc = await m.api.patch(`/v1/subscriptions/${c.id}`, { plan_id: pro.id, proration_behavior: 'none' });
    expect(pc.status).toBe(200);
    expect(await m.events()).toEqual(['subscription.updated']);
    expect((await m.api.get(`/v1/invoices?subscription_id=${c.id}`)).body.data).toHaveLength(1);

    // (The three were created within a second or two of each other: advance past the last one's end.)
    await m.advance({ to: [a, b, c].map((x) => x.current_period_end).sort().at(-1) });
    const next = async (id: string) => (await m.api.get(`/v1/invoices?subscription_id=${id}&limit=1`)).body.data[0];
    const ia = await next(a.id);
    expect(ia.lines.map((l: any) => [l.amount, l.proration])).toEqual([[9000, false], [-1000, true], [3000, true]]);
    expect(ia).toMatchObject({ total: 11000, status: 'paid' });
    expect((await next(b.id)).total).toBe(9000);
    expect((await next(c.id)).total).toBe(9000);
    const renewal = ['invoice.upcoming', 'invoice.created', 'invoice.finalized', 'payment.created', 'payment.succeeded', 'invoice.paid', 'subscription.updated'];
    expect(await m.events()).toEqual(sorted(...renewal, ...renewal, ...renewal));
    await m.nothingMore();
  });

  it('a downgrade credit larger than the invoice goes to the customer’s credit balance, which the next invoices draw', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const big = await plan(m, { name: 'Big', amount: 9000, interval: 'day', interval_count: 30 });
    const small = await plan(m, { name: 'Small', amount: 300, interval: 'day', interval_count: 30 });
    const s = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: big.id })).body;
    await m.advance({ seconds: 15 * DAY }); // half left
    const r = await m.api.patch(`/v1/subscriptions/${s.id}`, { plan_id: small.id, proration_behavior: 'always_invoice' });
    const inv = (await m.api.get(`/v1/invoices/${r.body.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ total: -4500 + 150, amount_due: 0, status: 'paid', credited_to_balance: 4350 });
    expect((await m.api.get(`/v1/customers/${customer.id}`)).body.credit_balance).toEqual({ USD: 4350 });
    await m.advance({ to: s.current_period_end });
    const nextInv = (await m.api.get(`/v1/invoices?subscription_id=${s.id}&limit=1`)).body.data[0];
    // 300 for the period, drawn from the 4,350 in the balance: nothing due, 4,050 left there.
    expect(nextInv).toMatchObject({ total: 300, credit_applied: 300, amount_due: 0, status: 'paid', credited_to_balance: 0 });
    expect(nextInv.lines.map((l: any) => l.amount)).toEqual([300]);
    expect((await m.api.get(`/v1/customers/${customer.id}`)).body.credit_balance).toEqual({ USD: 4050 });
  });

  it('deleting the customer cancels its subscriptions at once', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const p = await plan(m);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    await m.events();
    expect((await m.api.del(`/v1/customers/${customer.id}`)).status).toBe(200);
    const types = await m.events();
    expect(types).toContain('subscription.cancelled');
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('cancelled');
  });

  it('a pinned card that is removed no longer pins the subscription: renewals charge the customer’s default (REST and GraphQL)', async () => {
    const m = await merchant();
    // A second card, to pin to the subscription; the first stays the customer's default.
    const { customer, first, second } = await customerWithTwoCards(m);
    const p = await plan(m);
    const r = await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id, payment_method_id: second });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const sub = r.body;
    expect(sub).toMatchObject({ status: 'active', payment_method_id: second });
    await m.events();

    // Removing the pinned card releases the pin in the same change.
    expect((await m.api.del(`/v1/payment-methods/${second}`)).status).toBe(200);
    const evs = await m.eventObjects();
    expect(evs.map((e) => e.type).sort()).toEqual(['payment_method.detached', 'subscription.updated']);
    const updated = evs.find((e) => e.type === 'subscription.updated')!;
    expect(updated.data.object).toMatchObject({ id: sub.id, payment_method_id: null });
    expect(updated.data.previous_attributes).toEqual({ payment_method_id: second });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.payment_method_id).toBeNull();

    // The renewal charges the customer's default and the subscription stays active.
    await m.advance({ to: sub.current_period_end });
    expect(await m.events()).toEqual(sorted('invoice.created', 'invoice.finalized', 'invoice.upcoming', 'payment.created', 'payment.succeeded', 'invoice.paid', 'subscription.updated'));
    const renewed = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(renewed.status).toBe('active');
    const inv = (await m.api.get(`/v1/invoices/${renewed.latest_invoice_id}`)).body;
    expect(inv.status).toBe('paid');
    expect((await m.api.get(`/v1/payments/${inv.payment_id}`)).body.payment_method_id).toBe(first);

    // Through GraphQL: pin the default, detach it → the pin is released there too.
    expect((await m.api.patch(`/v1/subscriptions/${sub.id}`, { payment_method_id: first })).status).toBe(200);
    const detached = await m.api.gql(
      `mutation($input: DetachPaymentMethodInput!) { detachPaymentMethod(input: $input) { __typename ... on DetachPaymentMethodSuccess { paymentMethod { id } } } }`,
      { input: { id: first } },
    );
    expect(detached.data.detachPaymentMethod).toEqual({ __typename: 'DetachPaymentMethodSuccess', paymentMethod: { id: first } });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.payment_method_id).toBeNull();
  });

  it('a pin left on a detached card (made before pins were released) is passed over at the charge for the default', async () => {
    const m = await merchant();
    const { customer, first, second } = await customerWithTwoCards(m);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: (await plan(m)).id })).body;
    expect((await m.api.del(`/v1/payment-methods/${second}`)).status).toBe(200);
    // The state an older version left behind: the subscription still names the detached card.
    await app.services.db.query('UPDATE subscriptions SET payment_method_id = $1 WHERE id = $2', [second, sub.id]);
    await m.events();
    await m.advance({ to: sub.current_period_end });
    expect(await m.events()).toEqual(sorted('invoice.created', 'invoice.finalized', 'invoice.upcoming', 'payment.created', 'payment.succeeded', 'invoice.paid', 'subscription.updated'));
    const renewed = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(renewed.status).toBe('active');
    const inv = (await m.api.get(`/v1/invoices/${renewed.latest_invoice_id}`)).body;
    expect((await m.api.get(`/v1/payments/${inv.payment_id}`)).body.payment_method_id).toBe(first);
  });

  it('draws from the customer’s wallet first with apply_wallet_balance', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const w = (await m.api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD' })).body;
    expect((await m.api.post(`/v1/wallets/${w.id}/credit`, { amount: 1200, description: 'Welcome gift', reference: 'gift' })).status).toBe(201);
    const p = await plan(m, { amount: 3000 });
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id, apply_wallet_balance: true })).body;
    expect(sub.status).toBe('active');
    const inv = (await m.api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ total: 3000, amount_from_wallet: 1200, amount_due: 1800, amount_paid: 1800, status: 'paid' });
    const wallet = (await m.api.get(`/v1/wallets/${w.id}`)).body;
    expect(wallet.balance).toBe(0);
    const tx = (await m.api.get(`/v1/wallets/${w.id}/transactions`)).body.data[0];
    expect(tx).toMatchObject({ type: 'debit', amount: 1200, reference: inv.id });
  });
});

async function customerWithCardFor(m: M, customerId: string, card: string) {
  const si = (await m.api.post('/v1/setup-intents', { customer_id: customerId })).body;
  const done = await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: card });
  return done.body.payment_method_id as string;
}

const DECLINE = '4000000000009995';

/** A subscription whose first invoice (after a 7-day trial) is declined: past_due, its invoice open. */
async function pastDue(m: M, planBody: Record<string, unknown> = {}) {
  const { customer } = await customerWithCard(m);
  const p = await plan(m, { trial_period_days: 7, ...planBody });
  const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
  const bad = await customerWithCardFor(m, customer.id, DECLINE);
  expect((await m.api.patch(`/v1/subscriptions/${sub.id}`, { payment_method_id: bad })).status).toBe(200);
  await m.advance({ to: sub.trial_end });
  const s = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
  expect(s.status).toBe('past_due');
  const inv = (await m.api.get(`/v1/invoices/${s.latest_invoice_id}`)).body;
  expect(inv).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: expect.any(String) });
  await m.events();
  return { customer, sub: s, inv, firstFailure: new Date(sub.trial_end).getTime() };
}

const pendingCharges = (invoiceId: string) =>
  app.services.db.prisma.job.count({ where: { kind: 'invoice.charge', status: { in: ['pending', 'running'] }, payload: { path: ['invoice_id'], equals: invoiceId } } });

// Issue 23, defect 3: voiding forgives. A void applies to open and uncollectible invoices (as
// Stripe's); when the voided invoice was what the subscription owed, a past_due or unpaid
// subscription is active again in its current period, and the invoice's retries stop.
describe('voiding the invoice a past_due or unpaid subscription owes', () => {
  it('past_due: voiding its open invoice makes it active in the same period, with the events, and no retry charges it afterwards', async () => {
    const m = await merchant();
    const { customer, sub, inv, firstFailure } = await pastDue(m);
    expect(await pendingCharges(inv.id)).toBeGreaterThan(0); // the retry a day later
    const payments = (await m.api.get(`/v1/payments?customer_id=${customer.id}&limit=100`)).body.data.length;

    const v = await m.api.post(`/v1/invoices/${inv.id}/void`);
    expect(v.status, JSON.stringify(v.body)).toBe(200);
    expect(v.body).toMatchObject({ id: inv.id, status: 'void', voided_at: expect.any(String), next_payment_attempt: null });
    const events = await m.eventObjects();
    // The failed attempt's checkout closes with the void.
    expect(events.map((e) => e.type).sort()).toEqual(sorted('invoice.voided', 'payment.cancelled', 'subscription.updated'));
    const voided = events.find((e) => e.type === 'invoice.voided')!;
    expect(voided.data.object).toMatchObject({ id: inv.id, status: 'void' });
    expect(voided.data.previous_attributes).toMatchObject({ status: 'open', voided_at: null });
    const updated = events.find((e) => e.type === 'subscription.updated')!;
    expect(updated.data.object).toMatchObject({ id: sub.id, status: 'active' });
    expect(updated.data.previous_attributes).toEqual({ status: 'past_due' });

    // Active in its current period: nothing else about it changed, and the void made no invoice.
    const after = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(after).toMatchObject({
      status: 'active',
      current_period_start: sub.current_period_start,
      current_period_end: sub.current_period_end,
      latest_invoice_id: inv.id,
    });
    expect((await m.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data).toHaveLength(1);
    expect(await pendingCharges(inv.id)).toBe(0);
    await m.nothingMore();

    // Past every retry time (1, 3 and 5 days after the failure): no attempt, no event.
    await m.advance({ to: new Date(firstFailure + 6 * DAY * 1000).toISOString() });
    expect(await m.events()).toEqual([]);
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'void', attempt_count: 1 });
    expect((await m.api.get(`/v1/payments?customer_id=${customer.id}&limit=100`)).body.data).toHaveLength(payments);
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');

    // The period goes on: its end bills the next one as any active subscription's (the card still declines).
    await m.advance({ to: sub.current_period_end });
    expect(await m.events()).toEqual(
      sorted('invoice.upcoming', 'invoice.created', 'invoice.finalized', 'payment.created', 'payment.failed', 'invoice.payment_failed', 'subscription.updated', 'subscription.updated'),
    );
    const renewed = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(renewed).toMatchObject({ status: 'past_due', current_period_start: sub.current_period_end });
    expect((await m.api.get(`/v1/invoices/${renewed.latest_invoice_id}`)).body).toMatchObject({ status: 'open', period_start: sub.current_period_end });

    // A void, paid or voided invoice still cannot be voided.
    const again = await m.api.post(`/v1/invoices/${inv.id}/void`);
    expect([again.status, again.body.error.code]).toEqual([409, 'invoice_not_open']);
  });

  it('unpaid: its uncollectible invoice can be voided → 200, the invoice void, the subscription active (forgiven)', async () => {
    const m = await merchant();
    const { sub, inv, firstFailure } = await pastDue(m);
    await m.advance({ to: new Date(firstFailure + 5 * DAY * 1000).toISOString() });
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'uncollectible', attempt_count: 4, next_payment_attempt: null });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('unpaid');
    await m.events();

    const v = await m.api.post(`/v1/invoices/${inv.id}/void`);
    expect(v.status, JSON.stringify(v.body)).toBe(200);
    expect(v.body).toMatchObject({ id: inv.id, status: 'void', voided_at: expect.any(String), amount_paid: 0 });
    const events = await m.eventObjects();
    // The last attempt's checkout (open for 24 h) closes.
    expect(events.map((e) => e.type).sort()).toEqual(sorted('invoice.voided', 'payment.cancelled', 'subscription.updated'));
    expect(events.find((e) => e.type === 'invoice.voided')!.data.previous_attributes).toMatchObject({ status: 'uncollectible', voided_at: null });
    const updated = events.find((e) => e.type === 'subscription.updated')!;
    expect(updated.data.object).toMatchObject({ id: sub.id, status: 'active' });
    expect(updated.data.previous_attributes).toEqual({ status: 'unpaid' });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body).toMatchObject({
      status: 'active',
      current_period_start: sub.current_period_start,
      current_period_end: sub.current_period_end,
    });
    expect((await m.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data).toHaveLength(1);
    await m.nothingMore();
    const again = await m.api.post(`/v1/invoices/${inv.id}/void`);
    expect([again.status, again.body.error.code]).toEqual([409, 'invoice_not_open']);
  });

  it('past_due with two unpaid invoices: voiding one leaves it past_due; voiding the other makes it active', async () => {
    const m = await merchant();
    // Two-day periods: the renewal comes while the first invoice is still in dunning.
    const { sub, inv: first } = await pastDue(m, { interval: 'day', interval_count: 2 });
    await m.advance({ to: new Date(new Date(sub.current_period_end).getTime() + 3600_000).toISOString() });
    const s = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(s.status).toBe('past_due');
    expect(s.latest_invoice_id).not.toBe(first.id);
    const open = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&status=open`)).body.data.map((i: any) => i.id).sort();
    expect(open).toEqual([first.id, s.latest_invoice_id].sort());
    await m.events();

    expect((await m.api.post(`/v1/invoices/${first.id}/void`)).status).toBe(200);
    expect(await m.events()).not.toContain('subscription.updated');
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('past_due');

    expect((await m.api.post(`/v1/invoices/${s.latest_invoice_id}/void`)).status).toBe(200);
    expect(await m.events()).toEqual(sorted('invoice.voided', 'payment.cancelled', 'subscription.updated'));
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    expect(await pendingCharges(first.id)).toBe(0);
    expect(await pendingCharges(s.latest_invoice_id)).toBe(0);
  });
});

describe('subscriptions: bad input and other merchants', () => {
  it('answers 4xx with the error body, never a 500', async () => {
    const m = await merchant();
    const other = await merchant();
    const { customer, pm } = await customerWithCard(m);
    const p = await plan(m);
    const archived = await plan(m);
    await m.api.post(`/v1/plans/${archived.id}/archive`);
    const cases: [Record<string, unknown>, number, string, string | null][] = [
      [{ plan_id: p.id }, 400, 'parameter_missing', 'customer_id'],
      [{ customer_id: customer.id, plan_id: 'plan_nope' }, 404, 'resource_missing', 'plan_id'],
      [{ customer_id: 'cus_nope', plan_id: p.id }, 404, 'resource_missing', 'customer_id'],
      [{ customer_id: customer.id, plan_id: archived.id }, 409, 'plan_archived', 'plan_id'],
      [{ customer_id: customer.id, plan_id: p.id, trial_end: '2020-01-01T00:00:00Z' }, 400, 'parameter_invalid', 'trial_end'],
      [{ customer_id: customer.id, plan_id: p.id, trial_period_days: 731 }, 400, 'parameter_invalid', 'trial_period_days'],
      [{ customer_id: customer.id, plan_id: p.id, trial_period_days: 3, trial_end: '2099-01-01T00:00:00Z' }, 400, 'parameter_invalid', 'trial_end'],
      [{ customer_id: customer.id, plan_id: p.id, color: 'red' }, 400, 'parameter_unknown', 'color'],
      [{ customer_id: customer.id, plan_id: p.id, payment_method_id: 'pm_nope' }, 404, 'resource_missing', 'payment_method_id'],
      [{ customer_id: 'cus_\u0000', plan_id: p.id }, 400, 'parameter_invalid', 'customer_id'],
    ];
    for (const [body, status, code, param] of cases) {
      const r = await m.api.post('/v1/subscriptions', body);
      expect([r.status, r.body.error?.code, r.body.error?.param], JSON.stringify(body)).toEqual([status, code, param]);
    }
    expect((await m.api.post('/v1/plans', { name: 'x', amount: 1, currency: 'USD', interval: 'fortnight' })).status).toBe(400);
    // Another merchant's records do not exist here.
    expect((await other.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).status).toBe(404);
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id, payment_method_id: pm })).body;
    expect((await other.api.get(`/v1/subscriptions/${sub.id}`)).status).toBe(404);
    expect((await other.api.post(`/v1/subscriptions/${sub.id}/cancel`, {})).status).toBe(404);
    expect((await other.api.get(`/v1/invoices/${sub.latest_invoice_id}`)).status).toBe(404);
    expect((await other.api.get(`/v1/invoices/${sub.latest_invoice_id}/pdf`, {})).status).toBe(404);
    // Changing a plan to another currency or period, or a cancelled subscription.
    const eur = await plan(m, { currency: 'EUR' });
    const bad = await m.api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: eur.id });
    expect([bad.status, bad.body.error.param]).toEqual([400, 'plan_id']);
    const trialEnd = await m.api.patch(`/v1/subscriptions/${sub.id}`, { trial_end: '2099-01-01T00:00:00Z' });
    expect([trialEnd.status, trialEnd.body.error.code]).toEqual([409, 'subscription_not_trialing']);
    await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, {});
    const late = await m.api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: p.id, proration_behavior: 'always_invoice' });
    expect([late.status, late.body.error.code]).toEqual([409, 'subscription_cancelled']);
    const badBehavior = await m.api.patch(`/v1/subscriptions/${sub.id}`, { proration_behavior: 'sometimes' });
    expect([badBehavior.status, badBehavior.body.error.param]).toEqual([400, 'proration_behavior']);
    expect((await m.api.get('/v1/subscriptions?status=sleeping')).status).toBe(400);
    expect((await m.api.get('/v1/invoices?status=lost')).status).toBe(400);
    expect((await m.api.get('/v1/subscriptions/sub_%00')).status).toBe(400);
    const pause = await m.api.post(`/v1/subscriptions/${sub.id}/pause`, { resumes_at: 'tomorrow' });
    expect([pause.status, pause.body.error.param]).toEqual([400, 'resumes_at']);
  });
});

// Billing lifecycle rules (API-CONVENTIONS.md): cancelling stops automatic collection of the
// subscription's open invoices (they stay open, payable by hand) unless `invoice_now` charges them
// once at once (then the normal retry schedule); waiting prorations are collected on a final invoice.
describe('cancelling: collection of open invoices and the waiting prorations', () => {
  it('an immediate cancel of a past_due subscription stops its retries: 10 days on, no attempt, the invoice still open', async () => {
    const m = await merchant();
    const { customer, sub, inv, firstFailure } = await pastDue(m);
    expect(await pendingCharges(inv.id)).toBeGreaterThan(0); // the retry a day after the failure
    const payments = (await m.api.get(`/v1/payments?customer_id=${customer.id}&limit=100`)).body.data.length;
    await m.advance({ to: new Date(firstFailure + DAY * 250).toISOString() }); // 6 h on
    await m.events();

    const c = await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, {});
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body).toMatchObject({ status: 'cancelled', latest_invoice_id: inv.id });
    expect(await m.events()).toEqual(['subscription.cancelled']);
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: null, amount_remaining: inv.amount_due });
    expect(await pendingCharges(inv.id)).toBe(0);
    await m.nothingMore();

    await m.advance({ seconds: 10 * DAY });
    // Only the failed attempt's checkout lapsing (24 h after it was made): no new attempt.
    expect(await m.events()).toEqual(['payment.expired']);
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: null });
    expect((await m.api.get(`/v1/payments?customer_id=${customer.id}&limit=100`)).body.data).toHaveLength(payments);
    await m.nothingMore();
  });

  it('with invoice_now: the open invoice is charged once at once, then retried on the schedule (3 and 5 days after the first failure)', async () => {
    const m = await merchant();
    const { sub, inv, firstFailure } = await pastDue(m);
    await m.advance({ to: new Date(firstFailure + DAY * 250).toISOString() }); // 6 h on: the day-1 retry not yet due
    await m.events();

    const c = await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, { invoice_now: true });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body).toMatchObject({ status: 'cancelled' });
    // The attempt at once closes the previous attempt's checkout.
    expect(await m.events()).toEqual(sorted('subscription.cancelled', 'payment.cancelled', 'payment.created', 'payment.failed', 'invoice.payment_failed'));
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({
      status: 'open',
      attempt_count: 2,
      next_payment_attempt: new Date(firstFailure + 3 * DAY * 1000).toISOString(),
    });
    await m.nothingMore();
    // The day-1 retry was the attempt made at once: nothing at day 1.
    await m.advance({ to: new Date(firstFailure + DAY * 1000).toISOString() });
    expect(await m.events()).toEqual([]);

    await m.advance({ to: new Date(firstFailure + 3 * DAY * 1000).toISOString() });
    expect(await m.events()).toEqual(sorted('payment.expired', 'payment.created', 'payment.failed', 'invoice.payment_failed'));
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'open', attempt_count: 3, next_payment_attempt: new Date(firstFailure + 5 * DAY * 1000).toISOString() });
    await m.advance({ to: new Date(firstFailure + 5 * DAY * 1000).toISOString() });
    // The last attempt: uncollectible (the subscription, cancelled, stays cancelled).
    expect(await m.events()).toEqual(sorted('payment.expired', 'payment.created', 'payment.failed', 'invoice.payment_failed'));
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'uncollectible', attempt_count: 4, next_payment_attempt: null });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('cancelled');
    await m.nothingMore();

    const both = await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true, invoice_now: true });
    expect([both.status, both.body.error.code, both.body.error.param]).toEqual([400, 'parameter_invalid', 'invoice_now']);
  });

  it('an upgrade with create_prorations then cancel_at_period_end: a final invoice of the proration lines at the period end, charged', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const basic = await plan(m, { name: 'Basic', amount: 3000, interval: 'day', interval_count: 30 });
    const pro = await plan(m, { name: 'Pro', amount: 9000, interval: 'day', interval_count: 30 });
    const s = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: basic.id })).body;
    await m.advance({ seconds: 20 * DAY }); // 10 of 30 days left
    expect((await m.api.patch(`/v1/subscriptions/${s.id}`, { plan_id: pro.id, proration_behavior: 'create_prorations' })).status).toBe(200);
    expect((await m.api.post(`/v1/subscriptions/${s.id}/cancel`, { cancel_at_period_end: true })).body).toMatchObject({ cancel_at_period_end: true });
    await m.events();
    await m.nothingMore();

    await m.advance({ to: s.current_period_end });
    expect(await m.events()).toEqual(sorted('subscription.cancelled', 'invoice.created', 'invoice.finalized', 'payment.created', 'payment.succeeded', 'invoice.paid'));
    const ended = (await m.api.get(`/v1/subscriptions/${s.id}`)).body;
    expect(ended).toMatchObject({ status: 'cancelled', cancelled_at: s.current_period_end });
    const final = (await m.api.get(`/v1/invoices/${ended.latest_invoice_id}`)).body;
    expect(final).toMatchObject({ billing_reason: 'subscription_cycle', status: 'paid', total: 2000, amount_paid: 2000, period_end: s.current_period_end });
    expect(final.lines.map((l: any) => [l.amount, l.proration])).toEqual([[-1000, true], [3000, true]]);
    expect((await m.api.get(`/v1/invoices?subscription_id=${s.id}`)).body.data).toHaveLength(2);
    await m.nothingMore();
    await m.advance({ seconds: 40 * DAY });
    expect(await m.events()).toEqual([]);
    expect((await m.api.get(`/v1/invoices?subscription_id=${s.id}`)).body.data).toHaveLength(2);
  });

  it('immediate cancels: waiting charges are dropped (as Stripe), invoiced at once with invoice_now; a waiting credit is never dropped', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const basic = await plan(m, { name: 'Basic', amount: 3000, interval: 'day', interval_count: 30 });
    const pro = await plan(m, { name: 'Pro', amount: 9000, interval: 'day', interval_count: 30 });
    const mk = async () => (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: basic.id })).body;
    const [up, upNow, down] = [await mk(), await mk(), await mk()];
    await m.advance({ seconds: 20 * DAY });
    for (const [s, to] of [[up, pro], [upNow, pro]] as const) {
      expect((await m.api.patch(`/v1/subscriptions/${s.id}`, { plan_id: to.id })).status).toBe(200);
    }
    const small = await plan(m, { name: 'Small', amount: 300, interval: 'day', interval_count: 30 });
    expect((await m.api.patch(`/v1/subscriptions/${down.id}`, { plan_id: small.id })).status).toBe(200); // −1000 + 100
    await m.events();
    const waiting = (id: string) => app.services.db.prisma.invoiceItem.findMany({ where: { subscriptionId: id, invoiceId: null }, select: { amount: true } });

    expect((await m.api.post(`/v1/subscriptions/${up.id}/cancel`, {})).status).toBe(200);
    expect(await m.events()).toEqual(['subscription.cancelled']);
    expect(await waiting(up.id)).toEqual([]);

    const now = await m.api.post(`/v1/subscriptions/${upNow.id}/cancel`, { invoice_now: true });
    expect(await m.events()).toEqual(sorted('subscription.cancelled', 'invoice.created', 'invoice.finalized', 'payment.created', 'payment.succeeded', 'invoice.paid'));
    const final = (await m.api.get(`/v1/invoices/${now.body.latest_invoice_id}`)).body;
    expect(final).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', total: 2000 });

    // The downgrade's net credit (−1000 + 100) is owed to the customer: it goes to their credit balance.
    expect((await m.api.post(`/v1/subscriptions/${down.id}/cancel`, {})).status).toBe(200);
    expect(await m.events()).toEqual(['customer.balance_changed', 'subscription.cancelled']);
    expect(await waiting(down.id)).toEqual([]);
    const [credit] = (await m.api.get(`/v1/customers/${customer.id}/balance-transactions`)).body.data;
    expect(credit).toMatchObject({ type: 'subscription_credit', subscription_id: down.id, amount: 900, currency: 'USD' });
    expect((await m.api.get(`/v1/customers/${customer.id}`)).body.credit_balance).toEqual({ USD: 900 });
    await m.nothingMore();
  });

  it('invoice_now with an Idempotency-Key charges the card for real after the cancel commits, and a replay charges nothing more', async () => {
    const m = await merchant();
    const { customer } = await customerWithCard(m);
    const basic = await plan(m, { name: 'Basic', amount: 3000, interval: 'day', interval_count: 30 });
    const pro = await plan(m, { name: 'Pro', amount: 9000, interval: 'day', interval_count: 30 });
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: basic.id })).body;
    await m.advance({ seconds: 20 * DAY });
    expect((await m.api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: pro.id })).status).toBe(200);
    await m.events();
    const key = { 'Idempotency-Key': `cancel-${sub.id}` };
    const first = await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, { invoice_now: true }, key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(await m.events()).toEqual(sorted('subscription.cancelled', 'invoice.created', 'invoice.finalized', 'payment.created', 'payment.succeeded', 'invoice.paid'));
    const final = (await m.api.get(`/v1/invoices/${first.body.latest_invoice_id}`)).body;
    expect(final).toMatchObject({ status: 'paid', total: 2000 });
    expect((await m.api.get(`/v1/payments/${final.payment_id}`)).body.status).toBe('succeeded');
    const again = await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, { invoice_now: true }, key);
    expect([again.status, again.body]).toEqual([200, first.body]);
    await m.nothingMore();
  });
});

// Billing lifecycle rules, "Recovery": making a working method the default retries at once the
// invoices the customer's past_due/unpaid subscriptions owe, after the change commits.
describe('a new default payment method retries what past_due subscriptions owe', () => {
  /** A subscription charging the customer's default (a declining card): past_due after its trial. */
  async function pastDueOnDefault(m: M) {
    const { customer, pm: bad } = await customerWithCard(m, DECLINE);
    expect((await m.api.get(`/v1/customers/${customer.id}`)).body.default_payment_method_id).toBe(bad);
    const p = await plan(m, { trial_period_days: 7 });
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: p.id })).body;
    expect(sub.payment_method_id).toBeNull();
    await m.advance({ to: sub.trial_end });
    const s = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(s.status).toBe('past_due');
    const inv = (await m.api.get(`/v1/invoices/${s.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'open', attempt_count: 1 });
    const good = await customerWithCardFor(m, customer.id, '4242424242424242');
    await m.events();
    return { customer, sub: s, inv, good, bad };
  }

  it('PATCH /v1/customers/:id {default_payment_method_id}: the open invoice is paid at once and the subscription active in its period', async () => {
    const m = await merchant();
    const { customer, sub, inv, good } = await pastDueOnDefault(m);
    const r = await m.api.patch(`/v1/customers/${customer.id}`, { default_payment_method_id: good });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.default_payment_method_id).toBe(good);
    expect(await m.events()).toEqual(sorted('customer.updated', 'payment.cancelled', 'payment.created', 'payment.succeeded', 'invoice.paid', 'subscription.updated'));
    const paid = (await m.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(paid).toMatchObject({ status: 'paid', attempt_count: 2, amount_paid: 3000, next_payment_attempt: null });
    expect((await m.api.get(`/v1/payments/${paid.payment_id}`)).body).toMatchObject({ status: 'succeeded', payment_method_id: good });
    const s = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(s).toMatchObject({ status: 'active', current_period_start: sub.current_period_start, current_period_end: sub.current_period_end });
    // The dunning retry a day later charges nothing more.
    await m.advance({ seconds: 2 * DAY });
    expect((await m.api.get(`/v1/payments?customer_id=${customer.id}&limit=100`)).body.data.filter((p: any) => p.status === 'succeeded')).toHaveLength(1);
  });

  it('with an Idempotency-Key the charge is real (payment succeeded), and a replay charges nothing more', async () => {
    const m = await merchant();
    const { customer, sub, inv, good } = await pastDueOnDefault(m);
    const key = { 'Idempotency-Key': `default-${customer.id}` };
    const first = await m.api.patch(`/v1/customers/${customer.id}`, { default_payment_method_id: good }, key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const paid = (await m.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(paid).toMatchObject({ status: 'paid', last_payment_error: null });
    expect((await m.api.get(`/v1/payments/${paid.payment_id}`)).body.status).toBe('succeeded');
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    await m.events();
    const again = await m.api.patch(`/v1/customers/${customer.id}`, { default_payment_method_id: good }, key);
    expect([again.status, again.body]).toEqual([200, first.body]);
    await m.nothingMore();
  });

  // "A paid unpaid one (whose periods were not invoiced while unpaid) becomes active with a new
  // period starting at that moment (billing_cycle_anchor = now, invoiced at once)": a customer
  // recovering long after dunning ended pays what they owed, then the period from now — not the
  // rest of a current period for free.
  it('unpaid: the uncollectible invoice is paid, then a new period starts now, invoiced and charged at once; renewals go on from the new anchor', async () => {
    const m = await merchant();
    const { customer, sub, inv, good } = await pastDueOnDefault(m);
    // Dunning ends (retries 1, 3, 5 days after the first failure) and a whole period passes unpaid, uninvoiced.
    await m.advance({ seconds: 6 * DAY });
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('uncollectible');
    await m.advance({ to: sub.current_period_end });
    await m.advance({ seconds: 10 * DAY });
    const unpaid = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(unpaid).toMatchObject({ status: 'unpaid', latest_invoice_id: inv.id });
    expect(unpaid.current_period_start).toBe(sub.current_period_end);
    await m.events();
    const before = Date.parse((await m.api.get('/v1/test-helpers/clock')).body.now);
    const r = await m.api.patch(`/v1/customers/${customer.id}`, { default_payment_method_id: good });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const after = Date.parse((await m.api.get('/v1/test-helpers/clock')).body.now);
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 3000 });
    const s = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    // The new period starts when the payment settled (whole seconds; the test clock runs on in real time).
    const start = new Date(s.current_period_start);
    expect(start.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(start.getTime()).toBeLessThanOrEqual(after);
    const end = new Date(start);
    end.setUTCMonth(end.getUTCMonth() + 1);
    expect(s).toMatchObject({ status: 'active', current_period_start: start.toISOString(), current_period_end: end.toISOString() });
    expect(s.latest_invoice_id).not.toBe(inv.id);
    const fresh = (await m.api.get(`/v1/invoices/${s.latest_invoice_id}`)).body;
    expect(fresh).toMatchObject({ billing_reason: 'subscription_cycle', amount_due: 3000, period_start: start.toISOString(), period_end: end.toISOString() });
    // Its first attempt is due now: the worker, or else the engine's next run, charges it (the new default, working).
    await m.advance({ seconds: 1 });
    expect((await m.api.get(`/v1/invoices/${fresh.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 3000 });
    // The uncollectible invoice's last checkout had lapsed: nothing to cancel.
    expect(await m.events()).toEqual(
      sorted(
        'customer.updated',
        ...['payment.created', 'payment.succeeded', 'invoice.paid'],
        'subscription.updated',
        ...['invoice.created', 'invoice.finalized', 'payment.created', 'payment.succeeded', 'invoice.paid'],
      ),
    );
    await m.nothingMore();
    // The next renewal is a month after the new anchor: a new invoice (not one of the first anchor's periods found again).
    await m.advance({ to: end.toISOString() });
    const renewed = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(renewed.current_period_start).toBe(end.toISOString());
    expect(renewed.latest_invoice_id).not.toBe(fresh.id);
    expect((await m.api.get(`/v1/invoices/${renewed.latest_invoice_id}`)).body).toMatchObject({ status: 'paid', period_start: end.toISOString(), amount_paid: 3000 });
    const invoices = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=100`)).body.data;
    expect(invoices.map((i: any) => i.status)).toEqual(['paid', 'paid', 'paid']);
  });

  // Found by a cold try: dunning runs out 5 days after the first failure, inside the period the
  // failed invoice bills. Paid then, the subscription is active in that (billed) period — a new
  // period from now would bill the rest of it twice.
  it('unpaid inside the period its failed invoice bills: paid → active in that period, nothing billed twice', async () => {
    const m = await merchant();
    const { customer, sub, inv, good } = await pastDueOnDefault(m);
    await m.advance({ seconds: 6 * DAY });
    const unpaid = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(unpaid).toMatchObject({ status: 'unpaid', current_period_start: sub.current_period_start, current_period_end: sub.current_period_end });
    await m.events();
    expect((await m.api.patch(`/v1/customers/${customer.id}`, { default_payment_method_id: good })).status).toBe(200);
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('paid');
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body).toMatchObject({
      status: 'active',
      current_period_start: sub.current_period_start,
      current_period_end: sub.current_period_end,
      latest_invoice_id: inv.id,
    });
    expect(await m.events()).toEqual(sorted('customer.updated', 'payment.created', 'payment.succeeded', 'invoice.paid', 'subscription.updated'));
    await m.nothingMore();
    // The next period is billed at its start, once.
    await m.advance({ to: sub.current_period_end });
    const invoices = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=100`)).body.data;
    expect(invoices.map((i: any) => [i.period_start, i.status])).toEqual([
      [sub.current_period_end, 'paid'],
      [sub.current_period_start, 'paid'],
    ]);
  });

  it('unpaid and set to cancel at its period end: paid → active until then, no new period billed', async () => {
    const m = await merchant();
    const { customer, sub, inv, good } = await pastDueOnDefault(m);
    await m.advance({ seconds: 6 * DAY });
    await m.advance({ to: sub.current_period_end });
    const unpaid = (await m.api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(unpaid).toMatchObject({ status: 'unpaid', current_period_start: sub.current_period_end });
    const c = await m.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true });
    expect(c.body).toMatchObject({ cancel_at_period_end: true, cancel_at: unpaid.current_period_end });
    expect((await m.api.patch(`/v1/customers/${customer.id}`, { default_payment_method_id: good })).status).toBe(200);
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('paid');
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body).toMatchObject({
      status: 'active',
      current_period_start: unpaid.current_period_start,
      cancel_at: unpaid.current_period_end,
      latest_invoice_id: inv.id,
    });
    await m.advance({ to: unpaid.current_period_end });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('cancelled');
    expect((await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=100`)).body.data.map((i: any) => i.id)).toEqual([inv.id]);
  });

  it('a subscription pinned to its own (declining) method is not retried; nor is anything when the default does not change', async () => {
    const m = await merchant();
    const { customer, inv } = await pastDue(m); // pinned to a declining card
    const good = await customerWithCardFor(m, customer.id, '4242424242424242');
    await m.events();
    expect((await m.api.patch(`/v1/customers/${customer.id}`, { default_payment_method_id: good })).status).toBe(200);
    expect(await m.events()).toEqual(['customer.updated']);
    expect((await m.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'open', attempt_count: 1 });
    expect((await m.api.patch(`/v1/customers/${customer.id}`, { default_payment_method_id: good })).status).toBe(200);
    expect(await m.events()).toEqual([]);
  });
});

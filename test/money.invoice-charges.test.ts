// At most one charge in flight per invoice, and money that arrives for an invoice that cannot take
// it goes back by itself (issue 21, items 1, 4 and 5): a customer paying an invoice at its hosted
// checkout while the service re-charges it (a new payment method, a dunning retry) is charged
// once; the incomplete expiry waits for a first charge in flight; a payment that expired before its
// charge started is a failed attempt; an invoice never bills more than a payment may charge.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueInvoice } from '../src/domain/billing/invoices.ts';
import { expireIncomplete } from '../src/domain/billing/subscriptions.ts';
import { DeferJob } from '../src/platform/jobs.ts';
import { expireIfDue, insertPayment, recoverPayment } from '../src/domain/payments/index.ts';
import { claimDueJobs, runJob } from '../src/jobs/runner.ts';
import type { Ctx } from '../src/platform/context.ts';
import { Clock } from '../src/platform/clock.ts';
import { forMerchant, inTransaction } from '../src/platform/db/tenant.ts';
import { createLogger } from '../src/platform/logger.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { injectProcessor, type FakeProcessor } from './helpers/processor.ts';

let app: TestApp;
let proc: FakeProcessor;
beforeAll(async () => {
  app = await startApp();
  proc = injectProcessor(app);
});
afterEach(() => {
  proc.release();
  proc.mode = 'pass';
  proc.jitterMs = 0;
});
afterAll(() => app?.close());

const NSF = '4000000000009995';

async function savedMethod(api: Client, customerId: string, card = '4242424242424242') {
  const si = (await api.post('/v1/setup-intents', { customer_id: customerId })).body;
  return (await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: card })).body.payment_method_id as string;
}

/** A subscription whose first charge was declined: incomplete, its invoice open and payable at the checkout. */
async function declinedSubscription(api: Client) {
  const c = (await api.post('/v1/customers', { email: `d${Math.random()}@example.com` })).body;
  await savedMethod(api, c.id, NSF);
  const plan = (await api.post('/v1/plans', { name: 'Pro', amount: 2900, currency: 'USD', interval: 'month' })).body;
  const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
  expect(sub.status).toBe('incomplete');
  const inv = (await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body;
  expect(inv.status).toBe('open');
  expect((await api.get(`/v1/payments/${inv.payment_id}`)).body.status).toBe('failed');
  return { customer: c, plan, sub, inv, good: await savedMethod(api, c.id) };
}

/** A customer with a working card and an active Pro subscription (its first charge succeeded). */
async function activeSubscription(api: Client, prefix: string) {
  const c = (await api.post('/v1/customers', { email: `${prefix}${Math.random()}@example.com` })).body;
  await savedMethod(api, c.id);
  const plan = (await api.post('/v1/plans', { name: 'Pro', amount: 2900, currency: 'USD', interval: 'month' })).body;
  const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
  expect(sub.status).toBe('active');
  return { customer: c, plan, sub };
}

const succeededFor = async (api: Client, customerId: string) =>
  (await api.get(`/v1/payments?customer_id=${customerId}&status=succeeded&limit=100`)).body.data as any[];

async function openCheckout(api: Client, paymentId: string) {
  const p = (await api.get(`/v1/payments/${paymentId}`)).body;
  const url = p.checkout_url.replace(app.services.config.publicBaseUrl, app.url);
  const res = await fetch(url);
  const html = await res.text();
  return { url, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '' };
}

function payForm(page: { url: string; cookie: string; csrf: string }, card = '4242424242424242') {
  return fetch(page.url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie },
    body: new URLSearchParams({ csrf: page.csrf, method: 'card', card_number: card, card_expiry: '12/34', card_cvc: '123' }).toString(),
  });
}

function ctxFor(merchantId: string, at?: Date): Ctx {
  return { merchant: { id: merchantId, mode: 'test' }, db: forMerchant(app.services.db.prisma, merchantId), requestId: 'req_test', log: createLogger('silent'), runtime: app.services.runtime, clock: at ? Clock.frozen({ id: merchantId, mode: 'test' }, at) : new Clock({ id: merchantId, mode: 'test' }) };
}

describe('one charge in flight per invoice', () => {
  it('the customer pays at the checkout while a new payment method re-charges the invoice: charged once', async () => {
    const api = await app.merchant();
    const { customer, sub, inv, good } = await declinedSubscription(api);
    // The checkout attempt reaches the processor and waits there.
    proc.hold();
    const atProcessor = proc.called();
    const page = await openCheckout(api, inv.payment_id);
    const paying = payForm(page);
    await atProcessor;
    // Meanwhile the merchant gives the subscription a working method: no second charge starts.
    const patched = await api.patch(`/v1/subscriptions/${sub.id}`, { payment_method_id: good });
    expect(patched.status).toBe(200);
    proc.release();
    expect([200, 303]).toContain((await paying).status);
    const paid = await succeededFor(api, customer.id);
    expect(paid).toHaveLength(1);
    expect((await api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'paid', payment_id: paid[0].id });
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    expect((await api.get(`/v1/refunds?payment_id=${paid[0].id}`)).body.data).toEqual([]);
  });

  it('raced 20 times through the checkout form and 20 through the test helper: never two charges kept', async () => {
    const api = await app.merchant();
    proc.jitterMs = 30;
    for (let i = 0; i < 40; i++) {
      const { customer, sub, inv, good } = await declinedSubscription(api);
      const viaForm = i % 2 === 0;
      const page = viaForm ? await openCheckout(api, inv.payment_id) : null;
      const [customerPays, merchantRecharges] = await Promise.all([
        viaForm ? payForm(page!).then((r) => r.status) : api.post(`/v1/test-helpers/payments/${inv.payment_id}/complete`, { outcome: 'succeeded' }).then((r) => r.status),
        api.patch(`/v1/subscriptions/${sub.id}`, { payment_method_id: good }).then((r) => r.status),
      ]);
      expect([200, 303, 409]).toContain(customerPays);
      expect(merchantRecharges).toBe(200);
      const paid = await succeededFor(api, customer.id);
      expect(paid.length, `race ${i}`).toBe(1);
      const after = (await api.get(`/v1/invoices/${inv.id}`)).body;
      expect(after).toMatchObject({ status: 'paid', amount_paid: 2900, payment_id: paid[0].id });
      expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    }
  }, 240_000);

  it('an incomplete subscription whose first charge is in flight at its expiry is not cancelled under it', async () => {
    const api = await app.merchant();
    const c = (await api.post('/v1/customers', { email: `x${Math.random()}@example.com` })).body;
    await savedMethod(api, c.id);
    const plan = (await api.post('/v1/plans', { name: 'Pro', amount: 2900, currency: 'USD', interval: 'month' })).body;
    // The first charge is in flight (the processor is slow), and the 23 h expiry comes meanwhile.
    proc.hold();
    const atProcessor = proc.called();
    const creating = api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id });
    await atProcessor;
    const sub = (await api.get(`/v1/subscriptions?customer_id=${c.id}`)).body.data[0];
    expect(sub.status).toBe('incomplete');
    // The expiry job runs now (as it would 23 h on): it waits for the charge instead of cancelling.
    const expiry = await expireIncomplete(ctxFor(api.creds.merchant_id, new Date(Date.now() + 24 * 3600_000)), sub.id).then(
      () => 'ran',
      (err) => (err instanceof DeferJob ? 'deferred' : err),
    );
    expect(expiry).toBe('deferred');
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('incomplete');
    proc.release();
    expect((await creating).status).toBe(201);
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    expect((await api.get(`/v1/invoices/${sub.latest_invoice_id}`)).body.status).toBe('paid');
    // Run again once the charge settled: nothing to expire.
    await expireIncomplete(ctxFor(api.creds.merchant_id, new Date(Date.now() + 24 * 3600_000)), sub.id);
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    expect(await succeededFor(api, c.id)).toHaveLength(1);
  });
});

describe('money for an invoice that cannot take it is refunded automatically', () => {
  it('a charge that lands on a voided or already paid invoice is refunded, with its events', async () => {
    for (const state of ['void', 'paid'] as const) {
      const api = await app.merchant();
      const { customer, inv } = await declinedSubscription(api);
      proc.hold();
      const atProcessor = proc.called();
      const paying = api.post(`/v1/test-helpers/payments/${inv.payment_id}/complete`, { outcome: 'succeeded' });
      await atProcessor;
      // While the charge is out, the invoice is settled some other way (an operator's fix, a
      // charge recovered late after a crash): the payment's success finds it closed.
      await app.services.db.prisma.invoice.update({ where: { id: inv.id }, data: state === 'void' ? { status: 'void', voidedAt: new Date() } : { status: 'paid', paidAt: new Date() } });
      proc.release();
      expect((await paying).body.status).toBe('succeeded');
      const [payment] = await succeededFor(api, customer.id);
      // The refund is reserved in the payment's own transaction and settled by its job right after.
      let refunds: any[] = [];
      for (let i = 0; i < 100; i++) {
        refunds = (await api.get(`/v1/refunds?payment_id=${payment.id}`)).body.data;
        if (refunds[0]?.status === 'succeeded') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(refunds).toEqual([expect.objectContaining({ amount: 2900, status: 'succeeded', reason: 'duplicate', metadata: { invoice_id: inv.id } })]);
      expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ amount_refunded: 2900, refunded: true });
      const types = (await api.get('/v1/events?limit=100')).body.data.filter((e: any) => e.data.object.id === refunds[0].id).map((e: any) => e.type);
      expect(types.sort()).toEqual(['refund.created', 'refund.succeeded']);
      expect((await api.get(`/v1/invoices/${inv.id}`)).body.status).toBe(state);
    }
  });
});

describe('an invoice payment that expired before its charge started', () => {
  it('is a failed attempt: the invoice records it and dunning goes on', async () => {
    const api = await app.merchant();
    const { customer: c, sub } = await activeSubscription(api, 'e');
    // A renewal invoice whose payment was reserved (attempt 1) and never charged: the process died
    // between the two steps, and the checkout lapsed before anything charged it.
    const ctx = ctxFor(api.creds.merchant_id);
    const { invoice, payment } = await inTransaction(ctx.db, async (tx) => {
      const s = (await tx.subscription.findUnique({ where: { id: sub.id } }))!;
      const { invoice } = await issueInvoice(ctx, tx, {
        subscription: s,
        currency: 'USD',
        reason: 'subscription_cycle',
        key: 'test:expired-charge',
        periodStart: s.currentPeriodEnd,
        periodEnd: new Date(s.currentPeriodEnd.getTime() + 30 * 86_400_000),
        lines: [{ description: 'Pro', periodStart: s.currentPeriodEnd, periodEnd: new Date(s.currentPeriodEnd.getTime() + 30 * 86_400_000), amount: 2900n }],
        takePending: false,
      });
      const payment = await insertPayment(ctx, tx, { customerId: c.id, amount: 2900n, currency: 'USD', redirectUrl: null, purpose: 'invoice', metadata: { invoice_id: invoice.id } });
      await tx.invoice.update({ where: { id: invoice.id }, data: { paymentId: payment.id, attemptCount: 1 } });
      await tx.job.updateMany({ where: { kind: 'invoice.charge', payload: { path: ['invoice_id'], equals: invoice.id } }, data: { status: 'cancelled' } });
      return { invoice, payment };
    });
    expect((await expireIfDue(ctxFor(api.creds.merchant_id, new Date(payment.expiresAt.getTime() + 1000)), payment.id)).status).toBe('expired');
    const after = (await api.get(`/v1/invoices/${invoice.id}`)).body;
    expect(after).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: expect.any(String) });
    const failed = (await api.get('/v1/events?type=invoice.payment_failed')).body.data.filter((e: any) => e.data.object.id === invoice.id);
    expect(failed).toHaveLength(1);
    expect(failed[0].data.object.last_payment_error).toMatchObject({ code: 'payment_expired' });
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('past_due');
    // Dunning goes on: the next attempt charges the card and the invoice is paid.
    await api.post('/v1/test-helpers/clock/advance', { to: new Date(new Date(after.next_payment_attempt).getTime() + 1000).toISOString() });
    expect((await api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', attempt_count: 2 });
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
  });
});

describe('an invoice never bills more than a payment may charge', () => {
  it('a plan change that would make the next invoice larger than 99,999,999,999 is refused, nothing written', async () => {
    const api = await app.merchant();
    const c = (await api.post('/v1/customers', { email: `b${Math.random()}@example.com` })).body;
    await savedMethod(api, c.id);
    const small = (await api.post('/v1/plans', { name: 'Small', amount: 100, currency: 'USD', interval: 'month' })).body;
    const huge = (await api.post('/v1/plans', { name: 'Huge', amount: 99_999_999_999, currency: 'USD', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: small.id })).body;
    await api.post('/v1/test-helpers/clock/advance', { seconds: 3600 });
    // The prorated remainder of Huge plus Huge's next period would be ~2 × the maximum.
    const r = await api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: huge.id });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'amount_too_large', param: 'plan_id' });
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.plan_id).toBe(small.id);
    // Invoiced now, the change alone fits in one invoice.
    const now = await api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: huge.id, proration_behavior: 'always_invoice' });
    expect(now.status, JSON.stringify(now.body)).toBe(200);
    const invoices = (await api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data;
    expect(Math.max(...invoices.map((i: any) => i.total))).toBeLessThanOrEqual(99_999_999_999);
    // Every invoice stays chargeable: renewals included.
    await api.post('/v1/test-helpers/clock/advance', { seconds: 32 * 86_400 });
    for (const i of (await api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data) expect(i.total).toBeLessThanOrEqual(99_999_999_999);
  });
});

// Found by a cold try (issue 21): a retry used up by a checkout attempt in flight, and the recovery
// of an interrupted checkout attempt on an invoice.
describe('dunning and recovery around a checkout attempt in flight', () => {
  it('a retry that comes due while the customer pays at the checkout, and that card is declined: dunning goes on', async () => {
    const api = await app.merchant();
    const { customer: c, sub } = await activeSubscription(api, 'r');
    // The renewal fails on a card without funds: retry 2 is scheduled a day later.
    const nsf = await savedMethod(api, c.id, NSF);
    expect((await api.patch(`/v1/subscriptions/${sub.id}`, { payment_method_id: nsf })).status).toBe(200);
    await api.post('/v1/test-helpers/clock/advance', { to: new Date(Date.parse(sub.current_period_end) + 1000).toISOString() });
    const renewal = (await api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data.find((i: any) => i.billing_reason === 'subscription_cycle');
    expect(renewal).toMatchObject({ status: 'open', attempt_count: 1 });
    // The customer pays that invoice at its checkout with another card; the processor is slow.
    proc.hold();
    const atProcessor = proc.called();
    const paying = payForm(await openCheckout(api, renewal.payment_id), '4000000000000002');
    await atProcessor;
    // Retry 2 comes due meanwhile and is run by the worker: a charge is in flight, it charges nothing.
    const merchantId = api.creds.merchant_id;
    const due = await claimDueJobs(app.services.db.prisma, {
      limit: 10,
      kinds: ['invoice.charge'],
      merchantId,
      asOf: new Date(Date.parse(renewal.next_payment_attempt) + 1000),
    });
    expect(due.map((j) => j.payload)).toContainEqual({ invoice_id: renewal.id, attempt: 2 });
    for (const job of due) await runJob(app.services.runtime, createLogger('silent'), job, job.runAt);
    expect((await api.get(`/v1/invoices/${renewal.id}`)).body.attempt_count).toBe(1);
    // The customer's card is declined (the page says so).
    proc.release();
    expect((await paying).status).toBe(402);
    // Dunning goes on: the next retry is scheduled and charges (the saved card, still without funds).
    const waiting = await app.services.db.prisma.job.findMany({ where: { merchantId, kind: 'invoice.charge', status: 'pending', payload: { path: ['invoice_id'], equals: renewal.id } } });
    expect(waiting).toHaveLength(1);
    for (let day = 0; day < 10; day++) await api.post('/v1/test-helpers/clock/advance', { seconds: 86_400 });
    const after = (await api.get(`/v1/invoices/${renewal.id}`)).body;
    expect(after.attempt_count).toBeGreaterThanOrEqual(3);
    expect(after.status).toBe('uncollectible');
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('unpaid');
  });

  it('an interrupted checkout attempt on an invoice is looked up with the processor, not charged to the saved card', async () => {
    const api = await app.merchant();
    const { inv } = await declinedSubscription(api);
    proc.hold();
    const atProcessor = proc.called();
    const paying = payForm(await openCheckout(api, inv.payment_id), '4242424242424242');
    await atProcessor;
    // The attempt names no saved method: it is the card typed at the checkout.
    expect((await api.get(`/v1/payments/${inv.payment_id}`)).body).toMatchObject({ status: 'processing', payment_method_id: null });
    // Its process "died": the recovery job finishes the attempt (as it would after PAYMENT_RECOVERY_MS).
    const before = proc.chargeRequests.length;
    const ctx = ctxFor(api.creds.merchant_id);
    const recovered = await Promise.race([recoverPayment(ctx, inv.payment_id, 0).then(() => 'done'), new Promise((r) => setTimeout(() => r('stuck at the processor'), 3000))]);
    expect(recovered).toBe('done');
    expect(proc.chargeRequests.length).toBe(before); // no charge of the saved card
    expect(proc.retrievals).toContain(`${inv.payment_id}_2`);
    expect((await api.get(`/v1/payments/${inv.payment_id}`)).body).toMatchObject({ status: 'failed', failure_code: 'processing_error' });
    proc.release();
    await paying;
  });
});

describe('a processor that does not answer in time', () => {
  it('leaves the attempt processing (its outcome is unknown) and the recovery job finishes it under the same key: charged once', async () => {
    const t = await startApp({ PROCESSOR_TIMEOUT_MS: '300' });
    const fake = injectProcessor(t);
    try {
      const api = await t.merchant();
      const c = (await api.post('/v1/customers', { email: `t${Math.random()}@example.com` })).body;
      const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
      const pm = (await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4242424242424242' })).body.payment_method_id;
      fake.hold();
      const started = performance.now();
      const r = await api.post('/v1/payments', { customer_id: c.id, amount: 1500, currency: 'USD', payment_method_id: pm });
      expect(performance.now() - started).toBeLessThan(5000);
      expect([r.status, r.body.status]).toEqual([201, 'processing']);
      fake.release();
      await new Promise((res) => setTimeout(res, 50));
      expect((await api.get(`/v1/payments/${r.body.id}`)).body.status).toBe('processing');
      await recoverPayment({ merchant: { id: api.creds.merchant_id, mode: 'test' }, db: forMerchant(t.services.db.prisma, api.creds.merchant_id), requestId: 'req_test', log: createLogger('silent'), runtime: t.services.runtime }, r.body.id, 0);
      expect((await api.get(`/v1/payments/${r.body.id}`)).body.status).toBe('succeeded');
      // Both calls used the attempt's one key: a real processor charges it once.
      expect(new Set(fake.chargeRequests.filter((q) => q.reference.startsWith(r.body.id)).map((q) => q.reference))).toEqual(new Set([r.body.id]));
    } finally {
      await t.close();
    }
  });
});

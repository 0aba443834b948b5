// Renewals at batch speed (issue 23, section 5): a renewal whose charge ran in-process and settled
// leaves no safety job behind to be claimed and run for nothing — its first attempt's safety job,
// the recovery of its charge, the recovery of the payment's attempt and the payment's checkout
// expiry are cancelled in the transaction that settles the charge — while the guarantees they
// stand for hold wherever the charge did not settle (billing.engine, billing.restart and
// money.invoice-charges prove those).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { clockMerchant } from './helpers/clock-merchant.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

const DAY = 86_400_000;

/** The merchant's jobs of the charge-safety kinds, by kind and status ("invoice.charge done": 2). */
async function safetyJobs(merchantId: string): Promise<Record<string, number>> {
  const rows = await app.services.db.prisma.job.groupBy({
    by: ['kind', 'status'],
    where: { merchantId, kind: { in: ['invoice.charge', 'payment.recover', 'payment.expire'] } },
    _count: { _all: true },
  });
  return Object.fromEntries(rows.map((r) => [`${r.kind} ${r.status}`, r._count._all]));
}

/** The status of the job of this kind and key (null: none). */
async function jobStatus(kind: string, key: string): Promise<string | null> {
  return (await app.services.db.prisma.job.findUnique({ where: { kind_key: { kind, key } }, select: { status: true } }))?.status ?? null;
}

describe('a renewal paid in-process', () => {
  it('leaves no safety job to run: the charge that settled cancels them in its own transaction', async () => {
    const m = await clockMerchant(app);
    const c = (await m.api.post('/v1/customers', { email: `r${Math.random()}@example.com` })).body;
    const si = (await m.api.post('/v1/setup-intents', { customer_id: c.id })).body;
    expect((await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).status).toBe(200);
    const plan = (await m.api.post('/v1/plans', { name: 'Monthly', amount: 2900, currency: 'USD', interval: 'month' })).body;
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    expect(sub.status).toBe('active');
    await m.events();

    // A month and two days on: the renewal, then every safety job's due time (a minute, a day) passes.
    await m.advance({ to: new Date(new Date(sub.current_period_end).getTime() + 2 * DAY).toISOString() });
    expect(await m.events()).toEqual(['invoice.created', 'invoice.finalized', 'invoice.paid', 'invoice.upcoming', 'payment.created', 'payment.succeeded', 'subscription.updated']);
    const invoices = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.data;
    expect(invoices.map((i: any) => [i.billing_reason, i.status, i.attempt_count])).toEqual([
      ['subscription_cycle', 'paid', 1],
      ['subscription_create', 'paid', 1],
    ]);
    // Two charges. The first invoice's left four safety jobs: the first attempt's, its recovery,
    // the payment attempt's recovery and the checkout's expiry. The renewal (made in a batch:
    // src/domain/billing/renewals.ts) reserves its payment with the renewal itself, so it has no
    // first attempt's job: it leaves the reserved charge's recovery, the attempt's and the expiry.
    // None of them ran: all were cancelled when the charge settled.
    expect(await safetyJobs(m.api.creds.merchant_id)).toEqual({ 'invoice.charge cancelled': 3, 'payment.recover cancelled': 2, 'payment.expire cancelled': 2 });
    await m.nothingMore();
  });

  it('a declined renewal keeps its retry and its checkout expiry; paid later, nothing is left waiting', async () => {
    const m = await clockMerchant(app);
    const c = (await m.api.post('/v1/customers', { email: `d${Math.random()}@example.com` })).body;
    const si = (await m.api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const good = (await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).body.payment_method_id as string;
    const plan = (await m.api.post('/v1/plans', { name: 'Monthly', amount: 2900, currency: 'USD', interval: 'month' })).body;
    const sub = (await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    expect(sub.status).toBe('active');
    // The renewal charges a card that declines (insufficient funds).
    const si2 = (await m.api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const nsf = (await m.api.post(`/v1/test-helpers/setup-intents/${si2.id}/complete`, { card_number: '4000000000009995' })).body.payment_method_id as string;
    expect((await m.api.patch(`/v1/subscriptions/${sub.id}`, { payment_method_id: nsf })).status).toBe(200);
    await m.events();

    await m.advance({ to: new Date(new Date(sub.current_period_end).getTime() + 1000).toISOString() });
    const renewal = (await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=1`)).body.data[0];
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', status: 'open', attempt_count: 1, next_payment_attempt: expect.any(String) });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('past_due');
    // The retry a day on is waiting, and so is the failed payment's checkout expiry.
    expect(await jobStatus('invoice.charge', `retry:${renewal.id}:2`)).toBe('pending');
    expect(await jobStatus('payment.expire', `expire:${renewal.payment_id}`)).toBe('pending');
    // Back on the good card: the open invoice is tried again at once and paid, and then nothing is left waiting.
    expect((await m.api.patch(`/v1/subscriptions/${sub.id}`, { payment_method_id: good })).status).toBe(200);
    expect((await m.api.get(`/v1/invoices/${renewal.id}`)).body).toMatchObject({ status: 'paid' });
    expect((await m.api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    expect((await safetyJobs(m.api.creds.merchant_id))['invoice.charge pending'] ?? 0).toBe(0);
    // The new attempt closed the declined payment's checkout: its expiry went with it.
    expect((await m.api.get(`/v1/payments/${renewal.payment_id}`)).body.status).toBe('cancelled');
    expect(await jobStatus('payment.expire', `expire:${renewal.payment_id}`)).toBe('cancelled');
    await m.advance({ to: new Date(new Date(renewal.next_payment_attempt).getTime() + 1000).toISOString() });
    expect((await m.api.get(`/v1/invoices?subscription_id=${sub.id}&limit=1`)).body.data[0]).toMatchObject({ id: renewal.id, status: 'paid' });
  });
});

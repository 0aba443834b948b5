// Renewals in batches (issue 23, section 5; src/domain/billing/renewals.ts, docs/jobs.md): a clock
// advance renews its due subscriptions set-wise, and what it writes — invoices and their numbers,
// payments, subscriptions, events, webhook deliveries, e-mail jobs — is what the same renewals
// made one by one write (CLOCK_ADVANCE_BATCH_SIZE=1), for plain renewals and for the ones the batch
// leaves to the one-by-one path (a proration waiting, a credit balance, a declining card, a
// cancel at period end) mixed among them; and the customer e-mails a batch of e-mail jobs makes
// (src/domain/emails sendEventEmails) are the ones each job makes alone, and so are the
// invoice.upcoming notices a batch of notice jobs sends (noticeUpcomingRenewals).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { listAll } from './helpers/list.ts';
import { receivers } from './helpers/receivers.ts';
import { createLogger } from '../src/platform/logger.ts';

const DAY = 86_400_000;
let batched: TestApp;
let single: TestApp;
const hooks = receivers();
let hookUrl: string;

beforeAll(async () => {
  [batched, single] = await Promise.all([startApp(), startApp({ CLOCK_ADVANCE_BATCH_SIZE: '1' })]);
  hookUrl = await hooks.listen((_req, res) => res.writeHead(200).end('ok'));
});
afterAll(async () => {
  hooks.close();
  await Promise.all([batched?.close(), single?.close()]);
});

/** Ids, tokens and instants out (they differ between runs); everything else kept. */
function normalised(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v), (_k, x) =>
    typeof x === 'string'
      ? x
          .replace(/http:\/\/127\.0\.0\.1:\d+/g, 'BASE')
          .replace(/\/hosted\/email-links\/[^"\s<>]+/g, '/hosted/email-links/*')
          .replace(/\b([a-z]{2,5})_[0-9A-Za-z]{16,40}\b/g, '$1_*')
          .replace(/\/[0-9A-Za-z_-]{32,}/g, '/*')
          .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'T')
      : x,
  );
}

const all = listAll;

/** The same merchant on both apps: seven subscriptions, eight months of monthly renewals in three advances; what each app wrote. */
async function scenario(app: TestApp) {
  const api = await app.merchant();
  expect((await api.post('/v1/webhook-endpoints', { url: hookUrl })).status).toBe(201);
  expect((await api.patch('/v1/email-settings', { upcoming_renewal: true })).status).toBe(200);
  const start = Date.parse((await api.get('/v1/test-helpers/clock')).body.now);
  const subs: string[] = [];
  const customerWith = async (i: number, card?: string) => {
    const c = (await api.post('/v1/customers', { email: `c${i}@example.com`, name: `Customer ${i}` })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    const done = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, card ? { card_number: card } : {});
    expect(done.status).toBe(200);
    return { customer: c.id as string, method: done.body.payment_method_id as string };
  };
  for (let i = 0; i < 7; i++) {
    const { customer } = await customerWith(i);
    const plan = (await api.post('/v1/plans', { name: `Plan ${i}`, amount: 1000 + 100 * i, currency: 'USD', interval: 'month' })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: customer, plan_id: plan.id })).body;
    expect(sub.status).toBe('active');
    subs.push(sub.id);
    if (i === 2) {
      // A proration waiting for the next invoice: an upgrade mid-period.
      const bigger = (await api.post('/v1/plans', { name: 'Bigger', amount: 5000, currency: 'USD', interval: 'month' })).body;
      await api.post('/v1/test-helpers/clock/advance', { seconds: 3 * 86_400 });
      expect((await api.patch(`/v1/subscriptions/${sub.id}`, { plan_id: bigger.id })).status).toBe(200);
    }
    if (i === 3) {
      // A credit balance to draw on.
      expect((await api.post(`/v1/customers/${customer}/balance-transactions`, { amount: 250, currency: 'usd', description: 'Goodwill' })).status).toBe(201);
    }
    if (i === 4) {
      // A card that declines from the first renewal on (pinned to the subscription).
      const si = (await api.post('/v1/setup-intents', { customer_id: customer })).body;
      const declining = (await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4000000000009995' })).body.payment_method_id;
      expect((await api.patch(`/v1/subscriptions/${sub.id}`, { payment_method_id: declining })).status).toBe(200);
    }
    if (i === 5) expect((await api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true })).status).toBe(200);
  }
  for (const days of [40, 100, 250]) {
    const r = await api.post('/v1/test-helpers/clock/advance', { to: new Date(start + days * DAY).toISOString() });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
  const invoices = (await all(api, '/v1/invoices')).sort((a, b) => (a.number < b.number ? -1 : 1));
  const payments = await all(api, '/v1/payments');
  const events = await all(api, '/v1/events');
  const subscriptions = await Promise.all(subs.map(async (id) => (await api.get(`/v1/subscriptions/${id}`)).body));
  const merchantId = api.creds.merchant_id;
  const jobs = await app.services.db.prisma.job.groupBy({ by: ['kind', 'status'], where: { merchantId }, _count: { _all: true } });
  const deliveries = await app.services.db.prisma.deliveryAttempt.count({ where: { merchantId } });
  return {
    // Which subscription each invoice number went to, in number order (gap-free, due order).
    numbering: invoices.map((i) => [i.number, subs.indexOf(i.subscription_id)]),
    invoices: normalised(invoices),
    // (sorted: payments made at the same instant list in either order)
    payments: (normalised(payments) as unknown[]).map((p) => JSON.stringify(p)).sort(),
    subscriptions: normalised(subscriptions),
    events: (normalised(events) as any[]).map((e) => JSON.stringify([e.type, e.data])).sort(),
    emails: (normalised(await all(api, '/v1/test-helpers/emails')) as any[]).map((e) => JSON.stringify(e)).sort(),
    emailJobs: jobs.filter((j) => j.kind === 'email.send').reduce((n, j) => n + j._count._all, 0),
    deliveries,
    renewalChargeJobs: await app.services.db.prisma.job.count({ where: { merchantId, kind: 'invoice.charge', key: { in: invoices.filter((i) => i.billing_reason === 'subscription_cycle').map((i) => `retry:${i.id}:1`) } } }),
  };
}

describe('renewals in batches', () => {
  it('write what the same renewals write one by one: invoices and numbers, payments, subscriptions, events, deliveries, e-mails', async () => {
    const [b, s] = await Promise.all([scenario(batched), scenario(single)]);
    // The one-by-one app's renewals each left their first attempt's safety job (cancelled when
    // the charge settled); the batch reserves and claims the attempt with the renewal, so its
    // plain renewals have none: they did go through the batch.
    expect(s.renewalChargeJobs).toBeGreaterThan(25);
    expect(b.renewalChargeJobs).toBeLessThan(s.renewalChargeJobs / 2);
    expect(b.numbering.length).toBeGreaterThan(40);
    expect(b.numbering).toEqual(s.numbering);
    expect(b.invoices).toEqual(s.invoices);
    expect(b.subscriptions).toEqual(s.subscriptions);
    expect((b.payments as unknown[]).length).toBe((s.payments as unknown[]).length);
    expect(b.payments).toEqual(s.payments);
    expect(b.events.filter((e) => e.startsWith('["invoice.upcoming"')).length).toBeGreaterThan(30);
    expect(b.events.length).toBe(s.events.length);
    expect(b.events).toEqual(s.events);
    expect(b.deliveries).toBe(s.deliveries);
    expect(b.emailJobs).toBe(s.emailJobs);
    expect(b.emails.length).toBeGreaterThan(40);
    expect(b.emails).toEqual(s.emails);
  }, 300_000);
});

describe('the background worker', () => {
  it('renews the subscriptions due together in batches too, at the time it runs them', async () => {
    const app = await startApp({}, { worker: false });
    try {
      const api = await app.merchant();
      const subs: any[] = [];
      for (let i = 0; i < 12; i++) {
        const c = (await api.post('/v1/customers', { email: `w${i}@example.com` })).body;
        const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
        expect((await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).status).toBe(200);
        const plan = (await api.post('/v1/plans', { name: `W ${i}`, amount: 500 + i, currency: 'USD', interval: 'month' })).body;
        subs.push((await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body);
      }
      // Just before the first renewal, then real time runs on until every one is due: the worker,
      // started only then, finds them all due together.
      const ends = subs.map((s) => Date.parse(s.current_period_end));
      expect((await api.post('/v1/test-helpers/clock/advance', { to: new Date(Math.min(...ends) - 300).toISOString() })).status).toBe(200);
      await new Promise((r) => setTimeout(r, Math.max(...ends) - Math.min(...ends) + 800));
      const { startWorker, workerOptions } = await import('../src/jobs/worker.ts');
      const worker = startWorker(app.services.runtime, createLogger('silent'), { ...workerOptions(app.services.config), pollMs: 50, merchants: () => [api.creds.merchant_id] });
      try {
        await app.idle(api, { quietMs: 300 });
      } finally {
        await worker.stop();
      }
      const invoices = await listAll(api, '/v1/invoices');
      const renewals = invoices.filter((i) => i.billing_reason === 'subscription_cycle');
      expect(renewals).toHaveLength(12);
      expect(renewals.every((i) => i.status === 'paid' && i.attempt_count === 1)).toBe(true);
      // Gap-free numbers, and each renewal made when the worker ran it (at or after its period's start).
      expect(invoices.map((i) => i.number).sort()).toEqual(invoices.map((_, k) => `INV-${String(k + 1).padStart(6, '0')}`));
      for (const r of renewals) expect(Date.parse(r.created_at)).toBeGreaterThanOrEqual(Date.parse(r.period_start));
      // Most went through a batch (a renewal made alone leaves its first attempt's safety job).
      const alone = await app.services.db.prisma.job.count({ where: { kind: 'invoice.charge', key: { in: renewals.map((i) => `retry:${i.id}:1`) } } });
      expect(alone).toBeLessThan(6);
      const subsAfter = await Promise.all(subs.map(async (s) => (await api.get(`/v1/subscriptions/${s.id}`)).body));
      expect(subsAfter.every((s) => s.status === 'active' && Date.parse(s.current_period_start) === Date.parse(subs.find((o) => o.id === s.id).current_period_end))).toBe(true);
    } finally {
      await app.close();
    }
  }, 120_000);
});

// Billing lifecycle rules (API-CONVENTIONS.md, "Billing lifecycle rules") that hang on the order of
// due work, through HTTP on a test clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.close());

async function advance(api: Client, to: string) {
  const r = await api.post('/v1/test-helpers/clock/advance', { to });
  expect([r.status, r.body.now], JSON.stringify(r.body)).toEqual([200, to]);
}

describe('automatic resume on a period boundary (issue 23, defect 1)', () => {
  // Anchored 2027-02-10 07:00 (a trial ending then), paused with resumes_at on the Jun 10 period
  // end, clock advanced to Aug 1. The Jun 10 renewal and the resume are due at the same instant;
  // the resume counts first, so Jun 10 → Jul 10 is billed — whether the pause was made before or
  // after the May 10 renewal (i.e. whether the resume job was created before or after the Jun 10
  // renewal job).
  it.each([
    { pausedOn: '2027-04-20T12:00:00.000Z', billed: ['2027-02-10', '2027-03-10', '2027-04-10', '2027-06-10', '2027-07-10'] },
    { pausedOn: '2027-05-20T12:00:00.000Z', billed: ['2027-02-10', '2027-03-10', '2027-04-10', '2027-05-10', '2027-06-10', '2027-07-10'] },
  ])('paused on $pausedOn with resumes_at 2027-06-10T07:00Z: the period starting at the resume is invoiced', async ({ pausedOn, billed }) => {
    const api = await app.merchant();
    const customer = (await api.post('/v1/customers', { email: `r${Math.random()}@example.com`, name: 'Ada Lovelace' })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: customer.id })).body;
    await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4242424242424242' });
    const plan = (await api.post('/v1/plans', { name: 'Team', amount: 4999, currency: 'EUR', interval: 'month' })).body;

    await advance(api, '2027-02-01T00:00:00.000Z');
    const created = await api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, trial_end: '2027-02-10T07:00:00.000Z' });
    expect(created.status).toBe(201);
    const sub = created.body;
    expect(sub.billing_cycle_anchor).toBe('2027-02-10T07:00:00.000Z');

    await advance(api, pausedOn);
    const resumesAt = '2027-06-10T07:00:00.000Z';
    const paused = await api.post(`/v1/subscriptions/${sub.id}/pause`, { resumes_at: resumesAt });
    expect([paused.status, paused.body.status, paused.body.pause_collection]).toEqual([200, 'paused', { resumes_at: resumesAt }]);

    await advance(api, '2027-08-01T00:00:00.000Z');
    const after = (await api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(after).toMatchObject({ status: 'active', pause_collection: null, current_period_start: '2027-07-10T07:00:00.000Z' });

    const invoices = (await api.get(`/v1/invoices?subscription_id=${sub.id}&limit=100`)).body.data;
    const periods = invoices.map((i: any) => `${i.period_start.slice(0, 10)} → ${i.period_end.slice(0, 10)}`).reverse();
    const expected = billed.map((start) => {
      const [y, m] = start.split('-').map(Number) as [number, number];
      const end = new Date(Date.UTC(y, m, 10)).toISOString().slice(0, 10);
      return `${start} → ${end}`;
    });
    expect(periods).toEqual(expected);
    expect(invoices.every((i: any) => i.status === 'paid')).toBe(true);
    const june = invoices.find((i: any) => i.period_start === resumesAt);
    expect(june).toMatchObject({ billing_reason: 'subscription_cycle', period_end: '2027-07-10T07:00:00.000Z', created_at: resumesAt });

    // One resume, at the resume time, before the renewal that billed it.
    const resumed = (await api.get('/v1/events?type=subscription.resumed')).body.data;
    expect(resumed).toHaveLength(1);
    expect(resumed[0].created_at).toBe(resumesAt);
    expect(resumed[0].data.object).toMatchObject({ id: sub.id, status: 'active' });
  });
});

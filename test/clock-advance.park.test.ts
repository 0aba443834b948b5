// An advance that stops part-way (409 clock_advance_incomplete) parks the merchant's clock at its
// stop point until it is repeated (issue 23, defect 4). Before, the clock ticked on in real time
// from the stop point — 1 ms before the first job the advance had not run — so the background
// worker claimed that job a poll later and ran it with the clock of its claim: the renewal's
// invoice, payment and events carried a time 50–100 ms after the period boundary they belong to.
// Now, between the 409 and the repeat, the clock stands at the stop point (nothing the advance still
// owes is due, so the worker has nothing of it to run, late or not), and the repeat runs every
// remaining renewal at its own due time. A client that never repeats gets its clock back: after
// the park (30 s; shorter here) it runs on from the stop point, never jumping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

const DAY = 86_400_000;
const ADVANCE = '/v1/test-helpers/clock/advance';

let app: TestApp;
beforeAll(async () => {
  app = await startApp(); // with its background worker (polling every 100 ms)
  // Small budgets: 40 daily renewals do not fit in one request.
  app.services.runtime.clockAdvanceBudgetMs = 300;
});
afterAll(() => app?.close());

/** A customer with a card on a daily plan (`amount` 0: a free plan, whose renewals are its only jobs). */
async function dailySubscription(api: Client, amount: number) {
  const c = (await api.post('/v1/customers', { email: `park${Math.random()}@example.com`, name: 'Ada Lovelace' })).body;
  const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
  expect((await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4242424242424242' })).status).toBe(200);
  const plan = (await api.post('/v1/plans', { name: 'Daily', amount, currency: 'USD', interval: 'day' })).body;
  const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
  expect(sub.status).toBe('active');
  return { customer: c, sub };
}

async function invoicesOf(api: Client, subId: string): Promise<any[]> {
  const r = await api.get(`/v1/invoices?subscription_id=${subId}&limit=100`);
  expect(r.status).toBe(200);
  return r.body.data;
}

const clockNow = async (api: Client) => (await api.get('/v1/test-helpers/clock')).body.now as string;
const stopPoint = (r: { body: any }) => /stopped at (\S+) before/.exec(r.body.error.message)![1]!;

/** Renewal invoices whose records do not carry their period boundary exactly (made late). */
const late = (invoices: any[]) =>
  invoices
    .filter((i) => i.billing_reason === 'subscription_cycle')
    .filter((i) => i.created_at !== i.period_start || i.finalized_at !== i.period_start || i.paid_at !== i.period_start)
    .map((i) => `${i.period_start}: created ${i.created_at}, paid ${i.paid_at}`);

describe('an advance that stops part-way parks the clock at its stop point (issue 23, defect 4)', () => {
  it('after 409 clock_advance_incomplete the worker runs nothing of that merchant late; the repeat runs every renewal at its own time', async () => {
    const api = await app.merchant();
    // A free daily plan: its renewals are the merchant's only jobs, so every stop point is 1 ms
    // before a renewal — the renewal the worker used to run late.
    const { sub } = await dailySubscription(api, 0);
    const to = new Date(new Date(sub.current_period_start).getTime() + 40 * DAY + 1000).toISOString();

    let r = await api.post(ADVANCE, { to });
    expect([r.status, r.body.error?.code], JSON.stringify(r.body)).toEqual([409, 'clock_advance_incomplete']);
    let rounds = 1;
    for (; r.status === 409 && rounds < 200; rounds++) {
      expect(r.body.error.code).toBe('clock_advance_incomplete');
      const stop = stopPoint(r);
      const before = await invoicesOf(api, sub.id);
      expect(late(before)).toEqual([]);
      // A quiet period (1.5 s the first time, 15 polls of the worker; 300 ms after the others),
      // looking all along: the worker made no invoice (nothing the advance still owes was due to
      // it), nothing late; and the clock still stands at the stop point.
      const until = Date.now() + (rounds === 1 ? 1500 : 300);
      do {
        const now = await invoicesOf(api, sub.id);
        expect(late(now)).toEqual([]);
        expect(now.length).toBe(before.length);
        await new Promise((res) => setTimeout(res, 50));
      } while (Date.now() < until);
      expect(await clockNow(api)).toBe(stop);
      // It stopped just before the renewal it did not run.
      const pending = (await api.get(`/v1/subscriptions/${sub.id}`)).body;
      expect(new Date(stop).getTime()).toBe(new Date(pending.current_period_end).getTime() - 1);
      r = await api.post(ADVANCE, { to });
    }
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.now).toBe(to);
    expect(rounds).toBeGreaterThan(2);
    // Finished: the clock runs on from the target.
    const deadline = Date.now() + 5000;
    let after = await clockNow(api);
    while (after === to && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 20));
      after = await clockNow(api);
    }
    expect(after > to, after).toBe(true);

    // Every period once, every record of every renewal at its boundary to the millisecond.
    const invoices = await invoicesOf(api, sub.id);
    expect(invoices).toHaveLength(41);
    expect(new Set(invoices.map((i) => i.period_start)).size).toBe(41);
    expect(invoices.every((i) => i.status === 'paid')).toBe(true);
    expect(late(invoices)).toEqual([]);
    const boundaries = new Set(invoices.filter((i) => i.billing_reason === 'subscription_cycle').map((i) => i.period_start));
    expect(boundaries.size).toBe(40);
    const updated = (await api.get('/v1/events?type=subscription.updated&limit=100')).body.data
      // the renewals' (the first payment's, which made it active, is at its creation)
      .filter((e: any) => e.data.previous_attributes?.current_period_start);
    expect(updated).toHaveLength(40);
    expect(updated.filter((e: any) => !boundaries.has(e.created_at)).map((e: any) => e.created_at)).toEqual([]);
  }, 120_000);

  it('an advance never repeated: when its park runs out the clock runs on from the stop point (no jump) and the worker takes the work up', async () => {
    const t = await startApp();
    try {
      t.services.runtime.clockAdvanceBudgetMs = 300;
      t.services.runtime.clockParkMs = 700;
      const api = await t.merchant();
      const { sub } = await dailySubscription(api, 0);
      const to = new Date(new Date(sub.current_period_start).getTime() + 40 * DAY + 1000).toISOString();
      const r = await api.post(ADVANCE, { to });
      expect([r.status, r.body.error?.code], JSON.stringify(r.body)).toEqual([409, 'clock_advance_incomplete']);
      const stop = new Date(stopPoint(r)).getTime();
      const parkedAt = Date.now();
      const before = (await invoicesOf(api, sub.id)).length;
      expect(await clockNow(api)).toBe(new Date(stop).toISOString());
      // The park runs out: the clock moves on from the stop point at real time's pace, and the
      // worker runs the renewal that became due (in real time, like any due work of a running clock).
      let after = before;
      const deadline = Date.now() + 10_000;
      while (after === before && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 50));
        after = (await invoicesOf(api, sub.id)).length;
      }
      expect(after).toBe(before + 1);
      const elapsed = Date.now() - parkedAt;
      const clock = new Date(await clockNow(api)).getTime();
      expect(clock).toBeGreaterThan(stop);
      expect(clock - stop).toBeLessThanOrEqual(Date.now() - parkedAt);
      expect(clock - stop).toBeLessThan(elapsed); // it stood still for a while
    } finally {
      await t.close();
    }
  }, 60_000);
});

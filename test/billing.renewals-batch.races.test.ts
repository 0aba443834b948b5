// Renewals in batches (src/domain/billing/renewals.ts) against changes made while they are charged
// (found by a cold review: the batch used to claim every charge in its first transaction and charge
// them later without looking again). A change that commits before a renewal's charge is claimed is
// seen, as one by one: a card removed ("a removed payment method is never charged": the payment
// fails as payment_method_detached), a subscription cancelled ("cancelling stops automatic
// collection"), a customer deleted. A batch claims its charges a group at a time, right before the
// group's processor calls; the same changes made while the first group is at the processor stop
// the renewals of a later group, in both modes. And the jobs a batch hands back are paced like any
// (CLOCK_ADVANCE_JOBS_PER_SECOND).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { injectProcessor, type FakeProcessor } from './helpers/processor.ts';

async function customerWithCard(api: Client, i: number) {
  const c = (await api.post('/v1/customers', { email: `r${i}.${Math.random().toString(36).slice(2)}@example.com` })).body;
  const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
  const done = await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {});
  expect(done.status).toBe(200);
  return { customer: c.id as string, method: done.body.payment_method_id as string };
}

for (const mode of ['batched', 'one-by-one'] as const) {
  describe(`changes made while an advance's renewals are charged (${mode})`, () => {
    let app: TestApp;
    let proc: FakeProcessor;
    beforeAll(async () => {
      app = await startApp(mode === 'batched' ? {} : { CLOCK_ADVANCE_BATCH_SIZE: '1' });
      proc = injectProcessor(app);
    });
    afterAll(async () => {
      proc?.release();
      await app?.close();
    });

    it('a card detached, a subscription cancelled, a customer deleted before their renewal is charged: not charged', async () => {
      const api = await app.merchant();
      const plan = (await api.post('/v1/plans', { name: 'Pro', amount: 2900, currency: 'USD', interval: 'month' })).body;
      const subs: { customer: string; method: string; sub: string }[] = [];
      for (let i = 0; i < 40; i++) {
        const cm = await customerWithCard(api, i);
        const sub = (await api.post('/v1/subscriptions', { customer_id: cm.customer, plan_id: plan.id })).body;
        expect(sub.status).toBe('active');
        subs.push({ ...cm, sub: sub.id });
      }
      await app.idle(api);
      const [deleted, cancelled, detached] = [subs[37]!, subs[38]!, subs[39]!];
      const detachedToken = (await app.services.db.prisma.paymentMethod.findUnique({ where: { id: detached.method } }))!.processorToken;

      // The advance's first renewal charge reaches the processor and is held there.
      const base = proc.chargeRequests.length; // the first invoices' charges
      proc.hold();
      const atProcessor = proc.called();
      const advancing = api.post('/v1/test-helpers/clock/advance', { seconds: 32 * 86_400 });
      await atProcessor;
      await new Promise((r) => setTimeout(r, 200)); // the other slots fill (batched: the first group of 25 at the gate)
      const sentBefore = proc.chargeRequests.length - base;
      // Meanwhile: the last three customers' changes, each answered 200 (committed).
      expect((await api.del(`/v1/payment-methods/${detached.method}`)).status).toBe(200);
      expect((await api.post(`/v1/subscriptions/${cancelled.sub}/cancel`, {})).status).toBe(200);
      expect((await api.del(`/v1/customers/${deleted.customer}`)).status).toBe(200);
      const sentAtChange = proc.chargeRequests.length - base;
      proc.release();
      const r = await advancing;
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      await app.idle(api);

      const succeeded = async (customer: string) =>
        ((await api.get(`/v1/payments?customer_id=${customer}&status=succeeded&limit=100`)).body.data as any[]).map((p) => ({
          id: p.id,
          amount: p.amount,
          payment_method_id: p.payment_method_id,
          created_at: p.created_at,
        }));
      const report = {
        mode,
        chargesSentWhenFirstHeld: sentBefore,
        chargesSentWhenChangesCommitted: sentAtChange,
        chargesAfterChanges: proc.chargeRequests.slice(base + sentAtChange).length,
        detachedTokenChargedAfterDetach: proc.chargeRequests.slice(base + sentAtChange).some((c) => c.token === detachedToken),
        detached: await succeeded(detached.customer),
        cancelled: await succeeded(cancelled.customer),
        cancelledSub: (({ status, cancelled_at, current_period_start }) => ({ status, cancelled_at, current_period_start }))(
          (await api.get(`/v1/subscriptions/${cancelled.sub}`)).body,
        ),
        deleted: await succeeded(deleted.customer),
      };
      // Nothing of theirs was at the processor when the changes committed.
      expect(sentAtChange).toBeLessThan(37); // the three changed ones (37–39) not among them
      // The rules: a detached method is never charged; a cancelled subscription's open invoices
      // get no more automatic attempts; a deleted customer is charged no more. Each of the three
      // has its first invoice's payment only.
      expect(report.detachedTokenChargedAfterDetach).toBe(false);
      expect(report.detached).toHaveLength(1);
      expect(report.cancelled).toHaveLength(1);
      expect(report.deleted).toHaveLength(1);
    }, 120_000);
  });
}

const RATE = 2;
const N = 8;

{
  const mode = 'batched';
  describe('pacing of an advance whose batch hands jobs back', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startApp({ CLOCK_ADVANCE_JOBS_PER_SECOND: String(RATE) });
    });
    afterAll(() => app?.close());

    it(`${N} trial ends due together run at most ${RATE} a second`, async () => {
      const api = await app.merchant();
      const plan = (await api.post('/v1/plans', { name: 'Pro', amount: 1500, currency: 'USD', interval: 'month', trial_period_days: 10 })).body;
      for (let i = 0; i < N; i++) {
        const c = (await api.post('/v1/customers', { email: `pace${i}@example.com` })).body;
        const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
        expect((await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).status).toBe(200);
        expect((await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body.status).toBe('trialing');
      }
      // Past the trial notices (3 days before), short of the trial ends; the bucket refills.
      expect((await api.post('/v1/test-helpers/clock/advance', { seconds: 9 * 86_400 })).status).toBe(200);
      await app.idle(api);
      await new Promise((r) => setTimeout(r, 1500));
      const t0 = Date.now();
      // Only the trial ends (and what they make due at once: their e-mails) are due in this advance.
      const r = await api.post('/v1/test-helpers/clock/advance', { seconds: 86_400 + 3600 });
      const ms = Date.now() - t0;
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const active = (await api.get('/v1/subscriptions?status=active&limit=100')).body.data.length;
      void mode;
      expect(active).toBe(N);
      // A second's worth at once, then RATE a second: the N trial ends (each run alone) and, counted
      // as one as the docs say, the batch of their receipts: at least (N + 1 - RATE) / RATE seconds.
      expect(ms).toBeGreaterThanOrEqual(((N + 1 - RATE) / RATE) * 1000 * 0.9);
    }, 120_000);
  });
}

// Renewals in batches, kill -9 (from a cold review): the process dies while a batch's charges are at
// the (slow) processor — every renewal issued and its payment `processing`, nothing settled —
// then restarts and the same advance runs again: every renewal is finished by the recovery jobs
// (the processor asked again under the same key), paid once, numbers gap-free, nothing doubled.
import { afterAll, describe, expect, it } from 'vitest';
import { processClient, serverProcesses } from './helpers/server-process.ts';
import { testPort } from './helpers/ports.ts';

const servers = serverProcesses('batchkill', {
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_SECOND: '0',
  JOBS_LEASE_MS: '2000',
  JOBS_POLL_MS: '100',
  TEST_PROCESSOR_LATENCY_MS: '1500',
  PROCESSOR_TIMEOUT_MS: '2500',
  PAYMENT_RECOVERY_MS: '3000',
  // The restarted process waits out the killed one's advance lease (30 s by default).
  CLOCK_ADVANCE_LEASE_MS: '5000',
});
afterAll(() => servers.cleanup());

describe('kill -9 while a renewal batch is charged', () => {
  it('every renewal issued by the first transaction is paid once after the restart', async () => {
    const port = testPort();
    const base = `http://127.0.0.1:${port}`;
    const { call, all } = processClient(base, servers.auth);
    const first = await servers.start(port);
    const plan = (await call('POST', '/v1/plans', { name: 'Weekly', amount: 700, currency: 'USD', interval: 'week' })).body;
    const N = 10;
    await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const c = (await call('POST', '/v1/customers', { email: `batchkill${i}@example.com` })).body;
        const si = (await call('POST', '/v1/setup-intents', { customer_id: c.id })).body;
        await call('POST', `/v1/test-helpers/setup-intents/${si.id}/complete`, {});
        expect((await call('POST', '/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body.status).toBe('active');
      }),
    );
    const to = new Date(Date.now() + 7 * 86_400_000 + 3_600_000).toISOString(); // one weekly renewal each: one batch
    const running = call('POST', '/v1/test-helpers/clock/advance', { to }).catch(() => null);
    // Killed once the first transaction committed (all N renewal payments processing), while the
    // charges are at the (slow) processor.
    const deadline = Date.now() + 30_000;
    let processing = 0;
    while (Date.now() < deadline) {
      processing = (await all('/v1/payments?status=processing')).length;
      if (processing === N) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(processing).toBe(N);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    await running;

    await servers.start(port);
    let again = await call('POST', '/v1/test-helpers/clock/advance', { to });
    for (let i = 0; again.status === 409 && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      again = await call('POST', '/v1/test-helpers/clock/advance', { to });
    }
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    // The recoveries are due a few seconds on (and wait PAYMENT_RECOVERY_MS of real time).
    const later = await call('POST', '/v1/test-helpers/clock/advance', { seconds: 120 });
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    const wait = Date.now() + 30_000;
    while (Date.now() < wait && (await all('/v1/payments?status=processing')).length > 0) await new Promise((r) => setTimeout(r, 250));

    const invoices = await all('/v1/invoices');
    const payments = await all('/v1/payments');
    const events = await all('/v1/events');
    const count = (t: string) => events.filter((e) => e.type === t).length;
    console.log(
      JSON.stringify({
        invoices: invoices.map((i) => [i.number, i.status, i.billing_reason]).sort(),
        payments: payments.map((p) => p.status).sort(),
        invoicePaid: count('invoice.paid'),
        paymentSucceeded: count('payment.succeeded'),
        invoiceCreated: count('invoice.created'),
      }),
    );
    expect(invoices).toHaveLength(2 * N);
    expect(invoices.filter((i) => i.status !== 'paid').map((i) => [i.number, i.status])).toEqual([]);
    expect(invoices.map((i) => Number(i.number.slice(4))).sort((a, b) => a - b)).toEqual(Array.from({ length: 2 * N }, (_, i) => i + 1));
    const succeeded = payments.filter((p) => p.status === 'succeeded');
    expect(succeeded).toHaveLength(2 * N);
    expect(new Set(invoices.map((i) => i.payment_id))).toEqual(new Set(succeeded.map((p) => p.id)));
    expect(payments.filter((p) => p.status === 'processing')).toEqual([]);
    expect(count('invoice.paid')).toBe(2 * N);
    expect(count('payment.succeeded')).toBe(2 * N);
  }, 240_000);
});

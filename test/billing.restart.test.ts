// A kill -9 in the middle of a long renewal run loses nothing and doubles nothing: the real server
// runs a clock advance over 20 weeks of weekly renewals for 10 subscriptions, is SIGKILLed part-way, is started again
// on the same data, and the same advance finishes the work. Every period is invoiced once, every
// invoice is paid by exactly one successful payment, and the invoice numbers have no gap.
import { afterAll, describe, expect, it } from 'vitest';
import { serverProcesses } from './helpers/server-process.ts';
import { testPort } from './helpers/ports.ts';

// Short leases and a short recovery delay (the production defaults are 30 s, 30 s and a minute):
// the restarted process waits for each of them in real time, and the test proves the same with 5 s.
const servers = serverProcesses('renewalkill', {
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_SECOND: '0',
  JOBS_LEASE_MS: '2000',
  JOBS_POLL_MS: '100',
  CLOCK_ADVANCE_LEASE_MS: '5000',
  IDEMPOTENCY_LEASE_MS: '5000',
  PAYMENT_RECOVERY_MS: '5000',
  PROCESSOR_TIMEOUT_MS: '4000',
});
afterAll(() => servers.cleanup());
const auth = servers.auth;
const startServer = servers.start;

describe('renewals across a crash', () => {
  it('a renewal run killed part-way is finished after the restart: nothing lost, nothing doubled', async () => {
    const port = testPort();
    const base = `http://127.0.0.1:${port}`;
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(base + path, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as any };
    };
    const first = await startServer(port);
    const plan = (await call('POST', '/v1/plans', { name: 'Weekly', amount: 700, currency: 'USD', interval: 'week' })).body;
    const N = 10;
    const WEEKS = 20;
    // The N subscribers side by side (the order is not what this test is about).
    await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const c = (await call('POST', '/v1/customers', { email: `kill${i}@example.com` })).body;
        const si = (await call('POST', '/v1/setup-intents', { customer_id: c.id })).body;
        await call('POST', `/v1/test-helpers/setup-intents/${si.id}/complete`, {});
        expect((await call('POST', '/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body.status).toBe('active');
      }),
    );
    const to = new Date(Date.now() + WEEKS * 7 * 86_400_000 + 3_600_000).toISOString(); // WEEKS weekly renewals each
    // The advance runs the renewals in due order (a few hundred: under a second of work on a quiet
    // machine, which is why a fixed sleep before the kill let the run finish first); the process is killed as soon as the first renewal invoices are there, so the kill
    // lands in the middle of the run however fast or slow the machine is.
    let finished = false;
    const running = call('POST', '/v1/test-helpers/clock/advance', { to }).then(() => { finished = true; }, () => null);
    for (const started = Date.now(); !finished && Date.now() - started < 60_000; ) {
      const page = await call('GET', '/v1/invoices?limit=100').catch(() => null);
      if (page && page.body.data.length > N) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    await running;

    await startServer(port);
    // The clock moves only after the due work ran: it still shows the old time, so the same
    // advance is simply asked again.
    const clock = (await call('GET', '/v1/test-helpers/clock')).body;
    expect(new Date(clock.now).getTime()).toBeLessThan(new Date(to).getTime());
    // The same advance again. It waits for the dead process's advance lease (CLOCK_ADVANCE_LEASE_MS
    // at most) and for the charge the kill cut off (recovered PAYMENT_RECOVERY_MS after it
    // started); on a busy machine it may need more than one request (409
    // clock_advance_incomplete: repeat with the same `to`).
    let again = await call('POST', '/v1/test-helpers/clock/advance', { to });
    for (let i = 0; again.status === 409 && again.body.error.code === 'clock_advance_incomplete' && i < 10; i++) {
      again = await call('POST', '/v1/test-helpers/clock/advance', { to });
    }
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    // A little later (the recovery of a charge cut off mid-way is due PAYMENT_RECOVERY_MS on).
    expect((await call('POST', '/v1/test-helpers/clock/advance', { seconds: 120 })).status).toBe(200);

    const invoices: any[] = [];
    for (let after: string | null = null; ; ) {
      const page: any = (await call('GET', `/v1/invoices?limit=100${after ? `&after=${after}` : ''}`)).body;
      invoices.push(...page.data);
      if (!page.has_more) break;
      after = page.next_cursor;
    }
    expect(invoices).toHaveLength(N * (WEEKS + 1));
    expect(invoices.filter((i) => i.status !== 'paid').map((i) => [i.id, i.status])).toEqual([]);
    const numbers = invoices.map((i) => Number(i.number.slice(4))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: N * (WEEKS + 1) }, (_, i) => i + 1));
    const perSub = new Map<string, Set<string>>();
    for (const i of invoices) (perSub.get(i.subscription_id) ?? perSub.set(i.subscription_id, new Set()).get(i.subscription_id)!).add(i.period_start);
    expect([...perSub.values()].map((s) => s.size)).toEqual(Array(N).fill(WEEKS + 1));
    // Exactly one successful payment per invoice.
    const payments: any[] = [];
    for (let after: string | null = null; ; ) {
      const page: any = (await call('GET', `/v1/payments?limit=100&status=succeeded${after ? `&after=${after}` : ''}`)).body;
      payments.push(...page.data);
      if (!page.has_more) break;
      after = page.next_cursor;
    }
    expect(payments).toHaveLength(N * (WEEKS + 1));
    const paid = new Set(invoices.map((i) => i.payment_id));
    expect(payments.every((p) => paid.has(p.id))).toBe(true);
  }, 240_000);
});

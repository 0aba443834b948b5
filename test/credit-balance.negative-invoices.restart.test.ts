// A kill -9 in the middle of renewals whose invoices have a total below zero (issue 25, item 6):
// the real server runs a clock advance over weekly renewals of subscriptions downgraded with
// create_prorations (their first renewal credits the customer's credit balance, the next ones draw
// it), is SIGKILLed part-way, is started again on the same data, and the same advance finishes the
// work. Every negative invoice credited the balance exactly once (one invoice_credit entry with
// its id, for its credited_to_balance), every later draw is an invoice's credit_applied, every
// balance equals its ledger, and every invoice is there once.
import { afterAll, describe, expect, it } from 'vitest';
import { processClient, serverProcesses } from './helpers/server-process.ts';
import { testPort } from './helpers/ports.ts';

const servers = serverProcesses('negcreditkill', {
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

describe('negative invoices across a crash', () => {
  it('a renewal run killed part-way is finished after the restart: each negative invoice credits the balance exactly once', async () => {
    const port = testPort();
    const base = `http://127.0.0.1:${port}`;
    const { call, all } = processClient(base, servers.auth);
    const first = await servers.start(port);
    const pro = (await call('POST', '/v1/plans', { name: 'Pro', amount: 7000, currency: 'USD', interval: 'week' })).body;
    const lite = (await call('POST', '/v1/plans', { name: 'Lite', amount: 100, currency: 'USD', interval: 'week' })).body;
    const N = 10;
    const WEEKS = 12;
    const customers = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const c = (await call('POST', '/v1/customers', { email: `negkill${i}@example.com` })).body;
        const si = (await call('POST', '/v1/setup-intents', { customer_id: c.id })).body;
        await call('POST', `/v1/test-helpers/setup-intents/${si.id}/complete`, {});
        const sub = (await call('POST', '/v1/subscriptions', { customer_id: c.id, plan_id: pro.id })).body;
        expect(sub.status).toBe('active');
        // Downgraded at once with create_prorations: about −6,900 wait for the first renewal.
        const down = await call('PATCH', `/v1/subscriptions/${sub.id}`, { plan_id: lite.id });
        expect(down.status, JSON.stringify(down.body)).toBe(200);
        return c.id as string;
      }),
    );
    const to = new Date(Date.now() + WEEKS * 7 * 86_400_000 + 3_600_000).toISOString();
    // Killed as soon as the first renewals (the negative invoices) are there.
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

    await servers.start(port);
    // The kill landed inside the run: the clock still shows a time before the advance's end.
    expect(new Date((await call('GET', '/v1/test-helpers/clock')).body.now).getTime()).toBeLessThan(new Date(to).getTime());
    let again = await call('POST', '/v1/test-helpers/clock/advance', { to });
    for (let i = 0; again.status === 409 && again.body.error.code === 'clock_advance_incomplete' && i < 10; i++) {
      again = await call('POST', '/v1/test-helpers/clock/advance', { to });
    }
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await call('POST', '/v1/test-helpers/clock/advance', { seconds: 120 })).status).toBe(200);

    const invoices = await all('/v1/invoices');
    expect(invoices).toHaveLength(N * (WEEKS + 1));
    expect(invoices.filter((i) => i.status !== 'paid').map((i) => [i.id, i.status])).toEqual([]);
    const numbers = invoices.map((i) => Number(i.number.slice(4))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: N * (WEEKS + 1) }, (_, i) => i + 1));
    const negative = invoices.filter((i) => i.total < 0);
    expect(negative).toHaveLength(N); // each subscription's first renewal
    for (const cust of customers) {
      const ledger = await all(`/v1/customers/${cust}/balance-transactions`);
      const mine = invoices.filter((i) => i.customer_id === cust);
      const neg = mine.filter((i) => i.total < 0);
      expect(neg).toHaveLength(1);
      expect(neg[0]).toMatchObject({ amount_due: 0, credited_to_balance: -neg[0].total });
      // Exactly once: one invoice_credit entry, with its invoice's id and amount.
      const credits = ledger.filter((t) => t.type === 'invoice_credit');
      expect(credits.map((t) => [t.invoice_id, t.amount])).toEqual([[neg[0].id, -neg[0].total]]);
      // Every draw is an invoice's credit_applied, once each.
      const draws = ledger.filter((t) => t.type === 'applied_to_invoice');
      expect(new Set(draws.map((t) => t.invoice_id)).size).toBe(draws.length);
      for (const d of draws) expect(-d.amount).toBe(mine.find((i) => i.id === d.invoice_id)!.credit_applied);
      expect(ledger).toHaveLength(credits.length + draws.length);
      // The balance equals its ledger: the credit less the weekly 100s drawn after it.
      const balance = (await call('GET', `/v1/customers/${cust}`)).body.credit_balance.USD ?? 0;
      expect(balance).toBe(ledger.reduce((s, t) => s + t.amount, 0));
      expect(balance).toBe(-neg[0].total - 100 * (WEEKS - 1));
      expect(ledger[0].ending_balance).toBe(balance);
    }
    // The card paid only the first invoices: one succeeded payment each.
    const payments = await all('/v1/payments?status=succeeded');
    expect(payments).toHaveLength(N);
    expect(payments.map((p) => p.amount)).toEqual(Array(N).fill(7000));
  }, 240_000);
});

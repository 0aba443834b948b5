// The ledger invariant check (issue 26, "Metrics": ledger invariant checks; src/services/ledger-check.ts):
// every wallet balance must equal the signed sum of its ledger and every customer credit balance the
// sum of its own. Balances made through the API agree; a balance changed behind the ledger's back
// (the triggers bypassed, as a restore or a hand-made UPDATE can) is found, logged at error with its
// ids and both amounts, and shows in billing_ledger_invariant_checks_total and
// billing_ledger_invariant_violations; once repaired, the next check is clean.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, usingPostgres, type TestApp } from './helpers/app.ts';
import { checkLedgers } from '../src/services/ledger-check.ts';
import { registry } from '../src/platform/metrics.ts';
import { createLogger } from '../src/platform/logger.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({}, { worker: false });
});
afterAll(() => app?.close());

/** Runs SQL with the triggers off (session_replication_role = replica), as a superuser. */
async function behindTheLedger(sql: string, params: unknown[]): Promise<void> {
  if (usingPostgres) {
    const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await c.connect();
    try {
      await c.query('BEGIN');
      await c.query('SET LOCAL session_replication_role = replica');
      await c.query(sql, params);
      await c.query('COMMIT');
    } finally {
      await c.end();
    }
  } else {
    await app.services.db.prisma.$transaction(async (tx) => {
      // The embedded database's session user is its superuser; the service's connection acts as
      // billing_tenant (row-level security) until the end of this transaction.
      await tx.$executeRawUnsafe('SET LOCAL ROLE postgres');
      await tx.$executeRawUnsafe('SET LOCAL session_replication_role = replica');
      await tx.$executeRawUnsafe(sql, ...params);
    });
  }
}

const metric = async (name: string, labels: Record<string, string>) => {
  const m = (await registry.getSingleMetric(name)!.get()).values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x));
  return m?.value;
};

describe('ledger invariant check', () => {
  it('finds a wallet and a customer balance that differ from their ledger, logs and counts them, and is clean again once repaired', { timeout: 60_000 }, async () => {
    const api = await app.merchant();
    const c = (await api.post('/v1/customers', { email: 'ledger@example.com' })).body;
    const w = (await api.post('/v1/wallets', { customer_id: c.id, currency: 'USD' })).body;
    expect((await api.post(`/v1/wallets/${w.id}/credit`, { amount: 1000, description: 'in', reference: 'in-1' })).status).toBe(201);
    expect((await api.post(`/v1/wallets/${w.id}/debit`, { amount: 300, description: 'out', reference: 'out-1' })).status).toBe(200);
    expect((await api.post(`/v1/customers/${c.id}/balance-transactions`, { amount: 500, currency: 'USD', description: 'goodwill' })).status).toBe(201);
    expect((await api.post(`/v1/customers/${c.id}/balance-transactions`, { amount: -200, currency: 'USD', description: 'back' })).status).toBe(201);

    const lines: string[] = [];
    const log = createLogger('info', { write: (l: string) => void lines.push(l) });
    const mine = (r: Awaited<ReturnType<typeof checkLedgers>>) => r.mismatches.filter((m) => m.merchant_id === api.creds.merchant_id);

    // Made through the API: they agree (batches of 1 walk the keyset).
    const clean = await checkLedgers(app.services.db, log, { batch: 1 });
    expect(clean.checked.wallet).toBeGreaterThanOrEqual(1);
    expect(clean.checked.customer_balance).toBeGreaterThanOrEqual(1);
    expect(mine(clean)).toEqual([]);
    const violatedBefore = (await metric('billing_ledger_invariant_checks_total', { ledger: 'wallet', result: 'violated' })) ?? 0;

    await behindTheLedger('UPDATE wallets SET balance = balance + 5 WHERE id = $1', [w.id]);
    await behindTheLedger('UPDATE customer_balances SET balance = balance - 7 WHERE customer_id = $1', [c.id]);
    const found = await checkLedgers(app.services.db, log, { batch: 2, logLimit: Infinity });
    expect(mine(found)).toEqual([
      { ledger: 'wallet', merchant_id: api.creds.merchant_id, wallet_id: w.id, balance: '705', ledger_sum: '700' },
      { ledger: 'customer_balance', merchant_id: api.creds.merchant_id, customer_id: c.id, currency: 'USD', balance: '293', ledger_sum: '300' },
    ]);
    const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg.startsWith('ledger invariant violated') && l.merchant_id === api.creds.merchant_id);
    expect(logged).toEqual([
      expect.objectContaining({ level: 'error', ledger: 'wallet', wallet_id: w.id, balance: '705', ledger_sum: '700' }),
      expect.objectContaining({ level: 'error', ledger: 'customer_balance', customer_id: c.id, currency: 'USD', balance: '293', ledger_sum: '300' }),
    ]);
    expect(await metric('billing_ledger_invariant_checks_total', { ledger: 'wallet', result: 'violated' })).toBe(violatedBefore + found.mismatches.filter((m) => m.ledger === 'wallet').length);
    expect(await metric('billing_ledger_invariant_violations', { ledger: 'wallet' })).toBeGreaterThanOrEqual(1);
    expect(await metric('billing_ledger_invariant_violations', { ledger: 'customer_balance' })).toBeGreaterThanOrEqual(1);
    expect(await metric('billing_ledger_invariant_last_check_timestamp_seconds', { ledger: 'wallet' })).toBeGreaterThan(Date.now() / 1000 - 60);

    // The log is capped per ledger and pass (a restore gone wrong does not flood it); all are counted.
    const quiet: string[] = [];
    const capped = await checkLedgers(app.services.db, createLogger('info', { write: (l: string) => void quiet.push(l) }), { logLimit: 0 });
    expect(mine(capped)).toHaveLength(2);
    expect(quiet.filter((l) => l.includes('ledger invariant violated'))).toEqual([]);

    await behindTheLedger('UPDATE wallets SET balance = balance - 5 WHERE id = $1', [w.id]);
    await behindTheLedger('UPDATE customer_balances SET balance = balance + 7 WHERE customer_id = $1', [c.id]);
    expect(mine(await checkLedgers(app.services.db, log))).toEqual([]);
  });
});

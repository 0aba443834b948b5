// A balance adjustment (POST /v1/customers/:id/balance-transactions) locks the customer, then the
// balance. An invoice drawing the balance (finalize, a renewal) locks the balance, then writes its
// ledger row, whose foreign key check takes FOR KEY SHARE on the customer. With the customer locked
// FOR UPDATE that check waited for the adjustment, which waited for the balance: a deadlock, answered
// 500 (found by finalising invoices and taking credit back at once on PostgreSQL). lockRow takes FOR
// NO KEY UPDATE, which lockers still serialise on and a key check does not wait for.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, usingPostgres, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
});
afterAll(() => app?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!usingPostgres)('a balance adjustment and a draw on the same balance', () => {
  it('do not deadlock: the draw’s ledger key check does not wait for the adjustment’s customer lock', async () => {
    const cus = (await api.post('/v1/customers', { email: `b${Math.random()}@example.com` })).body;
    expect((await api.post(`/v1/customers/${cus.id}/balance-transactions`, { amount: 5000, currency: 'USD' })).status).toBe(201);

    const deadlocks = async () => {
      const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await c.connect();
      try {
        await sleep(1500); // backends report their statistics within a second
        return Number((await c.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')).rows[0].deadlocks);
      } finally {
        await c.end();
      }
    };
    const before = await deadlocks();
    // The draw, by hand: the balance locked, then (after the adjustment queued) the key check.
    const draw = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await draw.connect();
    try {
      await draw.query('BEGIN');
      await draw.query(`SELECT balance FROM customer_balances WHERE customer_id = $1 AND currency = 'USD' FOR UPDATE`, [cus.id]);
      const adjustment = Promise.resolve(api.post(`/v1/customers/${cus.id}/balance-transactions`, { amount: -100, currency: 'USD' })); // sent now
      await sleep(400); // the adjustment holds the customer and waits for the balance
      let drawError: unknown = null;
      await draw.query('SELECT id FROM customers WHERE id = $1 FOR KEY SHARE', [cus.id]).catch((e) => {
        drawError = e;
      });
      await draw.query(drawError ? 'ROLLBACK' : 'COMMIT');
      const r = await adjustment;
      expect(drawError).toBeNull();
      expect(r.status).toBe(201);
      expect(r.body.ending_balance).toBe(4900);
      // Without the fix one of the two was the deadlock's victim (the adjustment, retried, or the draw).
      expect(await deadlocks()).toBe(before);
    } finally {
      await draw.query('ROLLBACK').catch(() => {});
      await draw.end();
    }
  });

  it('finalising invoices while taking credit back at once: no 500, the balance equals its ledger', async () => {
    const cus = (await api.post('/v1/customers', { email: `b${Math.random()}@example.com` })).body;
    expect((await api.post(`/v1/customers/${cus.id}/balance-transactions`, { amount: 100_000, currency: 'USD' })).status).toBe(201);
    const drafts: string[] = [];
    for (let i = 0; i < 6; i++) {
      await api.post('/v1/invoice-items', { customer_id: cus.id, amount: 1000, currency: 'USD', description: `Item ${i}` });
      drafts.push((await api.post('/v1/invoices', { customer_id: cus.id, currency: 'USD', collection_method: 'send_invoice' })).body.id);
    }
    const answers = await Promise.all(
      drafts.flatMap((id) => [
        api.post(`/v1/invoices/${id}/finalize`),
        api.post(`/v1/customers/${cus.id}/balance-transactions`, { amount: -100, currency: 'USD' }),
      ]),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(6).fill(200), ...Array(6).fill(201)].sort());
    const ledger = (await api.get(`/v1/customers/${cus.id}/balance-transactions?limit=100`)).body.data as { amount: number }[];
    const sum = ledger.reduce((s, t) => s + t.amount, 0);
    expect(sum).toBe(100_000 - 6 * 1000 - 6 * 100);
    expect((await api.get(`/v1/customers/${cus.id}`)).body.credit_balance).toEqual({ USD: sum });
  });
});

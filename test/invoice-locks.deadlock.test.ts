// lockInvoiceAndPayment takes the payment's lock before the invoice's (the order a payment's outcome
// takes them in). When a new attempt replaces the invoice's payment between its unlocked read and
// the invoice lock, it must not then wait for the new payment's lock while holding the invoice's:
// a payment outcome holding that payment and waiting for the invoice deadlocks with it (found by
// racing pay + credit note on one invoice: a 500 after three deadlocked attempts).
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

async function pgClient() {
  const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await c.connect();
  return c;
}

describe.skipIf(!usingPostgres)('lockInvoiceAndPayment when a new attempt replaces the payment meanwhile', () => {
  it('never waits for the new payment while holding the invoice (no deadlock with its outcome)', async () => {
    const cus = (await api.post('/v1/customers', { email: `d${Math.random()}@example.com` })).body;
    await api.post('/v1/invoice-items', { customer_id: cus.id, amount: 1200, currency: 'USD', description: 'Work' });
    const draft = (await api.post('/v1/invoices', { customer_id: cus.id, currency: 'USD', collection_method: 'send_invoice' })).body;
    const inv = (await api.post(`/v1/invoices/${draft.id}/finalize`)).body;
    expect(inv.status).toBe('open');
    expect(inv.payment_id ?? null).toBeNull();
    const pay = (await api.post('/v1/payments', { amount: 1200, currency: 'USD', customer: { email: 'x@example.com' }, redirect_url: 'https://shop.example/done' })).body;

    const { lockInvoiceAndPayment } = await import('../src/domain/billing/invoices.ts');
    const { forMerchant, inTransaction } = await import('../src/platform/db/tenant.ts');
    const merchant = { id: api.creds.merchant_id, mode: 'test' as const };
    const ctx: any = { merchant, db: forMerchant(app.services.db.prisma, merchant.id), requestId: 'req_test', log: app.services.log, runtime: app.services.runtime };

    const deadlocks = async () => {
      const c = await pgClient();
      try {
        await sleep(1500); // backends report their statistics within a second
        return Number((await c.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')).rows[0].deadlocks);
      } finally {
        await c.end();
      }
    };
    const before = await deadlocks();
    const attempt = await pgClient(); // a new attempt: takes the invoice and names a new payment
    const outcome = await pgClient(); // that payment's outcome: payment lock, then the invoice's
    try {
      await attempt.query('BEGIN');
      await attempt.query('SELECT id FROM invoices WHERE id = $1 FOR UPDATE', [inv.id]);
      await attempt.query('UPDATE invoices SET payment_id = $2 WHERE id = $1', [inv.id, pay.id]);
      await outcome.query('BEGIN');
      await outcome.query('SELECT id FROM payments WHERE id = $1 FOR UPDATE', [pay.id]);

      // The caller reads the invoice (no payment yet) and waits for the invoice's lock.
      let errored: unknown = null;
      const locker = inTransaction(ctx.db, async (tx) => {
        const { inv: locked, payment } = await lockInvoiceAndPayment(ctx, tx, inv.id);
        return { paymentId: locked.paymentId, locked: payment?.id ?? null };
      }).catch((e) => {
        errored = e;
        return null;
      });
      await sleep(300);
      await attempt.query('COMMIT'); // the caller gets the invoice, and finds the new payment
      await sleep(300);
      // The outcome now settles the invoice: it waits for the invoice's lock.
      let outcomeError: unknown = null;
      await outcome
        .query('SELECT id FROM invoices WHERE id = $1 FOR UPDATE', [inv.id])
        .then(() => outcome.query('COMMIT'))
        .catch(async (e) => {
          outcomeError = e;
          await outcome.query('ROLLBACK').catch(() => {});
        });
      const got = await locker;
      expect(outcomeError).toBeNull(); // not chosen as a deadlock victim
      expect(errored).toBeNull();
      expect(got).toEqual({ paymentId: pay.id, locked: pay.id });
      // Without the fix the caller was the deadlock's victim and only its retry succeeded.
      expect(await deadlocks()).toBe(before);
    } finally {
      await attempt.query('ROLLBACK').catch(() => {});
      await attempt.end();
      await outcome.end();
    }
  });
});

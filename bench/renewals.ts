// Benchmark (not a test): renewals per second of a clock advance, on PostgreSQL, next to a bare-SQL
// yardstick doing the minimum statements a renewal needs, in the same run (issue 23, section 5).
//
//   npm run bench:renewals                       # scratch database created on postgresql://postgres@127.0.0.1:5432/postgres
//   SUBS=1000 MERCHANTS=10 PER_MERCHANT=100 ROUNDS=1 npm run bench:renewals
//   BENCH_DATABASE_URL=postgresql://… npm run bench:renewals
//
// Scenarios:
//   one merchant    — SUBS monthly subscriptions (each customer with a saved card, first invoice
//                     paid); an untimed advance of 20 days runs the setup's own due work (its
//                     e-mails, the setup intents' expiry); then the timed advance to 32 days: every subscription renews
//                     once (invoice, line, payment charged off-session, events) and the safety jobs
//                     of that month run too. renewals/s = renewals / wall time of the advance
//                     (repeats after 409 clock_advance_incomplete included; their count is printed).
//   10 merchants    — MERCHANTS × PER_MERCHANT subscriptions, all merchants advancing at once.
//   daily × 1 year  — one subscription on a daily plan advanced by a year (365 renewals): how many
//                     requests the client needs (the goal: at most one repeat).
// BENCH_ONLY=one|many|year runs one scenario.
// The yardstick (plain `pg`, one transaction per renewal, one connection per merchant, as the
// advance uses): take the merchant's next invoice number, update the subscription's period, insert
// the invoice, its line, its payment and one event — the minimum a renewal writes — over the same
// number of subscriptions.
// After each scenario the run checks that every subscription was renewed exactly once and paid.
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createMerchant } from '../src/domain/merchants/index.ts';
import { newId, randomToken } from '../src/platform/ids.ts';
import { loadConfig } from '../src/platform/config.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createApp } from '../src/server/app.ts';
import { openServices } from '../src/server/services.ts';

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const SUBS = Number(process.env.SUBS ?? 1000);
const MERCHANTS = Number(process.env.MERCHANTS ?? 10);
const PER_MERCHANT = Number(process.env.PER_MERCHANT ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 1);
const SETUP_CONCURRENCY = Number(process.env.SETUP_CONCURRENCY ?? 8);
const ONLY = new RegExp(process.env.BENCH_ONLY ?? '', 'i');
const DAY = 86_400_000;

async function scratchDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (process.env.BENCH_DATABASE_URL) return { url: process.env.BENCH_DATABASE_URL, drop: async () => {} };
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const name = `renewals_bench_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const a = new pg.Client({ connectionString: ADMIN_URL });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}

async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

async function main() {
  const { url, drop } = await scratchDatabase();
  const log = createLogger('silent');
  const db = await openDatabase({ url, poolSize: 20, logger: log });
  const services = await openServices(loadConfig({ LOG_LEVEL: 'silent', PORT: '0', RATE_LIMIT_PER_SECOND: '0' }), { log, db });
  const app = createApp(services);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const bare = new pg.Pool({ connectionString: url, max: 20 });

  async function merchant(name: string): Promise<{ id: string; api: Api }> {
    const creds = await createMerchant(db.prisma, { name });
    const auth = 'Basic ' + Buffer.from(`${creds.client_id}:${creds.client_secret}`).toString('base64');
    const api: Api = async (method, path, body) => {
      const r = await fetch(base + path, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as any };
    };
    return { id: creds.merchant_id, api };
  }

  /** n customers with a saved card, each on a monthly plan, first invoice paid. */
  async function subscribe(api: Api, n: number): Promise<void> {
    const plan = (await api('POST', '/v1/plans', { name: 'Monthly', amount: 2900, currency: 'USD', interval: 'month' })).body;
    await pool(n, SETUP_CONCURRENCY, async (i) => {
      const c = (await api('POST', '/v1/customers', { email: `r${i}@bench.example` })).body;
      const si = (await api('POST', '/v1/setup-intents', { customer_id: c.id })).body;
      const done = await api('POST', `/v1/test-helpers/setup-intents/${si.id}/complete`, {});
      if (done.status !== 200 || !done.body.payment_method_id) throw new Error(`setup intent not completed: ${done.status} ${JSON.stringify(done.body)}`);
      const s = await api('POST', '/v1/subscriptions', { customer_id: c.id, plan_id: plan.id });
      if (s.body.status !== 'active') {
        const inv = (await api('GET', `/v1/invoices/${s.body.latest_invoice_id}`)).body;
        throw new Error(`subscription not active: ${s.status} ${s.body.status}; its first invoice ${inv.status}, last_payment_error ${JSON.stringify(inv.last_payment_error)}, payment ${inv.payment_id}`);
      }
    });
  }

  /** Advances the merchant's clock to `to`, repeating after 409 clock_advance_incomplete; the number of requests. */
  async function advance(api: Api, to: string): Promise<number> {
    for (let requests = 1; ; requests++) {
      const r = await api('POST', '/v1/test-helpers/clock/advance', { to });
      if (r.status === 200) return requests;
      if (r.status === 409 && r.body.error.code === 'clock_advance_incomplete' && requests < 50) continue;
      throw new Error(`advance: ${r.status} ${JSON.stringify(r.body)}`);
    }
  }

  /** Every subscription of the merchant renewed exactly once, its renewal invoice paid. */
  async function check(merchantId: string, n: number): Promise<string> {
    const r = await bare.query(
      `SELECT count(*) FILTER (WHERE s.period_index = 1)::int AS renewed,
              (SELECT count(*)::int FROM invoices i WHERE i.merchant_id = $1 AND i.billing_reason = 'subscription_cycle') AS cycle_invoices,
              (SELECT count(*)::int FROM invoices i WHERE i.merchant_id = $1 AND i.billing_reason = 'subscription_cycle' AND i.status = 'paid') AS paid,
              (SELECT count(*)::int FROM payments p WHERE p.merchant_id = $1 AND p.status = 'succeeded') AS payments
         FROM subscriptions s WHERE s.merchant_id = $1`,
      [merchantId],
    );
    const row = r.rows[0];
    const ok = row.renewed === n && row.cycle_invoices === n && row.paid === n && row.payments === 2 * n;
    if (!ok) throw new Error(`check failed for ${merchantId}: ${JSON.stringify(row)} (expected ${n} each, ${2 * n} payments)`);
    return `${row.renewed} renewed, ${row.paid} paid`;
  }

  /** What the advance ran: jobs by kind and outcome. */
  async function jobsOf(merchantIds: string[]): Promise<string> {
    const r = await bare.query(
      `SELECT kind, status, count(*)::int AS n FROM jobs WHERE merchant_id = ANY($1) AND status IN ('done', 'cancelled') GROUP BY kind, status ORDER BY kind, status`,
      [merchantIds],
    );
    return r.rows.map((x) => `${x.kind} ${x.status} ${x.n}`).join(', ');
  }

  /** The yardstick: the minimum statements of n renewals of the merchant's subscriptions, one transaction each, on one connection. */
  async function yardstick(merchantId: string): Promise<number> {
    const subs = (await bare.query(`SELECT id, customer_id, current_period_start, current_period_end FROM subscriptions WHERE merchant_id = $1 ORDER BY id`, [merchantId])).rows;
    const c = await bare.connect();
    try {
      await c.query(`SELECT set_config('billing.merchant_id', $1, false)`, [merchantId]);
      const t = performance.now();
      for (const s of subs) {
        const at = new Date(s.current_period_end.getTime());
        const end = new Date(at.getTime() + 30 * DAY);
        const invoiceId = newId('invoice');
        await c.query('BEGIN');
        const seq = (await c.query(`UPDATE merchants SET invoice_seq = invoice_seq + 1 WHERE id = $1 RETURNING invoice_seq`, [merchantId])).rows[0].invoice_seq;
        await c.query(`UPDATE subscriptions SET period_index = period_index, current_period_start = $3, current_period_end = $4, latest_invoice_id = latest_invoice_id, updated_at = now() WHERE merchant_id = $1 AND id = $2`, [
          merchantId,
          s.id,
          s.current_period_start,
          s.current_period_end,
        ]);
        await c.query(
          `INSERT INTO invoices (id, merchant_id, customer_id, subscription_id, number, status, billing_reason, billing_key, currency, subtotal, total, amount_due, period_start, period_end, due_date, finalized_at, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $8, 'open', 'subscription_cycle', $5, 'USD', 2900, 2900, 2900, $6, $7, $6, $6, $6, now())`,
          [invoiceId, merchantId, s.customer_id, s.id, `yardstick:${invoiceId}`, at, end, `Y-${String(seq).padStart(6, '0')}`],
        );
        await c.query(
          `INSERT INTO invoice_items (id, merchant_id, subscription_id, invoice_id, description, period_start, period_end, amount, created_at) VALUES ($1, $2, $3, $4, 'Monthly', $5, $6, 2900, $5)`,
          [newId('invoice_line'), merchantId, s.id, invoiceId, at, end],
        );
        await c.query(
          `INSERT INTO payments (id, merchant_id, customer_id, amount, currency, status, purpose, checkout_token, expires_at, created_at, updated_at, metadata)
           VALUES ($1, $2, $3, 2900, 'USD', 'succeeded', 'invoice', $4, $5, $6, now(), $7)`,
          [newId('payment'), merchantId, s.customer_id, randomToken(40), new Date(at.getTime() + DAY), at, JSON.stringify({ invoice_id: invoiceId })],
        );
        await c.query(`INSERT INTO events (id, merchant_id, type, data, created_at) VALUES ($1, $2, 'invoice.paid', $3, $4)`, [
          newId('event'),
          merchantId,
          JSON.stringify({ object: { id: invoiceId } }),
          at,
        ]);
        await c.query('COMMIT');
      }
      return (performance.now() - t) / 1000;
    } finally {
      c.release();
    }
  }

  const rows: string[] = [];
  const line = (name: string, renewals: number, seconds: number, yard: number, extra: string) => {
    const rps = renewals / seconds;
    const yps = renewals / yard;
    const s = `${name.padEnd(26)} ${String(renewals).padStart(6)} ${seconds.toFixed(2).padStart(8)} s ${rps.toFixed(0).padStart(7)}/s   yardstick ${yps.toFixed(0).padStart(6)}/s   ratio ${(rps / yps).toFixed(3)}   ${extra}`;
    rows.push(s);
    console.log(s);
  };

  for (let round = 1; round <= ROUNDS; round++) {
    if (ONLY.test('one')) {
      const m = await merchant(`Bench one ${round}`);
      process.stdout.write(`round ${round}: ${SUBS} subscriptions on one merchant… `);
      const ts = performance.now();
      await subscribe(m.api, SUBS);
      console.log(`set up in ${((performance.now() - ts) / 1000).toFixed(0)} s`);
      // The setup's own due work (its e-mails, the setup intents' expiry) first, untimed.
      await advance(m.api, new Date(Date.now() + 20 * DAY).toISOString());
      const to = new Date(Date.now() + 32 * DAY).toISOString();
      const t = performance.now();
      const requests = await advance(m.api, to);
      const seconds = (performance.now() - t) / 1000;
      const checked = await check(m.id, SUBS);
      const jobs = await jobsOf([m.id]);
      const yard = await yardstick(m.id);
      line(`1 merchant × ${SUBS}`, SUBS, seconds, yard, `${requests} request(s); ${checked}; jobs: ${jobs}`);
    }
    if (ONLY.test('many')) {
      const ms = await Promise.all(Array.from({ length: MERCHANTS }, (_, i) => merchant(`Bench many ${round}.${i}`)));
      process.stdout.write(`round ${round}: ${MERCHANTS} merchants × ${PER_MERCHANT} subscriptions… `);
      const ts = performance.now();
      await Promise.all(ms.map((m) => subscribe(m.api, PER_MERCHANT)));
      console.log(`set up in ${((performance.now() - ts) / 1000).toFixed(0)} s`);
      await Promise.all(ms.map((m) => advance(m.api, new Date(Date.now() + 20 * DAY).toISOString())));
      const to = new Date(Date.now() + 32 * DAY).toISOString();
      const t = performance.now();
      const requests = await Promise.all(ms.map((m) => advance(m.api, to)));
      const seconds = (performance.now() - t) / 1000;
      for (const m of ms) await check(m.id, PER_MERCHANT);
      const jobs = await jobsOf(ms.map((m) => m.id));
      const ty = performance.now();
      await Promise.all(ms.map((m) => yardstick(m.id)));
      const yard = (performance.now() - ty) / 1000;
      line(`${MERCHANTS} merchants × ${PER_MERCHANT} at once`, MERCHANTS * PER_MERCHANT, seconds, yard, `${requests.reduce((a, b) => a + b, 0)} request(s); all renewed and paid; jobs: ${jobs}`);
    }
    if (ONLY.test('year')) {
      // A daily plan advanced by a year: 365 renewals in one advance; the client may repeat it
      // after 409 clock_advance_incomplete (two minutes of work per request) — at most once.
      const m = await merchant(`Bench year ${round}`);
      const plan = (await m.api('POST', '/v1/plans', { name: 'Daily', amount: 100, currency: 'USD', interval: 'day' })).body;
      const c = (await m.api('POST', '/v1/customers', { email: 'year@bench.example' })).body;
      const si = (await m.api('POST', '/v1/setup-intents', { customer_id: c.id })).body;
      await m.api('POST', `/v1/test-helpers/setup-intents/${si.id}/complete`, {});
      const sub = (await m.api('POST', '/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
      const to = new Date(new Date(sub.current_period_end).getTime() + 364 * DAY + 1000).toISOString();
      const t = performance.now();
      const requests = await advance(m.api, to);
      const seconds = (performance.now() - t) / 1000;
      const paid = (await bare.query(`SELECT count(*)::int AS n FROM invoices WHERE merchant_id = $1 AND billing_reason = 'subscription_cycle' AND status = 'paid'`, [m.id])).rows[0].n;
      const s = `daily plan × 1 year        ${String(paid).padStart(6)} ${seconds.toFixed(2).padStart(8)} s ${(paid / seconds).toFixed(0).padStart(7)}/s   ${requests} request(s) (${requests - 1} repeat(s)); ${paid} renewals paid`;
      rows.push(s);
      console.log(s);
    }
  }
  console.log(`\nrenewals per second of a clock advance, PostgreSQL, service and database on the same 2-core machine\n`);
  for (const r of rows) console.log(r);

  await bare.end();
  await new Promise((r) => server.close(r));
  await db.close();
  await drop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

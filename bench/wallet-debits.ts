// Benchmark (not a test): wallet debits per second through the HTTP API, on one hot wallet and
// spread over 1,000 wallets, against a baseline of raw `pg` issuing the same database work
// (lock the wallet, check the reference, append the ledger row — the trigger moves the balance —
// record the event) in the same run, on the same PostgreSQL.
//
//   npx tsx bench/wallet-debits.ts            # uses postgresql://postgres@127.0.0.1:5432/postgres to create a scratch database
//   BENCH_DATABASE_URL=postgresql://… DEBITS=4000 CONCURRENCY=32 npx tsx bench/wallet-debits.ts
//
// Bounded: a fixed number of debits per scenario, and a 120 s cap on each.
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createMerchant } from '../src/domain/merchants/index.ts';
import { newId } from '../src/platform/ids.ts';
import { loadConfig } from '../src/platform/config.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createApp } from '../src/server/app.ts';
import { openServices } from '../src/server/services.ts';

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DEBITS = Number(process.env.DEBITS ?? 3000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const WALLETS = Number(process.env.WALLETS ?? 1000);
const CAP_MS = 120_000;

interface Result {
  ops: number;
  ok: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
}

async function run(total: number, concurrency: number, op: (i: number) => Promise<boolean>): Promise<Result> {
  const lat: number[] = [];
  let next = 0;
  let ok = 0;
  const started = performance.now();
  const deadline = started + CAP_MS;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total && performance.now() < deadline) {
        const i = next++;
        const t = performance.now();
        if (await op(i)) ok++;
        lat.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? 0;
  return { ops: lat.length, ok, seconds, perSecond: lat.length / seconds, p50: q(0.5), p99: q(0.99) };
}

async function main() {
  let dbUrl = process.env.BENCH_DATABASE_URL;
  let dropDb: (() => Promise<void>) | null = null;
  if (!dbUrl) {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    const name = `billing_bench_${Date.now()}`;
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(ADMIN_URL);
    u.pathname = `/${name}`;
    dbUrl = u.toString();
    dropDb = async () => {
      const a = new pg.Client({ connectionString: ADMIN_URL });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    };
  }
  const log = createLogger('silent');
  const db = await openDatabase({ url: dbUrl, poolSize: 20, logger: log });
  const services = await openServices(loadConfig({ LOG_LEVEL: 'silent', PORT: '0' }), { log, db });
  const app = createApp(services);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const creds = await createMerchant(db.prisma, { name: 'Bench' });
  const auth = 'Basic ' + Buffer.from(`${creds.client_id}:${creds.client_secret}`).toString('base64');
  const post = async (path: string, body: unknown) => {
    const r = await fetch(base + path, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await r.arrayBuffer();
    return r.status;
  };
  const postJson = async (path: string, body: unknown) =>
    (await fetch(base + path, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;

  // Wallets: 2 hot ones (API and baseline) and 2 × WALLETS cold ones.
  const mkWallet = async (i: number, tag: string) => {
    const c = await postJson('/v1/customers', { email: `${tag}${i}@bench.example` });
    const w = await postJson('/v1/wallets', { customer_id: c.id, currency: 'USD' });
    await post(`/v1/wallets/${w.id}/credit`, { amount: 10_000_000, description: 'seed', reference: 'seed' });
    return w.id as string;
  };
  process.stdout.write(`setting up ${2 * WALLETS + 2} wallets… `);
  const hotApi = await mkWallet(0, 'hot-api');
  const hotPg = await mkWallet(0, 'hot-pg');
  const coldApi: string[] = [];
  const coldPg: string[] = [];
  for (let i = 0; i < WALLETS; i++) {
    coldApi.push(await mkWallet(i, 'cold-api'));
    coldPg.push(await mkWallet(i, 'cold-pg'));
  }
  console.log('done');

  const apiDebit = (walletId: string, i: number) => post(`/v1/wallets/${walletId}/debit`, { amount: 1, description: 'bench', reference: `b${i}` }).then((s) => s === 200);

  // The baseline: the same rows written by raw pg on its own pool, no HTTP, no ORM.
  const pool = new pg.Pool({ connectionString: dbUrl, max: 20 });
  const merchantId = creds.merchant_id;
  const pgDebit = async (walletId: string, i: number) => {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      const w = (await c.query('SELECT id, balance, status FROM wallets WHERE id = $1 AND merchant_id = $2 FOR UPDATE', [walletId, merchantId])).rows[0];
      const ref = `r${i}`;
      const prior = await c.query('SELECT id FROM wallet_transactions WHERE wallet_id = $1 AND reference = $2', [walletId, ref]);
      if (prior.rowCount || w.status !== 'active' || BigInt(w.balance) < 1n) {
        await c.query('ROLLBACK');
        return prior.rowCount! > 0;
      }
      await c.query('SELECT id, remaining FROM wallet_grants WHERE wallet_id = $1 AND expired_at IS NULL AND remaining > 0 ORDER BY expires_at', [walletId]);
      const id = newId('wallet_transaction');
      const before = BigInt(w.balance);
      await c.query(
        `INSERT INTO wallet_transactions (id, merchant_id, wallet_id, type, amount, balance_before, balance_after, reference, description, metadata)
         VALUES ($1, $2, $3, 'debit', 1, $4, $5, $6, 'bench', '{}')`,
        [id, merchantId, walletId, before.toString(), (before - 1n).toString(), ref],
      );
      await c.query(`INSERT INTO events (id, merchant_id, type, data) VALUES ($1, $2, 'wallet.debited', $3)`, [newId('event'), merchantId, JSON.stringify({ object: { id } })]);
      await c.query('COMMIT');
      return true;
    } catch (e) {
      await c.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      c.release();
    }
  };

  const rows: [string, Result][] = [];
  rows.push(['HTTP API, one hot wallet', await run(DEBITS, CONCURRENCY, (i) => apiDebit(hotApi, i))]);
  rows.push(['raw pg,   one hot wallet', await run(DEBITS, CONCURRENCY, (i) => pgDebit(hotPg, i))]);
  rows.push([`HTTP API, ${WALLETS} wallets`, await run(DEBITS, CONCURRENCY, (i) => apiDebit(coldApi[i % WALLETS]!, i))]);
  rows.push([`raw pg,   ${WALLETS} wallets`, await run(DEBITS, CONCURRENCY, (i) => pgDebit(coldPg[i % WALLETS]!, i))]);

  console.log(`\n${DEBITS} debits per scenario, concurrency ${CONCURRENCY}, PostgreSQL, client and server on the same 2-core machine\n`);
  console.log('scenario                      debits/s   p50 ms   p99 ms   ok');
  for (const [name, r] of rows) {
    console.log(`${name.padEnd(28)} ${r.perSecond.toFixed(0).padStart(9)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)}   ${r.ok}/${r.ops}`);
  }
  const ratio = (a: Result, b: Result) => (a.perSecond / b.perSecond).toFixed(2);
  console.log(`\nratio API / raw pg: hot wallet ${ratio(rows[0]![1], rows[1]![1])}, ${WALLETS} wallets ${ratio(rows[2]![1], rows[3]![1])}`);

  // Integrity after the run: every wallet's balance equals the sum of its ledger.
  const bad = await pool.query(`
    SELECT w.id FROM wallets w JOIN wallet_transactions t ON t.wallet_id = w.id
    GROUP BY w.id, w.balance
    HAVING w.balance <> SUM(CASE WHEN t.type IN ('credit','topup') THEN t.amount ELSE -t.amount END)`);
  console.log(`wallets whose balance differs from their ledger: ${bad.rowCount}`);

  await pool.end();
  await new Promise((r) => server.close(r));
  await db.close();
  await dropDb?.();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

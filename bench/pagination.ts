// Benchmark (not a test): does `GET /v1/payments?limit=100` stay as fast for a merchant with 1M
// payments as for one with 1k? Both merchants live in one scratch database on the local
// PostgreSQL; the service runs in this process; autocannon alternates between the two merchants
// (first page, then the page after a cursor from deep in the list), BENCH_ROUNDS rounds each.
//
//   npx tsx bench/pagination.ts
//   BIG=1000000 SMALL=1000 BENCH_SECONDS=5 BENCH_ROUNDS=3 npx tsx bench/pagination.ts
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { createMerchant } from '../src/domain/merchants/index.ts';
import { loadConfig } from '../src/platform/config.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createApp } from '../src/server/app.ts';
import { openServices } from '../src/server/services.ts';
import { run, scratchDatabase } from './scratch.ts';

const BIG = Number(process.env.BIG ?? 1_000_000);
const SMALL = Number(process.env.SMALL ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const scratch = await scratchDatabase('pages');
  const url = scratch.url;
  const log = createLogger('silent');
  const db = await openDatabase({ url, poolSize: 10, logger: log });
  const services = await openServices(loadConfig({ LOG_LEVEL: 'silent', PORT: '0', RATE_LIMIT_PER_SECOND: '0' }), { log, db });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: createApp(services).fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const seed = async (n: number) => {
      const m = await createMerchant(db.prisma, { name: `pages ${n}` });
      const auth = 'Basic ' + Buffer.from(`${m.client_id}:${m.client_secret}`).toString('base64');
      const c = (await (await fetch(`${base}/v1/customers`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ email: 'p@example.com' }) })).json()) as { id: string };
      const t0 = performance.now();
      // In chunks of 100k rows: one statement per chunk, newest first by created_at.
      for (let from = 0; from < n; from += 100_000) {
        await db.query(
          `INSERT INTO payments (id, merchant_id, customer_id, amount, currency, status, redirect_url, checkout_token, expires_at, created_at, updated_at)
           SELECT 'pay_' || $1 || lpad(g::text, 12, '0'), $2, $3, 1000 + g % 5000, 'USD', (ARRAY['created','succeeded','failed'])[1 + g % 3],
                  'https://shop.example.com/thanks', $1 || '_' || g, now() + interval '1 day', now() - g * interval '1 second', now()
           FROM generate_series($4::int, $5::int) g`,
          [m.merchant_id.slice(-8), m.merchant_id, c.id, from, Math.min(n, from + 100_000) - 1],
        );
      }
      console.log(`seeded ${n} payments in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      // A cursor deep in the list: walk 5 pages.
      let cursor: string | null = null;
      for (let i = 0; i < 5; i++) {
        const page = (await (await fetch(`${base}/v1/payments?limit=100${cursor ? `&after=${cursor}` : ''}`, { headers: { authorization: auth } })).json()) as { next_cursor: string | null };
        cursor = page.next_cursor;
      }
      return { auth, cursor: cursor! };
    };
    const small = await seed(SMALL);
    const big = await seed(BIG);
    await db.query('VACUUM ANALYZE payments');

    const run = async (auth: string, path: string) => {
      const r = await autocannon({ url: base + path, headers: { authorization: auth }, connections: 8, duration: SECONDS });
      if (r.non2xx + r.errors > 0) throw new Error(`${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      return { p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average };
    };
    const lines = [`| page | payments of the merchant | req/s | p50 ms | p99 ms |`, `|---|---:|---:|---:|---:|`];
    for (const [label, pathOf] of [
      ['first page', () => '/v1/payments?limit=100'],
      ['page 6 (after a cursor)', (c: string) => `/v1/payments?limit=100&after=${c}`],
    ] as const) {
      const s: Awaited<ReturnType<typeof run>>[] = [];
      const b: Awaited<ReturnType<typeof run>>[] = [];
      await run(small.auth, pathOf(small.cursor));
      await run(big.auth, pathOf(big.cursor));
      for (let i = 0; i < ROUNDS; i++) {
        s.push(await run(small.auth, pathOf(small.cursor)));
        b.push(await run(big.auth, pathOf(big.cursor)));
      }
      for (const [n, xs] of [[SMALL, s], [BIG, b]] as const) {
        lines.push(`| ${label} | ${n.toLocaleString('en')} | ${median(xs.map((x) => x.rps)).toFixed(0)} | ${median(xs.map((x) => x.p50))} | ${median(xs.map((x) => x.p99))} |`);
      }
      console.log(`${label}: p50 at ${BIG} ÷ p50 at ${SMALL} = ${(median(b.map((x) => x.p50)) / Math.max(1, median(s.map((x) => x.p50)))).toFixed(2)}`);
    }
    console.log('\n' + lines.join('\n'));
    const [{ merchantId }] = (await db.query<{ merchantId: string }>(`SELECT merchant_id AS "merchantId" FROM payments GROUP BY merchant_id ORDER BY count(*) DESC LIMIT 1`)) as [{ merchantId: string }];
    const plan = await db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM payments WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT 101`,
      [merchantId],
    );
    console.log('\n' + plan.map((r) => r['QUERY PLAN']).join('\n'));
  } finally {
    await new Promise((r) => server.close(r));
    await db.close();
    await scratch.drop();
  }
}

run(main);

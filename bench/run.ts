// `npm run bench`: the service against a bare baseline in the same run (not a test).
//
// The baseline (bench/bare-server.ts) is node:http + pg.Pool doing the least SQL each operation
// needs; the service is `npm start` on PostgreSQL with the per-key rate limit off. Both run as
// their own processes with the same pool size, on the same database server, driven by the same
// load generator (autocannon, in this process) with the same connections, in alternating rounds
// (baseline, service, baseline, service …). The report gives throughput, p50/p99 and the ratio
// service / baseline per scenario (medians over the rounds), then checks that every wallet's
// balance equals the sum of its ledger.
//
//   npm run bench
//   BENCH_SECONDS=10 BENCH_ROUNDS=3 BENCH_CONNECTIONS=32 WEB_CONCURRENCY=2 npm run bench
//   BENCH_ONLY=graphql BENCH_WALLETS=10 npm run bench   (a subset, quickly)
//   BENCH_ADMIN_URL=postgresql://postgres@127.0.0.1:5432/postgres (where the scratch database is created)
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { randomToken } from '../src/platform/ids.ts';
import { testPort } from '../test/helpers/ports.ts';

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const POOL = Number(process.env.DB_POOL_SIZE ?? 10);
const WEB_CONCURRENCY = process.env.WEB_CONCURRENCY ?? '1';
const WALLETS = Number(process.env.BENCH_WALLETS ?? 1000);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** Only the scenarios whose name matches this regular expression (all by default). */
const ONLY = new RegExp(process.env.BENCH_ONLY ?? '', 'i');
const root = join(import.meta.dirname, '..');
const children: ChildProcess[] = [];

function startChild(args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, env: { ...process.env, ...env }, detached: true });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = ready.exec(out);
      if (m) resolve({ child, match: m });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${out}`)));
  });
}

function stopAll() {
  for (const c of children) {
    try {
      process.kill(-c.pid!, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
}
process.on('exit', stopAll);

interface Scenario {
  name: string;
  bare: autocannon.Options;
  service: autocannon.Options;
}

interface Round {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(opts: autocannon.Options): Promise<Round> {
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts });
  const bad = r.non2xx + r.errors + r.timeouts;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: bad };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const dbName = `billing_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const dbUrl = ADMIN_URL.replace(/\/[^/]*$/, `/${dbName}`);
  try {
    // ---- the two servers
    const bare = await startChild(['bench/bare-server.ts'], { BARE_DATABASE_URL: dbUrl, BARE_PORT: '0', BARE_POOL: String(POOL) }, /bare listening (\d+)/);
    const bareUrl = `http://127.0.0.1:${bare.match[1]}`;
    const port = testPort();
    const ck = `ck_bench${randomToken(10)}`;
    const sk = `sk_test_${randomToken(24)}`;
    await startChild(
      ['src/main.ts'],
      {
        DATABASE_URL: dbUrl,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_SECOND: '0',
        DB_POOL_SIZE: String(POOL),
        WEB_CONCURRENCY,
        BILLING_BOOTSTRAP_CLIENT_ID: ck,
        BILLING_BOOTSTRAP_CLIENT_SECRET: sk,
      },
      /Listening on/,
    );
    const svcUrl = `http://127.0.0.1:${port}`;
    const auth = 'Basic ' + Buffer.from(`${ck}:${sk}`).toString('base64');
    const json = { 'content-type': 'application/json' };
    const api = async (path: string, body: unknown) => {
      const r = await fetch(svcUrl + path, { method: 'POST', headers: { authorization: auth, ...json }, body: JSON.stringify(body) });
      if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return (await r.json()) as any;
    };

    // ---- seed both sides alike
    const db = new pg.Pool({ connectionString: dbUrl, max: 4 });
    await db.query(`INSERT INTO bare.customers (id, merchant_id, email) VALUES ('cus_bare', 'mer_bare', 'read@example.com') ON CONFLICT DO NOTHING`);
    await db.query(`INSERT INTO bare.wallets (id, merchant_id, balance) SELECT 'wal_bare_' || g, 'mer_bare', 1000000000000 FROM generate_series(0, ${WALLETS}) g`);
    const customer = await api('/v1/customers', { email: 'read@example.com' });
    const walletIds: string[] = [];
    for (let i = 0; i <= WALLETS; i += 25) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(25, WALLETS + 1 - i) }, async (_, k) => {
          const c = await api('/v1/customers', { email: `w${i + k}@example.com` });
          const w = await api('/v1/wallets', { customer_id: c.id, currency: 'USD' });
          await api(`/v1/wallets/${w.id}/credit`, { amount: 99_999_999_999, reference: 'seed', description: 'bench' });
          return w.id as string;
        }),
      );
      walletIds.push(...batch);
    }
    const hot = walletIds[0]!;
    const spread = walletIds.slice(1);
    let n = 0;
    const ref = () => `r${process.pid}_${n++}`;
    const debit = (path: (i: number) => string, headers: Record<string, string>) => ({
      method: 'POST' as const,
      headers: { ...json, ...headers },
      requests: [
        {
          setupRequest: (req: any) => {
            const i = Math.floor(Math.random() * spread.length);
            return { ...req, path: path(i), body: JSON.stringify({ amount: 1, reference: ref(), description: 'bench' }) };
          },
        },
      ],
    });
    const authH = { authorization: auth };
    const scenarios: Scenario[] = [
      { name: 'GET /v1/customers/:id', bare: { url: `${bareUrl}/customers/cus_bare` }, service: { url: `${svcUrl}/v1/customers/${customer.id}`, headers: authH } },
      {
        name: 'GraphQL node(id:) of one customer',
        bare: { url: `${bareUrl}/customers/cus_bare` },
        service: {
          url: `${svcUrl}/graphql`,
          method: 'POST',
          headers: { ...authH, ...json },
          body: JSON.stringify({ query: `{ node(id: "${customer.id}") { ... on Customer { id email name createdAt } } }` }),
        },
      },
      {
        name: 'POST /v1/customers (with event)',
        bare: { url: `${bareUrl}/customers`, method: 'POST', headers: json, body: JSON.stringify({ email: 'new@example.com' }) },
        service: { url: `${svcUrl}/v1/customers`, method: 'POST', headers: { ...authH, ...json }, body: JSON.stringify({ email: 'new@example.com' }) },
      },
      {
        // What real clients send: a UUID Idempotency-Key on every POST (the same bare create as the baseline).
        name: 'POST /v1/customers with an Idempotency-Key',
        bare: { url: `${bareUrl}/customers`, method: 'POST', headers: json, body: JSON.stringify({ email: 'new@example.com' }) },
        service: {
          url: svcUrl,
          method: 'POST',
          requests: [
            {
              setupRequest: (req: any) => ({
                ...req,
                path: '/v1/customers',
                headers: { ...authH, ...json, 'idempotency-key': randomUUID() },
                body: JSON.stringify({ email: 'new@example.com' }),
              }),
            },
          ],
        },
      },
      {
        name: 'POST /v1/wallets/:id/debit, one hot wallet',
        bare: { url: bareUrl, ...debit(() => '/wallets/wal_bare_0/debit', {}) },
        service: { url: svcUrl, ...debit(() => `/v1/wallets/${hot}/debit`, authH) },
      },
      {
        name: `debits spread over ${spread.length} wallets`,
        bare: { url: bareUrl, ...debit((i) => `/wallets/wal_bare_${i + 1}/debit`, {}) },
        service: { url: svcUrl, ...debit((i) => `/v1/wallets/${spread[i]}/debit`, authH) },
      },
    ];

    console.log(`bench: ${SECONDS}s × ${ROUNDS} rounds per side, ${CONNECTIONS} connections, pool ${POOL}, WEB_CONCURRENCY=${WEB_CONCURRENCY}\n`);
    const lines = ['| scenario | bare req/s | service req/s | ratio | bare p50/p99 ms | service p50/p99 ms | errors |', '|---|---:|---:|---:|---:|---:|---:|'];
    for (const s of scenarios.filter((x) => ONLY.test(x.name))) {
      const b: Round[] = [];
      const v: Round[] = [];
      await load({ ...s.bare, duration: WARMUP }); // warm-up (the service's JIT and prepared statements too)
      await load({ ...s.service, duration: WARMUP });
      for (let r = 0; r < ROUNDS; r++) {
        b.push(await load(s.bare));
        v.push(await load(s.service));
      }
      const br = median(b.map((x) => x.rps));
      const vr = median(v.map((x) => x.rps));
      const line = `| ${s.name} | ${br.toFixed(0)} | ${vr.toFixed(0)} | **${(vr / br).toFixed(2)}** | ${median(b.map((x) => x.p50))}/${median(b.map((x) => x.p99))} | ${median(v.map((x) => x.p50))}/${median(v.map((x) => x.p99))} | ${[...b, ...v].reduce((a, x) => a + x.errors, 0)} |`;
      lines.push(line);
      console.log(line);
    }
    console.log('\n' + lines.join('\n'));

    const bad = await db.query(`
      SELECT w.id FROM wallets w JOIN wallet_transactions t ON t.wallet_id = w.id
      GROUP BY w.id, w.balance
      HAVING w.balance <> SUM(CASE WHEN t.type IN ('credit','topup','refund_reversal') THEN t.amount ELSE -t.amount END)`);
    console.log(`\nwallets whose balance differs from the sum of their ledger: ${bad.rowCount}`);
    await db.end();
  } finally {
    stopAll();
    await new Promise((r) => setTimeout(r, 1500));
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

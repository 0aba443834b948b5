// CPU per request of two builds of the service side by side (not a test): `before` and `after`
// each run `src/main.ts` from their own directory on a scratch database of their own, the same
// load (a fixed number of requests at 32 connections) goes to each in turn, for several rounds,
// order reversed every other round. Per round and side: the service process's CPU
// (/proc/<pid>/stat utime+stime) and its database's client backends' CPU (the same, for the pids
// pg_stat_activity lists for that database), divided by the requests sent. Reports medians and
// the spread (min–max) of the rounds, µs per request. On a shared machine this is steadier than
// req/s: it counts work, not waiting.
//
//   npx tsx bench/cpu-pair.ts <before-dir> <after-dir>
//   PAIR_ROUNDS=8 PAIR_REQUESTS=4000 PAIR_ONLY='debit' npx tsx bench/cpu-pair.ts /tmp/before .
//   PAIR_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof-{side}' …   (node flags for both servers; {side} = before|after)
//
// One build under two settings: the same directory twice, and PAIR_ENV_BEFORE / PAIR_ENV_AFTER
// (JSON objects of environment variables added to that side's), e.g. the rate limit in memory
// against the database store:
//
//   PAIR_ENV_BEFORE='{"RATE_LIMIT_PER_SECOND":"1000000","RATE_LIMIT_STORE":"memory"}' \
//   PAIR_ENV_AFTER='{"RATE_LIMIT_PER_SECOND":"1000000","RATE_LIMIT_LEASE":"1"}' npx tsx bench/cpu-pair.ts . .
//
// Both directories need their node_modules and src/generated (a copy of another checkout with a
// symlinked node_modules works). PostgreSQL must run on this machine (its backends' /proc).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { randomToken } from '../src/platform/ids.ts';
import { scratchDatabase, run } from './scratch.ts';
import { testPort } from '../test/helpers/ports.ts';

const ROUNDS = Number(process.env.PAIR_ROUNDS ?? 6);
const REQUESTS = Number(process.env.PAIR_REQUESTS ?? 4000);
const CONNECTIONS = Number(process.env.PAIR_CONNECTIONS ?? 32);
const WALLETS = Number(process.env.PAIR_WALLETS ?? 200);
const ONLY = new RegExp(process.env.PAIR_ONLY ?? '', 'i');
const TICK_US = 1e6 / 100; // USER_HZ

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) {
    try {
      process.kill(-c.pid!, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
});

/** utime + stime of a process, in µs (0 when it is gone). */
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_US;
  } catch {
    return 0;
  }
}

interface Side {
  name: string;
  dir: string;
  dbName: string;
  url: string;
  pid: number;
  auth: string;
  customer: string;
  hot: string;
  spread: string[];
}

async function startSide(name: string, dir: string): Promise<Side> {
  const db = await scratchDatabase(`pair_${name}`);
  const dbName = new URL(db.url).pathname.slice(1);
  const port = testPort();
  const ck = `ck_pair${randomToken(10)}`;
  const sk = `sk_test_${randomToken(24)}`;
  const nodeArgs = (process.env.PAIR_NODE_ARGS ?? '').split(' ').filter(Boolean).map((a) => a.replace('{side}', name));
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
    cwd: dir,
    detached: true,
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_SECOND: '0',
      DB_POOL_SIZE: '10',
      WEB_CONCURRENCY: '1',
      BILLING_BOOTSTRAP_CLIENT_ID: ck,
      BILLING_BOOTSTRAP_CLIENT_SECRET: sk,
      ...(JSON.parse(process.env[name === 'before' ? 'PAIR_ENV_BEFORE' : 'PAIR_ENV_AFTER'] || '{}') as Record<string, string>),
    },
  });
  children.push(child);
  await new Promise<void>((ok, fail) => {
    let out = '';
    const on = (d: Buffer) => {
      out += d;
      if (/Listening on/.test(out)) ok();
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (code) => fail(new Error(`${name} exited with ${code}:\n${out}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const auth = 'Basic ' + Buffer.from(`${ck}:${sk}`).toString('base64');
  const api = async (path: string, body: unknown) => {
    const r = await fetch(url + path, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (r.status >= 300) throw new Error(`${name} ${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as { id: string };
  };
  const customer = (await api('/v1/customers', { email: 'read@example.com' })).id;
  const wallets: string[] = [];
  for (let i = 0; i <= WALLETS; i += 25) {
    wallets.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(25, WALLETS + 1 - i) }, async (_, k) => {
          const c = await api('/v1/customers', { email: `w${i + k}@example.com` });
          const w = await api('/v1/wallets', { customer_id: c.id, currency: 'USD' });
          await api(`/v1/wallets/${w.id}/credit`, { amount: 99_999_999_999, reference: 'seed', description: 'pair' });
          return w.id;
        }),
      )),
    );
  }
  return { name, dir, dbName, url, pid: child.pid!, auth, customer, hot: wallets[0]!, spread: wallets.slice(1) };
}

type Scenario = { name: string; opts: (s: Side) => autocannon.Options };
let n = 0;
const json = { 'content-type': 'application/json' };
const debit = (s: Side, pick: () => string): autocannon.Options => ({
  url: s.url,
  method: 'POST',
  requests: [
    {
      setupRequest: (req: any) => ({
        ...req,
        path: `/v1/wallets/${pick()}/debit`,
        headers: { authorization: s.auth, ...json },
        body: JSON.stringify({ amount: 1, reference: `r${process.pid}_${n++}`, description: 'pair' }),
      }),
    },
  ],
});
const scenarios: Scenario[] = [
  { name: 'GET /v1/customers/:id', opts: (s) => ({ url: `${s.url}/v1/customers/${s.customer}`, headers: { authorization: s.auth } }) },
  {
    name: 'GraphQL node(id:) of one customer',
    opts: (s) => ({
      url: `${s.url}/graphql`,
      method: 'POST',
      headers: { authorization: s.auth, ...json },
      body: JSON.stringify({ query: `{ node(id: "${s.customer}") { ... on Customer { id email name createdAt } } }` }),
    }),
  },
  {
    name: 'POST /v1/customers',
    opts: (s) => ({ url: `${s.url}/v1/customers`, method: 'POST', headers: { authorization: s.auth, ...json }, body: JSON.stringify({ email: 'new@example.com' }) }),
  },
  {
    name: 'POST /v1/customers + Idempotency-Key',
    opts: (s) => ({
      url: s.url,
      method: 'POST',
      requests: [
        {
          setupRequest: (req: any) => ({
            ...req,
            path: '/v1/customers',
            headers: { authorization: s.auth, ...json, 'idempotency-key': randomUUID() },
            body: JSON.stringify({ email: 'new@example.com' }),
          }),
        },
      ],
    }),
  },
  { name: 'debit, one hot wallet', opts: (s) => debit(s, () => s.hot) },
  { name: 'debits spread', opts: (s) => debit(s, () => s.spread[Math.floor(Math.random() * s.spread.length)]!) },
];

async function backendCpu(admin: pg.Client, dbName: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`, [dbName]);
  return new Map(rows.map((r) => [r.pid, cpuOf(r.pid)]));
}

async function measure(admin: pg.Client, s: Side, opts: autocannon.Options, amount: number) {
  const pgBefore = await backendCpu(admin, s.dbName);
  const svcBefore = cpuOf(s.pid);
  const r = await autocannon({ connections: CONNECTIONS, amount, ...opts });
  const svc = cpuOf(s.pid) - svcBefore;
  const pgAfter = await backendCpu(admin, s.dbName);
  let db = 0;
  for (const [pid, cpu] of pgAfter) db += cpu - (pgBefore.get(pid) ?? 0);
  const bad = r.non2xx + r.errors + r.timeouts;
  const done = r.requests.total;
  return { svc: svc / done, db: db / done, rps: r.requests.average, bad };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

run(async () => {
  const [beforeDir, afterDir] = process.argv.slice(2).map((d) => resolve(d));
  if (!beforeDir || !afterDir) throw new Error('usage: cpu-pair.ts <before-dir> <after-dir>');
  const sides = [await startSide('before', beforeDir), await startSide('after', afterDir)];
  const admin = new pg.Client({ connectionString: process.env.BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  console.log(`cpu-pair: ${ROUNDS} rounds × ${REQUESTS} requests, ${CONNECTIONS} connections; µs of CPU per request (service + PostgreSQL)\n`);
  const table = ['| scenario | before: service + PostgreSQL = total (min–max of total) | after | after / before |', '|---|---:|---:|---:|'];
  for (const sc of scenarios.filter((x) => ONLY.test(x.name))) {
    for (const s of sides) await autocannon({ connections: CONNECTIONS, amount: Math.ceil(REQUESTS / 4), ...sc.opts(s) }); // warm-up
    const res = new Map(sides.map((s) => [s.name, [] as Awaited<ReturnType<typeof measure>>[]]));
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 ? [...sides].reverse() : sides;
      for (const s of order) res.get(s.name)!.push(await measure(admin, s, sc.opts(s), REQUESTS));
    }
    const cells = sides.map((s) => {
      const rs = res.get(s.name)!;
      const tot = rs.map((x) => x.svc + x.db);
      return {
        text: `${median(rs.map((x) => x.svc)).toFixed(0)} + ${median(rs.map((x) => x.db)).toFixed(0)} = ${median(tot).toFixed(0)} (${Math.min(...tot).toFixed(0)}–${Math.max(...tot).toFixed(0)})`,
        total: median(tot),
        rounds: tot.map((t) => t.toFixed(0)).join(' '),
        bad: rs.reduce((a, x) => a + x.bad, 0),
        rps: median(rs.map((x) => x.rps)),
      };
    });
    const line = `| ${sc.name} | ${cells[0]!.text} | ${cells[1]!.text} | ${(cells[1]!.total / cells[0]!.total).toFixed(3)} |`;
    table.push(line);
    console.log(line);
    console.log(`   rounds before: ${cells[0]!.rounds}; after: ${cells[1]!.rounds}; req/s ${cells[0]!.rps.toFixed(0)} / ${cells[1]!.rps.toFixed(0)}; non-2xx ${cells[0]!.bad} / ${cells[1]!.bad}`);
  }
  console.log('\n' + table.join('\n'));
  for (const s of sides) {
    const c = new pg.Client({ connectionString: (process.env.BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres').replace(/\/[^/]*$/, `/${s.dbName}`) });
    await c.connect();
    const bad = await c.query(`
      SELECT w.id FROM wallets w JOIN wallet_transactions t ON t.wallet_id = w.id GROUP BY w.id, w.balance
      HAVING w.balance <> SUM(CASE WHEN t.type IN ('credit','topup','refund_reversal') THEN t.amount ELSE -t.amount END)`);
    console.log(`${s.name}: wallets whose balance differs from the sum of their ledger: ${bad.rowCount}`);
    await c.end();
  }
  await admin.end();
  for (const c of children) process.kill(-c.pid!, 'SIGTERM');
  await new Promise((r) => setTimeout(r, 1500));
  const drop = new pg.Client({ connectionString: process.env.BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' });
  await drop.connect();
  for (const s of sides) await drop.query(`DROP DATABASE IF EXISTS ${s.dbName} WITH (FORCE)`);
  await drop.end();
  process.exit(0);
});

// Benchmark (not a test): the server's resident memory over a mixed soak. `npm start` runs on a
// scratch PostgreSQL database (one process, rate limit off) with a webhook endpoint on a local
// receiver; autocannon cycles reads, creates (each with a webhook delivery), debits and GraphQL
// reads for SOAK_SECONDS; RSS of the server process is sampled every 5 s. Flat means the end is
// within 1.2× of the RSS after the warm-up (the first minute).
//
//   npx tsx bench/soak.ts                  # 5 minutes
//   SOAK_SECONDS=600 npx tsx bench/soak.ts
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { randomToken } from '../src/platform/ids.ts';
import { run, scratchDatabase } from './scratch.ts';
import { testPort } from '../test/helpers/ports.ts';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const WARMUP_SECONDS = Math.min(60, Math.floor(SECONDS / 5));
const root = join(import.meta.dirname, '..');

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function main() {
  const scratch = await scratchDatabase('soak');
  const url = scratch.url;
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = testPort();
  const ck = `ck_soak${randomToken(10)}`;
  const sk = `sk_test_${randomToken(24)}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), LOG_LEVEL: 'warn', RATE_LIMIT_PER_SECOND: '0', BILLING_ALLOW_HTTP_WEBHOOKS: '1', BILLING_BOOTSTRAP_CLIENT_ID: ck, BILLING_BOOTSTRAP_CLIENT_SECRET: sk },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const on = (d: Buffer) => {
        out += d;
        if (/Listening on/.test(out)) resolve();
      };
      child.stdout!.on('data', on);
      child.stderr!.on('data', on);
      child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
    });
    const base = `http://127.0.0.1:${port}`;
    const auth = 'Basic ' + Buffer.from(`${ck}:${sk}`).toString('base64');
    const json = { authorization: auth, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => (await (await fetch(base + path, { method: 'POST', headers: json, body: JSON.stringify(body) })).json()) as any;
    await post('/v1/webhook-endpoints', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['customer.created'] });
    const customer = await post('/v1/customers', { email: 'soak@example.com' });
    const wallet = await post('/v1/wallets', { customer_id: customer.id, currency: 'USD' });
    await post(`/v1/wallets/${wallet.id}/credit`, { amount: 99_999_999_999, reference: 'seed', description: 'soak' });
    let n = 0;
    const samples: { t: number; rss: number }[] = [];
    const t0 = Date.now();
    const sampler = setInterval(() => samples.push({ t: (Date.now() - t0) / 1000, rss: rssMb(child.pid!) }), 5000);
    const r = await autocannon({
      url: base,
      connections: 16,
      duration: SECONDS,
      headers: json,
      requests: [
        { method: 'GET', path: `/v1/customers/${customer.id}` },
        { method: 'POST', path: '/v1/customers', setupRequest: (req: any) => ({ ...req, body: JSON.stringify({ email: `s${n++}@example.com` }) }) },
        { method: 'POST', path: `/v1/wallets/${wallet.id}/debit`, setupRequest: (req: any) => ({ ...req, body: JSON.stringify({ amount: 1, reference: `d${n++}`, description: 'soak' }) }) },
        { method: 'POST', path: '/graphql', body: JSON.stringify({ query: `{ node(id: "${customer.id}") { ... on Customer { id email } } }` }) },
        { method: 'GET', path: '/v1/payments?limit=20' },
      ],
    });
    clearInterval(sampler);
    const afterWarmup = samples.find((s) => s.t >= WARMUP_SECONDS) ?? samples[0]!;
    const end = samples.at(-1)!;
    const max = Math.max(...samples.map((s) => s.rss));
    console.log(`\nsoak: ${SECONDS} s, ${r.requests.total} requests (${r.requests.average.toFixed(0)}/s), ${r.non2xx} non-2xx, ${r.errors} errors, ${received} webhook deliveries`);
    console.log(`RSS: ${samples[0]!.rss.toFixed(0)} MB at 5 s, ${afterWarmup.rss.toFixed(0)} MB after the ${WARMUP_SECONDS} s warm-up, ${end.rss.toFixed(0)} MB at the end, max ${max.toFixed(0)} MB`);
    console.log(`end ÷ after warm-up = ${(end.rss / afterWarmup.rss).toFixed(2)} (flat: ≤ 1.2)`);
    console.log(`samples (s → MB): ${samples.map((s) => `${s.t.toFixed(0)}→${s.rss.toFixed(0)}`).join(' ')}`);
  } finally {
    child.kill('SIGTERM');
    receiver.close();
    await new Promise((r) => setTimeout(r, 1000));
    await scratch.drop();
  }
}

run(main);

// Benchmark (not a test) of durable webhook delivery, with the service's own worker settings:
// 1. Keeping pace: EVENTS customers created as fast as CONCURRENCY API clients can; creations/s
//    (first request → last response) against deliveries/s (first request → last receipt).
// 2. Latency at a steady RATE events/s for PACED_SECONDS: from the state change (the API's
//    answer, event committed) to the receiver having the signed event, p50/p99.
// Reported for scale: the same number of signed POSTs sent straight to the receiver (no database).
//
//   npx tsx bench/webhooks.ts                     # scratch database on the local PostgreSQL
//   EVENTS=2000 CONCURRENCY=16 RATE=100 PACED_SECONDS=10 npx tsx bench/webhooks.ts
import { serve } from '@hono/node-server';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { sign } from '../src/domain/webhooks/signing.ts';
import { createMerchant } from '../src/domain/merchants/index.ts';
import { startWorker, workerOptions } from '../src/jobs/worker.ts';
import { loadConfig } from '../src/platform/config.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createApp } from '../src/server/app.ts';
import { openServices } from '../src/server/services.ts';
import { run, scratchDatabase } from './scratch.ts';

const EVENTS = Number(process.env.EVENTS ?? 1000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const RATE = Number(process.env.RATE ?? 100);
const PACED_SECONDS = Number(process.env.PACED_SECONDS ?? 10);
const CAP_MS = 120_000;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
};

async function main() {
  const scratch = await scratchDatabase('wh');

  // The receiver: records when each event arrives (keyed by the customer's email in the body).
  const arrived = new Map<string, number>();
  let received = 0;
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received++;
      const m = /"email":"(c\d+@bench\.example)"/.exec(body);
      if (m && !arrived.has(m[1]!)) arrived.set(m[1]!, performance.now());
      res.writeHead(200).end('ok');
    });
  });
  receiver.keepAliveTimeout = 5000;
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const log = createLogger('silent');
  const db = await openDatabase({ url: scratch.url, poolSize: 20, logger: log });
  const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0', BILLING_ALLOW_HTTP_WEBHOOKS: '1' });
  const services = await openServices(config, { log, db });
  const app = createApp(services);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const worker = startWorker(services.runtime, log, workerOptions(config));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const creds = await createMerchant(db.prisma, { name: 'Bench' });
  const auth = 'Basic ' + Buffer.from(`${creds.client_id}:${creds.client_secret}`).toString('base64');
  const post = (path: string, body: unknown) =>
    fetch(base + path, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>);
  const ep = await post('/v1/webhook-endpoints', { url: hookUrl, events: ['customer.created'] });

  // Outbox path: each customer creation commits an event and its delivery job together.
  const committed = new Map<string, number>();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < EVENTS) {
        const email = `c${next++}@bench.example`;
        await post('/v1/customers', { email });
        committed.set(email, performance.now());
      }
    }),
  );
  const createSeconds = (performance.now() - t0) / 1000;
  const waitFor = async (n: number) => {
    const deadline = performance.now() + CAP_MS;
    while (arrived.size < n && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  };
  await waitFor(EVENTS);
  const outboxSeconds = (Math.max(...arrived.values()) - t0) / 1000;
  const burstLatency = [...committed].filter(([e]) => arrived.has(e)).map(([e, t]) => arrived.get(e)! - t);

  // Steady load: RATE creations per second, each on its own schedule (not waiting for the last).
  const paced = RATE * PACED_SECONDS;
  const pacedCommitted = new Map<string, number>();
  const p0 = performance.now();
  await Promise.all(
    Array.from({ length: paced }, async (_, i) => {
      const due = p0 + (i * 1000) / RATE;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      const email = `c${EVENTS + i}@bench.example`;
      await post('/v1/customers', { email });
      pacedCommitted.set(email, performance.now());
    }),
  );
  await waitFor(EVENTS + paced);
  const latency = [...pacedCommitted].filter(([e]) => arrived.has(e)).map(([e, t]) => arrived.get(e)! - t);

  // Baseline: the same number of signed POSTs straight to the receiver.
  const body = JSON.stringify({ id: 'evt_bench', object: 'event', type: 'customer.created', data: { object: { email: 'x' } } });
  let sent = 0;
  const b0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < EVENTS) {
        sent++;
        const ts = Math.floor(Date.now() / 1000);
        const r = await fetch(hookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'webhook-id': 'evt_bench', 'webhook-timestamp': String(ts), 'webhook-signature': sign(ep.secret, 'evt_bench', ts, body) },
          body,
        });
        await r.arrayBuffer();
      }
    }),
  );
  const baselineSeconds = (performance.now() - b0) / 1000;

  const createRate = EVENTS / createSeconds;
  const outboxRate = EVENTS / outboxSeconds;
  const baseRate = EVENTS / baselineSeconds;
  console.log(`\n${EVENTS} events, ${CONCURRENCY} concurrent API clients, the service's worker settings, PostgreSQL, all on one 2-core machine\n`);
  console.log(`keeping pace: ${createRate.toFixed(0)} creations/s, ${outboxRate.toFixed(0)} deliveries/s (first request → last receipt): ratio ${(outboxRate / createRate).toFixed(2)}`);
  console.log(`  latency in that burst: p50 ${pct(burstLatency, 0.5).toFixed(0)} ms, p99 ${pct(burstLatency, 0.99).toFixed(0)} ms`);
  console.log(`steady ${RATE} events/s for ${PACED_SECONDS} s: ${latency.length}/${paced} delivered, state change → receipt p50 ${pct(latency, 0.5).toFixed(0)} ms, p99 ${pct(latency, 0.99).toFixed(0)} ms`);
  console.log(`for scale, direct signed POSTs (no database): ${baseRate.toFixed(0)} requests/s`);
  const attempts = await db.prisma.deliveryAttempt.groupBy({ by: ['status'], _count: true });
  console.log(`delivery attempts by status: ${attempts.map((a) => `${a.status} ${a._count}`).join(', ')}`);

  await worker.stop();
  await new Promise((r) => server.close(r));
  receiver.close();
  await db.close();
  await scratch.drop();
}

run(main);

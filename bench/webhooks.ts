// Benchmark (not a test) of durable webhook delivery, with the service's own worker settings:
// 1. Keeping pace: EVENTS customers created as fast as CONCURRENCY API clients can; creations/s
//    (first request → last response) against deliveries/s (first request → last receipt).
// 2. Latency at a steady RATE events/s for PACED_SECONDS: from the state change (the API's
//    answer, event committed) to the receiver having the signed event, p50/p99.
// Reported for scale: the same number of signed POSTs sent straight to the receiver (no database).
// The receiver and the API clients run in their own process (bench/webhooks-world.ts): the
// service's process does only the service's work (API and worker).
//
//   npx tsx bench/webhooks.ts                     # scratch database on the local PostgreSQL
//   EVENTS=2000 CONCURRENCY=16 RATE=100 PACED_SECONDS=10 npx tsx bench/webhooks.ts
import { serve } from '@hono/node-server';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
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

  // The outside world (receiver and API clients) runs in its own process.
  const world = fork(join(import.meta.dirname, 'webhooks-world.ts'), { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let seq = 0;
  const waiting = new Map<number, (m: { result?: unknown; error?: string }) => void>();
  const hookUrl = await new Promise<string>((resolve) =>
    world.on('message', (m: { ready?: string; id?: number; result?: unknown; error?: string }) => {
      if (m.ready) resolve(m.ready);
      else waiting.get(m.id!)?.(m);
    }),
  );
  const ask = <T,>(m: Record<string, unknown>): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = ++seq;
      waiting.set(id, (r) => (r.error ? reject(new Error(r.error)) : resolve(r.result as T)));
      world.send({ ...m, id });
    });
  const now = () => performance.timeOrigin + performance.now();

  const log = createLogger('silent');
  const db = await openDatabase({ url: scratch.url, poolSize: 20, logger: log });
  const config = loadConfig({ RATE_LIMIT_PER_SECOND: '0', ...process.env, LOG_LEVEL: 'silent', PORT: '0', BILLING_ALLOW_HTTP_WEBHOOKS: '1' });
  const services = await openServices(config, { log, db });
  const app = createApp(services);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const worker = startWorker(services.runtime, log, workerOptions(config));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const creds = await createMerchant(db.prisma, { name: 'Bench' });
  const auth = 'Basic ' + Buffer.from(`${creds.client_id}:${creds.client_secret}`).toString('base64');
  const epRes = await fetch(base + '/v1/webhook-endpoints', {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url: hookUrl, events: ['customer.created'] }),
  });
  const ep = (await epRes.json()) as { secret: string };

  type Run = { start: number; end: number; committed: [string, number][] };
  // Waits until the world has received every one of these events; their arrival times.
  const arrivals = async (emails: string[]): Promise<(number | null)[]> => {
    const deadline = now() + CAP_MS;
    for (;;) {
      const times = await ask<(number | null)[]>({ cmd: 'arrived', emails });
      if (times.every((t) => t !== null) || now() > deadline) return times;
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  // Outbox path: each customer creation commits an event and its delivery job together.
  const burst = await ask<Run>({ cmd: 'burst', base, auth, from: 0, count: EVENTS, concurrency: CONCURRENCY });
  const backlogAt = burst.end;
  const burstArrivals = await arrivals(burst.committed.map(([e]) => e));
  const lastArrival = Math.max(...burstArrivals.map((t) => t ?? Infinity));
  const backlog = burstArrivals.filter((t) => t === null || t > backlogAt).length;
  const createSeconds = (burst.end - burst.start) / 1000;
  const outboxSeconds = (lastArrival - burst.start) / 1000;
  const burstLatency = burst.committed.map(([, t], i) => burstArrivals[i]! - t);

  // Steady load: RATE creations per second, each on its own schedule (not waiting for the last).
  const paced = await ask<Run>({ cmd: 'paced', base, auth, from: EVENTS, count: RATE * PACED_SECONDS, rate: RATE });
  const pacedArrivals = await arrivals(paced.committed.map(([e]) => e));
  const latency = paced.committed.flatMap(([, t], i) => (pacedArrivals[i] == null ? [] : [pacedArrivals[i]! - t]));

  // Baseline: the same number of signed POSTs straight to the receiver.
  const direct = await ask<{ start: number; end: number }>({ cmd: 'direct', url: hookUrl, secret: ep.secret, count: EVENTS, concurrency: CONCURRENCY });
  const baselineSeconds = (direct.end - direct.start) / 1000;

  const createRate = EVENTS / createSeconds;
  const outboxRate = EVENTS / outboxSeconds;
  const baseRate = EVENTS / baselineSeconds;
  console.log(`\n${EVENTS} events, ${CONCURRENCY} concurrent API clients (their own process, with the receiver), the service's worker settings, PostgreSQL, all on one 2-core machine\n`);
  console.log(`keeping pace: ${createRate.toFixed(0)} creations/s, ${outboxRate.toFixed(0)} deliveries/s (first request → last receipt): ratio ${(outboxRate / createRate).toFixed(2)}`);
  console.log(`  at the last creation ${backlog} deliveries were still to arrive; the last arrived ${(lastArrival - backlogAt).toFixed(0)} ms later`);
  console.log(`  latency in that burst: p50 ${pct(burstLatency, 0.5).toFixed(0)} ms, p99 ${pct(burstLatency, 0.99).toFixed(0)} ms`);
  console.log(`steady ${RATE} events/s for ${PACED_SECONDS} s: ${latency.length}/${paced.committed.length} delivered, state change → receipt p50 ${pct(latency, 0.5).toFixed(0)} ms, p99 ${pct(latency, 0.99).toFixed(0)} ms`);
  console.log(`for scale, direct signed POSTs (no database): ${baseRate.toFixed(0)} requests/s`);
  const attempts = await db.prisma.deliveryAttempt.groupBy({ by: ['status'], _count: true });
  console.log(`delivery attempts by status: ${attempts.map((a) => `${a.status} ${a._count}`).join(', ')}`);

  await worker.stop();
  await new Promise((r) => server.close(r));
  world.disconnect();
  await db.close();
  await scratch.drop();
}

run(main);

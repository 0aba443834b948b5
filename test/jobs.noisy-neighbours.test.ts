// Noisy neighbours (issue 21, item 6): any number of merchants whose endpoints never answer cannot
// take the delivery lane from the others. Each merchant's share of the lane shrinks as more
// merchants have work, one share is always left free for a merchant that has nothing in flight,
// and a claim serves merchants round-robin (least loaded first), whatever their backlog or clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDueJobs } from '../src/jobs/runner.ts';
import { claimStatement } from '../src/platform/jobs.store.ts';
import { enqueueJobs } from '../src/platform/jobs.ts';
import { rawQueryOf } from '../src/platform/db/raw.ts';
import { forMerchant } from '../src/platform/db/tenant.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { percentile, receivers } from './helpers/receivers.ts';

let app: TestApp;
const { listen, close: closeReceivers } = receivers();

beforeAll(async () => {
  // Deliveries to a black hole hold their slot for the whole test (the lane's defaults: 64 slots,
  // at most 32 per merchant).
  app = await startApp({ BILLING_ALLOW_HTTP_WEBHOOKS: '1', WEBHOOK_TIMEOUT_MS: '60000' });
});
afterAll(async () => {
  closeReceivers();
  await app?.close();
});

const TEN_YEARS_S = 10 * 365 * 86400;

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('noisy neighbours', () => {
  it('three merchants with black-holed endpoints (one on a clock ten years ahead) hold their slots; live merchants’ deliveries stay prompt', async () => {
    // Three noisy merchants, each with four endpoints that accept the connection and never answer
    // (one server each, so each has its own connection pool): 4 × 8 connections per endpoint would
    // let each of them hold 32 delivery slots.
    const open = new Map<string, number>(); // merchant → requests received and never answered
    const noisy: Client[] = [];
    for (let n = 0; n < 3; n++) {
      const m = await app.merchant({ name: `Black hole ${n}` });
      if (n === 2) expect((await m.post('/v1/test-helpers/clock/advance', { seconds: TEN_YEARS_S })).status).toBe(200);
      open.set(m.creds.merchant_id, 0);
      for (let e = 0; e < 4; e++) {
        const url = await listen((req) => {
          open.set(m.creds.merchant_id, open.get(m.creds.merchant_id)! + 1);
          req.resume(); // never answers
        });
        expect((await m.post('/v1/webhook-endpoints', { url })).status).toBe(201);
      }
      noisy.push(m);
    }
    // Their backlog: 16 customers each, 64 deliveries each, 192 in all for 64 slots.
    for (let i = 0; i < 16; i++) for (const m of noisy) expect((await m.post('/v1/customers', { email: `n${i}@example.com` })).status).toBe(201);
    const total = () => [...open.values()].reduce((a, b) => a + b, 0);
    // The noisy merchants really hold slots before the live ones start.
    await until('the black holes to hold 40 deliveries', () => total() >= 40);

    // Two live merchants with healthy receivers, one on a clock ten years ahead (all its work is
    // due at once on that clock; it must neither take more than its share nor wait behind others).
    const live: { client: Client; arrived: Map<string, number>; created: Map<string, number> }[] = [];
    for (const ahead of [false, true]) {
      const client = await app.merchant({ name: ahead ? 'Live, far ahead' : 'Live shop' });
      if (ahead) expect((await client.post('/v1/test-helpers/clock/advance', { seconds: TEN_YEARS_S })).status).toBe(200);
      const arrived = new Map<string, number>();
      const url = await listen((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          arrived.set(JSON.parse(body).data.object.id, performance.now());
          res.end('ok');
        });
      });
      expect((await client.post('/v1/webhook-endpoints', { url, events: ['customer.created'] })).status).toBe(201);
      live.push({ client, arrived, created: new Map() });
    }

    for (let i = 0; i < 20; i++) {
      for (const l of live) {
        const r = await l.client.post('/v1/customers', { email: `l${i}@example.com` });
        l.created.set(r.body.id, performance.now());
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const missing = () => live.flatMap((l) => [...l.created.keys()].filter((id) => !l.arrived.has(id)));
    await until('every live delivery', () => missing().length === 0, 20_000).catch(() => {});
    expect(missing()).toEqual([]);
    for (const l of live) {
      const latencies = [...l.created].map(([id, t]) => l.arrived.get(id)! - t);
      expect(percentile(latencies, 99), `latencies ${latencies.map(Math.round).join(',')}`).toBeLessThan(1000);
    }

    // The noisy merchants held their slots all along (none was ever answered), every one of them
    // got some (the one ten years ahead too), and none got more than its cap.
    expect(total()).toBeGreaterThanOrEqual(40);
    for (const m of noisy) {
      expect(open.get(m.creds.merchant_id)).toBeGreaterThan(0);
      expect(open.get(m.creds.merchant_id)).toBeLessThanOrEqual(32);
    }
    const answered = await app.services.db.prisma.deliveryAttempt.count({ where: { merchantId: { in: noisy.map((m) => m.creds.merchant_id) }, status: 'succeeded' } });
    expect(answered).toBe(0);
  });

  // The claim itself, on kinds no process runs (so no worker takes these jobs), through the same
  // statement the worker uses for all merchants (no merchant scope: the skip scan).
  const FIVE_YEARS_MS = 5 * 365 * 86400_000;
  const enqueue = (m: Client, kind: string, n: number, from: Date) =>
    enqueueJobs(
      forMerchant(app.services.db.prisma, m.creds.merchant_id),
      Array.from({ length: n }, (_, i) => ({ merchantId: m.creds.merchant_id, kind, runAt: new Date(from.getTime() + i), payload: { i } })),
    );
  const perMerchant = (jobs: { merchantId: string }[], names: Map<string, string>) => {
    const out: Record<string, number> = {};
    for (const j of jobs) out[names.get(j.merchantId) ?? j.merchantId] = (out[names.get(j.merchantId) ?? j.merchantId] ?? 0) + 1;
    return out;
  };

  it('a claim serves every merchant with due work round-robin, in a share that shrinks as more wait, and keeps one share free for a merchant that starts having work', async () => {
    const prisma = app.services.db.prisma;
    const kind = `test.noisy.share.${Date.now()}`;
    const names = new Map<string, string>();
    const merchant = async (name: string) => {
      const m = await app.merchant({ name });
      names.set(m.creds.merchant_id, name);
      return m;
    };
    const noisy = [await merchant('n0'), await merchant('n1'), await merchant('n2')];
    const far = await merchant('far');
    expect((await far.post('/v1/test-helpers/clock/advance', { seconds: TEN_YEARS_S })).status).toBe(200);
    const live = await merchant('live');
    const later = await merchant('later');
    const old = new Date(Date.now() - 3600_000);
    for (const m of noisy) await enqueue(m, kind, 300, old);
    // Due five years from now: on the far-ahead merchant's clock that is the past; on a real clock not yet.
    await enqueue(far, kind, 50, new Date(Date.now() + FIVE_YEARS_MS));
    await enqueue(later, kind, 1, new Date(Date.now() + FIVE_YEARS_MS));
    await enqueue(live, kind, 1, new Date());

    // Round-robin, not oldest first: five free slots go one to each merchant with due work, though
    // the noisy merchants' 900 jobs are all older than the live merchant's and the far-ahead one's.
    const rr = await claimDueJobs(prisma, { limit: 5, kinds: [kind], perMerchant: 32 });
    expect(perMerchant(rr, names)).toEqual({ n0: 1, n1: 1, n2: 1, far: 1, live: 1 });

    // The worker's claim: five merchants with work, so a share is floor(64 / 6) = 10 and one share
    // of the lane stays free; the far-ahead merchant gets its share, no more.
    const inFlight = new Map(rr.map((j) => [j.merchantId, 1]));
    const big = await claimDueJobs(prisma, { limit: 64 - 5, kinds: [kind], perMerchant: 32, concurrency: 64, inFlight });
    expect(perMerchant(big, names)).toEqual({ n0: 9, n1: 9, n2: 9, far: 9 });
    for (const j of big) inFlight.set(j.merchantId, inFlight.get(j.merchantId)! + 1);
    expect(await claimDueJobs(prisma, { limit: 64 - 41, kinds: [kind], perMerchant: 32, concurrency: 64, inFlight })).toEqual([]);

    // A merchant that starts having work gets a slot at once, even when the others hold more than
    // their share (they had it before more merchants came) and only the kept share is free.
    const newcomer = await merchant('newcomer');
    await enqueue(newcomer, kind, 3, new Date());
    const crowded = new Map([...noisy.map((m) => [m.creds.merchant_id, 20] as const), [far.creds.merchant_id, 1]]);
    const next = await claimDueJobs(prisma, { limit: 3, kinds: [kind], perMerchant: 32, concurrency: 64, inFlight: crowded });
    expect(perMerchant(next, names)).toEqual({ newcomer: 1 });
    // Never the job due five years from now on a real clock.
    expect(await prisma.job.count({ where: { kind, merchantId: later.creds.merchant_id, status: 'pending' } })).toBe(1);
    await prisma.job.deleteMany({ where: { kind } });
  });

  it('the claim reads the same few pages however long the noisy merchants’ backlog is (EXPLAIN over 30,000 due jobs)', async () => {
    const prisma = app.services.db.prisma;
    const kind = `test.noisy.cost.${Date.now()}`;
    const noisy = [await app.merchant(), await app.merchant(), await app.merchant()];
    const live = await app.merchant();
    for (const m of noisy) {
      await rawQueryOf(prisma)(
        `INSERT INTO jobs (merchant_id, kind, run_at, payload, updated_at)
         SELECT $1, $2, now() - interval '1 hour' + i * interval '1 millisecond', '{}', now() FROM generate_series(1, 10000) AS i`,
        [m.creds.merchant_id, kind],
      );
    }
    await enqueue(live, kind, 1, new Date());
    const cost = async (inFlight: Map<string, number>) => {
      const { text, params } = claimStatement({ limit: 16, kinds: [kind], perMerchant: 32, concurrency: 64, inFlight });
      const [row] = await rawQueryOf(prisma)<Record<string, any>>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params);
      const plan = row!['QUERY PLAN'][0].Plan;
      return { pages: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'], text: JSON.stringify(plan) };
    };
    // The noisy merchants hold their share: the claim finds the live merchant's one job behind
    // their 30,000 (an oldest-first scan that steps over them reads thousands of pages).
    const held = await cost(new Map(noisy.map((m) => [m.creds.merchant_id, 16])));
    expect(await prisma.job.findFirst({ where: { kind, merchantId: live.creds.merchant_id }, select: { status: true } })).toEqual({ status: 'running' });
    expect(held.pages, held.text).toBeLessThan(500);
    expect(held.text).not.toMatch(/"Seq Scan"[^}]*"Relation Name":"jobs"/);
    // Nothing in flight: each merchant's first jobs, still from its own range.
    const idle = await cost(new Map());
    expect(idle.pages, idle.text).toBeLessThan(500);
    await prisma.job.deleteMany({ where: { kind } });
  });
});

// The due-work mechanism: the merchant billing clock, durable jobs with leases and retries, and
// clock advances that run due work in order at its own due time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueJob } from '../src/platform/jobs.ts';
import { claimDueJobs } from '../src/jobs/runner.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { createLogger } from '../src/platform/logger.ts';
import { forMerchant } from '../src/platform/db/tenant.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
const ran: { merchant: string; kind: string; at: string; payload: any }[] = [];
let flakyFailures = 0;

beforeAll(async () => {
  // No background worker: tests start one where they need it, so claims here are deterministic.
  app = await startApp({}, { worker: false });
  const jobs = app.services.runtime.jobs;
  jobs.register('test.record', {
    async run(ctx, job) {
      ran.push({ merchant: ctx.merchant.id, kind: job.kind, at: ctx.clock.at.toISOString(), payload: job.payload });
      // A job may make more work due: it runs in the same advance if it is due by then.
      if (job.payload.chain && (job.payload.chain as number) > 0) {
        await enqueueJob(ctx.db, {
          merchantId: ctx.merchant.id,
          kind: 'test.record',
          runAt: new Date(ctx.clock.at.getTime() + 60_000),
          payload: { n: `${job.payload.n}+`, chain: (job.payload.chain as number) - 1 },
        });
      }
    },
  });
  jobs.register('test.flaky', {
    retryDelaysMs: [5_000, 60_000],
    async run(ctx) {
      if (flakyFailures-- > 0) throw new Error('temporary failure');
      ran.push({ merchant: ctx.merchant.id, kind: 'test.flaky', at: ctx.clock.at.toISOString(), payload: {} });
    },
  });
});
afterAll(() => app?.close());

async function clock(c: Client): Promise<Date> {
  const r = await c.get('/v1/test-helpers/clock');
  expect(r.body.object).toBe('test_clock');
  return new Date(r.body.now);
}

describe('merchant billing clock', () => {
  it('starts at real time, moves only forward, and is per merchant', async () => {
    const a = await app.merchant();
    const b = await app.merchant();
    const t0 = await clock(a);
    expect(Math.abs(t0.getTime() - Date.now())).toBeLessThan(5_000);
    const adv = await a.post('/v1/test-helpers/clock/advance', { seconds: 3600 });
    expect(adv.status).toBe(200);
    expect(new Date(adv.body.now).getTime() - t0.getTime()).toBeGreaterThanOrEqual(3600_000);
    expect((await clock(a)).getTime() - Date.now()).toBeGreaterThan(3590_000);
    expect(Math.abs((await clock(b)).getTime() - Date.now())).toBeLessThan(5_000);

    const to = new Date(Date.now() + 2 * 86400_000).toISOString();
    const adv2 = await a.post('/v1/test-helpers/clock/advance', { to });
    expect(adv2.body.now).toBe(to);

    const back = await a.post('/v1/test-helpers/clock/advance', { to: new Date().toISOString() });
    expect(back.status).toBe(400);
    expect(back.body.error).toMatchObject({ code: 'parameter_invalid', param: 'to' });
    for (const body of [{}, { seconds: 5, to }, { seconds: 0 }, { seconds: 1.5 }, { to: 'tomorrow' }, { minutes: 5 }]) {
      const r = await a.post('/v1/test-helpers/clock/advance', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('is not available to live-mode merchants', async () => {
    const live = await app.merchant({ mode: 'live' });
    expect((await live.get('/v1/test-helpers/clock')).status).toBe(404);
    expect((await live.post('/v1/test-helpers/clock/advance', { seconds: 60 })).status).toBe(404);
    const g = await live.gql('{ testClock { now } }');
    expect(g.errors?.[0].extensions.code).toBe('resource_missing');
  });

  it('is available over GraphQL', async () => {
    const m = await app.merchant();
    const g = await m.gql('mutation { advanceTestClock(input: { seconds: 86400 }) { __typename ... on AdvanceTestClockSuccess { clock { now } } ... on Error { code } } }');
    expect(g.data.advanceTestClock.__typename).toBe('AdvanceTestClockSuccess');
    const now = new Date(g.data.advanceTestClock.clock.now).getTime();
    expect(now - Date.now()).toBeGreaterThan(86390_000);
    const bad = await m.gql('mutation { advanceTestClock(input: {}) { __typename ... on Error { code } } }');
    expect(bad.data.advanceTestClock).toEqual({ __typename: 'ValidationError', code: 'parameter_invalid' });
    expect(new Date((await m.gql('{ testClock { now } }')).data.testClock.now).getTime()).toBeGreaterThanOrEqual(now);
  });
});

describe('due work', () => {
  it('a clock advance runs due jobs in due order, each at its own due time, including work they make due', async () => {
    const m = await app.merchant();
    const db = forMerchant(app.services.db.prisma, m.creds.merchant_id);
    const t0 = await clock(m);
    const at = (mins: number) => new Date(t0.getTime() + mins * 60_000);
    await enqueueJob(db, { merchantId: m.creds.merchant_id, kind: 'test.record', runAt: at(30), payload: { n: 'b' } });
    await enqueueJob(db, { merchantId: m.creds.merchant_id, kind: 'test.record', runAt: at(10), payload: { n: 'a', chain: 2 } });
    await enqueueJob(db, { merchantId: m.creds.merchant_id, kind: 'test.record', runAt: at(120), payload: { n: 'late' } });

    const mine = () => ran.filter((r) => r.merchant === m.creds.merchant_id);
    expect(mine()).toEqual([]);
    await m.post('/v1/test-helpers/clock/advance', { seconds: 60 * 60 });
    expect(mine().map((r) => [r.payload.n, r.at])).toEqual([
      ['a', at(10).toISOString()],
      ['a+', at(11).toISOString()],
      ['a++', at(12).toISOString()],
      ['b', at(30).toISOString()],
    ]);
    await m.post('/v1/test-helpers/clock/advance', { seconds: 60 * 60 });
    expect(mine().map((r) => r.payload.n)).toEqual(['a', 'a+', 'a++', 'b', 'late']);
  });

  it('the same key is enqueued once', async () => {
    const m = await app.merchant();
    const db = forMerchant(app.services.db.prisma, m.creds.merchant_id);
    const runAt = new Date(Date.now() + 86400_000);
    expect(await enqueueJob(db, { merchantId: m.creds.merchant_id, kind: 'test.record', runAt, key: `once-${m.creds.merchant_id}` })).toBe(1);
    expect(await enqueueJob(db, { merchantId: m.creds.merchant_id, kind: 'test.record', runAt, key: `once-${m.creds.merchant_id}` })).toBe(0);
  });

  it('failed work is retried on the schedule, then fails for good', async () => {
    const m = await app.merchant();
    const db = forMerchant(app.services.db.prisma, m.creds.merchant_id);
    const t0 = await clock(m);
    flakyFailures = 2;
    await enqueueJob(db, { merchantId: m.creds.merchant_id, kind: 'test.flaky', runAt: new Date(t0.getTime() + 1000), ref: 'flaky-1' });
    await m.post('/v1/test-helpers/clock/advance', { seconds: 2 });
    let job = await db.job.findFirstOrThrow({ where: { ref: 'flaky-1' } });
    expect(job).toMatchObject({ status: 'pending', attempts: 1, lastError: 'temporary failure' });
    expect(job.runAt.getTime()).toBe(t0.getTime() + 1000 + 5000);
    await m.post('/v1/test-helpers/clock/advance', { seconds: 3600 });
    job = await db.job.findFirstOrThrow({ where: { ref: 'flaky-1' } });
    expect(job).toMatchObject({ status: 'done', attempts: 3 });
    expect(ran.filter((r) => r.merchant === m.creds.merchant_id && r.kind === 'test.flaky')).toHaveLength(1);

    flakyFailures = 10;
    await enqueueJob(db, { merchantId: m.creds.merchant_id, kind: 'test.flaky', runAt: await clock(m), ref: 'flaky-2' });
    await m.post('/v1/test-helpers/clock/advance', { seconds: 3600 });
    job = await db.job.findFirstOrThrow({ where: { ref: 'flaky-2' } });
    expect(job).toMatchObject({ status: 'failed', attempts: 3 });
    flakyFailures = 0;
  });

  it('the background worker runs work that is due now, without a clock advance', async () => {
    const m = await app.merchant();
    const worker = startWorker(app.services.runtime, createLogger('silent'), { pollMs: 100, merchants: () => [m.creds.merchant_id] });
    const db = forMerchant(app.services.db.prisma, m.creds.merchant_id);
    await enqueueJob(db, { merchantId: m.creds.merchant_id, kind: 'test.record', runAt: await clock(m), payload: { n: 'now' } });
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && !ran.some((r) => r.merchant === m.creds.merchant_id)) await new Promise((r) => setTimeout(r, 50));
    await worker.stop();
    expect(ran.filter((r) => r.merchant === m.creds.merchant_id).map((r) => r.payload.n)).toEqual(['now']);
  });

  it('a clock advance waits for due work a background worker is running', async () => {
    const m = await app.merchant();
    const db = forMerchant(app.services.db.prisma, m.creds.merchant_id);
    const t0 = await clock(m);
    // claimed by "another runner" with a live lease, finishing 300 ms from now
    const job = await db.job.create({
      data: { merchantId: m.creds.merchant_id, kind: 'test.record', runAt: t0, status: 'running', attempts: 1, lockedUntil: new Date(Date.now() + 60_000) },
    });
    // (Prisma queries are lazy: the .then() is what runs it.)
    setTimeout(() => app.services.db.prisma.job.update({ where: { id: job.id }, data: { status: 'pending', lockedUntil: null } }).then(() => {}), 300);
    const advanced = await m.post('/v1/test-helpers/clock/advance', { seconds: 60 });
    expect(advanced.status, advanced.text).toBe(200);
    expect((await db.job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe('done');
  });

  it('a job whose runner died is claimed again when its lease expires; concurrent claims never share a job', async () => {
    const m = await app.merchant();
    const db = forMerchant(app.services.db.prisma, m.creds.merchant_id);
    // Due tomorrow in real time, so that no background worker (other test files share PostgreSQL) is involved.
    const due = new Date(Date.now() + 86400_000);
    const asOf = new Date(Date.now() + 2 * 86400_000);
    // a job claimed by a runner that died (lease in the past)
    await db.job.create({
      data: { merchantId: m.creds.merchant_id, kind: 'test.record', runAt: due, status: 'running', attempts: 1, lockedUntil: new Date(Date.now() - 1), payload: { n: 'orphan' } },
    });
    for (let i = 0; i < 20; i++) {
      await db.job.create({ data: { merchantId: m.creds.merchant_id, kind: 'test.record', runAt: due, payload: { n: `j${i}` } } });
    }
    // a kind this process has no handler for is never claimed
    await db.job.create({ data: { merchantId: m.creds.merchant_id, kind: 'test.unknown', runAt: due, payload: {} } });
    const prisma = app.services.db.prisma;
    const kinds = app.services.runtime.jobs.names();
    const claims = await Promise.all(
      Array.from({ length: 4 }, () => claimDueJobs(prisma, { limit: 10, kinds, merchantId: m.creds.merchant_id, asOf })),
    );
    // A claim holds its candidate window while it runs, so concurrent claims may leave some jobs
    // for the next round: claim until nothing is left.
    for (let more = claims.flat().length; more > 0; ) {
      const next = await claimDueJobs(prisma, { limit: 10, kinds, merchantId: m.creds.merchant_id, asOf });
      claims.push(next);
      more = next.length;
    }
    const ids = claims.flat().map((j) => String(j.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(21);
    expect(claims.flat().find((j) => j.payload.n === 'orphan')?.attempts).toBe(2);
    expect(claims.flat().some((j) => j.kind === 'test.unknown')).toBe(false);
    // not yet due: the expired lease alone does not make the orphan claimable
    await db.job.updateMany({ where: { merchantId: m.creds.merchant_id }, data: { status: 'running', lockedUntil: new Date(Date.now() - 1) } });
    expect(await claimDueJobs(prisma, { limit: 10, kinds, merchantId: m.creds.merchant_id })).toEqual([]);
  });

});

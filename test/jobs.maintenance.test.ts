// Housekeeping: finished jobs are purged once JOBS_RETENTION_DAYS old (in batches), failed and
// unfinished ones never; finished webhook delivery attempts once RETENTION_DELIVERY_ATTEMPTS_DAYS
// old, pending ones never; expired idempotency keys are purged; so are customer portal sessions
// that expired more than a day ago and rate-limit windows that ended more than a minute ago.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeEndedRateLimitWindows, purgeExpiredIdempotencyKeys, purgeFinishedJobs } from '../src/jobs/maintenance.ts';
import { purgeExpiredPortalSessions } from '../src/domain/portal/index.ts';
import { randomToken } from '../src/platform/ids.ts';
import { purgeOldDeliveryAttempts } from '../src/domain/webhooks/index.ts';
import { loadConfig } from '../src/platform/config.ts';
import { startApp, type TestApp } from './helpers/app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({}, { worker: false });
});
afterAll(() => app?.close());

const DAY = 86_400_000;

describe('maintenance', () => {
  it('purges done and cancelled jobs older than the retention, a batch at a time; keeps failed, pending and recent ones', async () => {
    const m = await app.merchant();
    const prisma = app.services.db.prisma;
    const old = new Date(Date.now() - 10 * DAY);
    const rows = [
      ['done', old],
      ['done', old],
      ['cancelled', old],
      ['done', new Date()],
      ['failed', old],
      ['pending', old],
      ['running', old],
    ] as const;
    for (const [i, [status, at]] of rows.entries()) {
      await prisma.$executeRawUnsafe(
        `INSERT INTO jobs (merchant_id, kind, run_at, payload, key, status, created_at, updated_at) VALUES ($1, 'test.kind', $2, '{}', $3, $4, $2, $2)`,
        m.creds.merchant_id,
        at,
        `maint:${m.creds.merchant_id}:${i}`,
        status,
      );
    }
    const deleted = await purgeFinishedJobs(app.services, new Date(Date.now() - 7 * DAY), 2);
    expect(deleted).toBeGreaterThanOrEqual(3); // (other files' jobs are all recent)
    const left = await prisma.job.findMany({ where: { merchantId: m.creds.merchant_id }, select: { status: true, updatedAt: true } });
    expect(left.map((j) => j.status).sort()).toEqual(['done', 'failed', 'pending', 'running']);
    expect(left.find((j) => j.status === 'done')!.updatedAt.getTime()).toBeGreaterThan(Date.now() - DAY);
  });

  it('purges expired idempotency keys only', async () => {
    const m = await app.merchant();
    const c = await m.post('/v1/customers', { email: 'kept@example.com' }, { 'Idempotency-Key': 'kept-key' });
    expect(c.status).toBe(201);
    await m.post('/v1/customers', { email: 'gone@example.com' }, { 'Idempotency-Key': 'gone-key' });
    const prisma = app.services.db.prisma;
    await prisma.idempotencyKey.updateMany({ where: { merchantId: m.creds.merchant_id, key: 'gone-key' }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await purgeExpiredIdempotencyKeys(app.services)).toBeGreaterThanOrEqual(1);
    const keys = await prisma.idempotencyKey.findMany({ where: { merchantId: m.creds.merchant_id }, select: { key: true } });
    expect(keys.map((k) => k.key)).toEqual(['kept-key']);
  });

  it('purges finished delivery attempts older than the retention, a batch at a time; keeps pending and recent ones', async () => {
    const m = await app.merchant();
    const prisma = app.services.db.prisma;
    expect((await m.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hook' })).status).toBe(201);
    expect((await m.post('/v1/customers', { email: 'attempts@example.com' })).status).toBe(201);
    // The worker is off: the delivery is pending.
    const [pending] = await prisma.deliveryAttempt.findMany({ where: { merchantId: m.creds.merchant_id } });
    expect(pending!.status).toBe('pending');
    const old = new Date(Date.now() - 40 * DAY);
    const rows = [
      ['succeeded', old],
      ['failed', old],
      ['succeeded', old],
      ['succeeded', new Date()],
      ['pending', old],
    ] as const;
    for (const [i, [status, at]] of rows.entries()) {
      await prisma.deliveryAttempt.create({
        data: { id: `${pending!.id}_${i}`, merchantId: m.creds.merchant_id, eventId: pending!.eventId, endpointId: pending!.endpointId, status, attemptNumber: i + 2, scheduledAt: at, createdAt: at },
      });
    }
    const deleted = await purgeOldDeliveryAttempts(prisma, new Date(Date.now() - 30 * DAY), 2);
    expect(deleted).toBeGreaterThanOrEqual(3);
    const left = await prisma.deliveryAttempt.findMany({ where: { merchantId: m.creds.merchant_id }, orderBy: { attemptNumber: 'asc' } });
    expect(left.map((a) => [a.attemptNumber, a.status])).toEqual([[1, 'pending'], [5, 'succeeded'], [6, 'pending']]);
    // The event still lists what is left of its attempts.
    const listed = await m.get(`/v1/events/${pending!.eventId}/delivery-attempts`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(3);
  });

  it('purges customer portal sessions that expired more than a day ago; keeps the others', async () => {
    const m = await app.merchant();
    const prisma = app.services.db.prisma;
    const c = (await m.post('/v1/customers', { email: 'portal@example.com' })).body;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await m.post('/v1/customer-portal/sessions', { customer_id: c.id, return_url: 'https://shop.example/account' })).body.id);
    await prisma.portalSession.update({ where: { id: ids[0] }, data: { expiresAt: new Date(Date.now() - 2 * DAY) } });
    await prisma.portalSession.update({ where: { id: ids[1] }, data: { expiresAt: new Date(Date.now() - 3_600_000) } });
    expect(await purgeExpiredPortalSessions(prisma, new Date(), 1)).toBeGreaterThanOrEqual(1);
    const left = await prisma.portalSession.findMany({ where: { merchantId: m.creds.merchant_id }, select: { id: true } });
    expect(left.map((s) => s.id).sort()).toEqual([ids[1], ids[2]].sort());
  });

  it('purges rate-limit windows that ended more than a minute ago, a batch at a time', async () => {
    const prisma = app.services.db.prisma;
    const tag = randomToken(8);
    for (const [name, ago] of [['old1', 120], ['old2', 600], ['recent', 10], ['open', -30]] as const) {
      await prisma.$executeRawUnsafe(`INSERT INTO rate_limits (key, points, expires_at) VALUES ($1, 1, now() - $2 * interval '1 second')`, `test:${tag}:${name}`, ago);
    }
    expect(await purgeEndedRateLimitWindows(app.services, 1)).toBeGreaterThanOrEqual(2);
    const left = await prisma.$queryRawUnsafe<{ key: string }[]>(`SELECT key FROM rate_limits WHERE key LIKE $1 ORDER BY key`, `test:${tag}:%`);
    expect(left.map((r) => r.key)).toEqual([`test:${tag}:open`, `test:${tag}:recent`]);
  });

  it('retention settings: defaults, 0 keeps forever, bad values refused', () => {
    const c = loadConfig({});
    expect(c.JOBS_RETENTION_DAYS).toBe(7);
    expect(c.RETENTION_DELIVERY_ATTEMPTS_DAYS).toBe(30);
    expect(loadConfig({ RETENTION_DELIVERY_ATTEMPTS_DAYS: '0' }).RETENTION_DELIVERY_ATTEMPTS_DAYS).toBe(0);
    expect(() => loadConfig({ RETENTION_DELIVERY_ATTEMPTS_DAYS: '-1' })).toThrow(/RETENTION_DELIVERY_ATTEMPTS_DAYS/);
  });
});

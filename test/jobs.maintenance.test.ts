// Housekeeping: finished jobs are purged once JOBS_RETENTION_DAYS old (in batches), failed and
// unfinished ones never; expired idempotency keys are purged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpiredIdempotencyKeys, purgeFinishedJobs } from '../src/jobs/maintenance.ts';
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
});

// WEB_CONCURRENCY=2: two server processes on one port and one PostgreSQL database. Both serve
// requests, and together they still deliver each webhook once, run each job once and honour
// idempotency keys. Needs a real server (the embedded database serves one process).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../src/platform/ids.ts';
import pg from 'pg';
import { ownDatabase } from './helpers/own-database.ts';
import { testPort } from './helpers/ports.ts';

const url = process.env.TEST_DATABASE_URL;
const root = join(import.meta.dirname, '..');

describe.runIf(url)('WEB_CONCURRENCY=2', () => {
  let child: ChildProcess;
  let out = '';
  let base: string;
  let receiver: Server;
  let hookUrl: string;
  const received: { id: string; type: string; object: string }[] = [];
  // A database of their own: the processes' workers serve every merchant of their database.
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  const clientId = `ck_cluster${randomToken(10)}`;
  const secret = `sk_test_${randomToken(24)}`;
  const auth = 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64');

  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(base + path, {
      method,
      headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: (await r.json()) as any };
  };

  const until = async (what: string, ok: () => boolean, ms = 30_000) => {
    const end = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${out.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    database = await ownDatabase(url!, 'cluster');
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const e = JSON.parse(body);
        received.push({ id: String(req.headers['webhook-id']), type: e.type, object: e.data.object.id });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const port = testPort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      detached: true,
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        PORT: String(port),
        WEB_CONCURRENCY: '2',
        LOG_LEVEL: 'info',
        BILLING_BOOTSTRAP_CLIENT_ID: clientId,
        BILLING_BOOTSTRAP_CLIENT_SECRET: secret,
        BILLING_ALLOW_HTTP_WEBHOOKS: '1',
        RATE_LIMIT_PER_SECOND: '0',
        JOBS_POLL_MS: '100',
      },
    });
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await until('two listening processes', () => (out.match(/billing service listening/g) ?? []).length >= 2, 90_000);
  }, 120_000);

  afterAll(async () => {
    await stop();
    await database?.drop();
  });

  async function stop() {
    if (child?.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      await new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.on('exit', () => r());
        setTimeout(() => {
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            /* gone */
          }
          r();
        }, 15_000);
      });
    }
    receiver?.close();
  }

  it('both processes serve; each webhook is delivered once, each job runs once, idempotency keys hold', async () => {
    expect((await api('POST', '/v1/webhook-endpoints', { url: hookUrl })).status).toBe(201);

    // 40 customers over 8 parallel connections: the requests land on both processes.
    const ids: string[] = [];
    for (let i = 0; i < 40; i += 8) {
      const batch = await Promise.all(Array.from({ length: 8 }, (_, k) => api('POST', '/v1/customers', { email: `cl${i + k}@example.com` })));
      for (const r of batch) {
        expect(r.status).toBe(201);
        ids.push(r.body.id);
      }
    }
    const served = new Set(
      out
        .split('\n')
        .filter((l) => l.includes('"msg":"request"') && l.includes('/v1/customers'))
        .map((l) => JSON.parse(l).process),
    );
    expect([...served].sort()).toEqual([1, 2]);

    // Ten concurrent requests with one Idempotency-Key: one customer.
    const same = await Promise.all(Array.from({ length: 10 }, () => api('POST', '/v1/customers', { email: 'once@example.com' }, { 'idempotency-key': 'cluster-once' })));
    expect(same.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    expect(new Set(same.filter((r) => r.status === 201).map((r) => r.body.id)).size).toBe(1);
    expect((await api('GET', '/v1/customers?email=once@example.com')).body.data).toHaveLength(1);

    // Ten checkouts expire once each, whichever process runs the job.
    const payments = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api('POST', '/v1/payments', { amount: 100 + i, currency: 'USD', customer_id: ids[i], redirect_url: 'https://shop.example/r' })),
    );
    expect((await api('POST', '/v1/test-helpers/clock/advance', { seconds: 25 * 3600 })).status).toBe(200);
    for (const p of payments) expect((await api('GET', `/v1/payments/${p.body.id}`)).body.status).toBe('expired');
    const expired = (await api('GET', '/v1/events?type=payment.expired&limit=100')).body.data.map((e: any) => e.data.object.id);
    expect(expired.sort()).toEqual(payments.map((p) => p.body.id).sort());

    // Every event reaches the receiver once.
    const expected = 40 + 1 + 10 + 10; // customers, the keyed one, payments created and expired
    await until(`${expected} deliveries`, () => received.length >= expected);
    // Until no delivery is left to run (a duplicate would come from a job run again), then a
    // short quiet period for one already in flight.
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const end = Date.now() + 30_000;
      for (;;) {
        const { rows } = await db.query(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'webhook.deliver' AND status IN ('pending', 'running')`);
        if (rows[0].n === 0) break;
        if (Date.now() > end) throw new Error(`deliveries still pending after 30 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await db.end();
    }
    await new Promise((r) => setTimeout(r, 300));
    const perEvent = new Map<string, number>();
    for (const r of received) perEvent.set(r.id, (perEvent.get(r.id) ?? 0) + 1);
    expect([...perEvent.values()].every((n) => n === 1)).toBe(true);
    expect(perEvent.size).toBe(expected);
    expect(received.filter((r) => r.type === 'customer.created').map((r) => r.object).sort()).toEqual(
      [...ids, same.find((r) => r.status === 201)!.body.id].sort(),
    );
  }, 120_000);
});

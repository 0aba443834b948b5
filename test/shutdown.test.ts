// Graceful shutdown (issue 26, "Housekeeping"): SIGTERM during a burst of keyed requests while
// webhook deliveries are in flight. Every request is answered (201, or 503 + Retry-After with the
// documented error body once draining) or refused at the connection (the listener is closed), never
// a 500; the process exits 0 after its running jobs finished; no job is left 'running'. Requests
// that got no answer are retried with their keys on the restarted server: every customer exists
// exactly once. With a receiver that never answers and a short SHUTDOWN_TIMEOUT_MS, the jobs still
// running are given back (pending) instead of waiting out their lease; so is the lease of a clock
// advance still running, and the same advance on the next start runs at once (not after the
// 30 s lease) and finishes the work, each renewal once. Also: /metrics on METRICS_PORT of the
// real server, without authentication.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/platform/db/index.ts';
import { ownDatabase } from './helpers/own-database.ts';
import { testPort } from './helpers/ports.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'billing-shutdown-'));
const ck = 'ck_shutdown_0001';
const sk = 'sk_shutdown_secret_0000000000001';
const auth = 'Basic ' + Buffer.from(`${ck}:${sk}`).toString('base64');
const children: ChildProcess[] = [];
const servers: Server[] = [];
const database = process.env.TEST_DATABASE_URL ? ownDatabase(process.env.TEST_DATABASE_URL, 'shutdown') : null;
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  await new Promise((r) => setTimeout(r, 200));
  await (await database)?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function start(port: number, env: Record<string, string> = {}) {
  const full: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: join(dir, 'data'),
    PORT: String(port),
    BILLING_BOOTSTRAP_CLIENT_ID: ck,
    BILLING_BOOTSTRAP_CLIENT_SECRET: sk,
    BILLING_ALLOW_HTTP_WEBHOOKS: '1',
    RATE_LIMIT_PER_SECOND: '0',
    JOBS_POLL_MS: '100',
    LOG_LEVEL: 'info',
    ...env,
  };
  if (database) full.DATABASE_URL = (await database).url;
  else delete full.DATABASE_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: full });
  children.push(child);
  const out = { text: '' };
  child.stdout.on('data', (d) => (out.text += d));
  child.stderr.on('data', (d) => (out.text += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  for (const t = Date.now(); !out.text.includes('Listening on http'); ) {
    if (child.exitCode !== null || Date.now() - t > 90_000) throw new Error(`server did not start: ${out.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, out, exited };
}

/** Runs SQL on the service's database (after its process exited, for the embedded one). */
async function sql<T = any>(text: string): Promise<T[]> {
  if (database) {
    const c = new pg.Client({ connectionString: (await database).url });
    await c.connect();
    try {
      return (await c.query(text)).rows as T[];
    } finally {
      await c.end();
    }
  }
  const db = await openDatabase({ dataDir: join(dir, 'data') });
  try {
    return await db.query<T>(text);
  } finally {
    await db.close();
  }
}

const listen = async (handler: Parameters<typeof createServer>[1]) => {
  const s = createServer(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  servers.push(s);
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/hooks`;
};

describe('graceful shutdown', () => {
  it('SIGTERM during a burst: every request answered or refused cleanly, exit 0, no job left running; /metrics on METRICS_PORT', { timeout: 240_000 }, async () => {
    const port = testPort();
    const metricsPort = port + 1;
    const base = `http://127.0.0.1:${port}`;
    const s = await start(port, { METRICS_PORT: String(metricsPort) });

    // Metrics on their own port, no credentials; not on the main port.
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/^process_cpu_user_seconds_total /m);
    expect((await fetch(`${base}/metrics`)).status).toBe(404);

    // Deliveries take a while: some are running when the signal comes.
    const hook = await listen((_req, res) => void setTimeout(() => res.writeHead(200).end('ok'), 800));
    const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(base + path, { method, headers: { authorization: auth, 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
    expect((await call('POST', '/v1/webhook-endpoints', { url: hook })).status).toBe(201);

    const N = 150;
    let answered = 0;
    const outcomes: { i: number; status?: number; body?: any; error?: string }[] = [];
    const burst = Array.from({ length: N }, async (_, i) => {
      await new Promise((r) => setTimeout(r, i * 8)); // spread over ~1.2 s
      try {
        const r = await call('POST', '/v1/customers', { email: `burst${i}@example.com` }, { 'Idempotency-Key': `burst-${i}` });
        const body = await r.json().catch(() => null);
        answered++;
        outcomes.push({ i, status: r.status, body });
      } catch (e) {
        outcomes.push({ i, error: String((e as Error).cause ?? e) });
      }
    });
    while (answered < N / 3) await new Promise((r) => setTimeout(r, 5));
    const signalled = Date.now();
    s.child.kill('SIGTERM');
    await Promise.all(burst);
    const code = await s.exited;
    expect(code, s.out.text.slice(-2000)).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(25_000);
    expect(s.out.text).toMatch(/"msg":"shutting down: draining requests and jobs"/);
    expect(s.out.text).toMatch(/"jobs_given_back":0[^\n]*"msg":"stopped"/);

    expect(outcomes).toHaveLength(N);
    if (process.env.DEBUG_SHUTDOWN) {
      const tally = new Map<string, number>();
      for (const o of outcomes) tally.set(o.error ?? String(o.status), (tally.get(o.error ?? String(o.status)) ?? 0) + 1);
      console.log('burst outcomes', Object.fromEntries(tally), 'exit after', Date.now() - signalled, 'ms');
    }
    const statuses = outcomes.filter((o) => o.status !== undefined).map((o) => o.status);
    expect(statuses.filter((st) => st !== 201 && st !== 503), JSON.stringify(outcomes.filter((o) => o.status !== 201 && o.status !== 503))).toEqual([]);
    expect(statuses.filter((st) => st === 201).length).toBeGreaterThanOrEqual(N / 3);
    for (const o of outcomes.filter((x) => x.status === 503)) {
      expect(o.body).toEqual({ error: expect.objectContaining({ type: 'api_error', code: expect.any(String), request_id: expect.stringMatching(/^req_/) }) });
    }
    // Nothing half-done: no job running, every answered customer stored.
    expect(await sql(`SELECT id, kind FROM jobs WHERE status = 'running'`)).toEqual([]);
    const stored = new Set((await sql<{ email: string }>(`SELECT email FROM customers`)).map((r) => r.email));
    for (const o of outcomes.filter((x) => x.status === 201)) expect(stored.has(`burst${o.i}@example.com`)).toBe(true);
    // A request refused at the connection (the listener closed, or a connection still in the
    // kernel's accept queue reset) never reached the application: nothing of it is stored.
    expect(outcomes.filter((o) => o.error !== undefined && stored.has(`burst${o.i}@example.com`)).map((o) => o.error)).toEqual([]);

    // The restarted server: the requests not answered 201 are retried with their keys; every
    // customer then exists exactly once.
    const again = await start(port);
    for (const o of outcomes.filter((x) => x.status !== 201)) {
      const r = await call('POST', '/v1/customers', { email: `burst${o.i}@example.com` }, { 'Idempotency-Key': `burst-${o.i}` });
      expect([200, 201]).toContain(r.status);
    }
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    const counts = await sql<{ email: string; n: number }>(`SELECT email, count(*)::int AS n FROM customers WHERE email LIKE 'burst%' GROUP BY email`);
    expect(counts).toHaveLength(N);
    expect(counts.filter((c) => c.n !== 1)).toEqual([]);
  });

  it('jobs still running at SHUTDOWN_TIMEOUT_MS are given back (pending), and the process exits 0', { timeout: 180_000 }, async () => {
    const port = testPort();
    const base = `http://127.0.0.1:${port}`;
    const s = await start(port, { SHUTDOWN_TIMEOUT_MS: '1000' });
    let received = 0;
    const blackHole = await listen(() => void received++); // never answers
    const call = (method: string, path: string, body?: unknown) =>
      fetch(base + path, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const endpoint = (await (await call('POST', '/v1/webhook-endpoints', { url: blackHole })).json()) as any;
    for (let i = 0; i < 3; i++) expect((await call('POST', '/v1/customers', { email: `hang${i}@example.com` })).status).toBe(201);
    for (const t = Date.now(); received < 3 && Date.now() - t < 30_000; ) await new Promise((r) => setTimeout(r, 20));
    expect(received).toBeGreaterThanOrEqual(1);
    const signalled = Date.now();
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(s.out.text).toMatch(/"msg":"shutdown: jobs still running given back to pending"/);
    expect(await sql(`SELECT id FROM jobs WHERE status = 'running'`)).toEqual([]);
    const given = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE status = 'pending' AND ref = '${endpoint.id}' AND locked_until IS NULL`);
    expect(given[0]!.n).toBeGreaterThanOrEqual(1);
  });

  it('a clock advance still running at SHUTDOWN_TIMEOUT_MS gives back its lease: the same advance on the next start runs at once, each renewal once', { timeout: 180_000 }, async () => {
    const port = testPort();
    const base = `http://127.0.0.1:${port}`;
    // Two due jobs a second: the advance below (3 subscriptions × 10 weekly renewals, with their
    // notices) runs for well over the shutdown's second.
    const s = await start(port, { SHUTDOWN_TIMEOUT_MS: '1000', CLOCK_ADVANCE_JOBS_PER_SECOND: '2', CLOCK_ADVANCE_BATCH_SIZE: '1' });
    const call = async (method: string, path: string, body?: unknown) => {
      const headers: Record<string, string> = { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
      const r = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as any };
    };
    // The tests above left endpoints (one a black hole) on this merchant: their deliveries would be
    // due work of the advance. Deleting them cancels those.
    for (const e of (await call('GET', '/v1/webhook-endpoints?limit=100')).body.data) expect((await call('DELETE', `/v1/webhook-endpoints/${e.id}`)).status).toBe(200);
    const plan = (await call('POST', '/v1/plans', { name: 'Weekly', amount: 900, currency: 'USD', interval: 'week' })).body;
    const subs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = (await call('POST', '/v1/customers', { email: `advance${i}@example.com` })).body;
      const si = (await call('POST', '/v1/setup-intents', { customer_id: c.id })).body;
      await call('POST', `/v1/test-helpers/setup-intents/${si.id}/complete`, {});
      subs.push((await call('POST', '/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body.id);
    }
    const clock = Date.parse((await call('GET', '/v1/test-helpers/clock')).body.now);
    const to = new Date(clock + 10 * 7 * 86_400_000 + 3_600_000).toISOString();
    const running = call('POST', '/v1/test-helpers/clock/advance', { to }).catch(() => null);
    // Once it is running (renewal invoices appear), SIGTERM.
    for (const t = Date.now(); Date.now() - t < 60_000; await new Promise((r) => setTimeout(r, 100))) {
      if ((await call('GET', '/v1/invoices?limit=100')).body.data.length > 3) break;
    }
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    await running;
    expect(s.out.text).toMatch(/"msg":"shutdown: clock advance leases given back"/);
    // The merchant's advance lease is free; the clock still stands before the target.
    const [m] = await sql<{ token: string | null }>(`SELECT clock_advance_token AS token FROM merchants WHERE id = (SELECT merchant_id FROM api_keys WHERE client_id = '${ck}')`);
    expect(m!.token).toBeNull();

    // The same advance on the next start: answered at once (its lease would have held it 30 s).
    const next = await start(port);
    const started = Date.now();
    let again = await call('POST', '/v1/test-helpers/clock/advance', { to });
    for (let i = 0; again.status === 409 && again.body.error.code === 'clock_advance_incomplete' && i < 5; i++) again = await call('POST', '/v1/test-helpers/clock/advance', { to });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(Date.now() - started).toBeLessThan(20_000);
    const invoices = (await call('GET', '/v1/invoices?limit=100')).body.data as { subscription_id: string; period_start: string; status: string }[];
    expect(invoices).toHaveLength(3 * 11);
    for (const id of subs) expect(new Set(invoices.filter((i) => i.subscription_id === id).map((i) => i.period_start)).size).toBe(11);
    expect(invoices.filter((i) => i.status !== 'paid')).toEqual([]);
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
  });
});

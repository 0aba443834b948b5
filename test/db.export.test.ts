// Outgrowing the embedded database (issue 26, item 5): `cli db export --to postgresql://…` copies
// a DATA_DIR into an empty PostgreSQL database. The service runs on an embedded DATA_DIR and gets
// customers, a wallet with a ledger, a subscription with paid invoices (and its jobs, events,
// webhook endpoint); the CLI exports it; the real server started on the PostgreSQL copy answers
// every record, every balance and ledger exactly as before, and the next invoice takes the next
// number. A second export into the now non-empty database is refused and changes nothing.
import { serve, type ServerType } from '@hono/node-server';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../src/domain/merchants/index.ts';
import { foreignKeyOrder } from '../src/platform/db/export.ts';
import { loadConfig } from '../src/platform/config.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createApp } from '../src/server/app.ts';
import { openServices } from '../src/server/services.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { ownDatabase } from './helpers/own-database.ts';
import { testPort } from './helpers/ports.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'billing-export-'));
const dataDir = join(dir, 'data');
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string>) {
  const full: Record<string, string | undefined> = { ...process.env, ...env };
  delete full.DATABASE_URL;
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: root, env: full, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('foreign-key order', () => {
  it('puts every table after the tables it references; a cycle is refused', () => {
    const order = foreignKeyOrder(['invoices', 'customers', 'merchants', 'subscriptions', 'nodes'], [
      { child: 'invoices', parent: 'subscriptions' },
      { child: 'invoices', parent: 'customers' },
      { child: 'subscriptions', parent: 'customers' },
      { child: 'customers', parent: 'merchants' },
      { child: 'nodes', parent: 'nodes' },
    ]);
    expect(order.indexOf('merchants')).toBeLessThan(order.indexOf('customers'));
    expect(order.indexOf('customers')).toBeLessThan(order.indexOf('subscriptions'));
    expect(order.indexOf('subscriptions')).toBeLessThan(order.indexOf('invoices'));
    expect(order).toHaveLength(5);
    expect(() => foreignKeyOrder(['a', 'b'], [{ child: 'a', parent: 'b' }, { child: 'b', parent: 'a' }])).toThrow(/cycle/);
  });
});

describe.runIf(!!process.env.TEST_DATABASE_URL)('cli db export', () => {
  it('refuses a DATA_DIR that holds no embedded database (a typo): nothing created there, nothing written to the target', { timeout: 120_000 }, async () => {
    const target = await ownDatabase(process.env.TEST_DATABASE_URL!, 'exporttypo');
    cleanups.push(() => target.drop());
    const typo = join(dir, 'no-such-data-dir');
    const r = cli(['db', 'export', '--to', target.url], { DATA_DIR: typo });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/holds no embedded database/);
    expect(existsSync(typo)).toBe(false);
    const pgc = new pg.Client({ connectionString: target.url });
    await pgc.connect();
    const { rows } = await pgc.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`);
    await pgc.end();
    expect(rows[0].n).toBe(0);
  });

  it('copies a DATA_DIR into an empty PostgreSQL database: every record, balance and ledger, and the invoice numbers carry on', { timeout: 300_000 }, async () => {
    // ---- the service on the embedded database
    const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0', DATA_DIR: dataDir, RATE_LIMIT_PER_SECOND: '0', PUBLIC_BASE_URL: 'https://billing.example.com' });
    const source = await openDatabase({ dataDir });
    const services = await openServices(config, { db: source, log: createLogger('silent') });
    const worker = startWorker(services.runtime, services.log, { pollMs: 100 });
    const app = createApp(services);
    const server: ServerType = await new Promise((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    let base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const creds = await createMerchant(source.prisma, { name: 'Export Co', mode: 'test' });
    const auth = 'Basic ' + Buffer.from(`${creds.client_id}:${creds.client_secret}`).toString('base64');
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(base + path, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as any };
    };
    const customers: any[] = [];
    for (let i = 0; i < 5; i++) customers.push((await call('POST', '/v1/customers', { email: `export${i}@example.com`, name: `Export Person ${i}` })).body);
    const wallet = (await call('POST', '/v1/wallets', { customer_id: customers[0].id, currency: 'usd' })).body;
    expect((await call('POST', `/v1/wallets/${wallet.id}/credit`, { amount: 5000, description: 'Admin credit', reference: 'c1' })).status).toBe(201);
    expect((await call('POST', `/v1/wallets/${wallet.id}/debit`, { amount: 1234, description: 'Usage', reference: 'd1' })).status).toBe(200);
    expect((await call('POST', `/v1/wallets/${wallet.id}/debit`, { amount: 66, description: 'Usage', reference: 'd2' })).status).toBe(200);
    expect((await call('POST', '/v1/webhook-endpoints', { url: 'https://example.com/hooks' })).status).toBe(201);
    const plan = (await call('POST', '/v1/plans', { name: 'Monthly', amount: 2500, currency: 'USD', interval: 'month' })).body;
    const subs = [];
    for (const c of customers.slice(1, 3)) {
      const si = (await call('POST', '/v1/setup-intents', { customer_id: c.id })).body;
      expect((await call('POST', `/v1/test-helpers/setup-intents/${si.id}/complete`, {})).status).toBe(200);
      subs.push((await call('POST', '/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body);
    }
    // Two renewals each: 6 paid invoices.
    for (let i = 0; i < 2; i++) expect((await call('POST', '/v1/test-helpers/clock/advance', { seconds: 32 * 86_400 })).status).toBe(200);

    const snapshot = async () => ({
      customers: (await call('GET', '/v1/customers?limit=100')).body.data,
      wallets: (await call('GET', '/v1/wallets?limit=100')).body.data,
      ledger: (await call('GET', `/v1/wallets/${wallet.id}/transactions?limit=100`)).body.data,
      subscriptions: (await call('GET', '/v1/subscriptions?limit=100')).body.data,
      invoices: (await call('GET', '/v1/invoices?limit=100')).body.data,
      payments: (await call('GET', '/v1/payments?limit=100')).body.data,
      events: (await call('GET', '/v1/events?limit=100')).body.data,
      each: await Promise.all(customers.map(async (c) => (await call('GET', `/v1/customers/${c.id}`)).body)),
      wallet: (await call('GET', `/v1/wallets/${wallet.id}`)).body,
      search: (await call('GET', '/v1/customers?limit=100&search=person')).body.data.map((c: any) => c.id),
    });
    const before = await snapshot();
    expect(before.invoices).toHaveLength(6);
    expect(before.invoices.every((i: any) => i.status === 'paid')).toBe(true);
    expect(before.wallets[0].balance).toBe(3700);
    expect(before.search).toHaveLength(5);
    const clockAhead = async () => new Date((await call('GET', '/v1/test-helpers/clock')).body.now).getTime() - Date.now();
    const ahead = await clockAhead();
    expect(ahead).toBeGreaterThan(60 * 86_400_000);
    const numbers = before.invoices.map((i: any) => i.number).sort();
    await worker.stop();
    await new Promise<void>((r) => server.close(() => r()));
    await source.close();

    // ---- the export
    const target = await ownDatabase(process.env.TEST_DATABASE_URL!, 'export');
    cleanups.push(() => target.drop());
    const r = cli(['db', 'export', '--to', target.url, '--json'], { DATA_DIR: dataDir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const rows = Object.fromEntries(out.tables.map((t: any) => [t.table, t.rows]));
    expect(rows).toMatchObject({ merchants: 1, customers: 5, wallets: 1, wallet_transactions: 3, invoices: 6, subscriptions: 2, plans: 1, webhook_endpoints: 1 });
    expect(rows.customer_search_terms).toBeGreaterThanOrEqual(5);
    expect(rows.events).toBeGreaterThan(10);
    expect(rows.jobs).toBeGreaterThan(0);
    expect(out.sequences.map((s: any) => s.sequence)).toContain('jobs_id_seq');
    expect(out.tables.map((t: any) => t.table)).not.toContain('_app_migrations');
    // The text form lists the tables with their counts too; a second export into it is refused.
    const again = cli(['db', 'export', '--to', target.url], { DATA_DIR: dataDir });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not empty \(table \w+ has rows\)/);
    // A database with a table of something else (empty, named like one of ours) is refused before
    // anything is written: no migrations table left behind.
    const foreign = await ownDatabase(process.env.TEST_DATABASE_URL!, 'export-foreign');
    cleanups.push(() => foreign.drop());
    const fc = new pg.Client({ connectionString: foreign.url });
    await fc.connect();
    await fc.query('CREATE TABLE customers (x int)');
    const intoForeign = cli(['db', 'export', '--to', foreign.url], { DATA_DIR: dataDir });
    expect(intoForeign.code).toBe(1);
    expect(intoForeign.stderr).toMatch(/not empty \(table customers was not made by this service\)/);
    const [left] = (await fc.query(`SELECT to_regclass('_app_migrations') IS NOT NULL AS migrations, to_regclass('merchants') IS NOT NULL AS merchants`)).rows;
    await fc.end();
    expect(left).toEqual({ migrations: false, merchants: false });
    const missingTo = cli(['db', 'export'], { DATA_DIR: dataDir });
    expect(missingTo.code).toBe(2);
    expect(missingTo.stderr).toMatch(/--to postgresql:/);

    // The jobs sequence carried on: the next job id comes after every copied one.
    const pgc = new pg.Client({ connectionString: target.url });
    await pgc.connect();
    const [seq] = (await pgc.query(`SELECT (SELECT last_value FROM jobs_id_seq)::bigint AS last, (SELECT max(id) FROM jobs)::bigint AS max`)).rows;
    await pgc.end();
    expect(BigInt(seq.last)).toBeGreaterThanOrEqual(BigInt(seq.max));

    // ---- the real server on the PostgreSQL copy
    const port = testPort();
    const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: target.url, PORT: String(port), LOG_LEVEL: 'warn', DATA_DIR: join(dir, 'unused'), PUBLIC_BASE_URL: 'https://billing.example.com' };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env });
    cleanups.push(() => void child.kill('SIGKILL'));
    let log = '';
    child.stdout.on('data', (d) => (log += d));
    child.stderr.on('data', (d) => (log += d));
    for (const started = Date.now(); !log.includes('Listening on http'); ) {
      if (Date.now() - started > 60_000 || child.exitCode !== null) throw new Error(`server did not start: ${log}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(log).not.toContain('test merchant created'); // the copied merchant is there: no bootstrap
    base = `http://127.0.0.1:${port}`;
    const after = await snapshot();
    expect(after).toEqual(before);
    expect(Math.abs((await clockAhead()) - ahead)).toBeLessThan(60_000); // the test clock is where it was
    expect((await call('GET', `/v1/wallets/${wallet.id}`)).body.balance).toBe(3700);

    // The copy is live: the ledger takes the next movement from the copied balance, and the next
    // renewals take the next invoice numbers (the counter came with the merchant's row).
    const d3 = await call('POST', `/v1/wallets/${wallet.id}/debit`, { amount: 700, description: 'Usage', reference: 'd3' });
    expect(d3.status).toBe(200);
    expect((await call('GET', `/v1/wallets/${wallet.id}`)).body.balance).toBe(3000);
    expect((await call('POST', '/v1/test-helpers/clock/advance', { seconds: 32 * 86_400 })).status).toBe(200);
    const invoices = (await call('GET', '/v1/invoices?limit=100')).body.data;
    expect(invoices).toHaveLength(8);
    const newer = invoices.filter((i: any) => !numbers.includes(i.number)).map((i: any) => i.number).sort();
    const last = Number(numbers.at(-1).replace(/\D/g, ''));
    expect(newer.map((n: string) => Number(n.replace(/\D/g, '')))).toEqual([last + 1, last + 2]);
    expect(child.exitCode).toBeNull();
  });
});

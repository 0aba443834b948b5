// `npm start` as a user runs it: embedded database in DATA_DIR (owner-only files), credentials
// printed once, the printed curl line works, a restart keeps the data and prints nothing new.
// Bootstrap credentials from the environment only ever create a missing key.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bootstrapMerchant, createMerchant, revokeApiKey } from '../src/domain/merchants/index.ts';
import { Authenticator } from '../src/platform/auth.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { randomToken } from '../src/platform/ids.ts';
import { groupOrOtherAccessible } from './helpers/fs-mode.ts';
import { testPort } from './helpers/ports.ts';

const root = join(import.meta.dirname, '..');
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function start(env: Record<string, string>) {
  const childEnv: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'info', ...env };
  delete childEnv.DATABASE_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: childEnv });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const listening = new Promise<void>((resolve, reject) => {
    const t = setInterval(() => {
      if (stdout.includes('billing service listening')) {
        clearInterval(t);
        resolve();
      }
    }, 100);
    child.on('exit', (code) => {
      clearInterval(t);
      reject(new Error(`server exited with ${code}: ${stderr}`));
    });
  });
  const stop = () =>
    new Promise<number | null>((resolve) => {
      child.on('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  return { child, listening, out: () => stdout, err: () => stderr, stop };
}

describe('npm start', () => {
  it('creates a test merchant on an empty database, prints a working curl line, and keeps data across restarts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'billing-start-'));
    dirs.push(dir);
    const port = String(testPort());
    const env = { DATA_DIR: join(dir, 'data'), PORT: port };

    const s1 = start(env);
    await s1.listening;
    const banner = s1.err();
    const clientId = /client_id\s+(ck_\w+)/.exec(banner)?.[1];
    const secret = /client_secret\s+(sk_\w+)/.exec(banner)?.[1];
    expect(clientId).toBeDefined();
    expect(secret).toBeDefined();
    expect(banner).toContain(`curl -u ${clientId}:${secret} http://localhost:${port}/v1/customers`);
    // stdout is JSON lines only
    for (const line of s1.out().trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();

    const auth = 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64');
    const created = await fetch(`http://127.0.0.1:${port}/v1/customers`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'jane@example.com' }),
    });
    expect(created.status).toBe(201);
    const requestId = created.headers.get('request-id');
    await new Promise((r) => setTimeout(r, 200));
    const logLine = s1
      .out()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.request_id === requestId && l.msg === 'request');
    expect(logLine).toMatchObject({ method: 'POST', path: '/v1/customers', status: 201, level: 'info' });

    // A second process on the same DATA_DIR is refused while the first runs.
    const clash = start(env);
    await expect(clash.listening).rejects.toThrow(/in use by process/);

    expect(await s1.stop()).toBe(0);

    const s2 = start(env);
    await s2.listening;
    expect(s2.err()).not.toContain('client_secret');
    const list = await fetch(`http://127.0.0.1:${port}/v1/customers`, { headers: { authorization: auth } });
    expect((await list.json()).data.map((c: any) => c.email)).toEqual(['jane@example.com']);
    // The database's files are the owner's only, while running and after a stop.
    expect(groupOrOtherAccessible(env.DATA_DIR)).toEqual([]);
    expect(await s2.stop()).toBe(0);
    expect(groupOrOtherAccessible(env.DATA_DIR)).toEqual([]);
  }, 120_000);

  it('creates the bootstrap credentials from the environment when missing, never changes them, and rejects bad configuration clearly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'billing-start-'));
    dirs.push(dir);
    const bad = start({ DATA_DIR: join(dir, 'data'), PORT: 'eighty' });
    await expect(bad.listening).rejects.toThrow(/PORT/);

    const port = String(testPort());
    const ck = 'ck_bootstrap_ci_0001';
    const sk = 'sk_bootstrap_secret_0123456789';
    const s = start({ DATA_DIR: join(dir, 'data'), PORT: port, BILLING_BOOTSTRAP_CLIENT_ID: ck, BILLING_BOOTSTRAP_CLIENT_SECRET: sk });
    await s.listening;
    expect(s.err()).not.toContain('client_secret');
    const r = await fetch(`http://127.0.0.1:${port}/v1/customers`, { headers: { authorization: 'Basic ' + Buffer.from(`${ck}:${sk}`).toString('base64') } });
    expect(r.status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(await ready.json()).toEqual({ status: 'ready', database: 'pglite' });
    expect(await s.stop()).toBe(0);

    // A restart with another secret for the same id: warned about, the stored key unchanged.
    const other = 'sk_bootstrap_other_9876543210';
    const s2 = start({ DATA_DIR: join(dir, 'data'), PORT: port, BILLING_BOOTSTRAP_CLIENT_ID: ck, BILLING_BOOTSTRAP_CLIENT_SECRET: other });
    await s2.listening;
    const warning = s2
      .out()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.level === 'warn' && l.client_id === ck);
    expect(warning?.msg).toMatch(/BILLING_BOOTSTRAP_CLIENT_SECRET does not match/);
    const basic = (secret: string) => ({ authorization: 'Basic ' + Buffer.from(`${ck}:${secret}`).toString('base64') });
    expect((await fetch(`http://127.0.0.1:${port}/v1/customers`, { headers: basic(sk) })).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/v1/customers`, { headers: basic(other) })).status).toBe(401);
    expect(await s2.stop()).toBe(0);
  }, 120_000);
});

describe('bootstrap credentials (BILLING_BOOTSTRAP_CLIENT_ID/SECRET)', () => {
  // Directly against a database: the PostgreSQL at TEST_DATABASE_URL, or an in-memory PGlite.
  const withDb = async (fn: (prisma: Awaited<ReturnType<typeof openDatabase>>['prisma']) => Promise<void>) => {
    const db = await openDatabase({ url: process.env.TEST_DATABASE_URL, dataDir: null });
    try {
      await migrate(db);
      await fn(db.prisma);
    } finally {
      await db.close();
    }
  };
  const logger = () => {
    const lines: { level: string; obj: any; msg: string }[] = [];
    return {
      lines,
      warn: (obj: object, msg: string) => void lines.push({ level: 'warn', obj, msg }),
      info: (obj: object, msg: string) => void lines.push({ level: 'info', obj, msg }),
    };
  };
  const basic = (id: string, secret: string) => 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');
  const uniqueId = () => `ck_boot_${randomToken(16)}`;

  it('creates a missing key (test mode) and leaves an existing matching one untouched', async () => {
    await withDb(async (prisma) => {
      const explicit = { clientId: uniqueId(), clientSecret: `sk_test_${randomToken(24)}` };
      const log = logger();
      expect(await bootstrapMerchant(prisma, explicit, log)).toBeNull();
      const key = await prisma.apiKey.findUniqueOrThrow({ where: { clientId: explicit.clientId }, include: { merchant: true } });
      expect(key.merchant.mode).toBe('test');
      expect(key.revokedAt).toBeNull();
      expect(log.lines.filter((l) => l.level === 'warn')).toEqual([]);
      const auth = new Authenticator(prisma, 0);
      expect((await auth.authenticate(basic(explicit.clientId, explicit.clientSecret))).id).toBe(key.merchantId);

      const before = await prisma.apiKey.findUniqueOrThrow({ where: { clientId: explicit.clientId } });
      const again = logger();
      expect(await bootstrapMerchant(prisma, explicit, again)).toBeNull();
      expect(again.lines).toEqual([]);
      expect(await prisma.apiKey.findUniqueOrThrow({ where: { clientId: explicit.clientId } })).toEqual(before);
    });
  });

  it('never resurrects a revoked key', async () => {
    await withDb(async (prisma) => {
      const explicit = { clientId: uniqueId(), clientSecret: `sk_test_${randomToken(24)}` };
      await bootstrapMerchant(prisma, explicit);
      expect(await revokeApiKey(prisma, explicit.clientId)).toBe(true);
      const revoked = await prisma.apiKey.findUniqueOrThrow({ where: { clientId: explicit.clientId } });

      const log = logger();
      expect(await bootstrapMerchant(prisma, explicit, log)).toBeNull();
      expect(await prisma.apiKey.findUniqueOrThrow({ where: { clientId: explicit.clientId } })).toEqual(revoked);
      expect(log.lines).toEqual([{ level: 'warn', obj: { client_id: explicit.clientId, merchant_id: revoked.merchantId }, msg: expect.stringMatching(/revoked key: it stays revoked/) }]);
      await expect(new Authenticator(prisma, 0).authenticate(basic(explicit.clientId, explicit.clientSecret))).rejects.toThrow(/credentials/);
    });
  });

  it("never changes a live merchant's key, secret or mode", async () => {
    await withDb(async (prisma) => {
      const live = await createMerchant(prisma, { name: 'Live Co', mode: 'live' });
      const before = await prisma.apiKey.findUniqueOrThrow({ where: { clientId: live.client_id }, include: { merchant: true } });
      const log = logger();
      const explicit = { clientId: live.client_id, clientSecret: `sk_test_${randomToken(24)}` };
      expect(await bootstrapMerchant(prisma, explicit, log)).toBeNull();
      expect(await prisma.apiKey.findUniqueOrThrow({ where: { clientId: live.client_id }, include: { merchant: true } })).toEqual(before);
      expect(log.lines).toEqual([{ level: 'warn', obj: { client_id: live.client_id, merchant_id: live.merchant_id }, msg: expect.stringMatching(/live-mode merchant/) }]);
      const auth = new Authenticator(prisma, 0);
      await expect(auth.authenticate(basic(live.client_id, explicit.clientSecret))).rejects.toThrow(/credentials/);
      expect((await auth.authenticate(basic(live.client_id, live.client_secret))).mode).toBe('live');
    });
  });

  it('never replaces the secret of an existing key', async () => {
    await withDb(async (prisma) => {
      const explicit = { clientId: uniqueId(), clientSecret: `sk_test_${randomToken(24)}` };
      await bootstrapMerchant(prisma, explicit);
      const before = await prisma.apiKey.findUniqueOrThrow({ where: { clientId: explicit.clientId } });
      const log = logger();
      const changed = { ...explicit, clientSecret: `sk_test_${randomToken(24)}` };
      expect(await bootstrapMerchant(prisma, changed, log)).toBeNull();
      expect(await prisma.apiKey.findUniqueOrThrow({ where: { clientId: explicit.clientId } })).toEqual(before);
      expect(log.lines).toEqual([{ level: 'warn', obj: { client_id: explicit.clientId, merchant_id: before.merchantId }, msg: expect.stringMatching(/does not match/) }]);
    });
  });
});

// `npm start` as a user runs it: embedded database in DATA_DIR, credentials printed once,
// the printed curl line works, a restart keeps the data and prints nothing new.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

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
    const port = String(20000 + Math.floor(Math.random() * 20000));
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
    expect(await s2.stop()).toBe(0);
  }, 120_000);

  it('ensures the bootstrap credentials from the environment and rejects bad configuration clearly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'billing-start-'));
    dirs.push(dir);
    const bad = start({ DATA_DIR: join(dir, 'data'), PORT: 'eighty' });
    await expect(bad.listening).rejects.toThrow(/PORT/);

    const port = String(20000 + Math.floor(Math.random() * 20000));
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
  }, 120_000);
});

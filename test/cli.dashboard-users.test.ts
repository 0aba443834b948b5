// The CLI while the server runs (docs/dashboard.md "Sign-in and sessions"): the real server as a
// child process on a temporary DATA_DIR (or, with TEST_DATABASE_URL, a PostgreSQL database of its
// own), its first-start banner with the bootstrap merchant's dashboard login, and every CLI
// command run against it — on the embedded database through the server's command socket, on
// PostgreSQL straight to the database — then a sign-in with the user the CLI created. Then the
// server stops and the CLI runs on its own (locally) against the same data.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownDatabase } from './helpers/own-database.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'billing-dash-cli-'));
const dataDir = join(dir, 'data');
const onPostgres = !!process.env.TEST_DATABASE_URL;
let database: { url: string; drop(): Promise<void> } | null = null;
let server: ChildProcess | null = null;
let stdout = '';
let stderr = '';
let base = '';

function env(): Record<string, string | undefined> {
  const e: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  delete e.BILLING_BOOTSTRAP_CLIENT_ID;
  delete e.BILLING_BOOTSTRAP_CLIENT_SECRET;
  delete e.PUBLIC_BASE_URL;
  if (database) e.DATABASE_URL = database.url;
  else delete e.DATABASE_URL;
  return e;
}

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: root, env: { ...env(), LOG_LEVEL: 'silent' }, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

async function startServer(): Promise<void> {
  const port = await freePort();
  base = `http://localhost:${port}`;
  stdout = '';
  stderr = '';
  server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: { ...env(), PORT: String(port) } });
  server.stdout!.on('data', (d) => (stdout += d));
  server.stderr!.on('data', (d) => (stderr += d));
  await new Promise<void>((resolve, reject) => {
    const t = setInterval(() => {
      if (stderr.includes('Listening on http')) {
        clearInterval(t);
        resolve();
      }
    }, 50);
    server!.once('exit', (code) => {
      clearInterval(t);
      reject(new Error(`server exited (${code}): ${stderr}`));
    });
  });
}

async function stopServer(): Promise<void> {
  const s = server;
  server = null;
  if (!s || s.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    s.once('exit', () => resolve());
    s.kill('SIGTERM');
  });
}

async function signIn(email: string, password: string): Promise<Response> {
  const send = () =>
    fetch(`${base}/dashboard/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ email, password }),
    });
  try {
    return await send();
  } catch (err) {
    // A kept-alive connection the server closed as idle just as it was reused (the CLI steps take
    // seconds): send again on a new one — the server itself must still be running.
    expect(server?.exitCode, stderr).toBeNull();
    if ((err as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw err;
    return send();
  }
}

beforeAll(async () => {
  if (onPostgres) database = await ownDatabase(process.env.TEST_DATABASE_URL!, 'dashcli');
  await startServer();
}, 120_000);
afterAll(async () => {
  await stopServer();
  rmSync(dir, { recursive: true, force: true });
  await database?.drop();
});

describe('first start', () => {
  it('prints the bootstrap merchant’s dashboard email and password once, on stderr only, and they sign in', async () => {
    const email = /^\s+email\s+(\S+)$/m.exec(stderr)?.[1];
    const password = /^\s+password\s+(\S+)$/m.exec(stderr)?.[1];
    expect(email).toBe('admin@localhost');
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(stderr).toContain(`${base}/dashboard`);
    expect(stdout).not.toContain(password!); // the JSON log stream never has it
    expect(stdout).toContain('dashboard user created');
    const r = await signIn(email!, password!);
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).merchant.name).toBe('Test merchant');
  });
});

describe('the CLI while the server runs', () => {
  it(onPostgres ? 'on PostgreSQL: opens the database itself' : 'on the embedded database: the server runs the commands (socket 0600 in DATA_DIR)', async () => {
    if (!onPostgres) {
      const sock = join(dataDir, 'billing.sock');
      expect(existsSync(sock)).toBe(true);
      expect(statSync(sock).mode & 0o777).toBe(0o600);
      // Garbage on the socket gets an error answer, and the server lives on.
      for (const line of ['not json\n', '{"argv":[1,2]}\n']) {
        const answer = await new Promise<string>((resolve, reject) => {
          let buf = '';
          const c = createConnection(sock, () => c.write(line));
          c.setEncoding('utf8');
          c.on('data', (d) => (buf += d));
          c.on('end', () => resolve(buf));
          c.on('error', reject);
        });
        expect(JSON.parse(answer)).toEqual({ code: 2, stdout: '', stderr: 'bad request\n' });
      }
    }
    const list = cli('merchant', 'list', '--json');
    expect(list.code, list.err).toBe(0);
    const merchants = JSON.parse(list.out);
    expect(merchants).toHaveLength(1);
    expect(merchants[0]).toMatchObject({ id: expect.stringMatching(/^mer_/), name: 'Test merchant', mode: 'test', client_ids: [expect.stringMatching(/^ck_/)] });
    expect(merchants[0].merchant_id).toBe(merchants[0].id);

    const acme = JSON.parse(cli('merchant', 'create', '--name', 'Acme', '--json').out);
    expect(acme.merchant_id).toMatch(/^mer_/);
    const created = cli('user', 'create', '--merchant-id', acme.merchant_id, '--email', 'Ops@Acme.example', '--password', 'a long enough password', '--json');
    expect(created.code, created.err).toBe(0);
    expect(JSON.parse(created.out)).toEqual({ user_id: expect.stringMatching(/^usr_/), email: 'ops@acme.example' });

    // Refused input: a clear message, a non-zero exit code, nothing created.
    const refusals: [string[], RegExp][] = [
      [['--merchant-id', acme.merchant_id, '--email', 'not-an-email', '--password', 'a long enough password'], /not an email address/],
      [['--merchant-id', acme.merchant_id, '--email', 'x@acme.example', '--password', 'too short'], /at least 12 characters/],
      [['--merchant-id', 'mer_doesnotexist00000000', '--email', 'x@acme.example', '--password', 'a long enough password'], /No such merchant/],
      [['--merchant-id', acme.merchant_id, '--email', 'OPS@acme.example', '--password', 'a long enough password'], /already exists/],
      [['--email', 'x@acme.example', '--password', 'a long enough password'], /--merchant-id/],
    ];
    for (const [args, message] of refusals) {
      const r = cli('user', 'create', ...args, '--json');
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.err, args.join(' ')).toMatch(message);
      expect(r.out).toBe('');
    }

    // The user signs in at once, to Acme.
    const r = await signIn('ops@acme.example', 'a long enough password');
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).merchant).toEqual({ id: acme.merchant_id, name: 'Acme', mode: 'test' });

    // Keys: created and revoked through the server; a revoked key stops working at once there.
    const key = JSON.parse(cli('key', 'create', '--merchant', acme.merchant_id, '--json').out);
    const basic = 'Basic ' + Buffer.from(`${key.client_id}:${key.client_secret}`).toString('base64');
    expect((await fetch(`${base}/v1/customers`, { headers: { authorization: basic } })).status).toBe(200);
    expect(cli('key', 'revoke', key.client_id).code).toBe(0);
    if (!onPostgres) expect((await fetch(`${base}/v1/customers`, { headers: { authorization: basic } })).status).toBe(401);
    expect(cli('key', 'revoke', key.client_id).code).toBe(1);

    const migrate = cli('db', 'migrate');
    expect(migrate.code).toBe(0);
    expect(migrate.out).toContain(onPostgres ? 'database is up to date' : 'already migrated by the running server');
    expect(cli('user', 'explode').code).toBe(2);
    // The command line (with its password) is never logged by the server.
    expect(stdout).not.toContain('a long enough password');
  }, 120_000);
});

describe('the CLI without a server', () => {
  it('runs locally on the same data; the server started again signs the new user in', async () => {
    await stopServer();
    expect(existsSync(join(dataDir, 'billing.sock'))).toBe(false);
    const merchants = JSON.parse(cli('merchant', 'list', '--json').out);
    const acme = merchants.find((m: any) => m.name === 'Acme');
    const created = cli('user', 'create', '--merchant-id', acme.id, '--email', 'second@acme.example', '--password', 'another long password', '--json');
    expect(created.code, created.err).toBe(0);
    const migrate = cli('db', 'migrate');
    expect(migrate.out).toContain('database is up to date');
    await startServer();
    expect(stderr).not.toContain('Sign in to the dashboard'); // no second banner
    const r = await signIn('second@acme.example', 'another long password');
    expect(r.status).toBe(200);
  }, 120_000);
});

// `npm start` as a developer meets it (issue 24, "the first hour"): the real server as its own
// process, on an empty database. The first start prints the bootstrap merchant's credentials and
// the links on stderr (for the person at the terminal); stdout carries JSON log lines only, and
// never the secret. A restart prints the links again, and no secret. The links use the configured
// origin (PUBLIC_BASE_URL), and the printed credentials work.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVICE_LINKS } from '../src/server/landing.ts';
import { ownDatabase } from './helpers/own-database.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'billing-first-hour-'));
const database = process.env.TEST_DATABASE_URL ? ownDatabase(process.env.TEST_DATABASE_URL, 'firsthour') : null;
const ORIGIN = 'https://billing.example.test';
const children: ChildProcess[] = [];

afterAll(async () => {
  // `npm start` runs in its own process group (npm, its shell, the server): all of it goes.
  for (const c of children) (c.spawnargs[0] === 'npm' && c.pid ? process.kill(-c.pid, 'SIGKILL') : c.kill('SIGKILL'));
  rmSync(dir, { recursive: true, force: true });
  await (await database)?.drop();
});

interface Started {
  child: ChildProcess;
  /** the address it listens on (the printed "Listening on …") */
  url: string;
  out: { stdout: string; stderr: string };
}

/** The server as `node --import tsx src/main.ts` (the image's CMD), or through `npm start --silent`. */
async function start(how: 'node' | 'npm' = 'node'): Promise<Started> {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: join(dir, 'data'), PORT: '0', PUBLIC_BASE_URL: ORIGIN, LOG_LEVEL: 'info' };
  delete env.BILLING_BOOTSTRAP_CLIENT_ID;
  delete env.BILLING_BOOTSTRAP_CLIENT_SECRET;
  delete env.DATABASE_URL;
  if (database) env.DATABASE_URL = (await database).url;
  const child =
    how === 'npm'
      ? spawn('npm', ['start', '--silent'], { cwd: root, env, detached: true })
      : spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env });
  children.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => (out.stdout += d));
  child.stderr!.on('data', (d: Buffer) => (out.stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setInterval(() => {
      // The whole start block is one write: wait for its last link — and for the JSON log line
      // written on stdout just before it (two pipes: their data need not arrive in write order).
      const m = /Listening on (http:\/\/[^ ]+) [\s\S]*\/readyz\n/.exec(out.stderr);
      if (m && out.stdout.includes('"msg":"billing service listening"')) {
        clearInterval(t);
        resolve(m[1]!);
      }
    }, 50);
    child.on('exit', (code) => {
      clearInterval(t);
      reject(new Error(`server exited (${code}): ${out.stdout}${out.stderr}`));
    });
  });
  return { child, url, out };
}

async function stop(s: Started) {
  const exited = new Promise((r) => s.child.once('exit', r));
  if (s.child.spawnargs[0] === 'npm' && s.child.pid) process.kill(-s.child.pid, 'SIGTERM');
  else s.child.kill('SIGTERM');
  await exited;
}

/** Every line of stdout is a JSON log line of the service. */
function expectOnlyJsonLogs(stdout: string) {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    let entry: any;
    expect(() => (entry = JSON.parse(line)), line).not.toThrow();
    expect(entry.service, line).toBe('billing');
  }
}

function expectLinks(stderr: string) {
  expect(stderr).toContain(`Start here`);
  expect(stderr).toMatch(new RegExp(`Start here +${ORIGIN}/\\n`));
  for (const l of SERVICE_LINKS) expect(stderr).toMatch(new RegExp(`${l.label} +${ORIGIN.replaceAll('.', '\\.')}${l.path}\\n`));
}

describe('npm start: the banner on stderr, JSON logs on stdout', () => {
  let secret = '';
  let clientId = '';
  let password = '';

  it('first start: credentials and links on stderr only; stdout is JSON without the secret', { timeout: 60_000 }, async () => {
    const s = await start();
    const { stdout, stderr } = s.out;
    expect(stderr).toContain('A test-mode merchant was created. Its secret is shown only this once:');
    clientId = /client_id +(ck_\w+)/.exec(stderr)?.[1] ?? '';
    secret = /client_secret +(sk_test_\w+)/.exec(stderr)?.[1] ?? '';
    expect(clientId).toMatch(/^ck_[0-9A-Za-z]{22}$/);
    expect(secret).toMatch(/^sk_test_\w{20,}$/);
    // The ready curl line uses the configured origin.
    expect(stderr).toContain(`curl -u ${clientId}:${secret} ${ORIGIN}/v1/customers`);
    // Credentials first, then where it listens and the links.
    expect(stderr.indexOf('client_secret')).toBeLessThan(stderr.indexOf('Listening on'));
    expectLinks(stderr);
    // No log line on stderr, no banner on stdout.
    expect(stderr).not.toContain('"level"');
    expectOnlyJsonLogs(stdout);
    expect(stdout).not.toContain(secret);
    expect(stdout).not.toContain('shown only this once');
    // The dashboard sign-in printed once with it: its password on stderr only.
    password = /^ +password +(\S+)$/m.exec(stderr)?.[1] ?? '';
    expect(password.length).toBeGreaterThanOrEqual(12);
    expect(stdout).not.toContain(password);
    expect(stdout).toContain('"msg":"test merchant created"');

    // The printed credentials work, and the landing page is there.
    const auth = 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64');
    const list = await fetch(`${s.url}/v1/customers`, { headers: { authorization: auth } });
    expect(list.status).toBe(200);
    const landing = await fetch(`${s.url}/`);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain('href="/docs"');
    await stop(s);
    expect(s.out.stdout).not.toContain(secret);
  });

  it('a restart prints the links again, and no secret anywhere', { timeout: 60_000 }, async () => {
    expect(secret).not.toBe('');
    const s = await start();
    const { stdout, stderr } = s.out;
    expectLinks(stderr);
    expect(stderr).not.toContain(secret);
    expect(stderr).not.toContain(password);
    expect(stderr).not.toContain('client_secret');
    expect(stderr).not.toContain('A test-mode merchant was created');
    expectOnlyJsonLogs(stdout);
    expect(stdout).not.toContain(secret);
    await stop(s);
  });

  it('`npm start --silent`, what README says to pipe: stdout is JSON log lines only (plain `npm start` adds npm\'s lines)', { timeout: 120_000 }, async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain("the server's\nstdout carries only the JSON log lines");
    expect(readme).toContain('run `npm start --silent`');
    const s = await start('npm');
    const { stdout, stderr } = s.out;
    expectLinks(stderr);
    expect(stdout).not.toMatch(/^> open-billing@/m);
    expectOnlyJsonLogs(stdout);
    await stop(s);
  });
});

// Several instances started at once on one empty PostgreSQL database (issue 26, "Several
// instances"): they migrate it once and create one bootstrap merchant between them — the first
// start's banner with its credentials is printed by exactly one of them. (PostgreSQL only: the
// embedded database belongs to one process.)
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ownDatabase } from './helpers/own-database.ts';

const root = join(import.meta.dirname, '..');
const children: ChildProcess[] = [];
let drop: (() => Promise<void>) | undefined;
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 200));
  await drop?.();
});

function start(url: string): Promise<string> {
  const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'warn' };
  delete env.BILLING_BOOTSTRAP_CLIENT_ID;
  delete env.BILLING_BOOTSTRAP_CLIENT_SECRET;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const t = setInterval(() => {
      if (out.includes('Listening on http')) {
        clearInterval(t);
        resolve(out);
      }
    }, 50);
    child.on('exit', (code) => {
      clearInterval(t);
      reject(new Error(`instance exited with ${code}: ${out}`));
    });
  });
}

describe.skipIf(!process.env.TEST_DATABASE_URL)('three instances started at once on an empty database', () => {
  it('create one bootstrap merchant, printed by one of them', async () => {
    const db = await ownDatabase(process.env.TEST_DATABASE_URL!, 'instances');
    drop = db.drop;
    const outputs = await Promise.all([start(db.url), start(db.url), start(db.url)]);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const { rows } = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM merchants');
      expect(rows[0]!.n).toBe(1);
      const { rows: keys } = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys');
      expect(keys[0]!.n).toBe(1);
    } finally {
      await c.end();
    }
    const printed = outputs.filter((o) => /client_secret|sk_test_/.test(o));
    expect(printed, outputs.join('\n-----\n')).toHaveLength(1);
  }, 120_000);
});

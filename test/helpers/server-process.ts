// The real server (`src/main.ts`) as its own process, for crash tests: started on a port with a
// data directory (or, when TEST_DATABASE_URL is set, a PostgreSQL database of its own next to it,
// shared by every start of this set), SIGKILLable, and stopped with the test file. DEBUG_CHILD=1
// echoes its output.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownDatabase } from './own-database.ts';

const root = join(import.meta.dirname, '..', '..');

export interface ServerProcesses {
  /** Starts the server on `port` (with `extra` settings on top of the set's); resolves once it listens. */
  start(port: number, extra?: Record<string, string>): Promise<ChildProcess>;
  /** Basic credentials of the bootstrap merchant. */
  auth: string;
  /** The PostgreSQL database every start of this set uses (undefined on the embedded database). */
  databaseUrl(): Promise<string | undefined>;
  /** Kills every process started and removes the data directory (and the database). */
  cleanup(): Promise<void>;
}

export function serverProcesses(name: string, env: Record<string, string>): ServerProcesses {
  const dir = mkdtempSync(join(tmpdir(), `billing-${name}-`));
  const children: ChildProcess[] = [];
  const ck = `ck_${name.replace(/[^A-Za-z0-9]/g, '')}_0001`;
  const sk = `sk_${name.replace(/[^A-Za-z0-9]/g, '')}_secret_0000000000001`;
  const database = process.env.TEST_DATABASE_URL ? ownDatabase(process.env.TEST_DATABASE_URL, name) : null;
  return {
    auth: 'Basic ' + Buffer.from(`${ck}:${sk}`).toString('base64'),
    databaseUrl: async () => (await database)?.url,
    async cleanup() {
      for (const c of children) c.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 200));
      await (await database)?.drop();
    },
    async start(port, extra = {}) {
      const full: Record<string, string | undefined> = {
        ...process.env,
        DATA_DIR: join(dir, 'data'),
        PORT: String(port),
        BILLING_BOOTSTRAP_CLIENT_ID: ck,
        BILLING_BOOTSTRAP_CLIENT_SECRET: sk,
        ...env,
        ...extra,
      };
      if (database) full.DATABASE_URL = (await database).url;
      else delete full.DATABASE_URL;
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: full });
      children.push(child);
      let out = '';
      const collect = (d: Buffer) => {
        out += d;
        if (process.env.DEBUG_CHILD) process.stderr.write(d);
      };
      child.stdout!.on('data', collect);
      child.stderr!.on('data', collect);
      return new Promise<ChildProcess>((resolve, reject) => {
        const t = setInterval(() => {
          if (out.includes('Listening on http')) {
            clearInterval(t);
            resolve(child);
          }
        }, 50);
        child.on('exit', (code) => {
          clearInterval(t);
          reject(new Error(`server exited (${code}): ${out}`));
        });
      });
    },
  };
}

/** A JSON client of a server process at `base`: one request, and every page of a list. */
export function processClient(base: string, auth: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(base + path, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as any };
  };
  return { call, all: (path: string) => allPages(call, path) };
}

/** Every row of a list endpoint, a page of 100 at a time, through a client's `call`. */
export async function allPages(call: (method: string, path: string) => Promise<{ body: any }>, path: string): Promise<any[]> {
  const out: any[] = [];
  for (let after: string | null = null; ; ) {
    const page: any = (await call('GET', `${path}${path.includes('?') ? '&' : '?'}limit=100${after ? `&after=${after}` : ''}`)).body;
    out.push(...page.data);
    if (!page.has_more) return out;
    after = page.next_cursor;
  }
}

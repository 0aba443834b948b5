// A PostgreSQL database of its own, next to TEST_DATABASE_URL, for tests that start the real
// server as a process: its job worker serves every merchant of its database, so on the shared
// test database it would also deliver other test files' webhooks and run their jobs (and break
// their per-process limits). Dropped again by `drop()`.
import pg from 'pg';
import { randomToken } from '../../src/platform/ids.ts';

export async function ownDatabase(base: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const db = `${new URL(base).pathname.slice(1) || 'test'}_${name.replace(/[^a-z0-9]/gi, '').toLowerCase()}_${randomToken(6).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${db}"`);
  await admin.end();
  const u = new URL(base);
  u.pathname = `/${db}`;
  return {
    url: u.toString(),
    async drop() {
      const a = new pg.Client({ connectionString: base });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`).catch(() => {});
      await a.end();
    },
  };
}

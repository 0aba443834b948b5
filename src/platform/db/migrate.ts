// Applies prisma/migrations/*/migration.sql in name order, each inside its own transaction,
// under a PostgreSQL advisory lock so that several starting processes never race. Applied
// migrations are recorded (name + sha256) in _app_migrations; a migration whose file changed
// after it was applied stops the start with a clear message. Same code for PGlite and PostgreSQL.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from './index.ts';

export const MIGRATIONS_DIR = join(import.meta.dirname, '..', '..', '..', 'prisma', 'migrations');
const LOCK_ID = 7_220_431_101; // arbitrary, fixed: "billing migrations"

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

export class MigrationError extends Error {}

export async function migrate(db: Database, dir = MIGRATIONS_DIR): Promise<{ applied: string[] }> {
  const migrations = loadMigrations(dir);
  return db.withConnection(async (query, exec) => {
    await query('SELECT pg_advisory_lock($1)', [LOCK_ID]);
    try {
      await exec(`CREATE TABLE IF NOT EXISTS _app_migrations (
        name text PRIMARY KEY,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const done = new Map((await query<{ name: string; checksum: string }>('SELECT name, checksum FROM _app_migrations')).map((r) => [r.name, r.checksum]));
      const applied: string[] = [];
      for (const m of migrations) {
        const prev = done.get(m.name);
        if (prev !== undefined) {
          if (prev !== m.checksum) {
            throw new MigrationError(`Migration ${m.name} was changed after it was applied (checksum mismatch). Add a new migration instead of editing an applied one.`);
          }
          continue;
        }
        await exec('BEGIN');
        try {
          await exec(m.sql);
          await query('INSERT INTO _app_migrations (name, checksum) VALUES ($1, $2)', [m.name, m.checksum]);
          await exec('COMMIT');
        } catch (err) {
          await exec('ROLLBACK');
          throw new MigrationError(`Migration ${m.name} failed: ${(err as Error).message}`);
        }
        applied.push(m.name);
      }
      return { applied };
    } finally {
      await query('SELECT pg_advisory_unlock($1)', [LOCK_ID]);
    }
  });
}

/** Names of migrations on disk that the database has not applied (for /readyz). */
export async function pendingMigrations(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  const rows = await db.query<{ name: string }>('SELECT name FROM _app_migrations');
  const done = new Set(rows.map((r) => r.name));
  return loadMigrations(dir)
    .map((m) => m.name)
    .filter((n) => !done.has(n));
}

// Offline access to Prisma's schema engine (the WebAssembly build), used to author migration SQL
// and to prove that prisma/schema.prisma and prisma/migrations agree. The engine replays the
// migrations on an in-memory PGlite "shadow database" and diffs the result against the schema.
// Development tooling only: the server applies migrations with src/platform/db/migrate.ts.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';

const require = createRequire(import.meta.url);
export const root = join(import.meta.dirname, '..', '..');
export const schemaPath = join(root, 'prisma', 'schema.prisma');
export const migrationsDir = join(root, 'prisma', 'migrations');

type Engine = { diff(params: unknown): Promise<{ exitCode: number; stdout: string }> };

async function loadEngine(schemaText: string): Promise<Engine> {
  const bg: any = await import('@prisma/schema-engine-wasm/schema_engine_bg');
  const wasmPath = require.resolve('@prisma/schema-engine-wasm').replace(/schema_engine\.js$/, 'schema_engine_bg.wasm');
  const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath), { './schema_engine_bg.js': bg });
  bg.__wbg_set_wasm(instance.exports);
  (instance.exports as any).__wbindgen_start?.();
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPGlite(new PGlite()) as any);
  return bg.SchemaEngine.new({ datamodels: [[schemaPath, schemaText]] }, () => {}, adapter);
}

export function readMigrations(): { name: string; sql: string }[] {
  if (!existsSync(migrationsDir)) return [];
  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(migrationsDir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(migrationsDir, name, 'migration.sql'), 'utf8') }));
}

/**
 * SQL that takes a database built by the existing migrations to what schema.prisma describes.
 * `empty` is true when the two already agree.
 */
export async function diffMigrationsToSchema(): Promise<{ sql: string; empty: boolean }> {
  const schemaText = readFileSync(schemaPath, 'utf8');
  const engine = await loadEngine(schemaText);
  const migrations = readMigrations();
  const lockPath = join(migrationsDir, 'migration_lock.toml');
  const from =
    migrations.length === 0
      ? { tag: 'empty' }
      : {
          tag: 'migrations',
          baseDir: migrationsDir,
          shadowDbInitScript: '',
          lockfile: { path: 'migration_lock.toml', content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : 'provider = "postgresql"\n' },
          migrationDirectories: migrations.map((m) => ({
            path: m.name,
            migrationFile: { path: 'migration.sql', content: { tag: 'ok', value: m.sql } },
          })),
        };
  const r = await engine.diff({
    from,
    to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: schemaText }] },
    script: true,
    exitCode: true,
    filters: { externalTables: [], externalEnums: [] },
  });
  const sql = r.stdout.trim();
  return { sql, empty: r.exitCode === 0 || sql === '' || sql === '-- This is an empty migration.' };
}

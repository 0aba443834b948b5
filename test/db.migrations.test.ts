// The schema and its migrations: they agree (drift check with Prisma's schema engine, offline),
// the runner is idempotent and refuses edited migrations, and tenancy covers every merchant table.
import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffMigrationsToSchema } from '../scripts/lib/schema-engine.ts';
import { getDatamodel } from '../src/generated/pothos-types.ts';
import { openDatabase, type Database } from '../src/platform/db/index.ts';
import { loadMigrations, migrate, MigrationError, MIGRATIONS_DIR, pendingMigrations } from '../src/platform/db/migrate.ts';
import { CROSS_MERCHANT_MODELS, forMerchant, TENANT_MODELS, TenancyViolation } from '../src/platform/db/tenant.ts';

const open: Database[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const d of open) await d.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function freshDb() {
  const db = await openDatabase({ dataDir: null });
  open.push(db);
  return db;
}

describe('migrations', () => {
  it('prisma/schema.prisma and prisma/migrations agree (run `npm run migration:new -- <name>` after a schema change)', async () => {
    const { empty, sql } = await diffMigrationsToSchema();
    expect(sql === '' || sql.includes('empty migration') ? '' : sql).toBe('');
    expect(empty).toBe(true);
  }, 60_000);

  it('applies every migration once, records its checksum, and a second run applies nothing', async () => {
    const db = await freshDb();
    const files = loadMigrations();
    expect(files.length).toBeGreaterThan(0);
    const first = await migrate(db);
    expect(first.applied).toEqual(files.map((m) => m.name));
    expect((await migrate(db)).applied).toEqual([]);
    expect(await pendingMigrations(db)).toEqual([]);
    const rows = await db.query<{ name: string; checksum: string }>('SELECT name, checksum FROM _app_migrations ORDER BY name');
    expect(rows).toEqual(files.map((m) => ({ name: m.name, checksum: m.checksum })));
    for (const r of rows) expect(r.checksum).toMatch(/^[0-9a-f]{64}$/);
    const tables = (await db.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")).map((r) => r.table_name);
    for (const t of ['merchants', 'api_keys', 'customers', 'events', 'idempotency_keys', 'jobs', 'payments', 'refunds', 'wallets', 'wallet_transactions']) {
      expect(tables).toContain(t);
    }
  });

  it('refuses to start when an applied migration was edited, and rolls back a failing one', async () => {
    const db = await freshDb();
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    dirs.push(dir);
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    await migrate(db, dir);
    const first = loadMigrations(dir)[0]!;
    writeFileSync(join(dir, first.name, 'migration.sql'), readFileSync(join(dir, first.name, 'migration.sql'), 'utf8') + '\n-- edited\n');
    await expect(migrate(db, dir)).rejects.toThrow(MigrationError);
    await expect(migrate(db, dir)).rejects.toThrow(/checksum/);

    const db2 = await freshDb();
    const dir2 = mkdtempSync(join(tmpdir(), 'migrations-'));
    dirs.push(dir2);
    cpSync(MIGRATIONS_DIR, dir2, { recursive: true });
    cpSync(join(dir2, first.name), join(dir2, '99999999999999_broken'), { recursive: true });
    writeFileSync(join(dir2, '99999999999999_broken', 'migration.sql'), 'CREATE TABLE half_done (id int);\nSELECT no_such_function();\n');
    await expect(migrate(db2, dir2)).rejects.toThrow(/99999999999999_broken failed/);
    expect(await db2.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'")).toEqual([]);
    expect(await pendingMigrations(db2, dir2)).toEqual(['99999999999999_broken']);
  });
});

describe('tenancy', () => {
  it('every model with a merchantId is scoped, and every scoped model exists', () => {
    const models = getDatamodel().datamodel.models;
    const owned = Object.entries(models)
      .filter(([name, m]) => m.fields.some((f) => f.name === 'merchantId') && !CROSS_MERCHANT_MODELS.has(name))
      .map(([name]) => name)
      .sort();
    expect([...TENANT_MODELS].sort()).toEqual(owned);
  });

  it('a merchant-scoped client cannot see or change another merchant’s rows', async () => {
    const db = await freshDb();
    await migrate(db);
    const p = db.prisma;
    await p.merchant.createMany({ data: [{ id: 'mer_A000000000000000000000', name: 'A' }, { id: 'mer_B000000000000000000000', name: 'B' }] });
    await p.customer.create({ data: { id: 'cus_B000000000000000000001', merchantId: 'mer_B000000000000000000000', email: 'b@example.com' } });
    const a = forMerchant(p, 'mer_A000000000000000000000');
    const id = 'cus_B000000000000000000001';
    expect(await a.customer.findUnique({ where: { id } })).toBeNull();
    expect(await a.customer.findFirst({ where: { email: 'b@example.com' } })).toBeNull();
    expect(await a.customer.findMany()).toEqual([]);
    expect(await a.customer.count()).toBe(0);
    expect((await a.customer.updateMany({ where: { id }, data: { name: 'x' } })).count).toBe(0);
    await expect(a.customer.update({ where: { id }, data: { name: 'x' } })).rejects.toThrow();
    expect((await a.customer.deleteMany({ where: { id } })).count).toBe(0);
    await expect(
      a.customer.create({ data: { id: 'cus_X000000000000000000001', merchantId: 'mer_B000000000000000000000', email: 'x@example.com' } }),
    ).rejects.toThrow(TenancyViolation);
    expect((await p.customer.findUniqueOrThrow({ where: { id } })).name).toBeNull();
    const b = forMerchant(p, 'mer_B000000000000000000000');
    expect((await b.customer.findUnique({ where: { id } }))?.email).toBe('b@example.com');
  });
});

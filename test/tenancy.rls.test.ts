// Tenancy by construction: statements run for a merchant see and change only that merchant's
// rows, on every access path, even when they leave the merchant filter out, OR it away, hide it in
// a comment or join another table unfiltered. PostgreSQL's row-level security holds them
// (migration 20261127120000_tenant_row_security); Prisma's model API adds the filter besides.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forMerchant, inTransaction, TenancyViolation, type TenantDb } from '../src/platform/db/tenant.ts';
import { inRawTransaction, merchantSql, rawQuery, rawQueryOf, tryRawTransaction } from '../src/platform/db/raw.ts';
import { startApp, usingPostgres, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let a: Client;
let b: Client;
let dbA: TenantDb;
let dbB: TenantDb;
const A = () => a.creds.merchant_id;
const B = () => b.creds.merchant_id;

beforeAll(async () => {
  app = await startApp({}, { worker: false });
  a = await app.merchant({ name: 'A' });
  b = await app.merchant({ name: 'B' });
  for (const [api, n] of [[a, 3], [b, 2]] as const) {
    for (let i = 0; i < n; i++) {
      const c = (await api.post('/v1/customers', { email: `c${i}@example.com` })).body;
      const p = await api.post('/v1/payments', { amount: 500, currency: 'USD', customer_id: c.id, redirect_url: 'https://shop.example/done' });
      expect(p.status, JSON.stringify(p.body)).toBe(201);
    }
  }
  dbA = forMerchant(app.services.db.prisma, A());
  dbB = forMerchant(app.services.db.prisma, B());
});
afterAll(() => app?.close());

const UNFILTERED = [
  'SELECT merchant_id FROM customers',
  'SELECT merchant_id FROM customers WHERE merchant_id = $1 OR true',
  'SELECT merchant_id FROM customers /* WHERE merchant_id = $1 */',
  'SELECT p.merchant_id FROM customers c JOIN payments p ON p.customer_id = c.id',
  'SELECT m.id AS merchant_id FROM merchants m',
  'SELECT e.merchant_id FROM events e',
];

/** Every row's merchant, for each unfiltered statement, through `run`. */
async function seen(run: (sql: string, params: unknown[]) => Promise<{ merchantId: string }[]>): Promise<string[]> {
  const merchants = new Set<string>();
  for (const sql of UNFILTERED) {
    const rows = await run(sql, sql.includes('= $1 OR') ? [A()] : []);
    expect(rows.length, sql).toBeGreaterThan(0);
    for (const r of rows) merchants.add(r.merchantId);
  }
  return [...merchants];
}

describe('row-level security under every access path', () => {
  it('raw SQL on the pool: one merchant after another on the same connections', async () => {
    for (let round = 0; round < 3; round++) {
      expect(await seen((sql, p) => rawQuery(dbA)(sql, p))).toEqual([A()]);
      expect(await seen((sql, p) => rawQuery(dbB)(sql, p.length ? [B()] : []))).toEqual([B()]);
    }
    expect(await seen((sql, p) => rawQueryOf(dbA)(sql, p))).toEqual([A()]);
    // merchantSql binds $1 itself: the statement's own parameter list starts at $2.
    const rows = await merchantSql(rawQuery(dbA), A())<{ merchantId: string }>('SELECT merchant_id FROM customers WHERE merchant_id = $1 OR true');
    expect(new Set(rows.map((r) => r.merchantId))).toEqual(new Set([A()]));
  });

  it('raw transactions and Prisma transactions, raw statements and models', async () => {
    expect(await inRawTransaction(dbA, async (tx) => seen((sql, p) => tx.raw(sql, p)))).toEqual([A()]);
    if (usingPostgres) {
      expect(await tryRawTransaction(dbA, (handle) => seen((sql, p) => rawQuery(handle)(sql, p)))).toEqual([A()]);
    }
    expect(
      await inTransaction(dbA, (tx) => seen(async (sql, p) => (await (tx as any).$queryRawUnsafe(sql, ...p)).map((r: any) => ({ merchantId: r.merchant_id })))),
    ).toEqual([A()]);
    const models = await inTransaction(dbA, async (tx) => [...(await tx.customer.findMany({})), ...(await tx.payment.findMany({}))]);
    expect(new Set(models.map((r) => r.merchantId))).toEqual(new Set([A()]));
    expect(models).toHaveLength(6);
    const outside = [...(await dbA.customer.findMany({})), ...(await dbA.event.findMany({}))];
    expect(new Set(outside.map((r) => r.merchantId))).toEqual(new Set([A()]));
  });

  it("Prisma's model calls outside a transaction run under row-level security too: models the client does not filter, and relations", async () => {
    // Merchant and ApiKey get no merchant filter from the scoped client (they are not TENANT_MODELS):
    // only row-level security keeps the other merchant out.
    expect((await dbA.merchant.findMany({})).map((m) => m.id)).toEqual([A()]);
    expect(new Set((await dbA.apiKey.findMany({})).map((k) => k.merchantId))).toEqual(new Set([A()]));
    expect(await dbA.merchant.count({ where: { id: B() } })).toBe(0);
    // A relation read from a record of the merchant's: B's customers are not reached through it.
    const [m] = await dbA.merchant.findMany({ include: { customers: true } });
    expect(new Set(m!.customers.map((c) => c.merchantId))).toEqual(new Set([A()]));
    // Writes: an update of another merchant's row through a model the filter does not cover changes nothing.
    expect((await dbA.merchant.updateMany({ where: { id: B() }, data: { name: 'taken by A' } })).count).toBe(0);
    // The unscoped client (system work) still sees both.
    expect((await app.services.db.prisma.merchant.findMany({ where: { id: { in: [A(), B()] } } })).length).toBe(2);
  });

  it("refuses a write that sets another merchant through a merchant's client, by id or through the relation", async () => {
    const data = { id: 'cus_forged_by_relation', email: 'x@example.com', createdAt: new Date(), updatedAt: new Date() };
    await expect(dbA.customer.create({ data: { ...data, merchant: { connect: { id: B() } } } } as never)).rejects.toBeInstanceOf(TenancyViolation);
    await expect(dbA.customer.create({ data: { ...data, merchantId: B() } } as never)).rejects.toBeInstanceOf(TenancyViolation);
    await expect(dbA.customer.updateMany({ data: { merchantId: B() } })).rejects.toBeInstanceOf(TenancyViolation);
    await expect(dbA.customer.updateMany({ data: { merchant: { connect: { id: B() } } } } as never)).rejects.toBeInstanceOf(TenancyViolation);
    await expect(
      dbA.customer.upsert({ where: { id: 'cus_forged_by_relation' }, create: { ...data, merchantId: A() }, update: { merchantId: B() } } as never),
    ).rejects.toBeInstanceOf(TenancyViolation);
    expect(await rawQueryOf(app.services.db.prisma)("SELECT id FROM customers WHERE id = 'cus_forged_by_relation'")).toEqual([]);
  });

  it("refuses Prisma's raw methods on a merchant's client outside a transaction", async () => {
    await expect(dbA.$queryRawUnsafe('SELECT merchant_id FROM customers')).rejects.toBeInstanceOf(TenancyViolation);
    await expect(dbA.$executeRawUnsafe('UPDATE customers SET name = name')).rejects.toBeInstanceOf(TenancyViolation);
    await expect(dbA.$queryRaw`SELECT merchant_id FROM customers`).rejects.toBeInstanceOf(TenancyViolation);
  });

  it("writes: an unfiltered UPDATE changes the merchant's rows only; another merchant's row cannot be written", async () => {
    const before = await rawQueryOf(app.services.db.prisma)<{ merchantId: string; name: string | null }>(
      'SELECT merchant_id, name FROM customers WHERE merchant_id = ANY($1)',
      [[A(), B()]],
    );
    const changed = await rawQuery(dbA)<{ merchantId: string }>("UPDATE customers SET name = 'renamed by A' RETURNING merchant_id");
    expect(changed.map((r) => r.merchantId)).toEqual([A(), A(), A()]);
    const bRows = await rawQuery(dbB)<{ name: string | null }>('SELECT name FROM customers');
    expect(bRows.map((r) => r.name)).toEqual(before.filter((r) => r.merchantId === B()).map((r) => r.name));
    const deleted = await inRawTransaction(dbA, (tx) => tx.raw("DELETE FROM customers WHERE email = 'nobody@example.com' OR true RETURNING id").then(() => 'ran'), {
      retryOn: () => false,
    }).catch((e: Error) => e.message);
    // Deleting A's customers is refused by their payments' foreign keys, B's are never reached.
    expect(typeof deleted).toBe('string');
    expect(await rawQuery(dbB)('SELECT id FROM customers')).toHaveLength(2);
    await expect(
      rawQuery(dbA)("INSERT INTO customers (id, merchant_id, email, created_at, updated_at) VALUES ('cus_forged', $1, 'x@example.com', now(), now())", [B()]),
    ).rejects.toThrow(/row-level security/);
    await expect(inTransaction(dbA, (tx) => (tx as any).$executeRawUnsafe("UPDATE customers SET merchant_id = $1", B()))).rejects.toThrow(/row-level security/);
  });

  it('system work (the unscoped client) sees every merchant', async () => {
    const rows = await rawQueryOf(app.services.db.prisma)<{ merchantId: string }>('SELECT DISTINCT merchant_id FROM customers WHERE merchant_id = ANY($1)', [[A(), B()]]);
    expect(new Set(rows.map((r) => r.merchantId))).toEqual(new Set([A(), B()]));
  });

  it('every table with merchant_id (and merchants) forces row-level security with the policy; statements run as billing_tenant', async () => {
    const tables = await app.services.db.query<{ relname: string; forced: boolean; policy: boolean }>(
      `SELECT c.relname, c.relrowsecurity AND c.relforcerowsecurity AS forced,
              EXISTS (SELECT 1 FROM pg_policies p WHERE p.tablename = c.relname AND p.policyname = 'tenant_isolation') AS policy
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relkind = 'r'
         AND (c.relname = 'merchants' OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'merchant_id' AND NOT a.attisdropped))`,
    );
    expect(tables.length).toBeGreaterThanOrEqual(21);
    for (const t of tables) expect(t, t.relname).toMatchObject({ forced: true, policy: true });
    const [who] = await rawQuery(dbA)<{ currentUser: string }>('SELECT current_user');
    expect(who!.currentUser).toBe('billing_tenant');
  });
});

describe.runIf(usingPostgres)('a raw-pool connection lost mid-transaction', () => {
  it('fails that transaction only: the process lives on and the next statements get a good connection', async () => {
    const err = await inRawTransaction(dbA, async (tx) => {
      const [row] = await tx.raw<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await rawQueryOf(app.services.db.prisma)('SELECT pg_terminate_backend($1)', [row!.pid]);
      await new Promise((r) => setTimeout(r, 200));
      await tx.raw('SELECT 1');
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    for (let i = 0; i < 12; i++) expect(await seen((sql, p) => rawQuery(dbA)(sql, p))).toEqual([A()]);
  });
});

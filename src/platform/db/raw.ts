// Raw SQL for the hot paths (issue 14: a Prisma model query costs ~0.4 ms of CPU, the same
// statement through pg ~0.1 ms). Domain code that needs it gets a `RawQuery` bound to where it
// runs: the caller's Prisma transaction ($queryRawUnsafe, so it joins it), a transaction of our
// own on one pooled pg connection (BEGIN … COMMIT), or the pool for a single statement.
//
// Rows come back with camelCase keys (the Prisma field names: every column is the snake_case of
// its field, a unit test checks it), int8 as bigint, timestamps as Date and json parsed, so they
// have the shape of Prisma's model types and the same *ToJSON functions serialise them.
//
// Tenancy: every statement runs under PostgreSQL row-level security for the merchant of the client
// it was given (`billing.merchant_id`, see the migration 20261127120000_tenant_row_security): on the
// raw pool the connection carries the merchant's setting, in a Prisma transaction it was SET LOCAL
// when the transaction began. A statement that forgets its filter, or ORs it away, still sees that
// merchant's rows only. The unscoped client is system work (job claims, authentication): no setting,
// every merchant. `merchantSql` binds the merchant's id as $1 for the statement's own filter.
import { getDatamodel } from '../../generated/pothos-types.ts';
import { isRetryableConflict } from '../errors.ts';
import {
  afterCommit as afterCommitOf,
  baseClientOf,
  inTransaction,
  isGuarded,
  isTransaction,
  merchantOf,
  NeedsPrisma,
  rawTransactionHandle,
  type Db,
  type TenantTx,
  type TransactionOptions,
} from './tenant.ts';

export type Row = Record<string, unknown>;
export type RawQuery = <T = Row>(text: string, params?: readonly unknown[]) => Promise<T[]>;

/**
 * What a database offers besides Prisma (registered by openDatabase for its client), for one
 * merchant's rows (row-level security) or, with '', for system work over every merchant.
 */
export interface RawBackend {
  /** one statement on any connection (autocommit) */
  query(merchantId: string): RawQuery;
  /** fn's statements on one connection inside BEGIN … COMMIT; absent = use Prisma's transactions */
  transaction?: <T>(merchantId: string, fn: (q: RawQuery) => Promise<T>) => Promise<T>;
}

/** The merchant whose rows db's raw SQL may touch; '' for the unscoped client (system work). */
function tenantOf(db: object): string {
  return merchantOf(db) ?? '';
}

const backends = new WeakMap<object, RawBackend>();

/** Called by openDatabase: raw SQL for `prisma` and every client scoped from it goes to `backend`. */
export function registerRawBackend(prisma: object, backend: RawBackend): void {
  backends.set(prisma, backend);
}

function backendOf(db: object): RawBackend | undefined {
  return backends.get(baseClientOf(db));
}

const camelCache = new Map<string, string>();
function camel(key: string): string {
  let c = camelCache.get(key);
  if (c === undefined) {
    c = key.replace(/_([a-z0-9])/g, (_, ch: string) => ch.toUpperCase());
    camelCache.set(key, c);
  }
  return c;
}

/** A database row with the keys of the Prisma model (created_at → createdAt). */
export function camelRow<T>(row: Row): T {
  const out: Row = {};
  for (const k in row) out[camel(k)] = row[k];
  return out as T;
}

/** Runs statements inside a Prisma transaction client (joins it). */
function viaPrisma(tx: TenantTx): RawQuery {
  return async <T,>(text: string, params: readonly unknown[] = []) =>
    ((await (tx as unknown as { $queryRawUnsafe(q: string, ...v: unknown[]): Promise<Row[]> }).$queryRawUnsafe(text, ...params)) as Row[]).map((r) => camelRow<T>(r));
}

/**
 * A RawQuery for `db` outside any transaction of ours: joins db when it is a Prisma transaction,
 * otherwise each statement runs on its own (autocommit). Reads only, or single-statement writes.
 */
export function rawQuery(db: Db): RawQuery {
  const handle = handles.get(db);
  if (handle) return handle.raw;
  return isTransaction(db) ? viaPrisma(db as TenantTx) : rawQueryOf(db);
}

/**
 * Single statements on the pool of a client: a merchant's client sees its merchant's rows only;
 * the unscoped one (platform work such as the job runner) every merchant's.
 */
export function rawQueryOf(prisma: object): RawQuery {
  const backend = backendOf(prisma);
  if (!backend) throw new Error('no raw SQL backend registered for this client');
  return backend.query(tenantOf(prisma));
}

const MAX_ATTEMPTS = 3;

/**
 * Runs fn's statements in one transaction: the caller's when db is a Prisma transaction, a Prisma
 * transaction when db carries an idempotency guard (its check must commit with the work) or the
 * backend has no raw transactions (PGlite), otherwise BEGIN … COMMIT on one pooled connection.
 * Deadlocks, serialization failures and `retryOn` errors run fn again (up to three times), as
 * inTransaction does. Hooks given to tx.afterCommit run after COMMIT.
 */
export async function inRawTransaction<T>(db: Db, fn: (tx: RawTx) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
  const handle = handles.get(db);
  if (handle) return fn(handle); // joins the raw transaction the handle stands for
  const backend = backendOf(db);
  if (isTransaction(db) || isGuarded(db) || !backend?.transaction) {
    return inTransaction(db, (tx) => fn({ raw: viaPrisma(tx), afterCommit: (hook) => afterCommitOf(tx, hook) }), opts);
  }
  for (let attempt = 1; ; attempt++) {
    const hooks: (() => void)[] = [];
    let result: T;
    try {
      result = await backend.transaction(tenantOf(db), (raw) => fn({ raw, afterCommit: (hook) => hooks.push(hook) }));
    } catch (err) {
      if (attempt < MAX_ATTEMPTS && (isRetryableConflict(err) || opts.retryOn?.(err))) continue;
      throw err;
    }
    for (const h of hooks) h();
    return result;
  }
}

/** The raw transactions behind handles given out by tryRawTransaction. */
const handles = new WeakMap<object, RawTx>();

/**
 * Runs fn in one raw transaction — BEGIN … COMMIT on one pooled pg connection, the cheapest there
 * is (~0.16 ms of CPU for three statements, against ~0.8 ms in a Prisma interactive transaction) —
 * and hands it a Db that stands for that transaction: domain code writing through
 * inRawTransaction / rawQuery / asRawTx joins it. Code that needs Prisma instead (a model query,
 * inTransaction) cannot join a bare connection: the attempt rolls back, whatever fn made of the
 * error, and NeedsPrisma is thrown so the caller can run the work in a Prisma transaction. Also
 * NeedsPrisma when the database has no raw transactions (PGlite). Deadlocks and serialization
 * failures run fn again (up to three times).
 */
export async function tryRawTransaction<T>(db: Db, fn: (handle: Db) => Promise<T>): Promise<T> {
  const backend = backendOf(db);
  if (!backend?.transaction || isTransaction(db)) throw new NeedsPrisma('no raw transaction available here');
  for (let attempt = 1; ; attempt++) {
    const hooks: (() => void)[] = [];
    let touched = false;
    let result: T;
    try {
      result = await backend.transaction(tenantOf(db), async (raw) => {
        const tx: RawTx = { raw, afterCommit: (hook) => hooks.push(hook) };
        const handle = rawTransactionHandle(tx, () => (touched = true));
        handles.set(handle, tx);
        const r = await fn(handle);
        if (touched) throw new NeedsPrisma('the work used Prisma');
        return r;
      });
    } catch (err) {
      if (touched) throw new NeedsPrisma('the work used Prisma');
      if (attempt < MAX_ATTEMPTS && isRetryableConflict(err)) continue;
      throw err;
    }
    for (const h of hooks) h();
    return result;
  }
}

/**
 * Raw SQL of one merchant: `merchantId` is bound as $1 (the statement's own parameters follow as
 * $2, $3 …) for the statement's own filter, which lets PostgreSQL use the merchant's indexes.
 * (Isolation itself is row-level security's, see above: a statement that leaves the filter out
 * still sees the merchant's rows only.)
 */
export function merchantSql(q: RawQuery, merchantId: string): RawQuery {
  return <T,>(text: string, params: readonly unknown[] = []) => q<T>(text, [merchantId, ...params]);
}

/** Where a domain change writes: a RawQuery in its transaction, and after-commit hooks. */
export interface RawTx {
  readonly raw: RawQuery;
  afterCommit(hook: () => void): void;
}

/** db as a RawTx: a Prisma client (joining its transaction when it is one) or already a RawTx. */
export function asRawTx(db: Db | RawTx): RawTx {
  const handle = handles.get(db);
  if (handle) return handle;
  if ('raw' in db && typeof (db as RawTx).raw === 'function') return db as RawTx;
  const d = db as Db;
  return { raw: rawQuery(d), afterCommit: (hook) => afterCommitOf(d, hook) };
}

// ---- rows embedded as JSON (json_agg in one statement): timestamps arrive as text and keys
// in snake_case; the Prisma datamodel says which fields are dates. bigint fields are refused
// (a JSON number loses precision past 2^53): select those as columns instead.
type FieldKinds = Map<string, 'DateTime' | 'BigInt'>;
let fieldKinds: Map<string, FieldKinds> | undefined;

function kindsOf(model: string): FieldKinds {
  if (!fieldKinds) {
    fieldKinds = new Map();
    for (const [name, m] of Object.entries(getDatamodel().datamodel.models)) {
      const kinds: FieldKinds = new Map();
      for (const f of m.fields) if (f.kind === 'scalar' && (f.type === 'DateTime' || f.type === 'BigInt')) kinds.set(f.name, f.type);
      fieldKinds.set(name, kinds);
    }
  }
  const kinds = fieldKinds.get(model);
  if (!kinds) throw new Error(`unknown model ${model}`);
  return kinds;
}

/** Rows of `model` that a statement returned as a JSON array (to_jsonb / json_agg of whole rows). */
export function jsonRows<T>(model: string, rows: unknown): T[] {
  const kinds = kindsOf(model);
  return ((rows ?? []) as Row[]).map((r) => {
    const out = camelRow<Row>(r);
    for (const [field, kind] of kinds) {
      const v = out[field];
      if (v === null || v === undefined) continue;
      if (kind === 'BigInt') throw new Error(`${model}.${field} is a bigint: select it as a column, not inside JSON`);
      out[field] = new Date(v as string);
    }
    return out as T;
  });
}

/** Tables whose rows domain code locks (their names go into SQL: only these). */
export type LockableTable = 'customers' | 'payments' | 'wallets' | 'setup_intents' | 'payment_methods' | 'plans' | 'subscriptions' | 'invoices';

/**
 * Locks one row of the merchant (`SELECT … FOR NO KEY UPDATE`) inside the caller's transaction:
 * changes to the same record (and their events) apply one after the other. A row of another
 * merchant, or none, locks nothing.
 *
 * NO KEY UPDATE, not UPDATE: the lockers still exclude each other, but a row that only another
 * row's foreign key points at is not waited for (a foreign key check takes FOR KEY SHARE, which FOR
 * UPDATE blocks). Ids never change and rows are deleted softly, so nothing needs that blocking, and
 * it deadlocked: a balance adjustment (customer, then the balance) against an invoice drawing the
 * balance (the balance, then its ledger row's key check on the customer) — 500s on PostgreSQL.
 */
export async function lockRow(tx: TenantTx, table: LockableTable, merchantId: string, id: string): Promise<void> {
  await rawQuery(tx)(`SELECT id FROM "${table}" WHERE id = $1 AND merchant_id = $2 FOR NO KEY UPDATE`, [id, merchantId]);
}

/**
 * Many rows in one INSERT, whatever their number (one array parameter per column, read with
 * unnest: a statement of fixed text, unlike a VALUES list): `columns` are [column, PostgreSQL
 * type] pairs, `rows` the values in that order (objects are sent as JSON for json/jsonb
 * columns). `tail` follows (ON CONFLICT …, RETURNING …). The statement counts as the caller's:
 * run it with a RawQuery of the caller's transaction.
 */
export function insertRows(
  q: RawQuery,
  table: string,
  columns: readonly (readonly [string, string])[],
  rows: readonly (readonly unknown[])[],
  tail = '',
): Promise<Row[]> {
  if (rows.length === 0) return Promise.resolve([]);
  const names = columns.map(([c]) => c).join(', ');
  const arrays = columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  const params = columns.map(([, type], i) =>
    rows.map((r) => {
      const v = r[i];
      return (type === 'jsonb' || type === 'json') && v !== null && v !== undefined ? JSON.stringify(v) : (v ?? null);
    }),
  );
  return q(`INSERT INTO ${table} (${names}) SELECT * FROM unnest(${arrays}) ${tail}`, params);
}

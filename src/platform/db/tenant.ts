// Tenancy. Every request works through a client scoped to its merchant: reads, updates and
// deletes on merchant-owned models get `merchantId` added to their `where`, and creates must
// carry the same merchantId (the types force it; this checks it). Under that, PostgreSQL's
// row-level security (migration 20261127120000_tenant_row_security) holds every statement of a
// merchant's transaction, Prisma's or raw, to the merchant's rows: each transaction opened here
// for a scoped client first sets `billing.merchant_id` (SET LOCAL). Raw SQL outside a transaction
// goes through raw.ts (the raw pool's connections carry the setting); Prisma's own raw methods on a
// scoped client outside a transaction are refused (they would run without the setting).
import { Prisma, type PrismaClient } from '../../generated/prisma/client.ts';
import { isRetryableConflict } from '../errors.ts';

/**
 * Models with a merchant_id that are read across merchants on purpose, never through a request's
 * client: API keys are looked up by client id to find the merchant in the first place, dashboard
 * users by email (sign-in has no merchant field) and their sessions by the cookie's token hash.
 */
export const CROSS_MERCHANT_MODELS = new Set<string>(['ApiKey', 'DashboardUser', 'DashboardSession']);

/** Models that carry merchant_id. Every new merchant-owned model must be added here (a test checks it). */
export const TENANT_MODELS = new Set<string>(['Customer', 'Event', 'IdempotencyKey', 'Job', 'Payment', 'Refund', 'Wallet', 'WalletTransaction', 'WalletGrant', 'WalletTopup', 'WebhookEndpoint', 'DeliveryAttempt', 'SetupIntent', 'PaymentMethod', 'PortalSession', 'Plan', 'Subscription', 'Invoice', 'InvoiceItem', 'CustomerBalance', 'CustomerBalanceTransaction', 'CustomerSearchTerm', 'EmailSettings', 'Email', 'Coupon', 'TaxRate', 'PendingInvoiceItem', 'CreditNote', 'CreditNoteCounter']);

const WHERE_OPS = new Set([
  'findUnique',
  'findUniqueOrThrow',
  'findFirst',
  'findFirstOrThrow',
  'findMany',
  'count',
  'aggregate',
  'groupBy',
  'update',
  'updateMany',
  'updateManyAndReturn',
  'delete',
  'deleteMany',
  'upsert',
]);

export class TenancyViolation extends Error {}

/** Sets the merchant for row-level security until the end of the transaction. */
export const SET_TENANT_LOCAL = "SELECT set_config('billing.merchant_id', $1, true)";

const baseClients = new WeakMap<object, PrismaClient>();
/** The merchant of each scoped client and of each transaction opened on one. */
const merchants = new WeakMap<object, string>();

/** The merchant db is scoped to (a scoped client or its transaction); undefined for the unscoped client. */
export function merchantOf(db: object): string | undefined {
  return merchants.get(db);
}

/** The unscoped client a merchant-scoped client was built from (raw SQL finds its pool through it). */
export function baseClientOf(db: object): object {
  return baseClients.get(db) ?? db;
}

function scopeClient(prisma: PrismaClient, merchantId: string) {
  const scoped = extendForMerchant(prisma, merchantId);
  baseClients.set(scoped, prisma);
  merchants.set(scoped, merchantId);
  return scoped;
}

/** Prisma's raw methods run only inside a transaction of a scoped client (which set the merchant). */
function insideTransaction(params: { args: unknown; query: (args: any) => Promise<unknown> }, method: string) {
  if (!inPrismaTransaction(params)) throw new TenancyViolation(`${method} on a merchant's client outside a transaction: use raw.ts (rawQuery) or inTransaction`);
  return params.query(params.args);
}

/** Whether a query extension's call runs inside an interactive transaction (Prisma's internal parameter). */
function inPrismaTransaction(params: object): boolean {
  return !!(params as { __internalParams?: { transaction?: unknown } }).__internalParams?.transaction;
}

/**
 * The merchant's filter on a model call's `where`, and its check of what a write sets: a create,
 * upsert or update may name the request's merchant (`merchantId`) or leave it out, never another
 * one, and never through the relation (`merchant: { connect … }`), which would skip the check.
 */
function scopeArgs(model: string, operation: string, a: any, merchantId: string): void {
  if (WHERE_OPS.has(operation)) a.where = { ...(a.where ?? {}), merchantId };
  const check = (data: any) => {
    if (!data) return;
    if ((data.merchantId !== undefined && data.merchantId !== merchantId) || data.merchant !== undefined) {
      throw new TenancyViolation(`${model}.${operation}: a write may not set another merchant (merchantId must be the request's, the merchant relation is not writable)`);
    }
  };
  if (operation === 'create') check(a.data);
  if (operation === 'upsert') {
    check(a.create);
    check(a.update);
  }
  if (operation === 'update' || operation === 'updateMany' || operation === 'updateManyAndReturn') check(a.data);
  if (operation === 'createMany' || operation === 'createManyAndReturn') {
    for (const d of Array.isArray(a.data) ? a.data : [a.data]) check(d);
  }
}

function extendForMerchant(prisma: PrismaClient, merchantId: string) {
  return prisma.$extends({
    name: 'tenant',
    query: {
      $queryRaw: (p) => insideTransaction(p, '$queryRaw'),
      $executeRaw: (p) => insideTransaction(p, '$executeRaw'),
      $queryRawUnsafe: (p) => insideTransaction(p, '$queryRawUnsafe'),
      $executeRawUnsafe: (p) => insideTransaction(p, '$executeRawUnsafe'),
      $allModels: {
        async $allOperations(params) {
          const { model, operation, args, query } = params;
          const a: any = args ?? {};
          // A merchant-owned model gets the merchant's filter; in a transaction of
          // inTransaction's, row-level security holds it as well (SET LOCAL).
          if (TENANT_MODELS.has(model)) {
            scopeArgs(model, operation, a, merchantId);
            return query(a);
          }
          // Any other model (merchants, API keys) has no filter to add: outside a transaction the
          // call runs in one of its own that sets the merchant first (Prisma's batch $transaction,
          // one connection), so row-level security keeps it to the merchant's rows, relations
          // included. Not done for every model: it costs ~2× the CPU of a Prisma read (measured
          // on a list, docs/performance.md), and merchant-owned models have the filter above.
          if (inPrismaTransaction(params)) return query(a);
          const [, result] = await prisma.$transaction([prisma.$executeRawUnsafe(SET_TENANT_LOCAL, merchantId), query(a)]);
          return result;
        },
      },
    },
  });
}

export type TenantDb = ReturnType<typeof extendForMerchant>;
/** The client inside an interactive transaction of a TenantDb. */
export type TenantTx = Omit<TenantDb, '$transaction' | '$connect' | '$disconnect' | '$on' | '$extends'>;
/** Either: domain functions accept both and open a transaction only when not already in one. */
export type Db = TenantDb | TenantTx;

/**
 * A client of this request alone, for the idempotency layer: it binds guards to the client
 * (guardTransactions), so it must not be shared with other requests.
 */
export function freshForMerchant(prisma: PrismaClient, merchantId: string): TenantDb {
  return scopeClient(prisma, merchantId);
}

// Scoped clients are kept per merchant: an extended client costs ~30 µs to build and its first
// queries pay Prisma's per-client preparation again (~0.35 ms per request measured), so building one
// per request was a large share of a simple read. Bounded: the least recently used go first.
const MAX_CACHED = 5_000;
const scoped = new WeakMap<PrismaClient, Map<string, TenantDb>>();
const shared = new WeakSet<object>();

/** The merchant's scoped client (shared; never put guards on it: use freshForMerchant). */
export function forMerchant(prisma: PrismaClient, merchantId: string): TenantDb {
  let byMerchant = scoped.get(prisma);
  if (!byMerchant) scoped.set(prisma, (byMerchant = new Map()));
  let db = byMerchant.get(merchantId);
  if (db) {
    byMerchant.delete(merchantId);
  } else {
    db = scopeClient(prisma, merchantId);
    shared.add(db);
    if (byMerchant.size >= MAX_CACHED) byMerchant.delete(byMerchant.keys().next().value!);
  }
  byMerchant.set(merchantId, db);
  return db;
}

export const TX_OPTIONS = { maxWait: 10_000, timeout: 30_000 } as const;

// Transaction clients handed out by inTransaction. (Prisma 7's transaction client also has a
// $transaction method, for savepoints, so its shape cannot tell us whether we are inside one.)
const openTransactions = new WeakSet<object>();

export function isTransaction(db: Db): boolean {
  return openTransactions.has(db) || rawTransactionHandles.has(db);
}

const afterCommitHooks = new WeakMap<object, (() => void)[]>();

/** Runs fn once the transaction `db` belongs to has committed (at once when db is not a transaction). */
export function afterCommit(db: Db, fn: () => void): void {
  const raw = rawTransactionHandles.get(db);
  if (raw) return raw.afterCommit(fn);
  const hooks = afterCommitHooks.get(db);
  if (hooks) hooks.push(fn);
  else fn();
}

/**
 * Thrown when code given a raw transaction handle (see raw.ts `tryRawTransaction`) needs Prisma: a
 * model query or a Prisma transaction cannot join a transaction on a bare pg connection. The
 * attempt is rolled back and run again in a Prisma transaction.
 */
export class NeedsPrisma extends Error {}

/** Handles standing for an open raw transaction: a Db for domain code, whose raw SQL joins it. */
const rawTransactionHandles = new WeakMap<object, { afterCommit(fn: () => void): void; touched: () => void }>();

/**
 * A Db that stands for an open raw transaction: raw SQL (raw.ts) joins it, afterCommit defers to
 * its commit, isTransaction is true; any Prisma use (a model, $transaction …) marks it touched and
 * throws NeedsPrisma.
 */
export function rawTransactionHandle(tx: { afterCommit(fn: () => void): void }, onPrismaUse: () => void): Db {
  const handle = new Proxy(
    {},
    {
      get(_, prop) {
        // Probes by promise machinery and inspection are not Prisma use.
        if (typeof prop === 'symbol' || prop === 'then' || prop === 'toJSON') return undefined;
        onPrismaUse();
        throw new NeedsPrisma(`Prisma (${String(prop)}) inside a raw transaction`);
      },
      has: () => false,
    },
  ) as Db;
  rawTransactionHandles.set(handle, { afterCommit: tx.afterCommit, touched: onPrismaUse });
  return handle;
}

/** Whether db is a raw transaction handle. */
export function isRawTransactionHandle(db: object): boolean {
  return rawTransactionHandles.has(db);
}

/**
 * A check that runs at the end of every transaction opened on a given client, inside it, just
 * before the commit (the idempotency layer uses it to bind each committed step to its claim).
 */
export type TransactionGuard = (tx: TenantTx) => Promise<void>;
const transactionGuards = new WeakMap<object, TransactionGuard>();

/** Whether transactions on db must run an idempotency guard (raw transactions then go through Prisma). */
export function isGuarded(db: Db): boolean {
  return transactionGuards.has(db);
}

/** Makes every transaction that `inTransaction` opens on `db` run `guard` before it commits. */
export function guardTransactions(db: TenantDb, guard: TransactionGuard): void {
  // A guard on a shared client would bind every other request's transactions to this one's claim.
  if (shared.has(db)) throw new Error('guardTransactions needs a client of its own (freshForMerchant)');
  transactionGuards.set(db, guard);
}

export interface TransactionOptions {
  /** errors (besides deadlocks and serialization failures) after which fn is run again in a new transaction */
  retryOn?: (err: unknown) => boolean;
}

const MAX_ATTEMPTS = 3;

/**
 * Runs fn in a transaction; joins the caller's transaction when db already is one. A transaction
 * of its own that hits a deadlock or serialization failure (or `retryOn`) is run again, up to three
 * times: fn must only touch the database (never a processor or the network).
 */
export async function inTransaction<T>(db: Db, fn: (tx: TenantTx) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
  if (openTransactions.has(db)) return fn(db as TenantTx);
  const raw = rawTransactionHandles.get(db);
  if (raw) {
    raw.touched();
    throw new NeedsPrisma('a Prisma transaction inside a raw transaction');
  }
  const guard = transactionGuards.get(db);
  const merchantId = merchants.get(db);
  for (let attempt = 1; ; attempt++) {
    const hooks: (() => void)[] = [];
    let result: T;
    try {
      result = await (db as TenantDb).$transaction(async (tx) => {
        if (merchantId !== undefined) {
          await (tx as unknown as { $executeRawUnsafe(q: string, ...v: unknown[]): Promise<number> }).$executeRawUnsafe(SET_TENANT_LOCAL, merchantId);
          merchants.set(tx, merchantId);
        }
        openTransactions.add(tx);
        afterCommitHooks.set(tx, hooks);
        const r = await fn(tx as TenantTx);
        if (guard) await guard(tx as TenantTx);
        return r;
      }, TX_OPTIONS);
    } catch (err) {
      if (attempt < MAX_ATTEMPTS && (isRetryableConflict(err) || opts.retryOn?.(err))) continue;
      throw err;
    }
    for (const h of hooks) h();
    return result;
  }
}

export { Prisma };

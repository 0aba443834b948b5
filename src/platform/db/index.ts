// The database: PostgreSQL through @prisma/adapter-pg when DATABASE_URL is set, otherwise an
// embedded PostgreSQL (PGlite) kept in DATA_DIR. Both expose the same Prisma client plus a raw
// `exec` for migration SQL (multi-statement scripts cannot go through a prepared statement).
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PrismaClient } from '../../generated/prisma/client.ts';
import type { Logger } from '../logger.ts';
import { camelRow, registerRawBackend, type RawBackend, type RawQuery, type Row } from './raw.ts';
import { SET_TENANT_LOCAL } from './tenant.ts';
import { endSpan, SpanKind, startSpan, tracingEnabled } from '../tracing.ts';

export { PrismaClient };
export type { Prisma } from '../../generated/prisma/client.ts';

export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly prisma: PrismaClient;
  /** Runs a multi-statement SQL script outside Prisma (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs one parameterised statement outside Prisma. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * Runs fn on one dedicated connection (advisory locks must stay on the connection that took
   * them), as the connecting role itself (migrations create tables).
   */
  withConnection<T>(fn: (q: <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>, exec: (sql: string) => Promise<void>) => Promise<T>): Promise<T>;
  /**
   * After migrating: makes row-level security hold for this process's connections. A superuser or
   * BYPASSRLS role would skip it, so such connections SET ROLE billing_tenant (created by the
   * migration); any other role is held by FORCE ROW LEVEL SECURITY already. Says which applies.
   */
  enforceTenancy(): Promise<TenancyEnforcement>;
  close(): Promise<void>;
}

/** How row-level security holds: through the role billing_tenant, as the (non-bypassing) owner, or not at all. */
export type TenancyEnforcement = 'role' | 'owner' | 'off';

export const TENANT_ROLE = 'billing_tenant';
/** Sets a connection's merchant for row-level security until it is set again ('' = system work). */
const SET_TENANT_SESSION = "SELECT set_config('billing.merchant_id', $1, false)";
// Whether this role skips row-level security, and whether it can become billing_tenant: the role
// exists, this role may SET it, and it has the data privileges here (a database migrated before
// the role existed, elsewhere in the cluster, has none).
const BYPASS_CHECK = `SELECT (r.rolsuper OR r.rolbypassrls) AS bypass,
    coalesce((SELECT pg_has_role(current_user, t.oid, 'MEMBER') AND has_table_privilege(t.oid, to_regclass('merchants'), 'SELECT')
              FROM pg_roles t WHERE t.rolname = '${TENANT_ROLE}'), false) AS can_become
  FROM pg_roles r WHERE r.rolname = current_user`;
type BypassRow = { bypass: boolean; can_become: boolean };

/** What BYPASS_CHECK's answer means: held by FORCE as it is, SET ROLE billing_tenant, or not enforceable. */
function tenancyFor(r: BypassRow | undefined): TenancyEnforcement {
  if (!r?.bypass) return 'owner';
  return r.can_become ? 'role' : 'off';
}

export interface OpenOptions {
  /** postgresql:// URL; when absent, PGlite is used. */
  url?: string | undefined;
  /** PGlite data directory; undefined/null = in memory. */
  dataDir?: string | null | undefined;
  poolSize?: number;
  logger?: Logger;
  /**
   * Called with every SQL statement sent to the database, whoever sends it — Prisma, raw SQL,
   * transactions' BEGIN/COMMIT — counted where it reaches the connection (tests count queries,
   * e.g. the N+1 guards).
   */
  onQuery?: (sql: string) => void;
}

/** A pg client's query text, whatever form the call took (text, config object, prepared statement). */
function queryText(arg: unknown): string {
  if (typeof arg === 'string') return arg;
  const config = arg as { text?: unknown; name?: unknown } | null;
  return typeof config?.text === 'string' ? config.text : `(prepared ${String(config?.name ?? '?')})`;
}

// What each pooled connection carries besides its socket: the query function before counting
// (tenancy statements are not counted), the role it SET, the merchant its setting names.
const SEND = Symbol('send');
const ROLE = Symbol('role');
const TENANT = Symbol('tenant');
type Send = (text: string, params?: unknown[]) => Promise<pg.QueryResult>;
type Tracked = pg.PoolClient & { [SEND]: Send; [ROLE]?: string; [TENANT]?: string };

/**
 * Every connection of the pool: its unwrapped query kept, every statement counted through onQuery
 * (when given), and — once enforceTenancy found it needed — SET ROLE billing_tenant before its
 * first use (in the pool's onConnect, which pg-pool awaits; the pools open no connection before
 * that: migrations and the check run on a connection of their own).
 */
function trackConnections(pool: pg.Pool, tenancy: { role: string | null }, onQuery?: (sql: string) => void, logger?: Logger): void {
  pool.on('connect', (c) => {
    const client = c as Tracked;
    // A connection lost while checked out (the server restarted, an administrator terminated it)
    // emits 'error' where pg-pool no longer listens: without this the process would exit. The
    // statement in flight fails, and the connection is not given back (isLost below).
    client.on('error', (err) => logger?.warn({ err: err.message }, 'postgres connection lost'));
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client[SEND] = query as Send;
    if (tenancy.role) client[ROLE] = tenancy.role; // set by onConnect, before this event
    if (onQuery) {
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        onQuery(queryText(args[0]));
        return query(...args);
      };
    }
    // Traces: every statement a span (its text, never its parameters); only when tracing is on.
    if (tracingEnabled()) {
      const inner = (client as unknown as { query: (...args: unknown[]) => unknown }).query.bind(client);
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => tracedQuery(inner, args);
    }
  });
  pool.on('acquire', (c) => {
    const client = c as Tracked;
    // A connection opened before enforceTenancy (code that used the pools before the service
    // opened): its SET ROLE is queued ahead of the caller's first statement.
    if (tenancy.role && client[ROLE] !== tenancy.role) {
      client[ROLE] = tenancy.role;
      client[SEND](`SET ROLE ${tenancy.role}`).catch((err: Error) => logger?.error({ err: err.message }, 'SET ROLE for row-level security failed'));
    }
  });
}

/** A statement run inside a CLIENT span (src/platform/tracing.ts), ended when it answers. */
function tracedQuery(query: (...args: unknown[]) => unknown, args: unknown[]): unknown {
  const text = queryText(args[0]);
  const span = startSpan(/^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL', { 'db.system': 'postgresql', 'db.query.text': text.slice(0, 2000) }, SpanKind.CLIENT);
  const last = args[args.length - 1];
  if (typeof last === 'function') {
    args[args.length - 1] = (err: unknown, res: unknown) => {
      endSpan(span, err);
      (last as (e: unknown, r: unknown) => void)(err, res);
    };
    return query(...args);
  }
  const result = query(...args) as Promise<unknown> | undefined;
  if (result && typeof result.then === 'function') result.then(() => endSpan(span), (err) => endSpan(span, err));
  else endSpan(span);
  return result;
}

/** The same for the embedded database: its one connection's query, exec and transactions. */
function countAtPglite(db: PGlite, onQuery: (sql: string) => void): void {
  const wrap = <O extends { query: (...a: any[]) => any; exec: (...a: any[]) => any }>(o: O) => {
    const query = o.query.bind(o);
    const exec = o.exec.bind(o);
    o.query = ((text: string, ...rest: unknown[]) => (onQuery(text), query(text, ...rest))) as O['query'];
    o.exec = ((text: string, ...rest: unknown[]) => (onQuery(text), exec(text, ...rest))) as O['exec'];
  };
  wrap(db);
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (tx: any) => Promise<unknown>) =>
    transaction((tx) => {
      onQuery('BEGIN');
      wrap(tx);
      return fn(tx);
    })) as typeof db.transaction;
}

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  return opts.url ? openPostgres(opts.url, opts.poolSize ?? 10, opts.logger, opts.onQuery) : openPglite(opts.dataDir ?? null, opts.onQuery);
}

function openPostgres(url: string, poolSize: number, logger?: Logger, onQuery?: (sql: string) => void): Database {
  // Two pools of up to poolSize connections each. Prisma's connections never carry a merchant
  // between statements (its transactions SET LOCAL one); the raw pool's connections keep the
  // merchant they last served (set again only when the next statement is another merchant's), so
  // the hot paths pay nothing for row-level security. Sharing one pool would leave a raw
  // statement's merchant on a connection for Prisma's next statement, of any merchant.
  // A request waits up to 10 s for a pooled connection (Prisma's transaction maxWait is the same);
  // past that it gets 503 with Retry-After rather than queueing without bound.
  const tenancy = { role: null as string | null };
  const options: pg.PoolConfig & { onConnect: (client: pg.PoolClient) => Promise<void> } = {
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    onConnect: async (client) => {
      if (tenancy.role) await client.query(`SET ROLE ${tenancy.role}`);
    },
  };
  const pool = new pg.Pool(options);
  const rawPool = new pg.Pool(options);
  /** A connection of its own, as the connecting role (migrations, the role check). */
  const own = async <T,>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  for (const p of [pool, rawPool]) {
    // An idle client losing its connection (database restart) must not crash the process.
    p.on('error', (err) => logger?.warn({ err: err.message }, 'postgres pool client error'));
    trackConnections(p, tenancy, onQuery, logger);
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const query = async <R,>(sql: string, params?: unknown[]) => (await pool.query(sql, params as any[])).rows as R[];
  registerRawBackend(prisma, pgRawBackend(rawPool));
  return {
    kind: 'postgres',
    prisma,
    exec: async (sql) => {
      await pool.query(sql);
    },
    query,
    withConnection: (fn) =>
      own((client) =>
        fn(
          async <R,>(sql: string, params?: unknown[]) => (onQuery?.(sql), (await client.query(sql, params as any[])).rows as R[]),
          async (sql) => {
            onQuery?.(sql);
            await client.query(sql);
          },
        ),
      ),
    enforceTenancy: async () => {
      const mode = tenancyFor(await own(async (client) => (await client.query<BypassRow>(BYPASS_CHECK)).rows[0]));
      if (mode === 'role') tenancy.role = TENANT_ROLE;
      return mode;
    },
    close: async () => {
      await prisma.$disconnect();
      await Promise.all([pool.end(), rawPool.end()]);
    },
  };
}

/**
 * The embedded database's files hold every merchant's data: owner-only. The process umask
 * becomes 0o077 (PGlite creates files through Node's fs with it) and the whole tree is chmodded
 * to 0700 directories / 0600 files — before opening (installs made before this rule; the
 * directory itself closes first, so nothing inside is reachable meanwhile), after opening
 * (PGlite extracts its initial files with explicit 0666 modes and writes its relation-cache
 * files 0644), and after closing (statistics written at shutdown).
 */
export function restrictDataDir(dataDir: string): void {
  try {
    process.umask(0o077);
  } catch {
    /* worker threads cannot change the umask; the chmod below still applies */
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodTree(dataDir);
}

function chmodTree(path: string): void {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st || st.isSymbolicLink()) return; // never follow links out of the directory
  if (st.isDirectory()) {
    if ((st.mode & 0o777) !== 0o700) chmodSync(path, 0o700);
    for (const name of readdirSync(path)) chmodTree(join(path, name));
  } else if (st.isFile() && (st.mode & 0o077) !== 0) {
    chmodSync(path, (st.mode & 0o700) | 0o600);
  }
}

async function openPglite(dataDir: string | null, onQuery?: (sql: string) => void): Promise<Database> {
  if (dataDir) restrictDataDir(dataDir);
  const db = dataDir ? await PGlite.create(dataDir) : await PGlite.create();
  if (dataDir) chmodTree(dataDir);
  if (onQuery) countAtPglite(db, onQuery);
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) });
  const query = async <R,>(sql: string, params?: unknown[]) => (await db.query<R>(sql, params as any[])).rows;
  // int8 as bigint (PGlite's default is a lossy number); transactions go through Prisma's. Its one
  // connection is shared with Prisma, so a merchant's statement runs in a transaction of its own
  // that sets the merchant locally (row-level security), never left on the connection.
  const parsers = { [INT8]: toBigInt };
  const system: RawQuery = async <T,>(text: string, params: readonly unknown[] = []) =>
    (await db.query<Row>(text, params as unknown[], { parsers })).rows.map((r) => camelRow<T>(r));
  registerRawBackend(prisma, {
    query: (merchantId) =>
      merchantId === ''
        ? system
        : async <T,>(text: string, params: readonly unknown[] = []) =>
            db.transaction(async (tx) => {
              await tx.query(SET_TENANT_LOCAL, [merchantId]);
              return (await tx.query<Row>(text, params as unknown[], { parsers })).rows.map((r) => camelRow<T>(r));
            }),
  });
  const exec = async (sql: string) => {
    await db.exec(sql);
  };
  let role: string | null = null;
  return {
    kind: 'pglite',
    prisma,
    exec,
    query,
    // PGlite has a single connection: every call already runs on it (as the connecting role).
    withConnection: async (fn) => {
      if (!role) return fn(query, exec);
      await db.exec('RESET ROLE');
      try {
        return await fn(query, exec);
      } finally {
        await db.exec(`SET ROLE ${role}`);
      }
    },
    enforceTenancy: async () => {
      const mode = tenancyFor((await query<BypassRow>(BYPASS_CHECK))[0]);
      if (mode === 'role') {
        await db.exec(`SET ROLE ${TENANT_ROLE}`);
        role = TENANT_ROLE;
      }
      return mode;
    },
    close: async () => {
      await prisma.$disconnect();
      await db.close();
      if (dataDir) chmodTree(dataDir);
    },
  };
}

// ---- raw SQL on pg for the hot paths (see raw.ts): int8 as bigint, statements prepared once per
// connection under a name derived from their text (PostgreSQL then skips parsing and planning).
const INT8 = 20;
const TIMESTAMPTZ = 1184;
const toBigInt = (v: string) => BigInt(v);
// The text PostgreSQL sends for a timestamptz (2026-01-31 12:00:00.123+00, any offset) as a Date,
// without postgres-date's general parser; anything else (BC, infinity, 5-digit years) goes to it.
const TIMESTAMPTZ_TEXT = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d{1,6})?)([+-]\d\d)(?::(\d\d))?$/;
const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (v: string) => Date;
export function timestamptzFromText(v: string): Date {
  const m = TIMESTAMPTZ_TEXT.exec(v);
  return m ? new Date(`${m[1]}T${m[2]}${m[3]}:${m[4] ?? '00'}`) : parseTimestamptz(v);
}
const rawTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    format === 'binary'
      ? pg.types.getTypeParser(oid, 'binary')
      : oid === INT8
        ? toBigInt
        : oid === TIMESTAMPTZ
          ? timestamptzFromText
          : pg.types.getTypeParser(oid, 'text')) as typeof pg.types.getTypeParser,
};

// Per statement text, the constant part of its query config (text, prepared-statement name, type
// parsers) as the prototype of each call's config: pg copies a config's own properties on every
// query, and then there is only `values` to copy.
const statements = new Map<string, object>();
function statementConfig(text: string, values: readonly unknown[]): pg.QueryConfig {
  let proto = statements.get(text);
  if (proto === undefined) {
    proto = { text, name: `raw_${statements.size}`, types: rawTypes };
    statements.set(text, proto);
  }
  const config = Object.create(proto) as pg.QueryConfig;
  config.values = values as unknown[];
  return config;
}

/**
 * Raw SQL on its own pool. A connection keeps the merchant (`billing.merchant_id`, session level)
 * of the last statement it ran; it is set again, before the statement, only when the next one is
 * for another merchant (or for system work: ''). Set outside any transaction, so a ROLLBACK cannot
 * undo it.
 */
function pgRawBackend(pool: pg.Pool): RawBackend {
  const acquire = async (merchantId: string): Promise<Tracked> => {
    const client = (await pool.connect()) as Tracked;
    if (client[TENANT] !== merchantId) {
      try {
        await client[SEND](SET_TENANT_SESSION, [merchantId]);
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
      client[TENANT] = merchantId;
    }
    return client;
  };
  const on =
    (client: pg.PoolClient): RawQuery =>
    async <T,>(text: string, params: readonly unknown[] = []) =>
      (await client.query<Row>(statementConfig(text, params))).rows.map((r) => camelRow<T>(r));
  return {
    query:
      (merchantId) =>
      async <T,>(text: string, params: readonly unknown[] = []) => {
        const client = await acquire(merchantId);
        let broken: Error | undefined;
        try {
          return (await client.query<Row>(statementConfig(text, params))).rows.map((r) => camelRow<T>(r));
        } catch (err) {
          // A failed statement leaves the connection usable; a lost one is not given back.
          if (isLost(err)) broken = err as Error;
          throw err;
        } finally {
          client.release(broken);
        }
      },
    transaction: async <T,>(merchantId: string, fn: (q: RawQuery) => Promise<T>): Promise<T> => {
      const client = await acquire(merchantId);
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await fn(on(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        if (isLost(err)) broken = err as Error;
        else await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        throw err;
      } finally {
        client.release(broken);
      }
    },
  };
}

/** An error that leaves the connection unusable: no SQLSTATE (the socket), a connection exception (08…) or an operator intervention (57P…). */
function isLost(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code !== 'string' || /^(08|57P)/.test(code) || !/^[0-9A-Z]{5}$/.test(code);
}

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
import { camelRow, registerRawBackend, type RawQuery, type Row } from './raw.ts';

export { PrismaClient };
export type { Prisma } from '../../generated/prisma/client.ts';

export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly prisma: PrismaClient;
  /** Runs a multi-statement SQL script outside Prisma (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs one parameterised statement outside Prisma. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs fn on one dedicated connection (advisory locks must stay on the connection that took them). */
  withConnection<T>(fn: (q: <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>, exec: (sql: string) => Promise<void>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
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

/** Makes every statement a pooled connection runs go through onQuery first. */
function countAtConnection(pool: pg.Pool, onQuery: (sql: string) => void): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      onQuery(queryText(args[0]));
      return query(...args);
    };
  });
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
  // A request waits up to 10 s for a pooled connection (Prisma's transaction maxWait is the same);
  // past that it gets 503 with Retry-After rather than queueing without bound.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 10_000, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', (err) => logger?.warn({ err: err.message }, 'postgres pool client error'));
  if (onQuery) countAtConnection(pool, onQuery);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const query = async <R,>(sql: string, params?: unknown[]) => (await pool.query(sql, params as any[])).rows as R[];
  registerRawBackend(prisma, pgRawBackend(pool));
  return {
    kind: 'postgres',
    prisma,
    exec: async (sql) => {
      await pool.query(sql);
    },
    query,
    withConnection: async (fn) => {
      const client = await pool.connect();
      try {
        return await fn(
          async <R,>(sql: string, params?: unknown[]) => (await client.query(sql, params as any[])).rows as R[],
          async (sql) => {
            await client.query(sql);
          },
        );
      } finally {
        client.release();
      }
    },
    close: async () => {
      await prisma.$disconnect();
      await pool.end();
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
  // int8 as bigint (PGlite's default is a lossy number); transactions go through Prisma's.
  const parsers = { [INT8]: toBigInt };
  registerRawBackend(prisma, {
    query: async <T,>(text: string, params: readonly unknown[] = []) => (await db.query<Row>(text, params as unknown[], { parsers })).rows.map((r) => camelRow<T>(r)),
  });
  const exec = async (sql: string) => {
    await db.exec(sql);
  };
  return {
    kind: 'pglite',
    prisma,
    exec,
    query,
    // PGlite has a single connection: every call already runs on it.
    withConnection: (fn) => fn(query, exec),
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

function pgRawBackend(pool: pg.Pool) {
  const on =
    (client: pg.Pool | pg.PoolClient): RawQuery =>
    async <T,>(text: string, params: readonly unknown[] = []) =>
      (await client.query<Row>(statementConfig(text, params))).rows.map((r) => camelRow<T>(r));
  return {
    query: on(pool),
    transaction: async <T,>(fn: (q: RawQuery) => Promise<T>): Promise<T> => {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await fn(on(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        throw err;
      } finally {
        client.release(broken);
      }
    },
  };
}

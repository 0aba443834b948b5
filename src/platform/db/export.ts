// `cli db export --to postgresql://…`: copies the embedded database (PGlite in DATA_DIR) into an
// EMPTY PostgreSQL database, for a service that outgrew one process. The target gets the same
// migrations through the project's runner (migrate.ts), then every table's rows in foreign-key
// order (parents first, worked out from the target's catalog), in ONE transaction on the target
// (a failure leaves it as empty as it was) from ONE repeatable-read snapshot of the source (a
// consistent copy). Rows travel as JSON text (row_to_json → json_populate_recordset): bigints,
// timestamps, jsonb, arrays and bytea keep their exact values, nothing is parsed in JavaScript.
// The tables' own triggers are off during the copy (the ledger trigger would re-apply every
// movement to the copied balances; the search-terms trigger would add the terms again) and back on
// before the commit; foreign keys stay checked. Sequences (jobs.id …) continue where the source's
// stand; counters kept in rows (merchants.invoice_seq) come with their rows. Then the rows are
// counted again on the target, table by table, and must match.
import type { Database } from './index.ts';
import { migrate } from './migrate.ts';
import { urlWithoutSecrets } from '../logger.ts';

export class ExportRefused extends Error {}

export interface ExportResult {
  tables: { table: string; rows: number }[];
  sequences: { sequence: string; value: string | null }[];
}

type Q = <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>;

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const MIGRATIONS_TABLE = '_app_migrations';
const BATCH = 2_000;

const TABLES = `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY c.relname`;
const COLUMNS = `SELECT a.attname AS name FROM pg_attribute a
  WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum`;
const FOREIGN_KEYS = `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent FROM pg_constraint c
  JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = current_schema()`;
const SEQUENCES = `SELECT sequencename AS name, last_value::text AS value FROM pg_sequences WHERE schemaname = current_schema() ORDER BY sequencename`;

/** Tables in an order where every table comes after the tables it references (self-references aside). */
export function foreignKeyOrder(tables: string[], edges: { child: string; parent: string }[]): string[] {
  const strip = (t: string) => t.replace(/^"|"$/g, '');
  const parents = new Map(tables.map((t) => [t, new Set<string>()]));
  for (const e of edges) {
    const child = strip(e.child);
    const parent = strip(e.parent);
    if (child !== parent && parents.has(child) && parents.has(parent)) parents.get(child)!.add(parent);
  }
  const order: string[] = [];
  const done = new Set<string>();
  const visiting = new Set<string>();
  const visit = (t: string) => {
    if (done.has(t)) return;
    if (visiting.has(t)) throw new ExportRefused(`the foreign keys between the tables form a cycle through ${t}: no order can copy them`);
    visiting.add(t);
    for (const p of [...parents.get(t)!].sort()) visit(p);
    visiting.delete(t);
    done.add(t);
    order.push(t);
  };
  for (const t of tables) visit(t);
  return order;
}

/** What a PostgreSQL URL names, without its password (for messages). */
export function describeTarget(url: string): string {
  return urlWithoutSecrets(url, { scheme: false }) ?? 'the target database';
}

/**
 * Copies `source` (the embedded database, migrated) into the empty PostgreSQL database `target`
 * (opened by the caller on the --to URL). Throws ExportRefused, having changed nothing, when the
 * target holds any row.
 */
export async function exportDatabase(source: Database, target: Database): Promise<ExportResult> {
  if (target.kind !== 'postgres') throw new ExportRefused('the target must be a PostgreSQL database (postgresql://…)');
  // 1. The target must be empty: no row in any table (tables without rows, e.g. of an earlier
  //    export that failed, are fine; tables of anything else are not). Checked before anything is
  //    written to it.
  await target.withConnection(async (q) => {
    const names = (await q<{ name: string }>(TABLES)).map((r) => r.name);
    // Tables without this service's migrations table are something else's (a migration would fail
    // on them half-way, after writing its own bookkeeping): refused as well.
    const foreign = names.find((n) => n !== MIGRATIONS_TABLE);
    if (foreign !== undefined && !names.includes(MIGRATIONS_TABLE)) {
      throw new ExportRefused(`the target database is not empty (table ${foreign} was not made by this service): export only into a new, empty database`);
    }
    for (const name of names) {
      if (name === MIGRATIONS_TABLE) continue;
      const [row] = await q<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${ident(name)}) AS any`);
      if (row?.any) throw new ExportRefused(`the target database is not empty (table ${name} has rows): export only into a new, empty database`);
    }
  });
  // 2. The same migrations, by the same runner, and the same set of them on both sides.
  await migrate(target);
  const applied = async (db: Database) => (await db.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY name`)).map((r) => r.name).join(',');
  if ((await applied(source)) !== (await applied(target))) {
    throw new ExportRefused('the source and the target have different migrations applied: run this version of the service on both');
  }

  return source.withConnection(async (sq, sexec) => {
    // One snapshot of the source for every table.
    await sexec('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      const result = await target.withConnection(async (tq, texec) => {
        const tables = (await tq<{ name: string }>(TABLES)).map((r) => r.name).filter((t) => t !== MIGRATIONS_TABLE);
        const order = foreignKeyOrder(tables, await tq<{ child: string; parent: string }>(FOREIGN_KEYS));
        await texec('BEGIN');
        try {
          for (const t of order) await texec(`ALTER TABLE ${ident(t)} DISABLE TRIGGER USER`);
          const counts: { table: string; rows: number }[] = [];
          for (const t of order) counts.push({ table: t, rows: await copyTable(sq, sexec, tq, t) });
          for (const t of order) await texec(`ALTER TABLE ${ident(t)} ENABLE TRIGGER USER`);
          const sequences: { sequence: string; value: string | null }[] = [];
          const targetSequences = new Set((await tq<{ name: string }>(SEQUENCES)).map((s) => s.name));
          for (const s of await sq<{ name: string; value: string | null }>(SEQUENCES)) {
            if (!targetSequences.has(s.name)) continue;
            if (s.value !== null) await tq('SELECT setval(to_regclass($1), $2::bigint, true)', [ident(s.name), s.value]);
            sequences.push({ sequence: s.name, value: s.value });
          }
          // Every table holds what the source holds.
          for (const c of counts) {
            const [row] = await tq<{ n: string }>(`SELECT count(*)::text AS n FROM ${ident(c.table)}`);
            if (Number(row?.n) !== c.rows) throw new Error(`table ${c.table}: ${c.rows} rows read but ${row?.n} in the target`);
          }
          await texec('COMMIT');
          return { tables: counts, sequences };
        } catch (err) {
          await texec('ROLLBACK').catch(() => undefined);
          throw err;
        }
      });
      await sexec('COMMIT');
      return result;
    } catch (err) {
      await sexec('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}

/** Copies one table, BATCH rows at a time through a cursor on the source; how many rows. */
async function copyTable(sq: Q, sexec: (sql: string) => Promise<void>, tq: Q, table: string): Promise<number> {
  const columns = (await tq<{ name: string }>(COLUMNS, [ident(table)])).map((c) => ident(c.name)).join(', ');
  const cursor = `export_${table.replace(/\W/g, '_')}`;
  await sexec(`DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT row_to_json(r)::text AS j FROM (SELECT ${columns} FROM ${ident(table)}) r`);
  let rows = 0;
  try {
    for (;;) {
      const batch = await sq<{ j: string }>(`FETCH ${BATCH} FROM ${cursor}`);
      if (batch.length === 0) break;
      await tq(`INSERT INTO ${ident(table)} (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::${ident(table)}, $1::json)`, [
        `[${batch.map((r) => r.j).join(',')}]`,
      ]);
      rows += batch.length;
      if (batch.length < BATCH) break;
    }
  } finally {
    await sexec(`CLOSE ${cursor}`);
  }
  return rows;
}

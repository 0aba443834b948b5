// One keyset page per parent, for many parents, in two queries whatever their number: the ids of
// each parent's page come from one LATERAL query (an index range scan of limit+1 rows per
// parent), the rows from one `findMany` by id. This is what nested GraphQL connections
// (customer → payments, wallet → transactions …) use through a per-request DataLoader, instead
// of one query per parent. Counts per parent are one GROUP BY query.
// The merchant filter is written here (the indexes lead with merchant_id); row-level security
// holds the statements to the merchant's rows in any case (raw.ts).
import type { Ctx } from '../context.ts';
import { rawQuery } from './raw.ts';
import { checkLimit, decodeCursor, encodeCursor, type Keyed, type Page, type PageArgs } from '../pagination.ts';

export interface ChildTable {
  /** table name in PostgreSQL */
  table: string;
  /** the column pointing at the parent */
  parent: string;
}

/** Equality filters: column → value (undefined = no filter). Column names come from code, never from input. */
export type ColumnFilters = Record<string, string | undefined>;

const IDENT = /^[a-z_]+$/;

/** The WHERE conditions on `t` for the merchant and the filters, with their parameters numbered from `first`. */
function where(ctx: Ctx, filters: ColumnFilters, first: number): { sql: string; params: unknown[] } {
  const parts = [`t.merchant_id = $${first}`];
  const params: unknown[] = [ctx.merchant.id];
  for (const [column, value] of Object.entries(filters)) {
    if (value === undefined) continue;
    if (!IDENT.test(column)) throw new Error(`bad column ${column}`);
    params.push(value);
    parts.push(`t.${column} = $${first + params.length - 1}`);
  }
  return { sql: parts.join(' AND '), params };
}

export async function pagesByParent<T extends Keyed>(
  ctx: Ctx,
  t: ChildTable,
  parentIds: readonly string[],
  args: PageArgs & { filters?: ColumnFilters },
  load: (ids: string[]) => Promise<T[]>,
): Promise<Map<string, Page<T>>> {
  if (!IDENT.test(t.table) || !IDENT.test(t.parent)) throw new Error(`bad table ${t.table}.${t.parent}`);
  const limit = checkLimit(args.limit);
  const cursor = args.after ? decodeCursor(args.after) : null;
  const w = where(ctx, args.filters ?? {}, 3);
  const params: unknown[] = [[...parentIds], limit + 1, ...w.params];
  let after = '';
  if (cursor) {
    params.push(cursor.createdAt, cursor.id);
    after = `AND (t.created_at, t.id) < ($${params.length - 1}, $${params.length})`;
  }
  const rows = await rawQuery(ctx.db)<{ parentId: string; id: string }>(
    `SELECT p.parent_id, c.id
     FROM unnest($1::text[]) AS p(parent_id)
     CROSS JOIN LATERAL (
       SELECT t.id, t.created_at FROM "${t.table}" t
       WHERE t.${t.parent} = p.parent_id AND ${w.sql} ${after}
       ORDER BY t.created_at DESC, t.id DESC
       LIMIT $2
     ) c`,
    params,
  );
  const records = rows.length > 0 ? await load(rows.map((r) => r.id)) : [];
  const byId = new Map(records.map((r) => [r.id, r]));
  const pages = new Map<string, Page<T>>();
  for (const id of parentIds) pages.set(id, { data: [], hasMore: false, nextCursor: null });
  const grouped = new Map<string, T[]>();
  for (const r of rows) {
    const rec = byId.get(r.id);
    if (rec) (grouped.get(r.parentId) ?? grouped.set(r.parentId, []).get(r.parentId)!).push(rec);
  }
  for (const [parentId, list] of grouped) {
    list.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const hasMore = list.length > limit;
    const data = hasMore ? list.slice(0, limit) : list;
    pages.set(parentId, { data, hasMore, nextCursor: hasMore ? encodeCursor(data[data.length - 1]!) : null });
  }
  return pages;
}

/** How many children each parent has (with the same filters), in one query. */
export async function countsByParent(ctx: Ctx, t: ChildTable, parentIds: readonly string[], filters: ColumnFilters = {}): Promise<Map<string, number>> {
  if (!IDENT.test(t.table) || !IDENT.test(t.parent)) throw new Error(`bad table ${t.table}.${t.parent}`);
  const w = where(ctx, filters, 2);
  const rows = await rawQuery(ctx.db)<{ parentId: string; n: bigint | number }>(
    `SELECT t.${t.parent} AS parent_id, count(*) AS n FROM "${t.table}" t
     WHERE t.${t.parent} = ANY($1::text[]) AND ${w.sql}
     GROUP BY 1`,
    [[...parentIds], ...w.params],
  );
  const counts = new Map(parentIds.map((id) => [id, 0]));
  for (const r of rows) counts.set(r.parentId, Number(r.n));
  return counts;
}

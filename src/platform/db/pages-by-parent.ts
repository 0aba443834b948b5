// One keyset page per parent, for many parents, in two queries whatever their number: the ids of
// each parent's page come from one LATERAL query (an index range scan of limit+1 rows per
// parent), the rows from one `findMany` by id. This is what nested GraphQL connections
// (customer → payments, wallet → transactions …) use through a per-request DataLoader, instead
// of one query per parent. Counts per parent are one GROUP BY query.
// Raw SQL skips the tenancy extension, so the merchant filter is written here, always.
import { Prisma } from '../../generated/prisma/client.ts';
import type { Ctx } from '../context.ts';
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

function where(ctx: Ctx, t: ChildTable, filters: ColumnFilters) {
  const parts = [Prisma.sql`t.merchant_id = ${ctx.merchant.id}`];
  for (const [column, value] of Object.entries(filters)) {
    if (value === undefined) continue;
    if (!IDENT.test(column)) throw new Error(`bad column ${column}`);
    parts.push(Prisma.sql`t.${Prisma.raw(column)} = ${value}`);
  }
  return Prisma.join(parts, ' AND ');
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
  const after = cursor ? Prisma.sql`AND (t.created_at, t.id) < (${cursor.createdAt}, ${cursor.id})` : Prisma.empty;
  const rows = await ctx.db.$queryRaw<{ parent_id: string; id: string }[]>`
    SELECT p.parent_id, c.id
    FROM unnest(${[...parentIds]}::text[]) AS p(parent_id)
    CROSS JOIN LATERAL (
      SELECT t.id, t.created_at FROM ${Prisma.raw(`"${t.table}"`)} t
      WHERE t.${Prisma.raw(t.parent)} = p.parent_id AND ${where(ctx, t, args.filters ?? {})} ${after}
      ORDER BY t.created_at DESC, t.id DESC
      LIMIT ${limit + 1}
    ) c`;
  const records = rows.length > 0 ? await load(rows.map((r) => r.id)) : [];
  const byId = new Map(records.map((r) => [r.id, r]));
  const pages = new Map<string, Page<T>>();
  for (const id of parentIds) pages.set(id, { data: [], hasMore: false, nextCursor: null });
  const grouped = new Map<string, T[]>();
  for (const r of rows) {
    const rec = byId.get(r.id);
    if (rec) (grouped.get(r.parent_id) ?? grouped.set(r.parent_id, []).get(r.parent_id)!).push(rec);
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
  const rows = await ctx.db.$queryRaw<{ parent_id: string; n: bigint | number }[]>`
    SELECT t.${Prisma.raw(t.parent)} AS parent_id, count(*) AS n FROM ${Prisma.raw(`"${t.table}"`)} t
    WHERE t.${Prisma.raw(t.parent)} = ANY(${[...parentIds]}::text[]) AND ${where(ctx, t, filters)}
    GROUP BY 1`;
  const counts = new Map(parentIds.map((id) => [id, 0]));
  for (const r of rows) counts.set(r.parent_id, Number(r.n));
  return counts;
}

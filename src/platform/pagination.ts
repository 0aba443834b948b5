// Keyset pagination on (created_at, id), newest first. The cursor is opaque (base64url of the
// row's created_at in ms and its id) and identical for REST (`next_cursor`, `after`) and GraphQL
// (`endCursor`, edge `cursor`, `after`). Each page costs one index range scan of limit+1 rows.
import { ValidationError } from './errors.ts';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export interface Keyed {
  id: string;
  createdAt: Date;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
  /** How many rows the list has with its filters (ignoring the cursor); asked only when needed (GraphQL totalCount). */
  total?: () => Promise<number>;
}

export interface PageArgs {
  limit?: number | undefined;
  after?: string | undefined;
}

export function encodeCursor(row: Keyed): string {
  return Buffer.from(`${row.createdAt.getTime()}:${row.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, param = 'after'): Keyed {
  const raw = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  // The id: a generated one (cus_…) or a merchant's coupon code (SUMMER-25: letters, digits, _ and -, up to 64).
  const m = /^(\d{1,15}):([A-Za-z0-9_-]{1,64})$/.exec(raw);
  if (!m) throw new ValidationError('parameter_invalid', `Invalid ${param}: not a cursor returned by this API.`, param);
  return { createdAt: new Date(Number(m[1])), id: m[2]! };
}

export function checkLimit(limit: number | undefined | null, param = 'limit'): number {
  if (limit === undefined || limit === null) return DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new ValidationError('parameter_invalid', `Invalid ${param}: must be an integer between 1 and ${MAX_LIMIT}.`, param);
  }
  return limit;
}

/** The Prisma `where` for rows strictly after the cursor in (created_at DESC, id DESC) order. */
export function afterCursorWhere(after: string | undefined) {
  if (!after) return {};
  const c = decodeCursor(after);
  return { OR: [{ createdAt: { lt: c.createdAt } }, { createdAt: c.createdAt, id: { lt: c.id } }] };
}

export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

/** One keyset page's order and size: what `paginate` hands its fetch besides the where fragment. */
export interface PageSlice {
  orderBy: typeof NEWEST_FIRST;
  take: number;
}

/** All that `paginate` hands its fetch: the cursor's where fragment, the order and the size. */
export interface PageQuery extends PageSlice {
  where: ReturnType<typeof afterCursorWhere>;
}

/**
 * Runs one keyset page query. `fetch` receives the where fragment, order and take; the caller
 * merges the fragment into its own filters (AND) so tenancy and filters stay in one place.
 * `count` counts the rows of those same filters, run only if someone asks for the total.
 */
export async function paginate<T extends Keyed>(
  args: PageArgs,
  fetch: (q: PageQuery) => Promise<T[]>,
  count?: () => Promise<number>,
): Promise<Page<T>> {
  const limit = checkLimit(args.limit);
  const rows = await fetch({ where: afterCursorWhere(args.after), orderBy: NEWEST_FIRST, take: limit + 1 });
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  return { data, hasMore, nextCursor: hasMore ? encodeCursor(data[data.length - 1]!) : null, ...(count ? { total: count } : {}) };
}

/** The `where` for the exclusive created_after / created_before filters of every list. */
export function createdBetween(after: Date | undefined, before: Date | undefined) {
  return after || before ? { createdAt: { gt: after, lt: before } } : {};
}

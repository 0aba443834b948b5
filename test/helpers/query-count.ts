// Nested GraphQL connections must cost the same SQL whatever the number of parents: helpers that
// run a query for 5 and for N parents on an app without a background worker and compare the
// statement counts (the app's query log).
import { expect } from 'vitest';
import type { Client, TestApp } from './app.ts';

/** Runs f for 0..n-1, `width` at a time (seeding parents without flooding the pool). */
export async function inBatches<T>(n: number, f: (i: number) => Promise<T>, width = 10): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += width) out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, j) => f(i + j)))));
  return out;
}

/** Asserts that `query` (with variable `n`) costs as many statements for `parents` parents as for 5, and at most 20. */
export function queryCounter(app: () => TestApp, client: () => Client, parents: number) {
  async function cost(query: string, n: number) {
    app().queries.reset();
    const r = await client().gql(query, { n });
    expect(r.errors).toBeUndefined();
    return { queries: app().queries.count, sql: app().queries.sql.map((s) => s.replace(/\s+/g, ' ').slice(0, 140)), data: r.data };
  }
  return async function expectConstant(query: string, check: (data: any, n: number) => void) {
    const small = await cost(query, 5);
    check(small.data, 5);
    const large = await cost(query, parents);
    check(large.data, parents);
    expect(large.queries, `queries for ${parents} parents vs 5:\n${large.sql.join('\n')}\n---\n${small.sql.join('\n')}`).toBe(small.queries);
    // At most 20 statements of data: the frame row-level security puts around a raw statement on
    // the embedded database (BEGIN, set_config of the merchant, COMMIT: one in-process connection
    // shared by every merchant) is not a statement of data; on PostgreSQL the raw pool's connection
    // carries the merchant's setting and has no such frame.
    const data = large.sql.filter((s) => !/^(BEGIN|COMMIT|ROLLBACK|SELECT set_config\('billing\.merchant_id')/i.test(s.trim()));
    expect(data.length, `statements of data:\n${data.join('\n')}`).toBeLessThanOrEqual(20);
    return large;
  };
}

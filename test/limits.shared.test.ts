// The limits' counting (src/platform/rate-limit.ts) over one store shared by several limiters, as
// several instances share the database's `rate_limits` table: the store in memory always, the
// database store too when TEST_DATABASE_URL is set (keys of this run only, so other files sharing
// the database do not matter). Two RateLimiters — two instances — never serve more than the
// per-second limit of a key between them, serve all of it when asked for more, and ask the store
// once per lease, not once per request; window limits refuse at the same count whichever limiter
// counted the attempts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/platform/db/index.ts';
import { rawQueryOf } from '../src/platform/db/raw.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { RateLimitError } from '../src/platform/errors.ts';
import { randomToken } from '../src/platform/ids.ts';
import { AuthFailureLimiter, DatabaseLimitStore, defaultLease, MemoryLimitStore, RateLimiter, WindowLimit, type LimitStore } from '../src/platform/rate-limit.ts';
import { addToWindow, deleteEndedWindows } from '../src/platform/rate-limit.store.ts';

let db: Database | undefined;
beforeAll(async () => {
  if (!process.env.TEST_DATABASE_URL) return;
  db = await openDatabase({ url: process.env.TEST_DATABASE_URL, poolSize: 4 });
  await migrate(db);
});
afterAll(async () => {
  await db?.close();
});

/** A store that counts the calls made to it. */
function counted(store: LimitStore) {
  const calls = { add: 0 };
  const s: LimitStore = {
    kind: store.kind,
    add: (k, p, w) => (calls.add++, store.add(k, p, w)),
    remove: (k, p) => store.remove(k, p),
  };
  return { store: s, calls };
}

const stores: [string, () => LimitStore][] = [
  ['memory', () => new MemoryLimitStore()],
  ...(process.env.TEST_DATABASE_URL ? ([['database', () => new DatabaseLimitStore(rawQueryOf(db!.prisma))]] as [string, () => LimitStore][]) : []),
];

/** Runs `fn` until it finishes within `ms` (a loaded machine can stretch a burst over a window's end), at most 4 times. */
async function within<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    await new Promise((r) => setTimeout(r, 1100)); // a fresh window
    const started = Date.now();
    const r = await fn();
    if (Date.now() - started < ms || i === 3) return r;
  }
}

async function burst(limiters: RateLimiter[], key: string, n: number, points = 1) {
  const outcomes = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      limiters[i % limiters.length]!.consume(key, points).then(
        () => 'ok' as const,
        (e: unknown) => {
          if (!(e instanceof RateLimitError)) throw e;
          return Number(e.headers['Retry-After']);
        },
      ),
    ),
  );
  return { ok: outcomes.filter((o) => o === 'ok').length, refused: outcomes.filter((o) => o !== 'ok') as number[] };
}

describe.each(stores)('limits over one %s store', (_name, make) => {
  it('two request limiters (leases of 10) serve exactly the limit of 100 between them, in a dozen or so store calls, then refuse with Retry-After 1', async () => {
    const { store, calls } = counted(make());
    const a = new RateLimiter(100, store, 10);
    const b = new RateLimiter(100, store, 10);
    const key = `ck_shared_${randomToken(8)}`;
    const r = await within(800, async () => {
      calls.add = 0;
      return burst([a, b], key, 300);
    });
    expect(r.ok).toBe(100);
    expect(r.refused).toHaveLength(200);
    expect(new Set(r.refused)).toEqual(new Set([1]));
    // Leases of 10, shrinking to a quarter of what is left near the end: far fewer calls than the
    // 300 requests (a statement per request), and every limiter stops asking once it saw the budget spent.
    expect(calls.add).toBeLessThanOrEqual(40);
    // The next second has a budget again.
    await new Promise((res) => setTimeout(res, 1100));
    await expect(a.consume(key)).resolves.toBeUndefined();
  });

  it('leases of 1 are exact too; a request of several points (aliased mutations) is refused whole when the rest of the budget is smaller', async () => {
    const store = make();
    const a = new RateLimiter(5, store, 1);
    const b = new RateLimiter(5, store, 1);
    const key = `ck_exact_${randomToken(8)}`;
    const r = await within(800, () => burst([a, b], key, 20));
    expect(r.ok).toBe(5);
    const key2 = `ck_points_${randomToken(8)}`;
    await within(800, async () => {
      await a.consume(key2, 3);
      await expect(b.consume(key2, 3)).rejects.toBeInstanceOf(RateLimitError);
      await b.consume(key2, 2); // what was left
      await expect(a.consume(key2, 1)).rejects.toBeInstanceOf(RateLimitError);
    });
  });

  it('an address limit of 4 refuses the 5th attempt whichever limiter counted the first four; a refused attempt is not counted; a success is given back', async () => {
    const store = make();
    const one = new AuthFailureLimiter({ perClientPerMinute: 3, perAddressPerMinute: 4 }, store);
    const two = new AuthFailureLimiter({ perClientPerMinute: 3, perAddressPerMinute: 4 }, store);
    const key = `198.51.100.7-${randomToken(6)}`; // a key of this run only
    const prefix = `test_${randomToken(6)}`;
    const limit = new WindowLimit(store, prefix, 4, 60_000);
    const other = new WindowLimit(store, prefix, 4, 60_000);
    const giveBack = await limit.take(key);
    await other.take(key);
    await limit.take(key);
    await other.take(key);
    await expect(limit.take(key)).rejects.toBeInstanceOf(RateLimitError);
    await expect(other.take(key)).rejects.toBeInstanceOf(RateLimitError);
    const retry = await other.take(key).catch((e: RateLimitError) => Number(e.headers['Retry-After']));
    expect(retry).toBeGreaterThan(55);
    expect(retry).toBeLessThanOrEqual(60);
    // The refused attempts were not counted: giving one back makes room for exactly one more (on a
    // limiter that has not refused the key itself: one that has waits for the window's end).
    giveBack();
    await new Promise((r) => setTimeout(r, 50));
    const third = new WindowLimit(store, prefix, 4, 60_000);
    await third.take(key);
    await expect(third.take(key)).rejects.toBeInstanceOf(RateLimitError);

    // Client-id failures: counted by both, the tarpit starts after the 3 free ones in total.
    const client = `ck_tarpit_${randomToken(8)}`;
    expect(await one.failed(client)).toBe(0);
    expect(await two.failed(client)).toBe(0);
    expect(await one.failed(client)).toBe(0);
    expect(await two.failed(client)).toBe(100);
    expect(await one.failed(client)).toBe(200);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('the rate_limits table', () => {
  it('windows follow the database clock: a new window after the last ended; ended ones are purged a minute later', async () => {
    const q = rawQueryOf(db!.prisma);
    const key = `test_window:${randomToken(8)}`;
    expect(await addToWindow(q, key, 2, 300)).toMatchObject({ points: 2 });
    const w = await addToWindow(q, key, 3, 300);
    expect(w.points).toBe(5);
    expect(w.msLeft).toBeGreaterThan(0);
    expect(w.msLeft).toBeLessThanOrEqual(300);
    await new Promise((r) => setTimeout(r, 350));
    expect(await addToWindow(q, key, 1, 300)).toMatchObject({ points: 1 });
    // Ended more than a minute ago: purged; still running or recently ended: kept.
    const old = `test_window:${randomToken(8)}`;
    await q(`INSERT INTO rate_limits (key, points, expires_at) VALUES ($1, 1, now() - interval '2 minutes')`, [old]);
    await deleteEndedWindows(q, 1000);
    expect(await q(`SELECT key FROM rate_limits WHERE key = ANY($1)`, [[old, key]])).toEqual([{ key }]);
  });
});

describe('the default lease', () => {
  it('is a twentieth of the limit, between 1 and 50', () => {
    expect([1, 5, 20, 39, 40, 500, 1000, 100_000].map(defaultLease)).toEqual([1, 1, 1, 1, 2, 25, 50, 50]);
  });
});

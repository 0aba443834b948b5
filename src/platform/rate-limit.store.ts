// The shared rate-limit counters' statements (table `rate_limits`, src/platform/rate-limit.ts):
// one fixed window per key, its length and its expiry measured on the database server's clock so
// that instances whose clocks differ still share one window. System work (no merchant): the
// unscoped RawQuery.
import type { RawQuery } from './db/raw.ts';

/** A key's window after a change: the points counted in it and the milliseconds it has left. */
export interface CounterWindow {
  points: number;
  msLeft: number;
}

/**
 * Adds `points` to the key's current window, or starts a new window of `windowMs` holding `points`
 * when the key has none or its window is over. One statement (an upsert on the key); concurrent
 * calls for one key queue on its row, so every caller sees a distinct total.
 */
export async function addToWindow(q: RawQuery, key: string, points: number, windowMs: number): Promise<CounterWindow> {
  const [row] = await q<{ points: number; msLeft: number }>(
    `INSERT INTO rate_limits AS r (key, points, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
     ON CONFLICT (key) DO UPDATE SET
       points = CASE WHEN r.expires_at <= now() THEN EXCLUDED.points ELSE r.points + EXCLUDED.points END,
       expires_at = CASE WHEN r.expires_at <= now() THEN EXCLUDED.expires_at ELSE r.expires_at END
     RETURNING points, ceil(extract(epoch FROM expires_at - now()) * 1000)::int AS ms_left`,
    [key, points, windowMs],
  );
  return { points: row!.points, msLeft: Math.max(0, row!.msLeft) };
}

/** Takes `points` back from the key's current window (never below 0); nothing when it is over. */
export async function removeFromWindow(q: RawQuery, key: string, points: number): Promise<void> {
  await q(`UPDATE rate_limits SET points = GREATEST(points - $2, 0) WHERE key = $1 AND expires_at > now()`, [key, points]);
}

/** Deletes up to `batch` windows that ended more than a minute ago (database clock); how many. */
export async function deleteEndedWindows(q: RawQuery, batch: number): Promise<number> {
  const rows = await q<{ one: number }>(
    `DELETE FROM rate_limits WHERE key IN (SELECT key FROM rate_limits WHERE expires_at < now() - interval '1 minute' LIMIT $1) RETURNING 1 AS one`,
    [batch],
  );
  return rows.length;
}

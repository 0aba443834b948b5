// The test clock's statements (merchants.clock_offset_ms and clock_parked_until, and the advance's
// lease: merchants.clock_advance_token / clock_advance_lease_until). The rules are in index.ts.
//
// A clock is set by its offset and its park (src/platform/clock.ts): parked until real time U at
// billing time T is offset = T − U, clock_parked_until = U (it reads T until U, then runs on from
// T); running from T is offset = T − now, clock_parked_until = NULL. Each statement reads real time
// once (`c.rt`, whole milliseconds) and computes the clock's new state from where it stands, in
// whole milliseconds, so it never jumps.
import type { PrismaClient } from '../../platform/db/index.ts';
import { asRawTx, merchantSql, rawQueryOf } from '../../platform/db/raw.ts';
import type { TenantTx } from '../../platform/db/tenant.ts';

/** Real time, read once per statement (a FROM item). */
const REAL_NOW = `(SELECT date_trunc('milliseconds', clock_timestamp()) AS rt) c`;
/** Where the clock of the merchants row being changed stands (its old values): billingNowSql's rule for a test merchant. */
const STANDING = `(greatest(c.rt, clock_parked_until) + clock_offset_ms * interval '1 millisecond')`;
const ms = (t: string) => `(extract(epoch from ${t}) * 1000)::bigint`;
/** SET clauses that put the clock at `at` and park it there until real time `until` (an expression that may be NULL: running on from `at`). */
const placeClock = (at: string, until: string) => `clock_offset_ms = ${ms(at)} - ${ms(`coalesce(${until}, c.rt)`)}, clock_parked_until = ${until}`;

/** What a statement that sets the clock returns: the clock's new state and its time. */
export interface ClockRow {
  clockOffsetMs: bigint;
  clockParkedUntil: Date | null;
  now: Date;
}

/**
 * Sets a test merchant's clock to `target`, or leaves it where it stands when that is later (the
 * clock never moves back), running on from there — or, with `parkMs`, parked there for that long.
 * With `leaseToken` only while that advance still holds the merchant's lease (nothing: lost).
 */
export async function placeClockRow(tx: TenantTx, merchantId: string, target: Date, parkMs: number | null, leaseToken: string | null = null): Promise<ClockRow | undefined> {
  const [row] = await merchantSql(asRawTx(tx).raw, merchantId)<ClockRow>(
    `UPDATE merchants SET ${placeClock(`greatest(${STANDING}, $2::timestamptz)`, `c.rt + $3::int * interval '1 millisecond'`)}
     FROM ${REAL_NOW}
     WHERE id = $1 AND mode = 'test' AND ($4::text IS NULL OR clock_advance_token = $4::text)
     RETURNING clock_offset_ms, clock_parked_until, ${STANDING} AS now`,
    [target, parkMs, leaseToken],
  );
  return row;
}

/**
 * Takes the merchant's advance lease for `leaseSeconds` when nobody holds it or its holder's has run
 * out, and parks its clock where it stands for as long (the advance runs due work at its own times
 * while the clock shows the old time; nothing it is to run becomes due to the background worker
 * meanwhile): the merchant's row when taken.
 */
export function takeAdvanceLeaseRow(prisma: PrismaClient, merchantId: string, token: string, leaseSeconds: number): Promise<{ id: string }[]> {
  return rawQueryOf(prisma)<{ id: string }>(
    `UPDATE merchants SET clock_advance_token = $2, clock_advance_lease_until = c.rt + make_interval(secs => $3::float8),
       ${placeClock(STANDING, `c.rt + make_interval(secs => $3::float8)`)}
     FROM ${REAL_NOW}
     WHERE id = $1 AND mode = 'test' AND (clock_advance_token IS NULL OR clock_advance_lease_until IS NULL OR clock_advance_lease_until < now())
     RETURNING id`,
    [merchantId, token, leaseSeconds],
  );
}

/** Extends the lease `token` holds by `leaseSeconds`, and the clock's park with it: the merchant's row when `token` still holds it. */
export function renewAdvanceLeaseRow(prisma: PrismaClient, merchantId: string, token: string, leaseSeconds: number): Promise<{ id: string }[]> {
  return rawQueryOf(prisma)<{ id: string }>(
    `UPDATE merchants SET clock_advance_lease_until = c.rt + make_interval(secs => $3::float8),
       ${placeClock(STANDING, `c.rt + make_interval(secs => $3::float8)`)}
     FROM ${REAL_NOW}
     WHERE id = $1 AND clock_advance_token = $2
     RETURNING id`,
    [merchantId, token, leaseSeconds],
  );
}

/**
 * Clears the lease, if `token` still holds it, and lets the clock run on from where it stands —
 * unless `keepParked` (an advance that stopped part-way parked it at its stop point for its repeat).
 */
export async function clearAdvanceLease(prisma: PrismaClient, merchantId: string, token: string, keepParked: boolean): Promise<void> {
  await rawQueryOf(prisma)(
    `UPDATE merchants SET clock_advance_token = NULL, clock_advance_lease_until = NULL,
       clock_offset_ms = CASE WHEN $3::boolean THEN clock_offset_ms ELSE ${ms(STANDING)} - ${ms('c.rt')} END,
       clock_parked_until = CASE WHEN $3::boolean THEN clock_parked_until END
     FROM ${REAL_NOW}
     WHERE id = $1 AND clock_advance_token = $2`,
    [merchantId, token, keepParked],
  );
}

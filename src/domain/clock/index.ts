// The test clock: a test-mode merchant's billing clock is real time plus an offset that only moves
// forward (test helpers), so time-based work — checkout expiry, renewals, credit expiry, webhook
// retries — can be made due deterministically. The rule for "now" itself (and its SQL) is the one
// Clock in src/platform/clock.ts; this area owns moving the clock and the advance's lease.
import type { Ctx } from '../../platform/context.ts';
import { inTransaction } from '../../platform/db/tenant.ts';
import type { PrismaClient } from '../../platform/db/index.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { parse, z, timestamp } from '../../platform/validation.ts';
import { clockOf, readClock } from '../../platform/clock.ts';
import { clearAdvanceLease, placeClockRow, renewAdvanceLeaseRow, takeAdvanceLeaseRow } from './store.ts';

export interface ClockOwner {
  id: string;
  mode: 'test' | 'live';
}

/**
 * The test helpers (finishing checkouts, the clock) exist for test-mode merchants only; to a live
 * merchant they are not there at all (404), through REST and GraphQL alike.
 */
export function requireTestMode(merchant: ClockOwner): void {
  if (merchant.mode !== 'test') throw new NotFoundError('test helper', null, null);
}

/** The test clock's time (test mode only), read afresh. */
export async function testClockNow(prisma: PrismaClient, merchant: ClockOwner): Promise<Date> {
  requireTestMode(merchant);
  return readClock(prisma, merchant);
}

export const MAX_ADVANCE_SECONDS = 20 * 366 * 24 * 3600; // twenty years

export const clockAdvanceBody = z
  .strictObject({
    to: timestamp.optional().meta({ description: 'The new time of the clock (ISO 8601); must be later than now on the clock.' }),
    seconds: z
      .number()
      .int({ error: 'must be a whole number of seconds' })
      .min(1, { error: 'must be at least 1' })
      .max(MAX_ADVANCE_SECONDS, { error: `must be at most ${MAX_ADVANCE_SECONDS}` })
      .optional()
      .meta({ description: 'Seconds to move the clock forward.', example: 86400 }),
  })
  .superRefine((v, ctx) => {
    if ((v.to === undefined) === (v.seconds === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'Give exactly one of `to` or `seconds`.', path: v.to !== undefined ? ['seconds'] : ['to'] });
    }
  });

export type ClockAdvanceInput = z.input<typeof clockAdvanceBody>;

/** Checks an advance request without reading the clock: 404 for a live merchant, 400 for bad input. */
export function checkClockAdvance(merchant: ClockOwner, input: ClockAdvanceInput) {
  requireTestMode(merchant);
  return parse(clockAdvanceBody, input);
}

/** The time an advance request moves the clock to (validated; the clock is not moved yet). */
export async function advanceTarget(prisma: PrismaClient, merchant: ClockOwner, input: ClockAdvanceInput): Promise<Date> {
  const body = checkClockAdvance(merchant, input);
  const realNow = Date.now();
  const current = (await readClock(prisma, merchant)).getTime();
  const target = body.to ? body.to.getTime() : current + body.seconds! * 1000;
  if (body.to && target <= current) {
    throw new ValidationError('parameter_invalid', `Invalid to: the clock only moves forward; it is already ${new Date(current).toISOString()}.`, 'to');
  }
  if (target - realNow > MAX_ADVANCE_SECONDS * 1000) {
    throw new ValidationError('parameter_invalid', 'Invalid to: at most twenty years ahead of real time.', body.to ? 'to' : 'seconds');
  }
  return new Date(target);
}

/**
 * Sets the clock to `target` (never backwards: an earlier advance that went further wins, and the
 * clock stays where it stands) and lets it run on from there — or, with `parkMs`, parks it there
 * for that long (an advance that stopped part-way, until it is repeated). In its own transaction on
 * the request's client (so an idempotency key counts it as a committed step). Returns the clock's
 * time: `target`, or where it stood when that was later.
 */
export async function setClock(ctx: Ctx, target: Date, opts: { parkMs?: number; leaseToken?: string } = {}): Promise<Date> {
  const row = await inTransaction(ctx.db, (tx) => placeClockRow(tx, ctx.merchant.id, target, opts.parkMs ?? null, opts.leaseToken ?? null));
  if (!row && opts.leaseToken !== undefined && ctx.merchant.mode === 'test') throw new LeaseLost();
  if (!row) return readClock(ctx.runtime.prisma, ctx.merchant);
  // The request's own clock reads the new time from here on.
  clockOf(ctx).learn(row.clockOffsetMs, row.clockParkedUntil);
  return row.now;
}

/** setClock for an advance whose lease another advance took over (it ran out): the clock was not moved. */
export class LeaseLost extends Error {}

export function clockToJSON(now: Date) {
  return { object: 'test_clock' as const, now: now.toISOString() };
}

// ---- the lease that makes clock advances of one merchant run one at a time across processes
// (merchants.clock_advance_token / clock_advance_lease_until; src/jobs/clock-advance.ts holds it).
// The clock is parked while the lease is held (merchants.clock_parked_until, with the lease): the
// advance runs the work due by its target, each job at its own due time, while the clock stands
// at the time it started from, so none of that work becomes due to the background worker (which
// would run it late, with the clock of its claim).

/** Takes the merchant's advance lease for `leaseMs` when nobody holds it or its holder's has run out, parking the clock where it stands; false otherwise. */
export async function takeAdvanceLease(prisma: PrismaClient, merchantId: string, token: string, leaseMs: number): Promise<boolean> {
  const rows = await takeAdvanceLeaseRow(prisma, merchantId, token, leaseMs / 1000);
  return rows.length === 1;
}

/** Extends the lease `token` holds by `leaseMs` (and the clock's park); false when it is not held by `token` any more (it ran out and was taken over). */
export async function renewAdvanceLease(prisma: PrismaClient, merchantId: string, token: string, leaseMs: number): Promise<boolean> {
  const rows = await renewAdvanceLeaseRow(prisma, merchantId, token, leaseMs / 1000);
  return rows.length === 1;
}

/**
 * Gives the lease back, if `token` still holds it, and lets the clock run on from where it stands;
 * with `keepParked` the clock stays parked as setClock left it (at an incomplete advance's stop point).
 */
export async function releaseAdvanceLease(prisma: PrismaClient, merchantId: string, token: string, opts: { keepParked?: boolean } = {}): Promise<void> {
  await clearAdvanceLease(prisma, merchantId, token, opts.keepParked ?? false);
}

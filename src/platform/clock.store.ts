// The billing clock's one statement: a test merchant's clock (merchants.clock_offset_ms, and
// clock_parked_until while it is parked). The rule for "now" is src/platform/clock.ts; its SQL
// form, billingNowSql, is here (statements that need billing time without a value from
// JavaScript compose it: the job claim, recordEvent).
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { Db } from './db/tenant.ts';

/** What the offset is read through: a client, a merchant's client or its transaction. */
export type OffsetReader = Pick<PrismaClient, 'merchant'> | Db;

/** What a test merchant's clock is made of (src/platform/clock.ts, billingTime). */
export interface ClockState {
  clockOffsetMs: bigint;
  /** parked (standing still) until this real time; null or past: running */
  clockParkedUntil?: Date | null;
}

/** The merchant's clock offset (and park); null when there is no such merchant. */
export function findClockOffset(db: OffsetReader, merchantId: string): Promise<ClockState | null> {
  return (db as Pick<PrismaClient, 'merchant'>).merchant.findUnique({ where: { id: merchantId }, select: { clockOffsetMs: true, clockParkedUntil: true } });
}

/**
 * The rule in SQL: `m` is an alias of the merchants row; `at` (optional) an SQL expression of a
 * known time — the job's, or one JavaScript already has — that wins when not null. A parked clock
 * stands at clock_parked_until + offset until real time reaches clock_parked_until (greatest()
 * passes over a null). Whole milliseconds, like JavaScript's Date and the timestamptz(3) columns.
 */
export const billingNowSql = (m: string, at?: string) =>
  `date_trunc('milliseconds', ${at ? `coalesce(${at}, ` : ''}CASE WHEN ${m}.mode = 'test' THEN greatest(clock_timestamp(), ${m}.clock_parked_until) + ${m}.clock_offset_ms * interval '1 millisecond' ELSE clock_timestamp() END${at ? ')' : ''})`;

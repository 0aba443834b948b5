// The billing clock's one statement: a test merchant's clock offset (merchants.clock_offset_ms).
// The rule for "now" (and its SQL, billingNowSql) is src/platform/clock.ts.
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { Db } from './db/tenant.ts';

/** What the offset is read through: a client, a merchant's client or its transaction. */
export type OffsetReader = Pick<PrismaClient, 'merchant'> | Db;

/** The merchant's clock offset; null when there is no such merchant. */
export function findClockOffset(db: OffsetReader, merchantId: string): Promise<{ clockOffsetMs: bigint } | null> {
  return (db as Pick<PrismaClient, 'merchant'>).merchant.findUnique({ where: { id: merchantId }, select: { clockOffsetMs: true } });
}

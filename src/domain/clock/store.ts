// The test clock's statements (merchants.clock_offset_ms, and the advance's lease:
// merchants.clock_advance_token / clock_advance_lease_until). The rules are in index.ts.
import type { PrismaClient } from '../../platform/db/index.ts';
import { rawQueryOf } from '../../platform/db/raw.ts';
import type { TenantTx } from '../../platform/db/tenant.ts';

/** Sets a test merchant's clock offset to `offset` when it is behind it (the clock never moves back); how many rows changed (0 or 1). */
export async function moveClockOffsetForward(tx: TenantTx, merchantId: string, offset: bigint): Promise<number> {
  const r = await tx.merchant.updateMany({ where: { id: merchantId, mode: 'test', clockOffsetMs: { lt: offset } }, data: { clockOffsetMs: offset } });
  return r.count;
}

/** Takes the merchant's advance lease for `leaseSeconds` when nobody holds it or its holder's has run out: the merchant's row when taken. */
export function takeAdvanceLeaseRow(prisma: PrismaClient, merchantId: string, token: string, leaseSeconds: number): Promise<{ id: string }[]> {
  return rawQueryOf(prisma)<{ id: string }>(
    `UPDATE merchants SET clock_advance_token = $2, clock_advance_lease_until = now() + make_interval(secs => $3::float8)
     WHERE id = $1 AND mode = 'test' AND (clock_advance_token IS NULL OR clock_advance_lease_until IS NULL OR clock_advance_lease_until < now())
     RETURNING id`,
    [merchantId, token, leaseSeconds],
  );
}

/** Extends the lease `token` holds by `leaseSeconds`: the merchant's row when `token` still holds it. */
export function renewAdvanceLeaseRow(prisma: PrismaClient, merchantId: string, token: string, leaseSeconds: number): Promise<{ id: string }[]> {
  return rawQueryOf(prisma)<{ id: string }>(
    `UPDATE merchants SET clock_advance_lease_until = now() + make_interval(secs => $3::float8) WHERE id = $1 AND clock_advance_token = $2 RETURNING id`,
    [merchantId, token, leaseSeconds],
  );
}

/** Clears the lease, if `token` still holds it. */
export async function clearAdvanceLease(prisma: PrismaClient, merchantId: string, token: string): Promise<void> {
  await rawQueryOf(prisma)(`UPDATE merchants SET clock_advance_token = NULL, clock_advance_lease_until = NULL WHERE id = $1 AND clock_advance_token = $2`, [
    merchantId,
    token,
  ]);
}

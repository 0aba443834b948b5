// The pricing store: every statement on coupons and tax_rates (src/domain/pricing).
import type { Coupon, Prisma, TaxRate } from '../../generated/prisma/client.ts';
import { rawQuery } from '../../platform/db/raw.ts';
import type { Db, TenantTx } from '../../platform/db/tenant.ts';
import type { PageSlice } from '../../platform/pagination.ts';

// ---------------------------------------------------------------- coupons

export function insertCoupon(tx: TenantTx, data: Prisma.CouponUncheckedCreateInput): Promise<Coupon> {
  return tx.coupon.create({ data });
}

export function findCoupon(db: Db, merchantId: string, id: string): Promise<Coupon | null> {
  return db.coupon.findUnique({ where: { merchantId_id: { merchantId, id } } });
}

/** Locks a coupon's row (its redemptions and deletion apply one after the other) and reads it. */
export async function lockCoupon(tx: TenantTx, merchantId: string, id: string): Promise<Coupon | null> {
  await rawQuery(tx)('SELECT id FROM coupons WHERE merchant_id = $1 AND id = $2 FOR UPDATE', [merchantId, id]);
  return findCoupon(tx, merchantId, id);
}

export function listCoupons(db: Db, where: Prisma.CouponWhereInput, page: PageSlice): Promise<Coupon[]> {
  return db.coupon.findMany({ where, ...page });
}

export function countCoupons(db: Db, where: Prisma.CouponWhereInput): Promise<number> {
  return db.coupon.count({ where });
}

export function updateCoupon(tx: TenantTx, merchantId: string, id: string, data: Prisma.CouponUncheckedUpdateInput): Promise<Coupon> {
  return tx.coupon.update({ where: { merchantId_id: { merchantId, id } }, data });
}

// ---------------------------------------------------------------- tax rates

export function insertTaxRate(tx: TenantTx, data: Prisma.TaxRateUncheckedCreateInput): Promise<TaxRate> {
  return tx.taxRate.create({ data });
}

export function findTaxRate(db: Db, id: string): Promise<TaxRate | null> {
  return db.taxRate.findUnique({ where: { id } });
}

export function listTaxRatesById(db: Db, ids: string[]): Promise<TaxRate[]> {
  return db.taxRate.findMany({ where: { id: { in: ids } } });
}

export function listTaxRates(db: Db, where: Prisma.TaxRateWhereInput, page: PageSlice): Promise<TaxRate[]> {
  return db.taxRate.findMany({ where, ...page });
}

export function countTaxRates(db: Db, where: Prisma.TaxRateWhereInput): Promise<number> {
  return db.taxRate.count({ where });
}

/** active → false, only from active (one statement: two archives at once change it once); whether it changed. */
export async function archiveTaxRate(tx: TenantTx, id: string): Promise<boolean> {
  return (await tx.taxRate.updateMany({ where: { id, active: true }, data: { active: false } })).count === 1;
}

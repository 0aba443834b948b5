// The refunds area's statements: refunds, and the refunded amount they hold on their payment.
import type { Payment, Prisma, Refund } from '../../generated/prisma/client.ts';
import type { Db, TenantTx } from '../../platform/db/tenant.ts';
import type { PageSlice } from '../../platform/pagination.ts';

/** One keyset page's order and size (platform/pagination.ts `paginate`). */

/** Counts `amount` as refunded on the payment (writes the payments area's table). */
export function addAmountRefunded(tx: TenantTx, paymentId: string, amount: bigint): Promise<Payment> {
  return tx.payment.update({ where: { id: paymentId }, data: { amountRefunded: { increment: amount } } });
}

/** Releases `amount` of what the payment counts as refunded (writes the payments area's table). */
export function releaseAmountRefunded(tx: TenantTx, paymentId: string, amount: bigint): Promise<Payment> {
  return tx.payment.update({ where: { id: paymentId }, data: { amountRefunded: { decrement: amount } } });
}

export function insertRefund(tx: TenantTx, data: Prisma.RefundUncheckedCreateInput): Promise<Refund> {
  return tx.refund.create({ data });
}

export function findRefund(db: Db, id: string): Promise<Refund | null> {
  return db.refund.findUnique({ where: { id } });
}

/** The refund; Prisma's not-found error when there is none. */
export function findRefundOrThrow(tx: TenantTx, id: string): Promise<Refund> {
  return tx.refund.findUniqueOrThrow({ where: { id } });
}

/** The refund with its payment's processor reference (the charge the processor refunds). */
export function findRefundWithChargeRef(db: Db, id: string): Promise<(Refund & { payment: { processorRef: string | null } }) | null> {
  return db.refund.findUnique({ where: { id }, include: { payment: { select: { processorRef: true } } } });
}

export function markRefundSucceeded(tx: TenantTx, id: string, processorRef: string): Promise<Refund> {
  return tx.refund.update({ where: { id }, data: { status: 'succeeded', processorRef } });
}

export function markRefundFailed(tx: TenantTx, id: string, failureCode: string): Promise<Refund> {
  return tx.refund.update({ where: { id }, data: { status: 'failed', failureCode } });
}

export function listRefunds(db: Db, where: Prisma.RefundWhereInput, page: PageSlice): Promise<Refund[]> {
  return db.refund.findMany({ where, ...page });
}

export function countRefunds(db: Db, where: Prisma.RefundWhereInput): Promise<number> {
  return db.refund.count({ where });
}

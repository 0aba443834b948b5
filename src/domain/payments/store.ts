// The payments area's statements: payments (and what a payment reads of its customer and saved method).
import type { Customer, Merchant, PaymentMethod, Prisma, PrismaClient } from '../../generated/prisma/client.ts';
import type { Db, TenantTx } from '../../platform/db/tenant.ts';
import type { PageSlice } from '../../platform/pagination.ts';
import type { PaymentWithCustomer } from './schema.ts';

/** One keyset page's order and size (platform/pagination.ts `paginate`). */

const withCustomer = { customer: true } as const;

export function findPayment(db: Db, id: string): Promise<PaymentWithCustomer | null> {
  return db.payment.findUnique({ where: { id }, include: withCustomer });
}

/** What the hosted checkout re-reads before an attempt: the payment's status and attempt count. */
export function findPaymentAttempts(db: Db, id: string): Promise<{ status: string; attempts: number } | null> {
  return db.payment.findUnique({ where: { id }, select: { status: true, attempts: true } });
}

/** The payment behind a checkout token, with its customer and merchant (any merchant's: the unscoped client). */
export function findPaymentByCheckoutToken(prisma: PrismaClient, token: string): Promise<(PaymentWithCustomer & { merchant: Merchant }) | null> {
  return prisma.payment.findUnique({ where: { checkoutToken: token }, include: { customer: true, merchant: true } });
}

export function insertPayment(tx: TenantTx, data: Prisma.PaymentUncheckedCreateInput): Promise<PaymentWithCustomer> {
  return tx.payment.create({ data, include: withCustomer });
}

export function updatePayment(tx: TenantTx, id: string, data: Prisma.PaymentUpdateInput): Promise<PaymentWithCustomer> {
  return tx.payment.update({ where: { id }, data, include: withCustomer });
}

export function listPayments(db: Db, where: Prisma.PaymentWhereInput, page: PageSlice): Promise<PaymentWithCustomer[]> {
  return db.payment.findMany({ where, include: withCustomer, ...page });
}

export function countPayments(db: Db, where: Prisma.PaymentWhereInput): Promise<number> {
  return db.payment.count({ where });
}

export function findPaymentsByIds(db: Db, ids: string[]): Promise<PaymentWithCustomer[]> {
  return db.payment.findMany({ where: { id: { in: ids } }, include: withCustomer });
}

/** The newest customer with this email that is not deleted (reads the customers area's table). */
export function findLatestCustomerByEmail(tx: TenantTx, email: string): Promise<Customer | null> {
  return tx.customer.findFirst({ where: { email, deletedAt: null }, orderBy: { createdAt: 'desc' } });
}

/** A payment method by id: payment-methods' statement (its store). */
export { findPaymentMethod } from '../payment-methods/store.ts';

// The payments area's statements: payments (and what a payment reads of its customer and saved method).
import type { Customer, Merchant, Payment, PaymentMethod, Prisma, PrismaClient } from '../../generated/prisma/client.ts';
import type { Db, TenantTx } from '../../platform/db/tenant.ts';
import { insertRows, merchantSql, type RawQuery } from '../../platform/db/raw.ts';
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

const PAYMENT_COLUMNS = [
  ['id', 'text'], ['merchant_id', 'text'], ['customer_id', 'text'], ['amount', 'int8'], ['currency', 'text'], ['status', 'text'], ['purpose', 'text'],
  ['redirect_url', 'text'], ['cancel_url', 'text'], ['checkout', 'jsonb'], ['metadata', 'jsonb'], ['method', 'text'], ['checkout_token', 'text'],
  ['expires_at', 'timestamptz'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz'], ['payment_method_id', 'text'], ['attempts', 'int4'],
] as const;

/** Many new payments (not charged yet: no outcome) in one statement (a renewal batch's). */
export async function insertPayments(q: RawQuery, rows: Payment[]): Promise<void> {
  await insertRows(
    q,
    'payments',
    PAYMENT_COLUMNS,
    rows.map((p) => [
      p.id, p.merchantId, p.customerId, p.amount, p.currency, p.status, p.purpose, p.redirectUrl, p.cancelUrl, p.checkout, p.metadata, p.method,
      p.checkoutToken, p.expiresAt, p.createdAt, p.updatedAt, p.paymentMethodId, p.attempts,
    ]),
  );
}

/**
 * Records the successful charge of many payments in one statement: each only while still
 * `processing` its first attempt (the row's lock, and the condition its single-row outcome checks);
 * the ids it changed.
 */
export async function markFirstAttemptsSucceeded(
  q: RawQuery,
  merchantId: string,
  rows: { id: string; details: unknown; processorRef: string; at: Date }[],
): Promise<string[]> {
  if (rows.length === 0) return [];
  const changed = await merchantSql(q, merchantId)<{ id: string }>(
    `UPDATE payments p SET status = 'succeeded', method_details = v.details, processor_ref = v.ref, failure_code = NULL, failure_message = NULL,
            completed_at = v.at, updated_at = now()
     FROM unnest($2::text[], $3::jsonb[], $4::text[], $5::timestamptz[]) AS v(id, details, ref, at)
     WHERE p.merchant_id = $1 AND p.id = v.id AND p.status = 'processing' AND p.attempts = 1
     RETURNING p.id`,
    [rows.map((r) => r.id), rows.map((r) => (r.details == null ? null : JSON.stringify(r.details))), rows.map((r) => r.processorRef), rows.map((r) => r.at)],
  );
  return changed.map((r) => r.id);
}

/** Locks, in id order, the payments among `ids` still waiting for their first attempt (`created`); their ids. */
export async function lockCreatedPayments(q: RawQuery, merchantId: string, ids: string[]): Promise<Set<string>> {
  const rows = await merchantSql(q, merchantId)<{ id: string }>(
    `SELECT id FROM payments WHERE merchant_id = $1 AND id = ANY($2::text[]) AND status = 'created' ORDER BY id FOR UPDATE`,
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}

/** Claims the first attempt of many locked `created` payments (→ processing, with their method), in one statement. */
export async function claimFirstAttempts(q: RawQuery, merchantId: string, rows: { id: string; method: string }[]): Promise<void> {
  if (rows.length === 0) return;
  await merchantSql(q, merchantId)(
    `UPDATE payments p SET status = 'processing', method = v.method, attempts = 1, updated_at = now()
     FROM unnest($2::text[], $3::text[]) AS v(id, method)
     WHERE p.merchant_id = $1 AND p.id = v.id AND p.status = 'created'`,
    [rows.map((r) => r.id), rows.map((r) => r.method)],
  );
}

// Statements about setup intents and payment methods. The customer rows saving and detaching read
// and change (its default method) go through the customers store. The rules are in index.ts.
import type { PaymentMethod, PrismaClient, SetupIntent } from '../../generated/prisma/client.ts';
import { merchantSql, type RawQuery } from '../../platform/db/raw.ts';
import type { Prisma, Db, TenantTx } from '../../platform/db/tenant.ts';
import type { PageQuery } from '../../platform/pagination.ts';

/** One keyset page as `paginate` asks for it: the cursor's where fragment, the order, how many. */

// ---------------------------------------------------------------- setup intents

export function insertSetupIntent(tx: TenantTx, data: Prisma.SetupIntentUncheckedCreateInput): Promise<SetupIntent> {
  return tx.setupIntent.create({ data });
}

export function findSetupIntent(db: Db, id: string): Promise<SetupIntent | null> {
  return db.setupIntent.findUnique({ where: { id } });
}

/** The setup intent behind a setup_url token, with its merchant and customer (any merchant: the unscoped client). */
export function findSetupIntentByToken(prisma: PrismaClient, token: string) {
  return prisma.setupIntent.findUnique({ where: { token }, include: { merchant: true, customer: true } });
}

export function markSetupIntentExpired(tx: TenantTx, id: string): Promise<SetupIntent> {
  return tx.setupIntent.update({ where: { id }, data: { status: 'expired' } });
}

/** Counts one more attempt at the processor. */
export function incrementSetupAttempts(tx: TenantTx, id: string): Promise<SetupIntent> {
  return tx.setupIntent.update({ where: { id }, data: { attempts: { increment: 1 } } });
}

export function markSetupIntentSucceeded(tx: TenantTx, id: string, paymentMethodId: string, completedAt: Date): Promise<SetupIntent> {
  return tx.setupIntent.update({ where: { id }, data: { status: 'succeeded', paymentMethodId, completedAt } });
}

// ---------------------------------------------------------------- payment methods

export function insertPaymentMethod(tx: TenantTx, data: Prisma.PaymentMethodUncheckedCreateInput): Promise<PaymentMethod> {
  return tx.paymentMethod.create({ data });
}

export function findPaymentMethod(db: Db, id: string): Promise<PaymentMethod | null> {
  return db.paymentMethod.findUnique({ where: { id } });
}

export function findPaymentMethodsByIds(db: Db, ids: string[]): Promise<PaymentMethod[]> {
  return db.paymentMethod.findMany({ where: { id: { in: ids } } });
}

/** One page of a customer's attached methods. */
export function findPaymentMethodsOfCustomer(db: Db, customerId: string, { where, ...page }: PageQuery): Promise<PaymentMethod[]> {
  return db.paymentMethod.findMany({ where: { AND: [where, { customerId }] }, ...page });
}

export function countPaymentMethodsOfCustomer(db: Db, customerId: string): Promise<number> {
  return db.paymentMethod.count({ where: { customerId } });
}

/** Every attached method of a customer (no order). */
export function listAllPaymentMethodsOfCustomer(tx: TenantTx, customerId: string): Promise<PaymentMethod[]> {
  return tx.paymentMethod.findMany({ where: { customerId } });
}

/** The customer's newest attached method; null when none is left. */
export function findNewestPaymentMethodOfCustomer(tx: TenantTx, customerId: string): Promise<PaymentMethod | null> {
  return tx.paymentMethod.findFirst({ where: { customerId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

export function markPaymentMethodDetached(tx: TenantTx, id: string, detachedAt: Date): Promise<PaymentMethod> {
  return tx.paymentMethod.update({ where: { id }, data: { customerId: null, detachedAt } });
}

/** SQL of a customer's attached methods, newest first, at most 100 ($1 is the merchant; `customer` an SQL expression). */
export const attachedMethodsSql = (customer: string) =>
  `SELECT * FROM payment_methods WHERE merchant_id = $1 AND customer_id = ${customer} ORDER BY created_at DESC, id DESC LIMIT 100`;

/** Every attached method of a customer, newest first (at most 100). */
export function listAttachedMethods(q: RawQuery, merchantId: string, customerId: string): Promise<PaymentMethod[]> {
  return merchantSql(q, merchantId)<PaymentMethod>(attachedMethodsSql('$2'), [customerId]);
}

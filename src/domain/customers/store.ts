// The customers' statements (customers table), and the one read of a payment method the rules of
// this area make. The rules are in index.ts (and src/services/customers.ts).
import type { Customer, PaymentMethod, Prisma } from '../../generated/prisma/client.ts';
import { merchantSql, rawQuery } from '../../platform/db/raw.ts';
import type { PageSlice } from '../../platform/pagination.ts';
import type { Db, TenantTx } from '../../platform/db/tenant.ts';
import type { Statement } from '../events/index.ts';

/**
 * The statement that inserts a new customer, for recordEvent's `with` (the hot path of issue 14:
 * the customer, the event and its deliveries in one statement): $1 is the merchant, its times are
 * the statement's billing clock (recordEvent's `clock`).
 */
export function insertCustomerStatement(c: Customer): Statement {
  return {
    sql: `INSERT INTO customers (id, merchant_id, email, name, phone, currency, metadata, created_at, updated_at)
            SELECT $2, $1, $3, $4, $5, $6, $7::jsonb, clock.at, clock.at FROM clock`,
    params: [c.id, c.email, c.name, c.phone, c.currency, JSON.stringify(c.metadata)],
  };
}

const LIVE_CUSTOMER = `SELECT * FROM customers WHERE merchant_id = $1 AND id = $2 AND deleted_at IS NULL`;

/** A live (not deleted) customer of the merchant, or undefined. */
export async function findLiveCustomer(db: Db, merchantId: string, id: string): Promise<Customer | undefined> {
  const [c] = await merchantSql(rawQuery(db), merchantId)<Customer>(LIVE_CUSTOMER, [id]);
  return c;
}

/** Whether a customer is there and live (not deleted): its id, or null. */
export function findLiveCustomerId(db: Db, id: string): Promise<{ id: string } | null> {
  return db.customer.findFirst({ where: { id, deletedAt: null }, select: { id: true } });
}

export function updateCustomerRow(tx: TenantTx, id: string, data: Prisma.CustomerUncheckedUpdateInput): Promise<Customer> {
  return tx.customer.update({ where: { id }, data });
}

/** A page of customers (`where`: the filters and the cursor's fragment; `page`: order and take). */
export function findCustomers(db: Db, where: Prisma.CustomerWhereInput, page: PageSlice): Promise<Customer[]> {
  return db.customer.findMany({ where, ...page });
}

export function countCustomers(db: Db, where: Prisma.CustomerWhereInput): Promise<number> {
  return db.customer.count({ where });
}

/** A payment method by id (payment-methods' table: the customer's default must be one of its own). */
export function findPaymentMethod(db: Db, id: string): Promise<PaymentMethod | null> {
  return db.paymentMethod.findUnique({ where: { id } });
}

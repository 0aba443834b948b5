// Statements of the actions that span areas (src/services): reads that join several areas' tables
// in one statement. Writes go through the owning area's store.
import type { Customer } from '../generated/prisma/client.ts';
import { merchantSql, rawQuery } from '../platform/db/raw.ts';
import type { Db } from '../platform/db/tenant.ts';
import { subscriptionsOfCustomerSql } from '../domain/billing/store.ts';
import { attachedMethodsSql } from '../domain/payment-methods/store.ts';
import { creditBalanceSql } from '../domain/customers/store.ts';

/** A customer row with its attached payment methods and its subscriptions as JSON arrays (rows of payment_methods and subscriptions, not yet parsed). */
export type CustomerRowWithEmbeds = Customer & { embeddedMethods: unknown; embeddedSubscriptions: unknown; creditBalance: Record<string, number | string> };

/** A live customer with its attached payment methods (payment-methods' table), its subscriptions (billing's) and its credit balance, in one statement. */
export async function findCustomerWithEmbeds(db: Db, merchantId: string, id: string): Promise<CustomerRowWithEmbeds | undefined> {
  const [row] = await merchantSql(rawQuery(db), merchantId)<CustomerRowWithEmbeds>(
    `SELECT c.*,
       (SELECT coalesce(json_agg(p), '[]') FROM (${attachedMethodsSql('c.id')}) p) AS embedded_methods,
       (SELECT coalesce(json_agg(s), '[]') FROM (${subscriptionsOfCustomerSql('c.id')}) s) AS embedded_subscriptions,
       (${creditBalanceSql('c.id')}) AS credit_balance
     FROM customers c WHERE c.merchant_id = $1 AND c.id = $2 AND c.deleted_at IS NULL`,
    [id],
  );
  return row;
}

// Customer actions that span areas: the record with its embedded payment methods and
// subscriptions (one statement), and deletion, which cancels the customer's subscriptions and
// detaches its saved methods in the same transaction.
import type { Customer, PaymentMethod, Subscription } from '../generated/prisma/client.ts';
import type { Ctx } from '../platform/context.ts';
import { jsonRows, lockRow } from '../platform/db/raw.ts';
import { inTransaction } from '../platform/db/tenant.ts';
import { NotFoundError } from '../platform/errors.ts';
import { cancelSubscriptionsOfCustomer } from '../domain/billing/subscriptions.ts';
import { clockNow } from '../platform/clock.ts';
import { customerToJSON, getCustomer } from '../domain/customers/index.ts';
import { updateCustomerRow } from '../domain/customers/store.ts';
import { recordEvent } from '../domain/events/index.ts';
import { detachAllOfCustomer } from '../domain/payment-methods/index.ts';
import { findCustomerWithEmbeds } from './store.ts';

export interface CustomerWithEmbeds {
  customer: Customer;
  paymentMethods: PaymentMethod[];
  subscriptions: Subscription[];
}

/** A live customer with its attached payment methods and its subscriptions, in one statement. */
export async function getCustomerWithEmbeds(ctx: Ctx, id: string): Promise<CustomerWithEmbeds> {
  const row = await findCustomerWithEmbeds(ctx.db, ctx.merchant.id, id);
  if (!row) throw new NotFoundError('customer', id);
  const { embeddedMethods, embeddedSubscriptions, ...customer } = row;
  return {
    customer,
    paymentMethods: jsonRows<PaymentMethod>('PaymentMethod', embeddedMethods),
    subscriptions: jsonRows<Subscription>('Subscription', embeddedSubscriptions),
  };
}

export async function deleteCustomer(ctx: Ctx, id: string): Promise<Customer> {
  return inTransaction(ctx.db, async (tx) => {
    await lockRow(tx, 'customers', ctx.merchant.id, id);
    await getCustomer(ctx, id, tx);
    // Its subscriptions are cancelled at once and its saved methods detached (each with its
    // event), in this same transaction.
    await cancelSubscriptionsOfCustomer(ctx, tx, id);
    await detachAllOfCustomer(ctx, tx, id);
    const now = await clockNow({ ...ctx, db: tx });
    const c = await updateCustomerRow(tx, id, { deletedAt: now, updatedAt: now });
    await recordEvent(tx, ctx, 'customer.deleted', { ...customerToJSON(c), deleted: true });
    return c;
  });
}

// Detaching a saved payment method spans two areas: the method leaves its customer
// (payment-methods) and stops being any subscription's pin (billing), in one transaction, so a
// subscription never keeps charging a method that can no longer be charged.
import type { PaymentMethod } from '../generated/prisma/client.ts';
import type { Ctx } from '../platform/context.ts';
import { inTransaction } from '../platform/db/tenant.ts';
import { releasePaymentMethodPins } from '../domain/billing/subscriptions.ts';
import { detachPaymentMethodIn } from '../domain/payment-methods/index.ts';
import { portalCustomerId } from '../domain/portal/index.ts';

/**
 * DELETE /v1/payment-methods/:id (and the GraphQL mutation): detaches the method; subscriptions
 * pinned to it fall back to the customer's default. `customerId` restricts it to that customer's
 * methods (another customer's is "not found").
 */
export function detachPaymentMethod(ctx: Ctx, id: string, opts: { customerId?: string } = {}): Promise<PaymentMethod> {
  return inTransaction(ctx.db, async (tx) => {
    const pm = await detachPaymentMethodIn(ctx, tx, id, opts);
    await releasePaymentMethodPins(ctx, tx, id);
    return pm;
  });
}

/** The portal's "Remove": the same, for the portal session's customer only. */
export function detachPortalMethod(ctx: Ctx, paymentMethodId: string): Promise<PaymentMethod> {
  return detachPaymentMethod(ctx, paymentMethodId, { customerId: portalCustomerId(ctx) });
}

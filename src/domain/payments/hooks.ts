// Payments made for something else (a wallet top-up, an invoice) settle that thing in the same
// transaction as the payment's final status: the area registers a hook for its purpose.
// The areas a payment can be for (billing, wallets) sit above payments and import it; payments
// never imports them (docs/architecture.md): they register here when they load. A payment for a
// purpose whose area has not registered is refused loudly (requireHooks), never settled silently
// without it.
import type { Ctx } from '../../platform/context.ts';
import type { TenantTx } from '../../platform/db/tenant.ts';
import type { PaymentWithCustomer } from './schema.ts';

export type PaymentOutcomeHook = (ctx: Ctx, tx: TenantTx, payment: PaymentWithCustomer) => Promise<void>;

export const outcomeHooks = new Map<string, PaymentOutcomeHook>();

export function onPaymentOutcome(purpose: string, hook: PaymentOutcomeHook): void {
  outcomeHooks.set(purpose, hook);
}

/**
 * Checked in the transaction that starts an attempt at paying (the payment is locked): the area a
 * payment is for may refuse it, e.g. an invoice that is no longer open or is being charged by
 * another payment. Returns null to go on, or why the payment must not be charged (it is then
 * cancelled instead).
 */
export type PaymentAttemptHook = (ctx: Ctx, tx: TenantTx, payment: PaymentWithCustomer) => Promise<string | null>;

export const attemptHooks = new Map<string, PaymentAttemptHook>();

/** Plain payments settle nothing else. */
export const PLAIN_PURPOSE = 'payment';

/**
 * Fails when a payment is for a purpose no loaded area has registered (a process that did not load
 * the module of that area): its outcome would otherwise settle nothing. A programming error.
 */
export function requireHooks(purpose: string): void {
  if (purpose !== PLAIN_PURPOSE && !outcomeHooks.has(purpose)) {
    throw new Error(`no payment outcome hook is registered for purpose "${purpose}": the area that handles it was not loaded in this process`);
  }
}

export function beforePaymentAttempt(purpose: string, hook: PaymentAttemptHook): void {
  attemptHooks.set(purpose, hook);
}

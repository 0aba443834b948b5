// Payments made for something else (a wallet top-up, an invoice) settle that thing in the same
// transaction as the payment's final status: the area registers a hook for its purpose.
// A module without runtime imports, so the table exists before any area registers into it, however
// the import graph is entered (payments → customers → subscriptions → invoices → payments is a
// cycle: a table inside payments/index.ts would not be initialised yet when invoices.ts registers).
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

export function beforePaymentAttempt(purpose: string, hook: PaymentAttemptHook): void {
  attemptHooks.set(purpose, hook);
}

// How the subscription rules learn of invoice outcomes: subscriptions.ts imports invoices.ts, so
// invoices.ts cannot import it back (no cycles, docs/architecture.md); subscriptions.ts registers
// here when it loads. An invoice of a subscription settled in a process that did not load it
// fails loudly (requireInvoiceHooks) rather than leave the subscription behind.
import type { Invoice, InvoiceItem } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import type { TenantTx } from '../../platform/db/tenant.ts';

export type InvoiceWithLines = Invoice & { lines: InvoiceItem[] };

export const invoiceHooks: {
  paid?: (ctx: Ctx, tx: TenantTx, inv: InvoiceWithLines) => Promise<void>;
  failed?: (ctx: Ctx, tx: TenantTx, inv: InvoiceWithLines, o: { exhausted: boolean }) => Promise<void>;
  voided?: (ctx: Ctx, tx: TenantTx, inv: InvoiceWithLines) => Promise<void>;
} = {};

export function requireInvoiceHooks(inv: Invoice): void {
  if (inv.subscriptionId && (!invoiceHooks.paid || !invoiceHooks.failed || !invoiceHooks.voided)) {
    throw new Error('no invoice outcome hooks are registered: src/domain/billing/subscriptions.ts was not loaded in this process');
  }
}

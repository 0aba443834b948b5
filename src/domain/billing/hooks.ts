// How the subscription area learns of invoice outcomes. A module of its own, without imports of
// the areas, so that it exists before either (invoices → payments → customers → subscriptions
// → invoices is an import cycle; a hook table defined inside invoices.ts would not exist yet when
// subscriptions.ts registers into it).
import type { Invoice, InvoiceItem } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import type { TenantTx } from '../../platform/db/tenant.ts';

export type InvoiceWithLines = Invoice & { lines: InvoiceItem[] };

export const invoiceHooks: {
  paid?: (ctx: Ctx, tx: TenantTx, inv: InvoiceWithLines) => Promise<void>;
  failed?: (ctx: Ctx, tx: TenantTx, inv: InvoiceWithLines, o: { exhausted: boolean }) => Promise<void>;
} = {};

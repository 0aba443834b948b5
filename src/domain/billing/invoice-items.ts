// One-off invoice items (issue 25, "Billing depth"; Stripe's invoice items): a charge that waits
// for the customer's next invoice in its currency — an invoice made by hand (POST /v1/invoices,
// one-off.ts) or, like a waiting proration, the next invoice a subscription of the customer makes
// (issueInvoice calls collectWaitingItems, which copies each waiting item into a line of that
// invoice, in the invoice's own transaction). Deleting is allowed only while it waits.
import type { PendingInvoiceItem } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction, type TenantTx } from '../../platform/db/tenant.ts';
import { lockRow, rawQuery } from '../../platform/db/raw.ts';
import { NotFoundError, StateError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { formatMoney, MAX_AMOUNT } from '../../platform/money.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { parse } from '../../platform/validation.ts';
import { clockNow } from '../../platform/clock.ts';
import * as store from './store.ts';
import { fitItems, MAX_INVOICE_LINES, tooManyLines, type ItemLine } from './compose.ts';
import type { PricingLine, PricingTaxRate } from '../pricing/rules.ts';
import { invoiceItemCreate, type InvoiceItemCreateInput, type InvoiceItemListQuery } from './invoicing-schema.ts';

export function invoiceItemToJSON(i: PendingInvoiceItem) {
  return {
    id: i.id,
    object: 'invoice_item' as const,
    customer_id: i.customerId,
    currency: i.currency,
    description: i.description,
    quantity: i.quantity,
    unit_amount: Number(i.unitAmount),
    amount: Number(i.amount),
    amount_formatted: formatMoney(i.amount, i.currency),
    invoice_id: i.invoiceId,
    invoice_line_id: i.lineId,
    pending: i.invoiceId === null,
    created_at: i.createdAt.toISOString(),
  };
}
export type InvoiceItemJSON = ReturnType<typeof invoiceItemToJSON>;

/** The line an item becomes on an invoice: its description, with the quantity when more than one. */
export function lineDescription(i: Pick<PendingInvoiceItem, 'description' | 'quantity' | 'unitAmount' | 'currency'>): string {
  return i.quantity > 1 ? `${i.description} (${i.quantity} × ${formatMoney(i.unitAmount, i.currency)})` : i.description;
}

/** The line an invoice makes of a waiting item (collectWaitingItems), as a preview lists it: no period of its own (the moment it was added), listed by its age. */
export function itemLine(i: PendingInvoiceItem): ItemLine {
  return {
    id: null,
    itemId: i.id,
    description: lineDescription(i),
    periodStart: i.createdAt,
    periodEnd: i.createdAt,
    amount: i.amount,
    proration: false,
    // Its units and the price of one (amount = unit_amount × quantity), as a plan line shows them.
    quantity: i.quantity,
    unitAmount: i.unitAmount,
    taxable: true,
    createdAt: i.createdAt,
  };
}

/** POST /v1/invoice-items: a live customer's item, waiting for its next invoice in `currency`. */
export async function createInvoiceItem(ctx: Ctx, input: InvoiceItemCreateInput): Promise<PendingInvoiceItem> {
  const data = parse(invoiceItemCreate, input);
  const quantity = data.quantity ?? 1;
  const amount = BigInt(data.amount) * BigInt(quantity);
  if (amount > BigInt(MAX_AMOUNT)) {
    throw new ValidationError('amount_too_large', `amount × quantity is ${amount}; an item (like a payment) bills at most ${MAX_AMOUNT}.`, 'quantity');
  }
  return inTransaction(ctx.db, async (tx) => {
    // Under the customer's lock, as every change of a customer (a deletion waits or is seen).
    await lockRow(tx, 'customers', ctx.merchant.id, data.customer_id);
    const customer = await store.findCustomer(tx, data.customer_id);
    if (!customer || customer.deletedAt) throw new NotFoundError('customer', data.customer_id, 'customer_id');
    // No more waiting than one invoice can take (counted under the customer's lock, so concurrent
    // creates cannot pass it): bill them first (POST /v1/invoices), or delete some.
    const waiting = await store.countPendingItems(tx, { customerId: customer.id, currency: data.currency, invoiceId: null });
    if (waiting >= MAX_INVOICE_LINES) {
      throw tooManyLines(`Customer ${customer.id} has ${waiting} invoice items waiting in ${data.currency}, as many as one invoice can take: invoice them first (POST /v1/invoices).`, 'customer_id');
    }
    const now = await clockNow({ ...ctx, db: tx });
    return store.insertPendingItem(tx, {
      id: newId('invoice_item'),
      merchantId: ctx.merchant.id,
      customerId: customer.id,
      currency: data.currency,
      description: data.description,
      quantity,
      unitAmount: BigInt(data.amount),
      amount,
      createdAt: now,
    });
  });
}

export async function getInvoiceItem(ctx: Ctx, id: string): Promise<PendingInvoiceItem> {
  const item = await store.findPendingItem(ctx.db, id);
  if (!item) throw new NotFoundError('invoice item', id);
  return item;
}

export async function listInvoiceItems(ctx: Ctx, q: InvoiceItemListQuery): Promise<Page<PendingInvoiceItem>> {
  const filter = {
    ...(q.customer_id ? { customerId: q.customer_id } : {}),
    ...(q.invoice_id ? { invoiceId: q.invoice_id } : q.pending === 'true' ? { invoiceId: null } : q.pending === 'false' ? { invoiceId: { not: null } } : {}),
  };
  return paginate(
    q,
    ({ where, ...page }) => store.listPendingItems(ctx.db, { AND: [where, filter] }, page),
    () => store.countPendingItems(ctx.db, filter),
  );
}

/** DELETE /v1/invoice-items/:id: only while it waits (an invoiced one is 409 invoice_item_invoiced). Returns the item as it was. */
export async function deleteInvoiceItem(ctx: Ctx, id: string): Promise<PendingInvoiceItem> {
  return inTransaction(ctx.db, async (tx) => {
    const item = await store.lockPendingItem(rawQuery(tx), ctx.merchant.id, id);
    if (!item) throw new NotFoundError('invoice item', id);
    if (item.invoiceId !== null || (await store.deleteWaitingItem(tx, id)) === 0) {
      throw new StateError('invoice_item_invoiced', `Invoice item ${id} is on invoice ${item.invoiceId}; only an item still waiting can be deleted.`, null);
    }
    return item;
  });
}

/**
 * Puts every item of the invoice's customer waiting in the invoice's currency on the invoice (a
 * draft being made, in the caller's transaction): one line each, in the order they were created.
 * With `fit` (a subscription's invoice: its other lines and its tax rates), only the oldest items
 * that fit under the most one invoice may bill are taken (compose.ts fitItems, with the lines'
 * exclusive taxes); the rest keep waiting, so a merchant's items can never make a renewal fail.
 * Returns the items taken.
 */
export async function collectWaitingItems(
  ctx: Ctx,
  tx: TenantTx,
  inv: { id: string; customerId: string; currency: string; subscriptionId: string | null; periodStart: Date; periodEnd: Date },
  _now: Date,
  opts: { fit?: { billed: readonly PricingLine[]; taxRates: readonly PricingTaxRate[] } } = {},
): Promise<PendingInvoiceItem[]> {
  const q = rawQuery(tx);
  // The oldest that one invoice can hold (a draft takes them all; the rest, if any, wait).
  let items = await store.takeWaitingItems(q, ctx.merchant.id, inv.customerId, inv.currency, inv.id, MAX_INVOICE_LINES);
  if (opts.fit) {
    // The oldest that fit (compose.ts fitItems, the previews' rule); the rest keep waiting.
    const { taken, left } = fitItems(items, opts.fit.billed, opts.fit.taxRates);
    if (left.length) await store.releaseItems(q, ctx.merchant.id, left.map((i) => i.id));
    items = taken;
  }
  if (!items.length) return items;
  const lines = items.map((i) => {
    // A one-off charge has no service period of its own: the moment it was added; listed by its age.
    const { id: _none, itemId: _item, ...line } = itemLine(i);
    return { ...line, id: newId('invoice_line'), merchantId: ctx.merchant.id, subscriptionId: inv.subscriptionId, invoiceId: inv.id };
  });
  await store.insertInvoiceLines(tx, lines);
  await store.setItemLines(q, ctx.merchant.id, items.map((i, k) => ({ id: i.id, lineId: lines[k]!.id })));
  return items.map((i, k) => ({ ...i, invoiceId: inv.id, lineId: lines[k]!.id }));
}

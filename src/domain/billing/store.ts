// The billing store: every statement of plans.ts, subscriptions.ts and invoices.ts, on the tables
// plans, subscriptions, invoices and invoice_items (issue 22). The rules (transactions, locks,
// events, validation, errors) stay with their callers; this file only runs statements. The few
// statements billing makes on other areas' tables are here too, each marked with whose table it is.
import type { Invoice, InvoiceItem, Payment, PaymentMethod, Customer, Plan, Prisma, PrismaClient, Subscription, Wallet, WalletTransaction } from '../../generated/prisma/client.ts';
import { merchantSql, type RawQuery } from '../../platform/db/raw.ts';
import type { Db, TenantTx } from '../../platform/db/tenant.ts';
import type { PageSlice } from '../../platform/pagination.ts';
import type { InvoiceWithLines } from './hooks.ts';


/** How an invoice's lines are loaded with it. */
export type LinesInclude = { lines: { orderBy: Prisma.InvoiceItemOrderByWithRelationInput[] } };

// Plan lines first, then prorations and credits in the order they arose (credits before charges).
const withLines = { lines: { orderBy: [{ proration: 'asc' as const }, { createdAt: 'asc' as const }, { amount: 'asc' as const }, { id: 'asc' as const }] } };

// ---------------------------------------------------------------- plans

export function insertPlan(tx: TenantTx, data: Prisma.PlanUncheckedCreateInput): Promise<Plan> {
  return tx.plan.create({ data });
}

export function findPlan(db: Db, id: string): Promise<Plan | null> {
  return db.plan.findUnique({ where: { id } });
}

export function listPlans(db: Db, where: Prisma.PlanWhereInput, page: PageSlice): Promise<Plan[]> {
  return db.plan.findMany({ where, ...page });
}

export function countPlans(db: Db, where: Prisma.PlanWhereInput): Promise<number> {
  return db.plan.count({ where });
}

export function updatePlan(tx: TenantTx, id: string, data: Prisma.PlanUncheckedUpdateInput): Promise<Plan> {
  return tx.plan.update({ where: { id }, data });
}

// ---------------------------------------------------------------- subscriptions

export function findSubscription(db: Db, id: string): Promise<Subscription | null> {
  return db.subscription.findUnique({ where: { id } });
}

export function listSubscriptions(db: Db, where: Prisma.SubscriptionWhereInput, page: PageSlice): Promise<Subscription[]> {
  return db.subscription.findMany({ where, ...page });
}

export function countSubscriptions(db: Db, where: Prisma.SubscriptionWhereInput): Promise<number> {
  return db.subscription.count({ where });
}

/** Subscriptions by id (the rows of pages by parent), in no particular order. */
export function listSubscriptionsById(db: Db, ids: string[]): Promise<Subscription[]> {
  return db.subscription.findMany({ where: { id: { in: ids } } });
}

/** SQL of a customer's subscriptions, newest first, at most 100 ($1 is the merchant; `customer` an SQL expression). */
export const subscriptionsOfCustomerSql = (customer: string) =>
  `SELECT * FROM subscriptions WHERE merchant_id = $1 AND customer_id = ${customer} ORDER BY created_at DESC, id DESC LIMIT 100`;

/** A customer's subscriptions, newest first, at most 100. */
export function listSubscriptionsOfCustomer(q: RawQuery, merchantId: string, customerId: string): Promise<Subscription[]> {
  return merchantSql(q, merchantId)<Subscription>(subscriptionsOfCustomerSql('$2'), [customerId]);
}

/** The ids of a customer's subscriptions that are not cancelled. */
export function listUncancelledSubscriptionIds(tx: TenantTx, customerId: string): Promise<{ id: string }[]> {
  return tx.subscription.findMany({ where: { customerId, status: { not: 'cancelled' } }, select: { id: true } });
}

/** The ids of the subscriptions, not cancelled, that charge this payment method (their pin). */
export function listSubscriptionIdsPinnedTo(tx: TenantTx, paymentMethodId: string): Promise<{ id: string }[]> {
  return tx.subscription.findMany({ where: { paymentMethodId, status: { not: 'cancelled' } }, select: { id: true }, orderBy: { id: 'asc' } });
}

/**
 * Locks a subscription and reads it, in one statement, unless it is set to cancel at the end of its
 * period (its renewal then takes its open invoices' locks before the subscription's): null then, and
 * for an unknown id, with no lock taken. The renewal's common case (cycleSubscription).
 */
export async function lockSubscriptionUnlessCancelling(q: RawQuery, merchantId: string, id: string): Promise<Subscription | null> {
  const rows = await merchantSql(q, merchantId)<Subscription>('SELECT * FROM subscriptions WHERE merchant_id = $1 AND id = $2 AND NOT cancel_at_period_end FOR UPDATE', [id]);
  return rows[0] ?? null;
}

export function insertSubscription(tx: TenantTx, data: Prisma.SubscriptionUncheckedCreateInput): Promise<Subscription> {
  return tx.subscription.create({ data });
}

export function updateSubscription(tx: TenantTx, id: string, data: Prisma.SubscriptionUncheckedUpdateInput): Promise<Subscription> {
  return tx.subscription.update({ where: { id }, data });
}

// ---------------------------------------------------------------- invoices

export function findInvoice(db: Db, id: string): Promise<InvoiceWithLines | null> {
  return db.invoice.findUnique({ where: { id }, include: withLines });
}

/** The invoice without its lines. */
export function findInvoiceHeader(db: Db, id: string): Promise<Invoice | null> {
  return db.invoice.findUnique({ where: { id } });
}

/** The invoice a subscription was billed under `key` (one per subscription and key). */
export function findInvoiceByBillingKey(tx: TenantTx, subscriptionId: string, key: string): Promise<InvoiceWithLines | null> {
  return tx.invoice.findFirst({ where: { subscriptionId, billingKey: key }, include: withLines });
}

export function listInvoices(db: Db, where: Prisma.InvoiceWhereInput, page: PageSlice): Promise<InvoiceWithLines[]> {
  return db.invoice.findMany({ where, include: withLines, ...page });
}

export function countInvoices(db: Db, where: Prisma.InvoiceWhereInput): Promise<number> {
  return db.invoice.count({ where });
}

/** Invoices by id, in no particular order, their lines in the order `lines` gives (by default the order of getInvoice). */
export function listInvoicesById(db: Db, ids: string[], lines: LinesInclude = withLines): Promise<InvoiceWithLines[]> {
  return db.invoice.findMany({ where: { id: { in: ids } }, include: lines });
}

export function insertInvoice(tx: TenantTx, data: Prisma.InvoiceUncheckedCreateInput): Promise<Invoice> {
  return tx.invoice.create({ data });
}

/** Updates an invoice and returns it with its lines. */
export function updateInvoice(tx: TenantTx, id: string, data: Prisma.InvoiceUncheckedUpdateInput): Promise<InvoiceWithLines> {
  return tx.invoice.update({ where: { id }, data, include: withLines });
}

/** A subscription's invoices that still wait for money (open or uncollectible), without their lines, oldest first. */
export function listUnsettledInvoicesOfSubscription(
  tx: TenantTx,
  subscriptionId: string,
): Promise<Pick<Invoice, 'id' | 'status' | 'amountDue' | 'amountPaid' | 'attemptCount'>[]> {
  return tx.invoice.findMany({
    where: { subscriptionId, status: { in: ['open', 'uncollectible'] } },
    select: { id: true, status: true, amountDue: true, amountPaid: true, attemptCount: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

/** Records a charge attempt on the invoice (its count, and the attempt's payment when there is one); returns nothing. */
export async function setInvoiceAttempt(tx: TenantTx, id: string, data: { paymentId?: string; attemptCount: number }): Promise<void> {
  await tx.invoice.update({ where: { id }, data });
}

/** The merchant's next invoice number (the counter moves in the caller's transaction). merchants is the merchants area's table. */
export function nextInvoiceSeq(q: RawQuery, merchantId: string): Promise<{ seq: number }[]> {
  return q<{ seq: number }>('UPDATE merchants SET invoice_seq = invoice_seq + 1 WHERE id = $1 RETURNING invoice_seq AS seq', [merchantId]);
}

/**
 * The merchant of an invoice with its signing key, on the unscoped client (a signed PDF link
 * carries no credentials: the invoice names its merchant). Reads merchants, the merchants area's table.
 */
export function findInvoiceMerchant(prisma: PrismaClient, invoiceId: string) {
  return prisma.invoice.findUnique({ where: { id: invoiceId }, select: { merchant: { select: { id: true, mode: true, name: true, signingKey: true } } } });
}

// ---------------------------------------------------------------- invoice lines

export async function insertInvoiceLines(tx: TenantTx, data: Prisma.InvoiceItemCreateManyInput[]): Promise<void> {
  await tx.invoiceItem.createMany({ data });
}

export function insertInvoiceLine(tx: TenantTx, data: Prisma.InvoiceItemUncheckedCreateInput): Promise<InvoiceItem> {
  return tx.invoiceItem.create({ data });
}

/** Puts the subscription's lines waiting for the next invoice on `invoiceId`. */
export async function attachPendingLines(tx: TenantTx, subscriptionId: string, invoiceId: string): Promise<void> {
  await tx.invoiceItem.updateMany({ where: { subscriptionId, invoiceId: null }, data: { invoiceId } });
}

/** Drops the subscription's lines waiting for the next invoice. */
export async function deletePendingLines(tx: TenantTx, subscriptionId: string): Promise<void> {
  await tx.invoiceItem.deleteMany({ where: { subscriptionId, invoiceId: null } });
}

/** The subscription's lines waiting for the next invoice, in the order an invoice lists them. */
export function listPendingLines(db: Db, subscriptionId: string): Promise<InvoiceItem[]> {
  return db.invoiceItem.findMany({ where: { subscriptionId, invoiceId: null }, orderBy: withLines.lines.orderBy });
}

/** The sum of the subscription's lines waiting for the next invoice (null when there are none). */
export async function sumPendingLines(tx: TenantTx, subscriptionId: string): Promise<bigint | null> {
  return (await tx.invoiceItem.aggregate({ where: { subscriptionId, invoiceId: null }, _sum: { amount: true } }))._sum.amount;
}

// ---------------------------------------------------------------- other areas' tables

/** Reads customers (the customers area's table). */
export function findCustomer(db: Db, id: string): Promise<Customer | null> {
  return db.customer.findUnique({ where: { id } });
}

/** A payment method by id: payment-methods' statement (its store). */
export { findPaymentMethod } from '../payment-methods/store.ts';

/** Reads payments (the payments area's table). */
export function findPayment(db: Db, id: string): Promise<Payment | null> {
  return db.payment.findUnique({ where: { id } });
}

/** Payments by id, in no particular order. Reads payments (the payments area's table). */
export function listPaymentsById(db: Db, ids: string[]): Promise<Payment[]> {
  return db.payment.findMany({ where: { id: { in: ids } } });
}

/** The customer's oldest active wallet in `currency`. Reads wallets (the wallets area's table). */
export function findActiveWallet(tx: Db, customerId: string, currency: string): Promise<Wallet | null> {
  return tx.wallet.findFirst({ where: { customerId, currency, status: 'active' }, orderBy: { createdAt: 'asc' } });
}

/** A wallet's debit with this reference. Reads wallet_transactions (the wallets area's table). */
export function findWalletDebit(tx: TenantTx, reference: string): Promise<WalletTransaction | null> {
  return tx.walletTransaction.findFirst({ where: { reference, type: 'debit' } });
}

/** The merchant's key for signed PDF links, on the unscoped client. Reads merchants (the merchants area's table). */
export function findMerchantSigningKey(prisma: PrismaClient, merchantId: string): Promise<{ signingKey: Uint8Array<ArrayBuffer> | null } | null> {
  return prisma.merchant.findUnique({ where: { id: merchantId }, select: { signingKey: true } });
}

/** Sets the merchant's key for signed PDF links unless it has one. Writes merchants (the merchants area's table). */
export async function setMerchantSigningKeyIfNone(prisma: PrismaClient, merchantId: string, key: Uint8Array<ArrayBuffer>): Promise<void> {
  await prisma.merchant.updateMany({ where: { id: merchantId, signingKey: null }, data: { signingKey: key } });
}

/** The merchant's name, on the unscoped client. Reads merchants (the merchants area's table). */
export function findMerchantName(prisma: PrismaClient, merchantId: string): Promise<{ name: string } | null> {
  return prisma.merchant.findUnique({ where: { id: merchantId }, select: { name: true } });
}

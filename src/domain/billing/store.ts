// The billing store: every statement of plans.ts, subscriptions.ts and invoices.ts, on the tables
// plans, subscriptions, invoices and invoice_items (issue 22). The rules (transactions, locks,
// events, validation, errors) stay with their callers; this file only runs statements. The few
// statements billing makes on other areas' tables are here too, each marked with whose table it is.
import type { CreditNote, Invoice, InvoiceItem, Payment, PaymentMethod, PendingInvoiceItem, Customer, Plan, Prisma, PrismaClient, Subscription, Wallet, WalletTransaction } from '../../generated/prisma/client.ts';
import { insertRows, merchantSql, rawQuery, type RawQuery } from '../../platform/db/raw.ts';
import type { Db, TenantTx } from '../../platform/db/tenant.ts';
import type { PageSlice } from '../../platform/pagination.ts';
import type { InvoiceWithLines } from './hooks.ts';


/** How an invoice's lines are loaded with it. */
export type LinesInclude = { lines: { orderBy: Prisma.InvoiceItemOrderByWithRelationInput[] } };

// Plan lines first, then prorations and credits in the order they arose (credits before charges);
// compose.ts compareLines is the same order for lines not stored yet (previews).
export const withLines: LinesInclude & { lines: { orderBy: { proration?: 'asc'; createdAt?: 'asc'; amount?: 'asc'; id?: 'asc' }[] } } = { lines: { orderBy: [{ proration: 'asc' as const }, { createdAt: 'asc' as const }, { amount: 'asc' as const }, { id: 'asc' as const }] } };

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

/** A line's share of its invoice's discount and its taxes (set when the invoice is finalised). */
export async function setLinePricing(tx: TenantTx, id: string, data: { discountAmount: bigint; taxAmounts: Prisma.InputJsonValue }): Promise<void> {
  await tx.invoiceItem.update({ where: { id }, data });
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

/** What waits for the subscription's next invoice: the sum of its lines (0 when none) and how many, in one statement. */
export async function pendingLinesTotal(tx: TenantTx, subscriptionId: string): Promise<{ amount: bigint; lines: number }> {
  const r = await tx.invoiceItem.aggregate({ where: { subscriptionId, invoiceId: null }, _sum: { amount: true }, _count: { _all: true } });
  return { amount: r._sum.amount ?? 0n, lines: r._count._all };
}

/** When the subscription's latest prorated change in its period counts from (its proration lines' start), or null. */
export async function latestProrationStart(db: Db, subscriptionId: string, since: Date): Promise<Date | null> {
  return (await db.invoiceItem.aggregate({ where: { subscriptionId, proration: true, periodStart: { gte: since } }, _max: { periodStart: true } }))._max.periodStart;
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
export function findMerchantName(
  prisma: PrismaClient,
  merchantId: string,
): Promise<{ name: string; accentColor: string | null; logoType: string | null; logo: Uint8Array | null } | null> {
  return prisma.merchant.findUnique({ where: { id: merchantId }, select: { name: true, accentColor: true, logoType: true, logo: true } });
}

// ---------------------------------------------------------------- renewals in batches (renewals.ts)

/**
 * Locks, in id order, the subscriptions of a renewal batch that may renew set-wise: active and not
 * set to cancel at period end (others take the one-by-one path). One locked elsewhere is skipped
 * (it takes the one-by-one path, which waits for it).
 */
export function lockRenewableSubscriptions(q: RawQuery, merchantId: string, ids: string[]): Promise<Subscription[]> {
  return merchantSql(q, merchantId)<Subscription>(
    `SELECT * FROM subscriptions WHERE merchant_id = $1 AND id = ANY($2::text[]) AND status = 'active' AND NOT cancel_at_period_end
     ORDER BY id FOR UPDATE SKIP LOCKED`,
    [ids],
  );
}

export function listPlansById(q: RawQuery, merchantId: string, ids: string[]): Promise<Plan[]> {
  return merchantSql(q, merchantId)<Plan>(`SELECT * FROM plans WHERE merchant_id = $1 AND id = ANY($2::text[])`, [ids]);
}

/** Customers by id (customers is the customers area's table). */
export function listCustomersById(q: RawQuery, merchantId: string, ids: string[]): Promise<Customer[]> {
  return merchantSql(q, merchantId)<Customer>(`SELECT * FROM customers WHERE merchant_id = $1 AND id = ANY($2::text[])`, [ids]);
}

/** Saved payment methods by id (payment_methods is the payment methods area's table). */
export function listPaymentMethodsById(q: RawQuery, merchantId: string, ids: string[]): Promise<PaymentMethod[]> {
  return merchantSql(q, merchantId)<PaymentMethod>(`SELECT * FROM payment_methods WHERE merchant_id = $1 AND id = ANY($2::text[])`, [ids]);
}

/** Which of these subscriptions have prorations waiting for their next invoice. */
export async function subscriptionsWithPendingLines(q: RawQuery, merchantId: string, ids: string[]): Promise<Set<string>> {
  const rows = await merchantSql(q, merchantId)<{ subscriptionId: string }>(
    `SELECT DISTINCT subscription_id FROM invoice_items WHERE merchant_id = $1 AND subscription_id = ANY($2::text[]) AND invoice_id IS NULL`,
    [ids],
  );
  return new Set(rows.map((r) => r.subscriptionId));
}

/** Takes `k` invoice numbers of the merchant at once; the last one taken (merchants is the merchants area's table). */
export async function takeInvoiceSeqs(q: RawQuery, merchantId: string, k: number): Promise<number> {
  const [row] = await q<{ seq: number }>('UPDATE merchants SET invoice_seq = invoice_seq + $2 WHERE id = $1 RETURNING invoice_seq AS seq', [merchantId, k]);
  return Number(row!.seq);
}

const INVOICE_COLUMNS = [
  ['id', 'text'], ['merchant_id', 'text'], ['customer_id', 'text'], ['subscription_id', 'text'], ['number', 'text'], ['status', 'text'],
  ['billing_reason', 'text'], ['billing_key', 'text'], ['currency', 'text'], ['subtotal', 'int8'], ['total', 'int8'],
  ['amount_from_wallet', 'int8'], ['credit_applied', 'int8'], ['amount_due', 'int8'], ['amount_paid', 'int8'], ['attempt_count', 'int4'],
  ['payment_id', 'text'], ['auto_advance', 'bool'], ['period_start', 'timestamptz'], ['period_end', 'timestamptz'], ['due_date', 'timestamptz'],
  ['finalized_at', 'timestamptz'], ['paid_at', 'timestamptz'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz'],
] as const;

/** Many new invoices (no dunning state yet) in one statement (a renewal batch's). */
export async function insertInvoices(q: RawQuery, rows: Invoice[]): Promise<void> {
  await insertRows(
    q,
    'invoices',
    INVOICE_COLUMNS,
    rows.map((i) => [
      i.id, i.merchantId, i.customerId, i.subscriptionId, i.number, i.status, i.billingReason, i.billingKey, i.currency, i.subtotal, i.total,
      i.amountFromWallet, i.creditApplied, i.amountDue, i.amountPaid, i.attemptCount, i.paymentId, i.autoAdvance, i.periodStart, i.periodEnd,
      i.dueDate, i.finalizedAt, i.paidAt, i.createdAt, i.updatedAt,
    ]),
  );
}

const LINE_COLUMNS = [
  ['id', 'text'], ['merchant_id', 'text'], ['subscription_id', 'text'], ['invoice_id', 'text'], ['description', 'text'],
  ['period_start', 'timestamptz'], ['period_end', 'timestamptz'], ['amount', 'int8'], ['proration', 'bool'], ['quantity', 'int4'], ['unit_amount', 'int8'],
  ['created_at', 'timestamptz'],
] as const;

/** Many invoice lines in one statement (a renewal batch's). */
export async function insertLines(q: RawQuery, rows: InvoiceItem[]): Promise<void> {
  await insertRows(
    q,
    'invoice_items',
    LINE_COLUMNS,
    rows.map((l) => [l.id, l.merchantId, l.subscriptionId, l.invoiceId, l.description, l.periodStart, l.periodEnd, l.amount, l.proration, l.quantity, l.unitAmount, l.createdAt]),
  );
}

/** Moves each renewed subscription to its new period, with its new latest invoice, in one statement. */
export async function moveToNextPeriods(
  q: RawQuery,
  merchantId: string,
  rows: { id: string; periodIndex: number; start: Date; end: Date; latestInvoiceId: string; updatedAt: Date }[],
): Promise<void> {
  await merchantSql(q, merchantId)(
    `UPDATE subscriptions s SET period_index = v.n, current_period_start = v.start, current_period_end = v.end_, latest_invoice_id = v.inv, updated_at = v.upd
     FROM unnest($2::text[], $3::int[], $4::timestamptz[], $5::timestamptz[], $6::text[], $7::timestamptz[]) AS v(id, n, start, end_, inv, upd)
     WHERE s.merchant_id = $1 AND s.id = v.id`,
    [rows.map((r) => r.id), rows.map((r) => r.periodIndex), rows.map((r) => r.start), rows.map((r) => r.end), rows.map((r) => r.latestInvoiceId), rows.map((r) => r.updatedAt)],
  );
}

/**
 * Marks invoices paid by their current payment, in one statement: each only while open with
 * something left to pay and that payment still its own (the conditions of a single payment's
 * outcome); the ids it changed.
 */
export async function markInvoicesPaid(q: RawQuery, merchantId: string, rows: { id: string; paymentId: string; at: Date }[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const changed = await merchantSql(q, merchantId)<{ id: string }>(
    `UPDATE invoices i SET status = 'paid', amount_paid = i.amount_due, paid_at = v.at, next_payment_attempt = NULL,
            last_payment_error_code = NULL, last_payment_error_message = NULL, updated_at = now()
     FROM unnest($2::text[], $3::text[], $4::timestamptz[]) AS v(id, payment_id, at)
     WHERE i.merchant_id = $1 AND i.id = v.id AND i.status = 'open' AND i.payment_id = v.payment_id AND i.amount_due > i.amount_paid
     RETURNING i.id`,
    [rows.map((r) => r.id), rows.map((r) => r.paymentId), rows.map((r) => r.at)],
  );
  return changed.map((r) => r.id);
}

/** Locks the subscriptions, in id order, and reads their statuses. */
export function lockSubscriptionStatuses(q: RawQuery, merchantId: string, ids: string[]): Promise<{ id: string; status: string }[]> {
  return merchantSql(q, merchantId)<{ id: string; status: string }>(
    `SELECT id, status FROM subscriptions WHERE merchant_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
    [ids],
  );
}

/** Locks invoices by id, in id order, and reads what a charge's claim checks of them. */
export function lockInvoicesForCharge(q: RawQuery, merchantId: string, ids: string[]) {
  return merchantSql(q, merchantId)<Pick<Invoice, 'id' | 'status' | 'autoAdvance' | 'paymentId' | 'amountDue' | 'amountPaid'>>(
    `SELECT id, status, auto_advance, payment_id, amount_due, amount_paid FROM invoices WHERE merchant_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
    [ids],
  );
}

// ---------------------------------------------------------------- the dashboard's overview (issue 24)
// Two statements for the whole overview, whatever the number of customers or payments: MRR per
// currency with the active count, and the last 30 days' series (payments', refunds' and events'
// tables, read here for billing's overview).

export interface MrrRow {
  currency: string;
  /** the exact monthly sum, rounded once (half away from zero) to minor units: text of an integer */
  mrr: string;
  subscriptions: bigint;
  active: bigint;
}

/**
 * MRR per currency over active and past_due subscriptions: the plan's amount × the subscription's
 * quantity brought to a month (before discounts and taxes; day × 365/12, week × 52/12, year ÷ 12, each ÷ interval_count), summed exactly (numeric) and
 * rounded once per currency. Trialing, paused, unpaid, incomplete and cancelled ones are left out.
 */
export function findMrr(db: Db, merchantId: string): Promise<MrrRow[]> {
  return merchantSql(rawQuery(db), merchantId)<MrrRow>(
    `SELECT p.currency,
            round(sum(p.amount::numeric * s.quantity * CASE p.interval WHEN 'day' THEN 365 WHEN 'week' THEN 52 WHEN 'month' THEN 12 ELSE 1 END
                      / (12 * p.interval_count)))::text AS mrr,
            count(*) AS subscriptions,
            count(*) FILTER (WHERE s.status = 'active') AS active
       FROM subscriptions s JOIN plans p ON p.id = s.plan_id AND p.merchant_id = $1
      WHERE s.merchant_id = $1 AND s.status IN ('active', 'past_due')
      GROUP BY p.currency ORDER BY p.currency`,
  );
}

export interface DailyRow {
  kind: 'payment' | 'refund' | 'failed';
  day: string;
  currency: string;
  amount: bigint;
  count: bigint;
}

/**
 * Per UTC day in [from, to): succeeded payments (by completed_at) and succeeded refunds (by
 * created_at), summed per currency, and failed payment attempts (payment.failed events), counted.
 */
export function findDailyActivity(db: Db, merchantId: string, from: Date, to: Date): Promise<DailyRow[]> {
  return merchantSql(rawQuery(db), merchantId)<DailyRow>(
    `SELECT 'payment' AS kind, to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, currency, sum(amount)::int8 AS amount, count(*) AS count
       FROM payments WHERE merchant_id = $1 AND status = 'succeeded' AND completed_at >= $2 AND completed_at < $3 GROUP BY 2, 3
     UNION ALL
     SELECT 'refund', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), currency, sum(amount)::int8, count(*)
       FROM refunds WHERE merchant_id = $1 AND status = 'succeeded' AND created_at >= $2 AND created_at < $3 GROUP BY 2, 3
     UNION ALL
     SELECT 'failed', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), '', 0::int8, count(*)
       FROM events WHERE merchant_id = $1 AND type = 'payment.failed' AND created_at >= $2 AND created_at < $3 GROUP BY 2`,
    [from, to],
  );
}

// ---------------------------------------------------------------- one-off invoicing and credit notes (invoice-items.ts, one-off.ts, credit-notes.ts)

export function insertPendingItem(tx: TenantTx, data: Prisma.PendingInvoiceItemUncheckedCreateInput): Promise<PendingInvoiceItem> {
  return tx.pendingInvoiceItem.create({ data });
}

export function findPendingItem(db: Db, id: string): Promise<PendingInvoiceItem | null> {
  return db.pendingInvoiceItem.findUnique({ where: { id } });
}

export function listPendingItems(db: Db, where: Prisma.PendingInvoiceItemWhereInput, page: PageSlice): Promise<PendingInvoiceItem[]> {
  return db.pendingInvoiceItem.findMany({ where, ...page });
}

export function countPendingItems(db: Db, where: Prisma.PendingInvoiceItemWhereInput): Promise<number> {
  return db.pendingInvoiceItem.count({ where });
}

/** Deletes an item still waiting (locked by the caller's read); the count deleted (0: it was invoiced meanwhile). */
export async function deleteWaitingItem(tx: TenantTx, id: string): Promise<number> {
  return (await tx.pendingInvoiceItem.deleteMany({ where: { id, invoiceId: null } })).count;
}

/** Locks an item row (FOR UPDATE) and reads it. */
export async function lockPendingItem(q: RawQuery, merchantId: string, id: string): Promise<PendingInvoiceItem | null> {
  const rows = await merchantSql(q, merchantId)<PendingInvoiceItem>('SELECT * FROM pending_invoice_items WHERE merchant_id = $1 AND id = $2 FOR UPDATE', [id]);
  return rows[0] ?? null;
}

/**
 * Takes every item of the customer waiting in `currency` for `invoiceId`, oldest first, in one
 * statement: a concurrent taker waits for the row locks and then finds them taken (never invoiced twice).
 */
export async function takeWaitingItems(q: RawQuery, merchantId: string, customerId: string, currency: string, invoiceId: string, limit: number): Promise<PendingInvoiceItem[]> {
  // The oldest `limit` (an invoice's most lines; listWaitingItems reads the same ones for the
  // preview), locked; one taken meanwhile by another invoice is re-checked and left out.
  const rows = await merchantSql(q, merchantId)<PendingInvoiceItem>(
    `UPDATE pending_invoice_items SET invoice_id = $4, updated_at = now()
     WHERE merchant_id = $1 AND invoice_id IS NULL AND id IN (
       SELECT id FROM pending_invoice_items
        WHERE merchant_id = $1 AND customer_id = $2 AND currency = $3 AND invoice_id IS NULL
        ORDER BY created_at, id LIMIT $5 FOR UPDATE)
     RETURNING *`,
    [customerId, currency, invoiceId, limit],
  );
  return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
}

/** Puts taken items back to waiting (an invoice that had no room for them). */
export async function releaseItems(q: RawQuery, merchantId: string, ids: string[]): Promise<void> {
  await merchantSql(q, merchantId)(`UPDATE pending_invoice_items SET invoice_id = NULL WHERE merchant_id = $1 AND id = ANY($2::text[])`, [ids]);
}

/** Records the invoice line each taken item became. */
export async function setItemLines(q: RawQuery, merchantId: string, pairs: { id: string; lineId: string }[]): Promise<void> {
  if (!pairs.length) return;
  await merchantSql(q, merchantId)(
    `UPDATE pending_invoice_items i SET line_id = v.line FROM unnest($2::text[], $3::text[]) AS v(id, line) WHERE i.merchant_id = $1 AND i.id = v.id`,
    [pairs.map((p) => p.id), pairs.map((p) => p.lineId)],
  );
}

/** The customer's oldest `limit` items waiting in this currency, oldest first (the upcoming invoice's preview: takeWaitingItems' candidates). */
export function listWaitingItems(db: Db, customerId: string, currency: string, limit: number): Promise<PendingInvoiceItem[]> {
  return db.pendingInvoiceItem.findMany({ where: { customerId, currency, invoiceId: null }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: limit });
}

/** Whether the customer has items waiting in this currency. */
export async function hasWaitingItems(db: Db, customerId: string, currency: string): Promise<boolean> {
  return (await db.pendingInvoiceItem.count({ where: { customerId, currency, invoiceId: null } })) > 0;
}

/** Which (customer, currency) pairs of these customers have items waiting: keys `customer:CUR` (a renewal batch leaves them to the one-by-one path). */
export async function customersWithWaitingItems(q: RawQuery, merchantId: string, customerIds: string[]): Promise<Set<string>> {
  if (!customerIds.length) return new Set();
  const rows = await merchantSql(q, merchantId)<{ customerId: string; currency: string }>(
    `SELECT DISTINCT customer_id, currency FROM pending_invoice_items WHERE merchant_id = $1 AND customer_id = ANY($2::text[]) AND invoice_id IS NULL`,
    [customerIds],
  );
  return new Set(rows.map((r) => `${r.customerId}:${r.currency}`));
}

/** The invoice of a hosted invoice page's token, with its merchant's branding (unscoped: the page has no credentials). */
export function findInvoiceByHostedToken(prisma: PrismaClient, token: string) {
  return prisma.invoice.findUnique({
    where: { hostedToken: token },
    select: { id: true, merchant: { select: { id: true, mode: true, name: true, accentColor: true, logoType: true, logo: true } } },
  });
}

export function insertCreditNote(tx: TenantTx, data: Prisma.CreditNoteUncheckedCreateInput): Promise<CreditNote> {
  return tx.creditNote.create({ data });
}

export function findCreditNote(db: Db, id: string): Promise<CreditNote | null> {
  return db.creditNote.findUnique({ where: { id } });
}

export function listCreditNotes(db: Db, where: Prisma.CreditNoteWhereInput, page: PageSlice): Promise<CreditNote[]> {
  return db.creditNote.findMany({ where, ...page });
}

export function countCreditNotes(db: Db, where: Prisma.CreditNoteWhereInput): Promise<number> {
  return db.creditNote.count({ where });
}

/** Every credit note of an invoice (what its lines were credited so far), oldest first. */
export function listCreditNotesOfInvoice(tx: TenantTx, invoiceId: string): Promise<CreditNote[]> {
  return tx.creditNote.findMany({ where: { invoiceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

/** The merchant's next credit note number, moved in the caller's transaction (gap-free: a rollback takes it back). */
export async function nextCreditNoteSeq(q: RawQuery, merchantId: string): Promise<number> {
  const [row] = await q<{ seq: number }>(
    `INSERT INTO credit_note_counters (merchant_id, seq) VALUES ($1, 1)
     ON CONFLICT (merchant_id) DO UPDATE SET seq = credit_note_counters.seq + 1 RETURNING seq`,
    [merchantId],
  );
  return Number(row!.seq);
}

/** The payment of an invoice (for a credit note's refund), with what was refunded of it. */
export function findPaymentHeader(db: Db, id: string): Promise<Payment | null> {
  return db.payment.findUnique({ where: { id } });
}

/** The merchant of a credit note with its signing key, on the unscoped client (a signed PDF link carries no credentials). */
export function findCreditNoteMerchant(prisma: PrismaClient, id: string) {
  return prisma.creditNote.findUnique({ where: { id }, select: { merchant: { select: { id: true, mode: true, name: true, signingKey: true } } } });
}

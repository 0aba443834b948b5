// The customer credit balance (API-CONVENTIONS "Billing lifecycle rules" and "Billing depth"):
// money the merchant owes the customer, per currency — invoices whose total fell below zero (a
// downgrade, unused time), credits from cancelled subscriptions, credit notes and manual
// adjustments — that the customer's invoices draw on before charging (`credit_applied`).
// Every movement appends a ledger entry carrying the balance after it, and records
// `customer.balance_changed`, in the caller's transaction; the balance row is its lock, taken
// last (only a wallet's may follow, when an invoice draws from both).
import type { Ctx } from '../../platform/context.ts';
import type { TenantTx, Db } from '../../platform/db/tenant.ts';
import { inTransaction } from '../../platform/db/tenant.ts';
import { asRawTx, lockRow, rawQuery, type RawTx } from '../../platform/db/raw.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { countsByParent, pagesByParent } from '../../platform/db/pages-by-parent.ts';
import { parse } from '../../platform/validation.ts';
import { clockNow } from '../../platform/clock.ts';
import { recordEvent } from '../events/index.ts';
import { balanceTransactionCreate, type BalanceTransactionCreateInput, type BalanceTransactionListQuery } from './schema.ts';
import { findBalances, findNonZeroBalancesOf, findBalanceTransactions, findBalanceTransactionsByIds, findLiveCustomerId, lockBalance, moveBalance, type BalanceTransactionRow } from './store.ts';

export type { BalanceTransactionRow };

/**
 * adjustment (by the merchant) | subscription_credit (a cancelled subscription's waiting credit) |
 * invoice_credit (an invoice's total below zero, credited when it was finalised) |
 * applied_to_invoice (drawn by an invoice) | unapplied_from_invoice (a voided invoice's draw given
 * back) | credit_note (a paid invoice's credit note)
 */
export const BALANCE_TRANSACTION_TYPES = ['adjustment', 'subscription_credit', 'invoice_credit', 'applied_to_invoice', 'unapplied_from_invoice', 'credit_note'] as const;
export type BalanceTransactionType = (typeof BALANCE_TRANSACTION_TYPES)[number];

export function balanceTransactionToJSON(t: BalanceTransactionRow) {
  return {
    id: t.id,
    object: 'customer_balance_transaction' as const,
    customer_id: t.customerId,
    currency: t.currency,
    amount: Number(t.amount),
    ending_balance: Number(t.endingBalance),
    type: t.type as BalanceTransactionType,
    invoice_id: t.invoiceId,
    subscription_id: t.subscriptionId,
    description: t.description,
    created_at: t.createdAt.toISOString(),
  };
}

/** The credit balance object of a customer: `{ "USD": 1250 }` (non-zero balances only). */
export function creditBalanceJSON(rows: readonly { currency: string; balance: bigint | number }[]): Record<string, number> {
  return Object.fromEntries(rows.map((r) => [r.currency, Number(r.balance)]));
}

export async function creditBalanceOf(ctx: Ctx, customerId: string, db: Db = ctx.db): Promise<Record<string, number>> {
  return creditBalanceJSON(await findBalances(db, ctx.merchant.id, customerId));
}

/** The credit balance object of each of these customers (`{}` when none), in one statement for all of them (a page of customers). */
export async function creditBalancesOf(ctx: Ctx, customerIds: readonly string[], db: Db = ctx.db): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>(customerIds.map((id) => [id, {}]));
  if (customerIds.length === 0) return out;
  for (const r of await findNonZeroBalancesOf(rawQuery(db), ctx.merchant.id, [...customerIds])) out.get(r.customerId)![r.currency] = Number(r.balance);
  return out;
}

/** The most a credit balance may hold (as a wallet's, src/domain/wallets MAX_BALANCE): below 2^53. */
export const MAX_CREDIT_BALANCE = 999_999_999_999_999n;

interface Movement {
  customerId: string;
  currency: string;
  amount: bigint;
  type: BalanceTransactionType;
  invoiceId?: string | null;
  subscriptionId?: string | null;
  description?: string | null;
}

async function move(ctx: Ctx, tx: TenantTx, m: Movement): Promise<BalanceTransactionRow> {
  const row = await moveBalance(tx, {
    id: newId('customer_balance_transaction'),
    merchantId: ctx.merchant.id,
    customerId: m.customerId,
    currency: m.currency,
    amount: m.amount,
    type: m.type,
    invoiceId: m.invoiceId ?? null,
    subscriptionId: m.subscriptionId ?? null,
    description: m.description ?? null,
    at: await clockNow({ ...ctx, db: tx }),
  });
  await recordEvent(tx, ctx, 'customer.balance_changed', balanceTransactionToJSON(row));
  return row;
}

/** Adds credit owed to the customer (amount > 0), in the caller's transaction. */
export async function addCredit(ctx: Ctx, tx: TenantTx, m: Movement): Promise<BalanceTransactionRow> {
  if (m.amount <= 0n) throw new Error(`addCredit: amount must be positive, got ${m.amount}`);
  return move(ctx, tx, m);
}

/** What a balance (credit or wallet) pays of an amount due: all of it when it can, else what it holds; 0 when it holds nothing. */
export function drawable(balance: bigint, due: bigint): bigint {
  if (balance <= 0n || due <= 0n) return 0n;
  return balance < due ? balance : due;
}

/**
 * Draws up to `due` from the customer's credit balance for an invoice (in the caller's
 * transaction): what it drew (0 when there is no credit in that currency).
 */
export async function drawCredit(ctx: Ctx, tx: TenantTx, a: { customerId: string; currency: string; due: bigint; invoiceId: string; description: string }): Promise<bigint> {
  if (a.due <= 0n) return 0n;
  const amount = drawable(await lockBalance(tx, ctx.merchant.id, a.customerId, a.currency), a.due);
  if (amount === 0n) return 0n;
  await move(ctx, tx, { customerId: a.customerId, currency: a.currency, amount: -amount, type: 'applied_to_invoice', invoiceId: a.invoiceId, description: a.description });
  return amount;
}

/**
 * POST /v1/customers/:id/balance-transactions: the merchant adjusts the balance (a credit, or
 * taking unused credit back — never below 0: 400 `balance_insufficient`, param amount).
 */
export async function createBalanceTransaction(ctx: Ctx, customerId: string, input: BalanceTransactionCreateInput): Promise<BalanceTransactionRow> {
  const data = parse(balanceTransactionCreate, input);
  return inTransaction(ctx.db, async (tx) => {
    // Under the customer's lock, as every change of a customer (a deletion waits or is seen).
    await lockRow(tx, 'customers', ctx.merchant.id, customerId);
    if (!(await findLiveCustomerId(tx, customerId))) throw new NotFoundError('customer', customerId);
    const amount = BigInt(data.amount);
    const balance = await lockBalance(tx, ctx.merchant.id, customerId, data.currency);
    // As a wallet's: the balance stays an exact JSON number (and GraphQL Money).
    if (balance + amount > MAX_CREDIT_BALANCE) {
      throw new ValidationError('amount_too_large', `Invalid amount: the credit balance would exceed ${MAX_CREDIT_BALANCE}.`, 'amount');
    }
    if (amount < 0n) {
      if (balance + amount < 0n) {
        throw new ValidationError(
          'balance_insufficient',
          `The customer's ${data.currency} credit balance is ${balance}: at most that much can be taken back.`,
          'amount',
        );
      }
    }
    return move(ctx, tx, { customerId, currency: data.currency, amount, type: 'adjustment', description: data.description ?? null });
  });
}

/** GET /v1/customers/:id/balance-transactions: the ledger, newest first. */
export async function listBalanceTransactions(ctx: Ctx, customerId: string, q: BalanceTransactionListQuery): Promise<Page<BalanceTransactionRow>> {
  if (!(await findLiveCustomerId(ctx.db, customerId))) throw new NotFoundError('customer', customerId);
  return paginate(q, ({ where, ...page }) => findBalanceTransactions(ctx.db, { AND: [where, { customerId }] }, page) as Promise<BalanceTransactionRow[]>);
}

const TRANSACTIONS_OF_CUSTOMER = { table: 'customer_balance_transactions', parent: 'customer_id' };

/** One ledger page per customer (a customer's balanceTransactions in GraphQL), in two queries for all of them. */
export function listBalanceTransactionsOfCustomers(ctx: Ctx, customerIds: readonly string[], q: BalanceTransactionListQuery) {
  return pagesByParent(ctx, TRANSACTIONS_OF_CUSTOMER, customerIds, { ...q, filters: {} }, (ids) => findBalanceTransactionsByIds(ctx.db, ids));
}

export function countBalanceTransactionsOfCustomers(ctx: Ctx, customerIds: readonly string[]) {
  return countsByParent(ctx, TRANSACTIONS_OF_CUSTOMER, customerIds, {});
}

/** The `customer:currency` pairs of these customers that have a credit balance (or a debt) to settle on their next invoice. */
export async function balancesToSettle(ctx: Ctx, db: Db | RawTx, customerIds: string[]): Promise<Set<string>> {
  if (customerIds.length === 0) return new Set();
  const rows = await findNonZeroBalancesOf(asRawTx(db).raw, ctx.merchant.id, customerIds);
  return new Set(rows.map((r) => `${r.customerId}:${r.currency}`));
}

// The customers' statements (customers table), and the one read of a payment method the rules of
// this area make. The rules are in index.ts (and src/services/customers.ts).
import type { Customer, PaymentMethod, Prisma } from '../../generated/prisma/client.ts';
import { merchantSql, rawQuery, type RawQuery } from '../../platform/db/raw.ts';
import type { PageSlice } from '../../platform/pagination.ts';
import type { Db, TenantTx } from '../../platform/db/tenant.ts';
import type { Statement } from '../events/index.ts';

/**
 * The statement that inserts a new customer, for recordEvent's `with` (the hot path of issue 14:
 * the customer, the event and its deliveries in one statement): $1 is the merchant, its times are
 * the statement's billing clock (recordEvent's `clock`).
 */
export function insertCustomerStatement(c: Customer): Statement {
  return {
    sql: `INSERT INTO customers (id, merchant_id, email, name, phone, currency, locale, metadata, created_at, updated_at)
            SELECT $2, $1, $3, $4, $5, $6, $7, $8::jsonb, clock.at, clock.at FROM clock`,
    params: [c.id, c.email, c.name, c.phone, c.currency, c.locale, JSON.stringify(c.metadata)],
  };
}

const LIVE_CUSTOMER = `SELECT * FROM customers WHERE merchant_id = $1 AND id = $2 AND deleted_at IS NULL`;

/** A live (not deleted) customer of the merchant, or undefined. */
export async function findLiveCustomer(db: Db, merchantId: string, id: string): Promise<Customer | undefined> {
  const [c] = await merchantSql(rawQuery(db), merchantId)<Customer>(LIVE_CUSTOMER, [id]);
  return c;
}

/** Whether a customer is there and live (not deleted): its id, or null. */
export function findLiveCustomerId(db: Db, id: string): Promise<{ id: string } | null> {
  return db.customer.findFirst({ where: { id, deletedAt: null }, select: { id: true } });
}

export function updateCustomerRow(tx: TenantTx, id: string, data: Prisma.CustomerUncheckedUpdateInput): Promise<Customer> {
  return tx.customer.update({ where: { id }, data });
}

/** A page of customers (`where`: the filters and the cursor's fragment; `page`: order and take). */
export function findCustomers(db: Db, where: Prisma.CustomerWhereInput, page: PageSlice): Promise<Customer[]> {
  return db.customer.findMany({ where, ...page });
}

/**
 * What a customer search matches (SEARCH_DESCRIPTION), lower-cased: `text`, the whole search (a
 * prefix of the email), and `words`, its words (each a prefix of a word of the name; none: the
 * name is not searched), the longest first.
 */
export interface CustomerSearch {
  text: string;
  words: string[];
  /** exact email filter, if any */
  email?: string | undefined;
}

/** The end of the range of strings starting with p in the "C" collation (U+10FFFF sorts last). */
const prefixEnd = (p: string) => `${p}\u{10FFFF}`;

// The ids of the merchant's live customers matching the search, from customer_search_terms (kept
// by a trigger on customers, migration 20261128023337): a prefix p is the range
// p <= term < p || U+10FFFF in the "C" collation, compared with leakproof operators only, so the
// (merchant_id, kind, term) index is used under row-level security. The bounds are parameters
// (constants to the planner, which then estimates the match count from the statistics): $2/$3
// the email's range, $4/$5 the longest word's; the other words ($6/$7: arrays) are checked per
// candidate on the primary key (customer_id, kind, term).
const SEARCH_IDS = `ids AS MATERIALIZED (
    SELECT t.customer_id FROM customer_search_terms t
     WHERE t.merchant_id = $1 AND t.kind = 'email' AND t.term >= $2 AND t.term < $3
    UNION
    SELECT t.customer_id FROM customer_search_terms t
     WHERE $4::text IS NOT NULL AND t.merchant_id = $1 AND t.kind = 'name' AND t.term >= $4 AND t.term < $5
       AND NOT EXISTS (SELECT 1 FROM unnest($6::text[], $7::text[]) AS w(lo, hi)
                        WHERE NOT EXISTS (SELECT 1 FROM customer_search_terms t2
                                           WHERE t2.customer_id = t.customer_id AND t2.kind = 'name' AND t2.term >= w.lo AND t2.term < w.hi)))`;

const SEARCH_WHERE = `c.merchant_id = $1 AND c.deleted_at IS NULL AND ($8::text IS NULL OR c.email = $8)`;

const SEARCH_PAGE = `WITH ${SEARCH_IDS}
  SELECT c.* FROM ids JOIN customers c ON c.id = ids.customer_id
   WHERE ${SEARCH_WHERE} AND ($9::timestamptz IS NULL OR (c.created_at, c.id) < ($9::timestamptz, $10::text))
   ORDER BY c.created_at DESC, c.id DESC LIMIT $11`;

function searchParams(s: CustomerSearch): unknown[] {
  const [first, ...rest] = s.words;
  return [s.text, prefixEnd(s.text), first ?? null, first === undefined ? null : prefixEnd(first), rest, rest.map(prefixEnd), s.email ?? null];
}

/** A page of customers matching a search, newest first, after the cursor's row if any. */
export function searchCustomers(db: Db, merchantId: string, s: CustomerSearch, page: { take: number; after?: { createdAt: Date; id: string } | undefined }): Promise<Customer[]> {
  return merchantSql(rawQuery(db), merchantId)<Customer>(SEARCH_PAGE, [...searchParams(s), page.after?.createdAt ?? null, page.after?.id ?? null, page.take]);
}

export async function countSearchedCustomers(db: Db, merchantId: string, s: CustomerSearch): Promise<number> {
  const [row] = await merchantSql(rawQuery(db), merchantId)<{ n: bigint }>(
    `WITH ${SEARCH_IDS} SELECT count(*) AS n FROM ids JOIN customers c ON c.id = ids.customer_id WHERE ${SEARCH_WHERE} AND $9::int IS NULL AND $10::int IS NULL`,
    [...searchParams(s), null, null],
  );
  return Number(row!.n);
}

/** The plan PostgreSQL chooses for a search page (EXPLAIN: the search test prints and checks it). */
export async function explainCustomerSearch(db: Db, merchantId: string, s: CustomerSearch, take: number): Promise<string> {
  const rows = await merchantSql(rawQuery(db), merchantId)<Record<string, string>>(`EXPLAIN ${SEARCH_PAGE}`, [...searchParams(s), null, null, take]);
  return rows.map((r) => Object.values(r)[0]).join('\n');
}

export function countCustomers(db: Db, where: Prisma.CustomerWhereInput): Promise<number> {
  return db.customer.count({ where });
}

/** A payment method by id (payment-methods' table: the customer's default must be one of its own). */
export function findPaymentMethod(db: Db, id: string): Promise<PaymentMethod | null> {
  return db.paymentMethod.findUnique({ where: { id } });
}

// ---------------------------------------------------------------- the credit balance (customer_balances + its ledger)

export interface BalanceTransactionRow {
  id: string;
  merchantId: string;
  customerId: string;
  currency: string;
  amount: bigint;
  endingBalance: bigint;
  type: string;
  invoiceId: string | null;
  subscriptionId: string | null;
  description: string | null;
  createdAt: Date;
}

/** The customer's credit balance in one currency, its row locked (FOR UPDATE) when there is one; 0 when none. */
export async function lockBalance(tx: TenantTx, merchantId: string, customerId: string, currency: string): Promise<bigint> {
  const [row] = await merchantSql(rawQuery(tx), merchantId)<{ balance: bigint }>(
    `SELECT balance FROM customer_balances WHERE merchant_id = $1 AND customer_id = $2 AND currency = $3 FOR UPDATE`,
    [customerId, currency],
  );
  return row ? BigInt(row.balance) : 0n;
}

/**
 * Moves the balance by `amount` and appends its ledger entry with the balance after it, in one
 * statement (the row is created on the first credit). The caller checked that the balance stays ≥ 0
 * (lockBalance) when the amount is negative.
 */
export async function moveBalance(
  tx: TenantTx,
  t: Omit<BalanceTransactionRow, 'endingBalance' | 'createdAt'> & { at: Date },
): Promise<BalanceTransactionRow> {
  const [row] = await merchantSql(rawQuery(tx), t.merchantId)<BalanceTransactionRow>(
    `WITH b AS (
       INSERT INTO customer_balances (merchant_id, customer_id, currency, balance, updated_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (customer_id, currency) DO UPDATE SET balance = customer_balances.balance + EXCLUDED.balance, updated_at = EXCLUDED.updated_at
       RETURNING balance)
     INSERT INTO customer_balance_transactions (id, merchant_id, customer_id, currency, amount, ending_balance, type, invoice_id, subscription_id, description, created_at)
     SELECT $6, $1, $2, $3, $4, b.balance, $7, $8, $9, $10, $5 FROM b
     RETURNING *`,
    [t.customerId, t.currency, t.amount, t.at, t.id, t.type, t.invoiceId, t.subscriptionId, t.description],
  );
  return { ...row!, amount: BigInt(row!.amount), endingBalance: BigInt(row!.endingBalance) };
}

/** The customer's non-zero balances, by currency. */
export async function findBalances(db: Db, merchantId: string, customerId: string): Promise<{ currency: string; balance: bigint }[]> {
  return merchantSql(rawQuery(db), merchantId)<{ currency: string; balance: bigint }>(
    `SELECT currency, balance FROM customer_balances WHERE merchant_id = $1 AND customer_id = $2 AND balance <> 0 ORDER BY currency`,
    [customerId],
  );
}

/**
 * These customers' non-zero balances, by customer and currency, in one statement: the
 * `credit_balance` of a page of customer objects, and which customers a renewal batch leaves to
 * the one-by-one path (which draws on it).
 */
export function findNonZeroBalancesOf(q: RawQuery, merchantId: string, customerIds: string[]): Promise<{ customerId: string; currency: string; balance: bigint }[]> {
  return merchantSql(q, merchantId)<{ customerId: string; currency: string; balance: bigint }>(
    `SELECT customer_id, currency, balance FROM customer_balances WHERE merchant_id = $1 AND customer_id = ANY($2::text[]) AND balance <> 0 ORDER BY customer_id, currency`,
    [customerIds],
  );
}

/** The customer's credit balance as a JSON object in a sub-select (`customerId`: the SQL of the customer's id). */
export function creditBalanceSql(customerId: string): string {
  return `SELECT coalesce(json_object_agg(b.currency, b.balance ORDER BY b.currency), '{}') FROM customer_balances b
          WHERE b.merchant_id = $1 AND b.customer_id = ${customerId} AND b.balance <> 0`;
}

/** A page of the customer's ledger (`where`: filters and the cursor's fragment; `page`: order and take). */
export function findBalanceTransactions(db: Db, where: Prisma.CustomerBalanceTransactionWhereInput, page: PageSlice) {
  return db.customerBalanceTransaction.findMany({ where, ...page });
}

export function findBalanceTransactionsByIds(db: Db, ids: string[]) {
  return db.customerBalanceTransaction.findMany({ where: { id: { in: ids } } });
}

// ---- the ledger invariant (system work over every merchant, src/jobs/ledger-check.ts)

/** A customer's balance in one currency and what its ledger adds up to. */
export interface CustomerBalanceAgainstLedger {
  customerId: string;
  currency: string;
  merchantId: string;
  balance: bigint;
  ledgerSum: bigint;
}

/**
 * The next `limit` customer balances after (customerId, currency), every merchant, with the sum of
 * their ledger (customer_balance_transactions), in one statement (one snapshot: moveBalance writes
 * both in one statement).
 */
export function customerBalancesAgainstLedger(q: RawQuery, after: { customerId: string; currency: string }, limit: number): Promise<CustomerBalanceAgainstLedger[]> {
  return q<CustomerBalanceAgainstLedger>(
    `SELECT b.customer_id, b.currency, b.merchant_id, b.balance, coalesce(l.total, 0)::bigint AS ledger_sum
       FROM (SELECT customer_id, currency, merchant_id, balance FROM customer_balances
              WHERE (customer_id, currency) > ($1, $2) ORDER BY customer_id, currency LIMIT $3) b
       LEFT JOIN LATERAL (
         SELECT sum(t.amount) AS total FROM customer_balance_transactions t
          WHERE t.merchant_id = b.merchant_id AND t.customer_id = b.customer_id AND t.currency = b.currency) l ON true
      ORDER BY b.customer_id, b.currency`,
    [after.customerId, after.currency, limit],
  );
}

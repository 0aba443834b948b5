// The wallets area's statements: wallets, their ledger (wallet_transactions), grants and top-ups.
// The debit's statements are tuned for its hot path (docs/performance.md): one locking read, then
// the ledger row with its event in one statement.
import type { Prisma, Wallet, WalletGrant, WalletTopup, WalletTransaction } from '../../generated/prisma/client.ts';
import type { Db, TenantTx } from '../../platform/db/tenant.ts';
import { asRawTx, merchantSql, rawQuery, type RawQuery, type RawTx } from '../../platform/db/raw.ts';
import type { PageSlice } from '../../platform/pagination.ts';
import type { Statement } from '../events/index.ts';
import type { TopupStatus, WalletStatus } from './schema.ts';

/** One keyset page's order and size (platform/pagination.ts `paginate`). */

export type TransactionWithGrant = WalletTransaction & { grant?: { expiresAt: Date } | null };
export type TopupWithPayment = WalletTopup & { payment: { checkoutToken: string } };

const withGrant = { grant: { select: { expiresAt: true } } } as const;
const withPayment = { payment: { select: { checkoutToken: true } } } as const;

// ---- wallets

export function findWallet(db: Db, id: string): Promise<Wallet | null> {
  return db.wallet.findUnique({ where: { id } });
}

/** The customer's wallet in `currency` that is not closed, if any. */
export function findOpenWallet(tx: TenantTx, customerId: string, currency: string): Promise<Wallet | null> {
  return tx.wallet.findFirst({ where: { customerId, currency, status: { not: 'closed' } } });
}

export function insertWallet(tx: TenantTx, data: Prisma.WalletUncheckedCreateInput): Promise<Wallet> {
  return tx.wallet.create({ data });
}

export function listWallets(db: Db, where: Prisma.WalletWhereInput, page: PageSlice): Promise<Wallet[]> {
  return db.wallet.findMany({ where, ...page });
}

export function countWallets(db: Db, where: Prisma.WalletWhereInput): Promise<number> {
  return db.wallet.count({ where });
}

export function setWalletStatus(tx: TenantTx, id: string, status: Exclude<WalletStatus, 'closed'>): Promise<Wallet> {
  return tx.wallet.update({ where: { id }, data: { status } });
}

export function markWalletClosed(tx: TenantTx, id: string, at: Date): Promise<Wallet> {
  return tx.wallet.update({ where: { id }, data: { status: 'closed', closedAt: at } });
}

/** What a debit reads with the wallet's lock. */
export interface LockedForMovement {
  id: string;
  balance: bigint;
  status: string;
  currency: string;
  clockOffsetMs: bigint;
  clockParkedUntil: Date | null;
  priorId: string | null;
  hasGrants: boolean;
  /** the time of the wallet's latest ledger row (the next is stamped after it) */
  lastLedgerAt: Date | null;
}

/**
 * The hot path's one round trip: locks the wallet row and reads, with it, what a movement needs
 * (balance, status, the merchant's clock offset and park, a transaction already holding the reference, and
 * whether any grant is open — the grants themselves are read only then).
 */
export async function lockWalletForDebit(tx: RawTx, merchantId: string, id: string, reference: string): Promise<LockedForMovement | undefined> {
  const [row] = await merchantSql(tx.raw, merchantId)<LockedForMovement>(
    `SELECT w.id, w.balance, w.status, w.currency, w.last_ledger_at, m.clock_offset_ms, m.clock_parked_until, t.id AS prior_id,
       EXISTS (SELECT 1 FROM wallet_grants g WHERE g.wallet_id = w.id AND g.expired_at IS NULL) AS has_grants
     FROM wallets w
     JOIN merchants m ON m.id = w.merchant_id
     LEFT JOIN wallet_transactions t ON t.wallet_id = w.id AND t.reference = $3
     WHERE w.id = $2 AND w.merchant_id = $1
     FOR UPDATE OF w`,
    [id, reference],
  );
  return row;
}

/** What the debit's one statement read with the wallet's lock (debitLeadStatement). */
export interface DebitLead {
  walletId: string;
  balanceBefore: bigint;
  balanceAfter: bigint;
}

/**
 * The debit in one statement (recordEventAlone's `lead`): locks the wallet row with the debit's
 * conditions — the merchant's wallet, neither closed nor frozen, no open grants (their order of
 * consumption is the transaction path's), no movement with this reference yet, and enough balance
 * — and reads the balance it moves. No row: nothing is written, the transaction path decides.
 * Under the lock PostgreSQL re-checks these conditions on the wallet row as a concurrent debit
 * left it (READ COMMITTED), so the balance test and balance_before see the latest balance; a
 * concurrent movement with the same reference is caught by the unique (wallet_id, reference) index.
 */
export function debitLeadStatement(id: string, reference: string, amount: bigint): Statement {
  return {
    sql: `SELECT w.id AS wallet_id, w.balance AS balance_before, w.balance - $4::bigint AS balance_after,
            w.last_ledger_at + interval '1 millisecond' AS not_before FROM wallets w
          WHERE w.id = $2 AND w.merchant_id = $1 AND w.status NOT IN ('closed', 'frozen') AND w.balance >= $4::bigint
            AND NOT EXISTS (SELECT 1 FROM wallet_transactions t WHERE t.wallet_id = w.id AND t.reference = $3)
            AND NOT EXISTS (SELECT 1 FROM wallet_grants g WHERE g.wallet_id = w.id AND g.expired_at IS NULL)
          FOR UPDATE OF w`,
    params: [id, reference, amount],
  };
}

/** The debit's ledger row from debitLeadStatement's lock (`clock`), at the statement's time. */
export function insertDebitFromLeadStatement(t: Pick<WalletTransaction, 'id' | 'amount' | 'reference' | 'description' | 'metadata'>): Statement {
  return {
    sql: `INSERT INTO wallet_transactions (id, merchant_id, wallet_id, type, amount, balance_before, balance_after, reference, description, metadata, created_at)
          SELECT $2, $1, clock.wallet_id, 'debit', $3, clock.balance_before, clock.balance_after, $4, $5, $6::jsonb, clock.at FROM clock`,
    params: [t.id, t.amount, t.reference, t.description, JSON.stringify(t.metadata)],
  };
}

// ---- the ledger

/** The INSERT of one ledger row (for recordEvent to run with the event, or on its own). */
export function insertTransactionStatement(t: WalletTransaction): Statement {
  return {
    sql: `INSERT INTO wallet_transactions (id, merchant_id, wallet_id, type, amount, balance_before, balance_after, reference, description, metadata, created_at)
          VALUES ($2, $1, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11)`,
    params: [t.id, t.walletId, t.type, t.amount, t.balanceBefore, t.balanceAfter, t.reference, t.description, JSON.stringify(t.metadata), t.createdAt],
  };
}

/** Appends one ledger row (one statement); the trigger moves the balance. */
export function insertTransaction(db: TenantTx | RawTx, merchantId: string, t: WalletTransaction): Promise<unknown[]> {
  const insert = insertTransactionStatement(t);
  return merchantSql(asRawTx(db).raw, merchantId)(insert.sql, insert.params);
}

/** The wallet's transaction holding `reference`, with its grant's expiry, if any. */
export async function findTransactionWithGrantByReference(
  db: TenantTx | RawTx,
  merchantId: string,
  walletId: string,
  reference: string,
): Promise<TransactionWithGrant | null> {
  const [row] = await merchantSql(asRawTx(db).raw, merchantId)<WalletTransaction & { grantExpiresAt: Date | null }>(
    `SELECT t.*, g.expires_at AS grant_expires_at FROM wallet_transactions t LEFT JOIN wallet_grants g ON g.transaction_id = t.id
     WHERE t.merchant_id = $1 AND t.wallet_id = $2 AND t.reference = $3`,
    [walletId, reference],
  );
  if (!row) return null;
  const { grantExpiresAt, ...rest } = row;
  return { ...rest, grant: grantExpiresAt ? { expiresAt: grantExpiresAt } : null };
}

export function findTransactionByReference(tx: TenantTx, walletId: string, reference: string): Promise<WalletTransaction | null> {
  return tx.walletTransaction.findUnique({ where: { walletId_reference: { walletId, reference } } });
}

export function listTransactions(db: Db, where: Prisma.WalletTransactionWhereInput, page: PageSlice): Promise<TransactionWithGrant[]> {
  return db.walletTransaction.findMany({ where, include: withGrant, ...page });
}

export function countTransactions(db: Db, where: Prisma.WalletTransactionWhereInput): Promise<number> {
  return db.walletTransaction.count({ where });
}

export function findTransactionsByIds(db: Db, ids: string[]): Promise<TransactionWithGrant[]> {
  return db.walletTransaction.findMany({ where: { id: { in: ids } }, include: withGrant });
}

// ---- grants

export type Grant = { id: bigint; remaining: bigint; expiresAt: Date; transactionId: string };

/** A wallet's grants not yet expired, earliest expiry first. */
export function listOpenGrants(db: TenantTx | RawTx, merchantId: string, walletId: string): Promise<Grant[]> {
  return merchantSql(asRawTx(db).raw, merchantId)<Grant>(
    `SELECT id, remaining, expires_at, transaction_id FROM wallet_grants WHERE merchant_id = $1 AND wallet_id = $2 AND expired_at IS NULL ORDER BY expires_at, id`,
    [walletId],
  );
}

/** Sets what is left of a grant and, when `expiredAt` is given, when it expired. */
export function updateGrant(db: TenantTx | RawTx, merchantId: string, id: bigint, remaining: bigint, expiredAt: Date | null = null): Promise<unknown[]> {
  return merchantSql(asRawTx(db).raw, merchantId)(
    `UPDATE wallet_grants SET remaining = $3, expired_at = coalesce($4, expired_at) WHERE merchant_id = $1 AND id = $2`,
    [id, remaining, expiredAt],
  );
}

export function insertGrant(tx: TenantTx, data: Prisma.WalletGrantUncheckedCreateInput): Promise<WalletGrant> {
  return tx.walletGrant.create({ data });
}

/** Ends every open grant of the wallet at `at`, with nothing left of them. */
export function expireOpenGrants(tx: TenantTx, walletId: string, at: Date): Promise<Prisma.BatchPayload> {
  return tx.walletGrant.updateMany({ where: { walletId, expiredAt: null }, data: { remaining: 0n, expiredAt: at } });
}

/** What the wallet's open grants still hold (null when it has none). */
export async function sumOpenGrants(tx: TenantTx, walletId: string): Promise<bigint | null> {
  const expiring = await tx.walletGrant.aggregate({ where: { walletId, expiredAt: null }, _sum: { remaining: true } });
  return expiring._sum.remaining;
}

// ---- top-ups

export function insertTopup(tx: TenantTx, data: Prisma.WalletTopupUncheckedCreateInput): Promise<TopupWithPayment> {
  return tx.walletTopup.create({ data, include: withPayment });
}

export function findTopup(db: Db, id: string): Promise<TopupWithPayment | null> {
  return db.walletTopup.findUnique({ where: { id }, include: withPayment });
}

export function findTopupOfPayment(tx: TenantTx, paymentId: string): Promise<WalletTopup | null> {
  return tx.walletTopup.findUnique({ where: { paymentId } });
}

export function findTopupWithPaymentOfPayment(tx: TenantTx, paymentId: string): Promise<TopupWithPayment | null> {
  return tx.walletTopup.findUnique({ where: { paymentId }, include: withPayment });
}

export function listTopups(db: Db, where: Prisma.WalletTopupWhereInput, page: PageSlice): Promise<TopupWithPayment[]> {
  return db.walletTopup.findMany({ where, include: withPayment, ...page });
}

export function countTopups(db: Db, where: Prisma.WalletTopupWhereInput): Promise<number> {
  return db.walletTopup.count({ where });
}

export function findTopupsByIds(db: Db, ids: string[]): Promise<TopupWithPayment[]> {
  return db.walletTopup.findMany({ where: { id: { in: ids } }, include: withPayment });
}

/** The payment ids of the wallet's top-ups in these statuses, in payment id order. */
export function listTopupPaymentIds(tx: TenantTx, walletId: string, statuses: TopupStatus[]): Promise<{ paymentId: string }[]> {
  return tx.walletTopup.findMany({ where: { walletId, status: { in: statuses } }, select: { paymentId: true }, orderBy: { paymentId: 'asc' } });
}

export function setTopupStatus(tx: TenantTx, id: string, status: string): Promise<WalletTopup> {
  return tx.walletTopup.update({ where: { id }, data: { status } });
}

export function markTopupSucceeded(tx: TenantTx, id: string, transactionId: string): Promise<TopupWithPayment> {
  return tx.walletTopup.update({ where: { id }, data: { status: 'succeeded', transactionId }, include: withPayment });
}

/**
 * Whether a refund of one of the wallet's top-ups is pending (reads the refunds area's table).
 */
export async function hasPendingTopupRefund(tx: TenantTx, merchantId: string, walletId: string): Promise<boolean> {
  const refunding = await rawQuery(tx)(
    `SELECT 1 FROM refunds r JOIN wallet_topups t ON t.payment_id = r.payment_id
       WHERE t.wallet_id = $1 AND t.merchant_id = $2 AND r.status = 'pending' LIMIT 1`,
    [walletId, merchantId],
  );
  return refunding.length > 0;
}

/**
 * Locks a top-up's payment row without waiting (a lock held elsewhere is the database's error
 * 55P03) and reads its status (the payments area's table).
 */
export function lockTopupPaymentNowait(tx: TenantTx, merchantId: string, paymentId: string): Promise<{ status: string }[]> {
  return rawQuery(tx)<{ status: string }>('SELECT status FROM payments WHERE id = $1 AND merchant_id = $2 FOR UPDATE NOWAIT', [paymentId, merchantId]);
}

// ---- the ledger invariant (system work over every merchant, src/jobs/ledger-check.ts)

/** A balance and what its ledger adds up to. */
export interface BalanceAgainstLedger {
  walletId: string;
  merchantId: string;
  balance: bigint;
  ledgerSum: bigint;
}

/**
 * The next `limit` wallets after `afterId` (id order, every merchant) with their balance and the
 * signed sum of their ledger, in one statement (one snapshot: a movement is its ledger row and the
 * balance change in one transaction, so they agree unless something bypassed the triggers).
 */
export function walletsAgainstLedger(q: RawQuery, afterId: string, limit: number): Promise<BalanceAgainstLedger[]> {
  return q<BalanceAgainstLedger>(
    `SELECT w.id AS wallet_id, w.merchant_id, w.balance, coalesce(l.total, 0)::bigint AS ledger_sum
       FROM (SELECT id, merchant_id, balance FROM wallets WHERE id > $1 ORDER BY id LIMIT $2) w
       LEFT JOIN LATERAL (
         SELECT sum(CASE WHEN t.type IN ('credit', 'topup', 'refund_reversal') THEN t.amount ELSE -t.amount END) AS total
           FROM wallet_transactions t WHERE t.wallet_id = w.id) l ON true
      ORDER BY w.id`,
    [afterId, limit],
  );
}

// Prepaid credit wallets and their ledger.
//
// Money rules:
// - The ledger (wallet_transactions) is the source of truth. A database trigger applies each new
//   row to wallets.balance and rejects a row that does not start from the current balance; a
//   CHECK keeps the balance ≥ 0. So balance = sum(ledger), always, and nothing here writes it.
// - Every movement locks the wallet row first (SELECT … FOR UPDATE): concurrent debits on one
//   wallet apply one after another and can never overdraw.
// - `reference` is unique per wallet: a repeat with the same amount and type returns the original
//   transaction and moves nothing; with another amount or type it is 409 reference_reused.
// - Credits with `expires_at` are grants. Debits consume grants with the earliest expiry first,
//   then money that does not expire. At expiry exactly the unused part of a grant leaves the
//   balance as an `expiry` entry.
import type { Wallet, WalletTransaction } from '../../generated/prisma/client.ts';
import type { Ctx } from '../../platform/context.ts';
import { inTransaction, type TenantTx } from '../../platform/db/tenant.ts';
import { asRawTx, inRawTransaction, type RawTx, lockRow } from '../../platform/db/raw.ts';
import { InsufficientBalanceError, isLockNotAvailable, isRetryableConflict, isUniqueViolation, NotFoundError, StateError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { formatMoney } from '../../platform/money.ts';
import { countsByParent, pagesByParent } from '../../platform/db/pages-by-parent.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { parse } from '../../platform/validation.ts';
import { cancelJobs, enqueueJob } from '../../platform/jobs.ts';
import { clockNow, clockOf } from '../../platform/clock.ts';
import { getCustomer } from '../customers/index.ts';
import { recordEvent, recordEventAlone, type EventType } from '../events/index.ts';
import * as store from './store.ts';
import type { Grant, LockedForMovement, TransactionWithGrant } from './store.ts';
import {
  walletCreate,
  walletCredit,
  walletDebit,
  type TransactionListQuery,
  type TransactionType,
  type WalletStatus,
  type WalletCreateInput,
  type WalletCreditInput,
  type WalletDebitInput,
  type WalletListQuery,
} from './schema.ts';

export * from './schema.ts';
export type { TransactionWithGrant } from './store.ts';

/** Ledger types that add to the balance; every other type takes from it. */
const INCOMING = new Set<TransactionType>(['credit', 'topup', 'refund_reversal']);

export const GRANT_EXPIRY_JOB = 'wallet.grant.expire';
/** Largest balance a wallet may hold (keeps every balance a safe JSON integer). */
export const MAX_BALANCE = 999_999_999_999_999n;

export function walletToJSON(w: Wallet) {
  return {
    id: w.id,
    object: 'wallet' as const,
    customer_id: w.customerId,
    currency: w.currency,
    balance: Number(w.balance),
    balance_formatted: formatMoney(w.balance, w.currency),
    status: w.status as WalletStatus,
    metadata: w.metadata as Record<string, string>,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}

export function transactionToJSON(t: TransactionWithGrant) {
  return {
    id: t.id,
    object: 'wallet_transaction' as const,
    wallet_id: t.walletId,
    type: t.type as TransactionType,
    amount: Number(t.amount),
    balance_before: Number(t.balanceBefore),
    balance_after: Number(t.balanceAfter),
    reference: t.reference,
    description: t.description,
    metadata: t.metadata as Record<string, string>,
    expires_at: t.grant?.expiresAt.toISOString() ?? null,
    created_at: t.createdAt.toISOString(),
  };
}

export async function getWallet(ctx: Ctx, id: string, db = ctx.db, param = 'id'): Promise<Wallet> {
  const w = await store.findWallet(db, id);
  if (!w) throw new NotFoundError('wallet', id, param);
  return w;
}

/** Locks the wallet row for the rest of the transaction and returns it. */
export async function lockWallet(ctx: Ctx, tx: TenantTx, id: string, param = 'id'): Promise<Wallet> {
  await lockRow(tx, 'wallets', ctx.merchant.id, id);
  return getWallet(ctx, id, tx, param);
}

async function walletEvent(ctx: Ctx, tx: TenantTx, type: EventType, w: Wallet, previous?: Record<string, unknown>) {
  await recordEvent(tx, ctx, type, walletToJSON(w), previous);
}

export async function createWallet(ctx: Ctx, input: WalletCreateInput): Promise<Wallet> {
  const data = parse(walletCreate, input);
  return inTransaction(ctx.db, async (tx) => {
    const customer = await getCustomer(ctx, data.customer_id, tx).catch(() => {
      throw new NotFoundError('customer', data.customer_id, 'customer_id');
    });
    // Serialise wallet creation per customer; the partial unique index backs this up.
    await lockRow(tx, 'customers', ctx.merchant.id, customer.id);
    const open = await store.findOpenWallet(tx, customer.id, data.currency);
    if (open) {
      throw new StateError('wallet_exists', `Customer ${customer.id} already has an open ${data.currency} wallet (${open.id}).`, 'currency');
    }
    const now = await clockNow({ ...ctx, db: tx });
    const w = await store.insertWallet(tx, {
      id: newId('wallet'), merchantId: ctx.merchant.id, customerId: customer.id, currency: data.currency, metadata: data.metadata ?? {}, createdAt: now,
    });
    await walletEvent(ctx, tx, 'wallet.created', w);
    return w;
  });
}

export async function listWallets(ctx: Ctx, q: WalletListQuery): Promise<Page<Wallet>> {
  const filters = [q.customer_id ? { customerId: q.customer_id } : {}, q.currency ? { currency: q.currency } : {}, q.status ? { status: q.status } : {}];
  return paginate(
    q,
    ({ where, ...page }) => store.listWallets(ctx.db, { AND: [where, ...filters] }, page),
    () => store.countWallets(ctx.db, { AND: filters }),
  );
}

function closedError(w: Wallet) {
  return new StateError('wallet_closed', `Wallet ${w.id} is closed.`, null);
}

export async function freezeWallet(ctx: Ctx, id: string): Promise<Wallet> {
  return inTransaction(ctx.db, async (tx) => {
    const w = await lockWallet(ctx, tx, id);
    if (w.status === 'closed') throw closedError(w);
    if (w.status !== 'active') throw new StateError('wallet_not_active', `Only an active wallet can be frozen; this one is ${w.status}.`, null);
    const after = await store.setWalletStatus(tx, id, 'frozen');
    await walletEvent(ctx, tx, 'wallet.frozen', after, { status: w.status });
    return after;
  });
}

export async function unfreezeWallet(ctx: Ctx, id: string): Promise<Wallet> {
  return inTransaction(ctx.db, async (tx) => {
    const w = await lockWallet(ctx, tx, id);
    if (w.status === 'closed') throw closedError(w);
    if (w.status !== 'frozen') throw new StateError('wallet_not_frozen', `Only a frozen wallet can be unfrozen; this one is ${w.status}.`, null);
    const after = await store.setWalletStatus(tx, id, 'active');
    await walletEvent(ctx, tx, 'wallet.unfrozen', after, { status: w.status });
    return after;
  });
}

interface LedgerEntry {
  type: TransactionType;
  amount: bigint;
  reference?: string | null;
  description?: string | null;
  metadata?: Record<string, string>;
  /** now on the billing clock: the row's created_at */
  at: Date;
}

/** A locked wallet as a movement sees it: its balance and the time of its latest ledger row. */
export interface LedgerHead {
  id: string;
  balance: bigint;
  lastLedgerAt: Date | null;
}

/**
 * A ledger row's created_at: the billing clock's now, or 1 ms after the wallet's latest row when
 * that is not earlier (the ledger lists in the order its rows were applied; the ledger trigger
 * stamps the same for any writer that does not).
 */
export function ledgerTime(at: Date, lastLedgerAt: Date | null): Date {
  return lastLedgerAt && at.getTime() <= lastLedgerAt.getTime() ? new Date(lastLedgerAt.getTime() + 1) : at;
}

/** Appends one ledger row to a wallet locked by the caller; the trigger moves the balance (one statement). */
export async function append(ctx: Ctx, db: TenantTx | RawTx, w: LedgerHead, e: LedgerEntry): Promise<WalletTransaction> {
  const row = ledgerRow(ctx, w, e);
  await store.insertTransaction(db, ctx.merchant.id, row);
  return row;
}

/** The ledger row a movement appends (its INSERT: store.insertTransaction, or insertTransactionStatement to run with the event). */
function ledgerRow(ctx: Ctx, w: LedgerHead, e: LedgerEntry): WalletTransaction {
  const sign = INCOMING.has(e.type) ? 1n : -1n;
  const after = w.balance + sign * e.amount;
  if (after > MAX_BALANCE) {
    throw new ValidationError('amount_too_large', `Invalid amount: the balance would exceed ${MAX_BALANCE}.`, 'amount');
  }
  const t: WalletTransaction = {
    id: newId('wallet_transaction'),
    merchantId: ctx.merchant.id,
    walletId: w.id,
    type: e.type,
    amount: e.amount,
    balanceBefore: w.balance,
    balanceAfter: after,
    reference: e.reference ?? null,
    description: e.description ?? null,
    metadata: e.metadata ?? {},
    createdAt: ledgerTime(e.at, w.lastLedgerAt),
  };
  return t;
}

/** The transaction a reference already names, if any; 409 when it was for another amount or type. */
async function existingByReference(ctx: Ctx, db: TenantTx | RawTx, walletId: string, reference: string, type: string, amount: bigint): Promise<TransactionWithGrant | null> {
  const t = await store.findTransactionWithGrantByReference(db, ctx.merchant.id, walletId, reference);
  if (!t) return null;
  if (t.type !== type || t.amount !== amount) {
    throw new StateError(
      'reference_reused',
      `Reference '${reference}' was already used on this wallet for a ${t.type} of ${t.amount}; use a new reference for a different movement.`,
      'reference',
    );
  }
  return t;
}

/**
 * Expires, inside the caller's transaction, the given grants of a locked wallet whose time has
 * come (exactly their unused part leaves the balance). Returns the wallet's head afterwards.
 */
async function expireGrantsAt(ctx: Ctx, db: TenantTx | RawTx, w: LedgerHead, grants: Grant[], now: Date): Promise<LedgerHead> {
  const tx = asRawTx(db);
  let head: LedgerHead = w;
  for (const g of grants) {
    if (g.expiresAt.getTime() > now.getTime()) continue;
    if (g.remaining > 0n) {
      const t = await append(ctx, tx, head, {
        type: 'expiry',
        amount: g.remaining,
        description: 'Credit expired',
        metadata: { credit_transaction_id: g.transactionId },
        at: now,
      });
      head = { id: w.id, balance: t.balanceAfter, lastLedgerAt: t.createdAt };
      await recordEvent(tx, ctx, 'wallet.credit.expired', transactionToJSON(t));
    }
    await store.updateGrant(tx, ctx.merchant.id, g.id, 0n, now);
  }
  return head;
}

/** Locks the wallet for a debit, reading what it needs in the same round trip (store.lockWalletForDebit). */
async function lockForMovement(ctx: Ctx, tx: RawTx, id: string, reference: string): Promise<LockedForMovement> {
  const row = await store.lockWalletForDebit(tx, ctx.merchant.id, id, reference);
  if (!row) throw new NotFoundError('wallet', id);
  return row;
}

/** The billing clock's now, from the offset read with the wallet's lock (one round trip fewer). */
function movementNow(ctx: Ctx, locked: LockedForMovement): Date {
  const clock = clockOf(ctx);
  clock.learn(locked.clockOffsetMs, locked.clockParkedUntil);
  return clock.peek()!;
}

/**
 * Two requests with the same reference race: the second waits for the wallet's row lock, but in
 * READ COMMITTED the lock query re-reads only the locked wallet row, not the reference join, so it
 * misses the first one's committed entry and its insert hits the unique (wallet_id, reference)
 * index. Running the transaction again sees that entry and returns it, as a retry would.
 */
const SAME_REFERENCE_RACE = { retryOn: isUniqueViolation };

/**
 * A debit as ONE statement sent on its own (autocommit): the wallet's lock with the debit's
 * conditions (store.debitLeadStatement), the ledger row (the trigger moves the balance), the
 * event and its outbox — one round trip where the transaction path takes four (BEGIN, the lock,
 * the write, COMMIT). Null when it wrote nothing (the conditions did not hold, the call is inside
 * a transaction, too many endpoints, or a concurrent movement took the same reference first).
 */
async function debitAlone(ctx: Ctx, id: string, amount: bigint, data: { reference: string; description?: string | null | undefined; metadata?: Record<string, string> | undefined }): Promise<WalletTransaction | null> {
  const t = ledgerRow(ctx, { id, balance: 0n, lastLedgerAt: null }, { type: 'debit', amount, reference: data.reference, description: data.description, metadata: data.metadata, at: new Date(0) });
  let done;
  try {
    done = await recordEventAlone<store.DebitLead>(ctx.db, ctx, 'wallet.debited', transactionToJSON(t), {
      lead: store.debitLeadStatement(id, data.reference, amount),
      with: [store.insertDebitFromLeadStatement(t)],
      stamp: ['created_at'],
      set: { balance_before: 'clock.balance_before', balance_after: 'clock.balance_after' },
      // after the wallet's latest ledger row (ledgerTime's rule, in the statement)
      notBefore: true,
    });
  } catch (err) {
    // The same reference committed by a concurrent debit while this one waited for the lock (the
    // unique index), or a deadlock: nothing was written; the transaction path sorts it out.
    if (isUniqueViolation(err) || isRetryableConflict(err)) return null;
    throw err;
  }
  if (!done) return null;
  return { ...t, walletId: done.lead.walletId, balanceBefore: done.lead.balanceBefore, balanceAfter: done.lead.balanceAfter, createdAt: done.event.createdAt };
}

export async function debitWallet(ctx: Ctx, id: string, input: WalletDebitInput): Promise<WalletTransaction> {
  const data = parse(walletDebit, input);
  const amount = BigInt(data.amount);
  // The common debit is one autocommit statement (debitAlone); anything else — grants, a
  // reference already used, a closed, frozen, missing or short wallet, a transaction of the
  // caller's — goes the transaction path below, which decides and answers.
  const done = await debitAlone(ctx, id, amount, data);
  if (done) return done;
  // Raw SQL on one connection (issue 14): BEGIN, the lock, the ledger row, the event, COMMIT —
  // plus the grants only when the wallet has open ones.
  return inRawTransaction(ctx.db, async (tx) => {
    const w = await lockForMovement(ctx, tx, id, data.reference);
    if (w.priorId) {
      const prior = await existingByReference(ctx, tx, w.id, data.reference, 'debit', amount);
      if (prior) return prior;
    }
    if (w.status === 'closed') throw new StateError('wallet_closed', `Wallet ${w.id} is closed.`, null);
    if (w.status === 'frozen') throw new StateError('wallet_frozen', `Wallet ${w.id} is frozen: debits are blocked until it is unfrozen.`, null);
    const now = movementNow(ctx, w);
    const grants = w.hasGrants ? await store.listOpenGrants(tx, ctx.merchant.id, w.id) : [];
    const head = await expireGrantsAt(ctx, tx, w, grants, now);
    const balance = head.balance;
    if (balance < amount) {
      throw new InsufficientBalanceError(
        `Insufficient balance: the wallet has ${formatMoney(balance, w.currency)}, the debit needs ${formatMoney(amount, w.currency)}.`,
        balance,
      );
    }
    // Consume expiring credit first, earliest expiry first (grants still open after the expiry above).
    let left = amount;
    for (const g of grants) {
      if (left === 0n) break;
      if (g.remaining === 0n || g.expiresAt.getTime() <= now.getTime()) continue;
      const take = g.remaining < left ? g.remaining : left;
      await store.updateGrant(tx, ctx.merchant.id, g.id, g.remaining - take);
      left -= take;
    }
    // The ledger row goes in with the event, in one statement.
    const t = ledgerRow(ctx, head, { type: 'debit', amount, reference: data.reference, description: data.description, metadata: data.metadata, at: now });
    await recordEvent(tx, ctx, 'wallet.debited', transactionToJSON(t), undefined, { with: [store.insertTransactionStatement(t)] });
    return t;
  }, SAME_REFERENCE_RACE);
}

export async function creditWallet(ctx: Ctx, id: string, input: WalletCreditInput): Promise<{ transaction: TransactionWithGrant; created: boolean }> {
  const data = parse(walletCredit, input);
  const amount = BigInt(data.amount);
  return inTransaction(ctx.db, async (tx) => {
    const w = await lockWallet(ctx, tx, id);
    const prior = await existingByReference(ctx, tx, w.id, data.reference, 'credit', amount);
    if (prior) return { transaction: prior, created: false };
    if (w.status === 'closed') throw closedError(w);
    const now = await clockNow({ ...ctx, db: tx });
    if (data.expires_at && data.expires_at.getTime() <= now.getTime()) {
      throw new ValidationError('parameter_invalid', `Invalid expires_at: must be in the future (the clock is at ${now.toISOString()}).`, 'expires_at');
    }
    const t = await append(ctx, tx, w, { type: 'credit', amount, reference: data.reference, description: data.description, metadata: data.metadata, at: now });
    let grant: { expiresAt: Date } | null = null;
    if (data.expires_at) {
      const g = await store.insertGrant(tx, {
        merchantId: ctx.merchant.id, walletId: w.id, transactionId: t.id, amount, remaining: amount, expiresAt: data.expires_at, createdAt: now,
      });
      grant = { expiresAt: g.expiresAt };
      await enqueueJob(tx, {
        merchantId: ctx.merchant.id,
        kind: GRANT_EXPIRY_JOB,
        runAt: g.expiresAt,
        key: `grant:${g.id}`,
        ref: w.id,
        payload: { wallet_id: w.id },
      });
    }
    const json = { ...t, grant };
    await recordEvent(tx, ctx, 'wallet.credited', transactionToJSON(json));
    return { transaction: json, created: true };
  }, SAME_REFERENCE_RACE);
}

/** Job: expire the wallet's grants that are due (idempotent). */
export async function expireGrants(ctx: Ctx, walletId: string): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    const w = await lockWallet(ctx, tx, walletId);
    if (w.status === 'closed') return;
    await expireGrantsAt(ctx, tx, w, await store.listOpenGrants(tx, ctx.merchant.id, w.id), await clockNow({ ...ctx, db: tx }));
  });
}

/**
 * Closes a wallet for good. Pending top-up checkouts are cancelled. Closing is refused (409
 * wallet_topup_in_progress) while a top-up is being charged or refunded: its payment row is
 * taken with NOWAIT, so close never waits behind a charge (no deadlock with a top-up that is
 * settling, which locks payment then wallet) and a charge can never land in a closed wallet.
 * A remaining balance is not silently dropped: it leaves the wallet as a final `expiry` entry
 * (metadata.reason = wallet_closed) recorded in the ledger and in the wallet.closed event's
 * previous_attributes, so the books still add up.
 */
export async function closeWallet(ctx: Ctx, id: string, cancelTopupPayment: (ctx: Ctx, paymentId: string) => Promise<unknown>): Promise<Wallet> {
  return inTransaction(ctx.db, async (tx) => {
    const txCtx = { ...ctx, db: tx };
    let w = await lockWallet(ctx, tx, id);
    if (w.status === 'closed') throw closedError(w);
    const inProgress = () =>
      new StateError('wallet_topup_in_progress', 'A top-up of this wallet is being charged or refunded right now; retry in a moment.', null);
    if (await store.hasPendingTopupRefund(tx, ctx.merchant.id, w.id)) throw inProgress();
    // A failed top-up's checkout still takes attempts until it expires: ended too.
    const pending = await store.listTopupPaymentIds(tx, w.id, ['pending', 'failed']);
    for (const t of pending) {
      let rows: { status: string }[];
      try {
        rows = await store.lockTopupPaymentNowait(tx, ctx.merchant.id, t.paymentId);
      } catch (err) {
        if (isLockNotAvailable(err)) throw inProgress();
        throw err;
      }
      if (rows[0]?.status === 'processing') throw inProgress();
      await cancelTopupPayment(txCtx, t.paymentId);
    }
    w = await getWallet(ctx, id, tx);
    const before = w;
    const now = await clockNow(txCtx);
    if (w.balance > 0n) {
      await append(ctx, tx, w, {
        type: 'expiry',
        amount: w.balance,
        description: 'Wallet closed: remaining balance removed',
        metadata: { reason: 'wallet_closed' },
        at: now,
      });
    }
    await store.expireOpenGrants(tx, w.id, now);
    await cancelJobs(tx, { kind: GRANT_EXPIRY_JOB, ref: w.id });
    const after = await store.markWalletClosed(tx, id, now);
    await walletEvent(ctx, tx, 'wallet.closed', after, { status: before.status, balance: Number(before.balance) });
    return after;
  });
}

export async function listTransactions(ctx: Ctx, walletId: string, q: TransactionListQuery): Promise<Page<TransactionWithGrant>> {
  await getWallet(ctx, walletId);
  const filters = [{ walletId }, q.type ? { type: q.type } : {}];
  return paginate(
    q,
    ({ where, ...page }) => store.listTransactions(ctx.db, { AND: [where, ...filters] }, page),
    () => store.countTransactions(ctx.db, { AND: filters }),
  );
}

const TRANSACTIONS_OF_WALLET = { table: 'wallet_transactions', parent: 'wallet_id' };

/** One ledger page per wallet (a wallet's transactions in GraphQL), in two queries for all of them. */
export function listTransactionsOfWallets(ctx: Ctx, walletIds: readonly string[], q: TransactionListQuery) {
  return pagesByParent(ctx, TRANSACTIONS_OF_WALLET, walletIds, { ...q, filters: { type: q.type } }, (ids) =>
    store.findTransactionsByIds(ctx.db, ids),
  );
}

export function countTransactionsOfWallets(ctx: Ctx, walletIds: readonly string[], q: Pick<TransactionListQuery, 'type'>) {
  return countsByParent(ctx, TRANSACTIONS_OF_WALLET, walletIds, { type: q.type });
}

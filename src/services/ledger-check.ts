// The ledger invariant (issue 26, "Metrics": ledger invariant checks): every wallet's balance is the
// signed sum of its ledger (wallet_transactions), and every customer credit balance the sum of its
// ledger (customer_balance_transactions). The database keeps them so — a balance changes only with
// its ledger row, in one statement or through a trigger — so a mismatch means something bypassed
// that: a restore or a copy with the triggers off (`cli db export` turns them off while it copies),
// a hand-made UPDATE, a bug. Checked periodically over every merchant (src/jobs/maintenance.ts),
// in keyset batches of one statement each; each mismatch is logged at error with its ids and both
// amounts, and counted in billing_ledger_invariant_checks_total{result="violated"} and the
// billing_ledger_invariant_violations gauge (docs/operations.md, alert BillingLedgerMismatch).
import { walletsAgainstLedger } from '../domain/wallets/store.ts';
import { customerBalancesAgainstLedger } from '../domain/customers/store.ts';
import { rawQueryOf } from '../platform/db/raw.ts';
import type { Database } from '../platform/db/index.ts';
import type { Logger } from '../platform/logger.ts';
import { recordLedgerCheck } from '../platform/metrics.ts';

/** Balances per statement. */
const BATCH = 1_000;
/** Mismatches logged per ledger and pass (all are counted): a restore gone wrong does not flood the log. */
const LOG_LIMIT = 100;

export interface LedgerMismatch {
  ledger: 'wallet' | 'customer_balance';
  merchant_id: string;
  wallet_id?: string;
  customer_id?: string;
  currency?: string;
  balance: string;
  ledger_sum: string;
}

export interface LedgerCheckResult {
  checked: { wallet: number; customer_balance: number };
  mismatches: LedgerMismatch[];
}

/** One pass over every balance; counts each mismatch and logs the first `logLimit` of each ledger. */
export async function checkLedgers(db: Database, log: Logger, { batch = BATCH, logLimit = LOG_LIMIT } = {}): Promise<LedgerCheckResult> {
  const q = rawQueryOf(db.prisma);
  const mismatches: LedgerMismatch[] = [];

  let walletsChecked = 0;
  let walletMismatches = 0;
  for (let after = ''; ; ) {
    const rows = await walletsAgainstLedger(q, after, batch);
    for (const r of rows) {
      if (BigInt(r.balance) === BigInt(r.ledgerSum)) continue;
      walletMismatches++;
      mismatches.push({ ledger: 'wallet', merchant_id: r.merchantId, wallet_id: r.walletId, balance: String(r.balance), ledger_sum: String(r.ledgerSum) });
    }
    walletsChecked += rows.length;
    if (rows.length < batch) break;
    after = rows[rows.length - 1]!.walletId;
  }
  recordLedgerCheck('wallet', walletsChecked, walletMismatches);

  let balancesChecked = 0;
  let balanceMismatches = 0;
  for (let after = { customerId: '', currency: '' }; ; ) {
    const rows = await customerBalancesAgainstLedger(q, after, batch);
    for (const r of rows) {
      if (BigInt(r.balance) === BigInt(r.ledgerSum)) continue;
      balanceMismatches++;
      mismatches.push({
        ledger: 'customer_balance', merchant_id: r.merchantId, customer_id: r.customerId, currency: r.currency, balance: String(r.balance), ledger_sum: String(r.ledgerSum),
      });
    }
    balancesChecked += rows.length;
    if (rows.length < batch) break;
    const last = rows[rows.length - 1]!;
    after = { customerId: last.customerId, currency: last.currency };
  }
  recordLedgerCheck('customer_balance', balancesChecked, balanceMismatches);

  const logged = { wallet: 0, customer_balance: 0 };
  for (const m of mismatches) {
    if (logged[m.ledger]++ >= logLimit) continue;
    log.error(m, 'ledger invariant violated: a balance differs from the sum of its ledger');
  }
  return { checked: { wallet: walletsChecked, customer_balance: balancesChecked }, mismatches };
}

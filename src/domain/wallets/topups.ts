// Wallet top-ups: the customer pays through the hosted checkout and the wallet is credited with
// a `topup` entry in the same transaction as the payment's success — exactly once, because the
// payment succeeds once and the entry's reference (the top-up id) is unique per wallet. A refund
// of the payment takes the money back out of the wallet (see onRefund below).
import type { Ctx } from '../../platform/context.ts';
import { inTransaction, type TenantTx } from '../../platform/db/tenant.ts';
import { NotFoundError, StateError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { formatMoney } from '../../platform/money.ts';
import { countsByParent, pagesByParent } from '../../platform/db/pages-by-parent.ts';
import { paginate, type Page } from '../../platform/pagination.ts';
import { parse } from '../../platform/validation.ts';
import { recordEvent } from '../events/index.ts';
import {
  cancelAtCheckout,
  checkoutUrl,
  completeForTest,
  insertPayment,
  type PaymentWithCustomer,
} from '../payments/index.ts';
import { onPaymentOutcome } from '../payments/hooks.ts';
import { reserveRefund, onRefund } from '../refunds/index.ts';
import { requireTestMode } from '../clock/index.ts';
import { clockNow } from '../../platform/clock.ts';
import { append, getWallet, lockWallet, transactionToJSON } from './index.ts';
import * as store from './store.ts';
import type { TopupWithPayment } from './store.ts';
import { topupCompleteBody, topupCreate, type TopupCompleteInput, type TopupCreateInput, type TopupListQuery, type TopupStatus } from './schema.ts';

export const TOPUP_PURPOSE = 'wallet_topup';

export type { TopupWithPayment } from './store.ts';

export function topupToJSON(t: TopupWithPayment, baseUrl: string) {
  return {
    id: t.id,
    object: 'wallet_topup' as const,
    wallet_id: t.walletId,
    amount: Number(t.amount),
    currency: t.currency,
    status: t.status as TopupStatus,
    checkout_url: checkoutUrl(baseUrl, t.payment.checkoutToken),
    payment_id: t.paymentId,
    transaction_id: t.transactionId,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

export async function createTopup(ctx: Ctx, walletId: string, input: TopupCreateInput): Promise<TopupWithPayment> {
  const data = parse(topupCreate, input);
  return inTransaction(ctx.db, async (tx) => {
    const w = await lockWallet(ctx, tx, walletId);
    if (w.status === 'closed') throw new StateError('wallet_closed', `Wallet ${w.id} is closed.`, null);
    const payment = await insertPayment(ctx, tx, {
      customerId: w.customerId,
      amount: BigInt(data.amount),
      currency: w.currency,
      redirectUrl: data.redirect_url,
      cancelUrl: data.cancel_url,
      purpose: TOPUP_PURPOSE,
      checkout: { title: 'Wallet top-up', description: `Adds ${formatMoney(BigInt(data.amount), w.currency)} to your ${w.currency} wallet.` },
      metadata: { wallet_id: w.id },
    });
    return store.insertTopup(tx, {
      id: newId('wallet_topup'),
      merchantId: ctx.merchant.id,
      walletId: w.id,
      paymentId: payment.id,
      amount: BigInt(data.amount),
      currency: w.currency,
      createdAt: payment.createdAt,
    });
  });
}

export async function getTopup(ctx: Ctx, id: string): Promise<TopupWithPayment> {
  const t = await store.findTopup(ctx.db, id);
  if (!t) throw new NotFoundError('wallet top-up', id);
  return t;
}

export async function listTopups(ctx: Ctx, walletId: string, q: TopupListQuery): Promise<Page<TopupWithPayment>> {
  await getWallet(ctx, walletId);
  return paginate(
    q,
    ({ where, ...page }) => store.listTopups(ctx.db, { AND: [where, { walletId }] }, page),
    () => store.countTopups(ctx.db, { walletId }),
  );
}

const TOPUPS_OF_WALLET = { table: 'wallet_topups', parent: 'wallet_id' };

/** One page of top-ups per wallet, in two queries for all of them. */
export function listTopupsOfWallets(ctx: Ctx, walletIds: readonly string[], q: TopupListQuery) {
  return pagesByParent(ctx, TOPUPS_OF_WALLET, walletIds, q, (ids) => store.findTopupsByIds(ctx.db, ids));
}

export function countTopupsOfWallets(ctx: Ctx, walletIds: readonly string[]) {
  return countsByParent(ctx, TOPUPS_OF_WALLET, walletIds);
}

/** Settles a top-up when its payment reaches a final status (runs in the payment's transaction). */
async function settle(ctx: Ctx, tx: TenantTx, payment: PaymentWithCustomer): Promise<void> {
  const topup = await store.findTopupWithPaymentOfPayment(tx, payment.id);
  if (!topup) return;
  // A declined attempt fails the top-up, but the customer may still pay at the same checkout
  // until it expires: a later success credits the wallet then (failed → succeeded), once.
  if (payment.status !== 'succeeded') {
    if (topup.status === 'pending') await store.setTopupStatus(tx, topup.id, payment.status);
    return;
  }
  if (topup.status !== 'pending' && topup.status !== 'failed') return;
  const w = await lockWallet(ctx, tx, topup.walletId);
  if (w.status === 'closed') {
    // Closing refuses while a top-up is being charged (closeWallet), so this should not happen;
    // should it ever, the money goes back to the customer instead of into a closed wallet.
    ctx.log.warn({ topup_id: topup.id, wallet_id: w.id, payment_id: payment.id }, 'top-up paid after its wallet closed: refunding it');
    await store.setTopupStatus(tx, topup.id, 'cancelled');
    await reserveRefund(ctx, tx, payment, { reason: 'other', settleAt: await clockNow({ ...ctx, db: tx }) });
    return;
  }
  const t = await append(ctx, tx, w, {
    type: 'topup',
    amount: topup.amount,
    reference: topup.id,
    description: 'Top-up',
    metadata: { payment_id: payment.id },
    at: await clockNow({ ...ctx, db: tx }),
  });
  const done = await store.markTopupSucceeded(tx, topup.id, t.id);
  await recordEvent(tx, ctx, 'wallet.topup.succeeded', topupToJSON(done, ctx.runtime.config.publicBaseUrl), { status: topup.status });
}

onPaymentOutcome(TOPUP_PURPOSE, settle);

/**
 * Refunding a top-up payment takes the money back out of the wallet, in the refund's own
 * transaction, as a `refund` ledger entry. Only money that does not expire can go back (the top-up
 * was such money; expiring credit is the merchant's gift): when the wallet no longer holds the
 * amount, or is closed, the refund is refused with 409. A refund the processor refuses puts the
 * money back (`refund_reversal`).
 */
onRefund(TOPUP_PURPOSE, {
  async reserve(ctx, tx, payment, refund) {
    const topup = await store.findTopupOfPayment(tx, payment.id);
    if (!topup || topup.status !== 'succeeded') return; // nothing was credited
    const w = await lockWallet(ctx, tx, topup.walletId, 'payment_id');
    if (w.status === 'closed') {
      throw new StateError(
        'wallet_closed',
        `This payment topped up wallet ${w.id}, which is closed (its balance was removed when it closed), so it cannot be refunded.`,
        'payment_id',
      );
    }
    const expiring = await store.sumOpenGrants(tx, w.id);
    const available = w.balance - (expiring ?? 0n);
    if (available < refund.amount) {
      throw new StateError(
        'refund_exceeds_wallet_balance',
        `This payment topped up wallet ${w.id}, which now holds ${formatMoney(available < 0n ? 0n : available, w.currency)} that could go back; ` +
          `the refund of ${formatMoney(refund.amount, w.currency)} would take more than that out of it.`,
        'amount',
      );
    }
    const t = await append(ctx, tx, w, {
      type: 'refund',
      amount: refund.amount,
      reference: refund.id,
      description: 'Top-up refunded',
      metadata: { payment_id: payment.id, refund_id: refund.id, topup_id: topup.id },
      at: await clockNow({ ...ctx, db: tx }),
    });
    await recordEvent(tx, ctx, 'wallet.debited', transactionToJSON(t));
  },
  async reverse(ctx, tx, payment, refund) {
    const topup = await store.findTopupOfPayment(tx, payment.id);
    if (!topup) return;
    const w = await lockWallet(ctx, tx, topup.walletId);
    const taken = await store.findTransactionByReference(tx, w.id, refund.id);
    if (!taken) return; // the refund took nothing out of the wallet
    // closeWallet refuses while a top-up refund is pending, so the wallet is still open here.
    if (w.status === 'closed') throw new StateError('wallet_closed', `Wallet ${w.id} is closed.`, null);
    const t = await append(ctx, tx, w, {
      type: 'refund_reversal',
      amount: taken.amount,
      reference: `reversal:${refund.id}`,
      description: 'Top-up refund failed: money returned',
      metadata: { payment_id: payment.id, refund_id: refund.id, topup_id: topup.id },
      at: await clockNow({ ...ctx, db: tx }),
    });
    await recordEvent(tx, ctx, 'wallet.credited', transactionToJSON(t));
  },
});

/** Cancels a pending top-up's checkout (used when its wallet closes). */
export const cancelTopupPayment = (ctx: Ctx, paymentId: string) => cancelAtCheckout(ctx, paymentId);

/** POST /v1/test-helpers/wallet-topups/:id/complete */
export async function completeTopupForTest(ctx: Ctx, id: string, input: TopupCompleteInput): Promise<TopupWithPayment> {
  requireTestMode(ctx.merchant);
  const body = parse(topupCompleteBody, input);
  const t = await getTopup(ctx, id);
  // A failed top-up's checkout takes another attempt until it expires (see settle).
  if (t.status !== 'pending' && t.status !== 'failed') {
    throw new StateError('topup_not_pending', `This top-up is ${t.status}; only a pending top-up (or a failed one, whose checkout takes another attempt) can be completed.`, null);
  }
  await completeForTest(ctx, t.paymentId, { outcome: body.outcome });
  return getTopup(ctx, id);
}

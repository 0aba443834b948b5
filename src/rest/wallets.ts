import { exampleId } from '../platform/ids.ts';
import * as wallets from '../domain/wallets/index.ts';
import * as topups from '../domain/wallets/topups.ts';
import type { Ctx } from '../platform/context.ts';
import { route, listEnvelope, WithStatus } from './route.ts';
import { idParam, listOf, walletObject, walletTopupObject, walletTransactionObject } from './schemas.ts';

const tag = 'Wallets';
const topupJSON = (ctx: Ctx) => (t: topups.TopupWithPayment) => topups.topupToJSON(t, ctx.runtime.config.publicBaseUrl);

export const walletRoutes = [
  route({
    method: 'post', path: '/v1/wallets', operationId: 'createWallet', tag, summary: 'Create a wallet for a customer and currency',
    description: 'One wallet per customer and currency that is not closed (409 wallet_exists).',
    body: wallets.walletCreate, errors: [409],
    response: { status: 201, description: 'The new wallet (balance 0, active).', schema: walletObject },
    handler: async (ctx, { body }) => wallets.walletToJSON(await wallets.createWallet(ctx, body)),
  }),
  route({
    method: 'get', path: '/v1/wallets/{id}', operationId: 'getWallet', tag, summary: 'Retrieve a wallet',
    params: idParam,
    response: { status: 200, description: 'The wallet.', schema: walletObject },
    handler: async (ctx, { params }) => wallets.walletToJSON(await wallets.getWallet(ctx, params.id)),
  }),
  route({
    method: 'get', path: '/v1/wallets', operationId: 'listWallets', tag, summary: 'List wallets, newest first',
    query: wallets.walletListQuery,
    response: { status: 200, description: 'A page of wallets.', schema: listOf(walletObject, 'WalletList') },
    handler: async (ctx, { query }) => listEnvelope(await wallets.listWallets(ctx, query), wallets.walletToJSON),
  }),
  route({
    method: 'post', path: '/v1/wallets/{id}/freeze', operationId: 'freezeWallet', tag, summary: 'Freeze a wallet: debits are blocked, credits and top-ups still work',
    conflict: { code: 'wallet_not_active', message: 'Only an active wallet can be frozen; this one is frozen.' },
    params: idParam, errors: [409],
    response: { status: 200, description: 'The frozen wallet.', schema: walletObject },
    handler: async (ctx, { params }) => wallets.walletToJSON(await wallets.freezeWallet(ctx, params.id)),
  }),
  route({
    method: 'post', path: '/v1/wallets/{id}/unfreeze', operationId: 'unfreezeWallet', tag, summary: 'Unfreeze a frozen wallet',
    conflict: { code: 'wallet_not_frozen', message: 'Only a frozen wallet can be unfrozen; this one is active.' },
    params: idParam, errors: [409],
    response: { status: 200, description: 'The active wallet.', schema: walletObject },
    handler: async (ctx, { params }) => wallets.walletToJSON(await wallets.unfreezeWallet(ctx, params.id)),
  }),
  route({
    method: 'post', path: '/v1/wallets/{id}/close', operationId: 'closeWallet', tag, summary: 'Close a wallet for good',
    description: 'A remaining balance leaves the wallet as a final `expiry` ledger entry (metadata.reason = wallet_closed); pending top-up checkouts are cancelled.',
    params: idParam, errors: [409],
    response: { status: 200, description: 'The closed wallet.', schema: walletObject },
    handler: async (ctx, { params }) => wallets.walletToJSON(await wallets.closeWallet(ctx, params.id, topups.cancelTopupPayment)),
  }),
  route({
    method: 'post', path: '/v1/wallets/{id}/debit', operationId: 'debitWallet', tag, summary: 'Debit a wallet',
    example: { amount: 1250, description: 'API calls, November', reference: 'order_6735' },
    conflict: { code: 'wallet_frozen', message: `Wallet ${exampleId('wallet')} is frozen: debits are blocked until it is unfrozen.` },
    description: 'Expiring credit is used first (earliest expiry first), then credit that does not expire. A repeated reference with the same amount returns the original transaction and moves nothing.',
    params: idParam, body: wallets.walletDebit, errors: [402, 409],
    response: { status: 200, description: 'The debit transaction.', schema: walletTransactionObject },
    handler: async (ctx, { params, body }) => wallets.transactionToJSON(await wallets.debitWallet(ctx, params.id, body)),
  }),
  route({
    method: 'post', path: '/v1/wallets/{id}/credit', operationId: 'creditWallet', tag, summary: 'Credit a wallet (admin credit, optionally expiring)',
    example: { amount: 5000, description: 'Prepaid credit', reference: 'grant_2026_11' },
    params: idParam, body: wallets.walletCredit, errors: [409],
    response: {
      status: 201,
      description: 'The new credit transaction.',
      schema: walletTransactionObject,
      also: { status: 200, description: 'The reference was used before with the same amount: the original transaction; nothing moved.' },
    },
    handler: async (ctx, { params, body }) => {
      const r = await wallets.creditWallet(ctx, params.id, body);
      return new WithStatus(r.created ? 201 : 200, wallets.transactionToJSON(r.transaction));
    },
  }),
  route({
    method: 'get', path: '/v1/wallets/{id}/transactions', operationId: 'listWalletTransactions', tag, summary: 'The ledger, newest first',
    params: idParam, query: wallets.transactionListQuery,
    response: { status: 200, description: 'A page of ledger entries.', schema: listOf(walletTransactionObject, 'WalletTransactionList') },
    handler: async (ctx, { params, query }) => listEnvelope(await wallets.listTransactions(ctx, params.id, query), wallets.transactionToJSON),
  }),
  route({
    method: 'post', path: '/v1/wallets/{id}/topups', operationId: 'createWalletTopup', tag, summary: 'Start a top-up paid by the customer at the hosted checkout',
    example: { amount: 5000, redirect_url: 'https://shop.example.com/thanks' },
    params: idParam, body: wallets.topupCreate, errors: [409],
    response: { status: 201, description: 'The pending top-up with its checkout_url.', schema: walletTopupObject },
    handler: async (ctx, { params, body }) => topupJSON(ctx)(await topups.createTopup(ctx, params.id, body)),
  }),
  route({
    method: 'get', path: '/v1/wallets/{id}/topups', operationId: 'listWalletTopups', tag, summary: 'Top-ups of a wallet, newest first',
    params: idParam, query: wallets.topupListQuery,
    response: { status: 200, description: 'A page of top-ups.', schema: listOf(walletTopupObject, 'WalletTopupList') },
    handler: async (ctx, { params, query }) => listEnvelope(await topups.listTopups(ctx, params.id, query), topupJSON(ctx)),
  }),
  route({
    method: 'post', path: '/v1/test-helpers/wallet-topups/{id}/complete', operationId: 'completeTestWalletTopup', tag: 'Test helpers',
    summary: 'Finish a top-up checkout as the customer would (test mode)',
    params: idParam, body: wallets.topupCompleteBody, errors: [409],
    response: { status: 200, description: 'The top-up after completion.', schema: walletTopupObject },
    phased: true,
    handler: async (ctx, { params, body }) => topupJSON(ctx)(await topups.completeTopupForTest(ctx, params.id, body)),
  }),
];

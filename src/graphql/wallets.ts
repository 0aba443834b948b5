import * as wallets from '../domain/wallets/index.ts';
import * as topups from '../domain/wallets/topups.ts';
import type { Ctx } from '../platform/context.ts';
import { InsufficientBalanceError, NotFoundError, StateError } from '../platform/errors.ts';
import { formatMoney } from '../platform/money.ts';
import { builder, connectionComplexity, nodeKind } from './builder.ts';
import { COMMON_ERRORS } from './errors.ts';
import { connectionType, domainInput, listArgs, mutate, PHASED, nestedConnection, orNull, toConnection } from './helpers.ts';
import { TestOutcome } from './payments.ts';

const WalletStatus = builder.enumType('WalletStatus', { values: wallets.WALLET_STATUSES });
const WalletTransactionType = builder.enumType('WalletTransactionType', { values: wallets.TRANSACTION_TYPES });
const WalletTopupStatus = builder.enumType('WalletTopupStatus', { values: wallets.TOPUP_STATUSES });

export const WalletTransaction = builder.prismaNode('WalletTransaction', {
  id: { field: 'id' },
  fields: (t) => ({
    wallet: t.relation('wallet'),
    type: t.field({ type: WalletTransactionType, resolve: (x) => x.type as (typeof wallets.TRANSACTION_TYPES)[number] }),
    amount: t.field({ type: 'Money', resolve: (x) => x.amount }),
    balanceBefore: t.field({ type: 'Money', resolve: (x) => x.balanceBefore }),
    balanceAfter: t.field({ type: 'Money', resolve: (x) => x.balanceAfter }),
    reference: t.exposeString('reference', { nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    metadata: t.field({ type: 'JSON', resolve: (x) => x.metadata }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'For credits with an expiry.',
      select: { grant: { select: { expiresAt: true } } },
      resolve: (x) => x.grant?.expiresAt ?? null,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
nodeKind('wallet_transaction', WalletTransaction);

export const WalletTopup = builder.prismaNode('WalletTopup', {
  id: { field: 'id' },
  fields: (t) => ({
    wallet: t.relation('wallet'),
    amount: t.field({ type: 'Money', resolve: (x) => x.amount }),
    currency: t.exposeString('currency'),
    status: t.field({ type: WalletTopupStatus, resolve: (x) => x.status as wallets.TopupStatus }),
    payment: t.relation('payment'),
    checkoutUrl: t.string({
      select: { payment: { select: { checkoutToken: true } } },
      resolve: (x, _, { services }) => `${services.config.publicBaseUrl}/hosted/checkout/${x.payment.checkoutToken}`,
    }),
    transactionId: t.exposeString('transactionId', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});
nodeKind('wallet_topup', WalletTopup);

const TransactionConnection = connectionType(WalletTransaction, 'WalletTransaction');
const TopupConnection = connectionType(WalletTopup, 'WalletTopup');

export const Wallet = builder.prismaNode('Wallet', {
  id: { field: 'id' },
  fields: (t) => ({
    customer: t.relation('customer'),
    currency: t.exposeString('currency'),
    balance: t.field({ type: 'Money', description: 'Always the sum of the ledger.', resolve: (w) => w.balance }),
    balanceFormatted: t.string({ description: 'e.g. $12.34, ¥1,200, KWD 1.250', resolve: (w) => formatMoney(w.balance, w.currency) }),
    status: t.field({ type: WalletStatus, resolve: (w) => w.status as (typeof wallets.WALLET_STATUSES)[number] }),
    metadata: t.field({ type: 'JSON', resolve: (w) => w.metadata }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    transactions: t.field({
      type: TransactionConnection,
      description: 'The ledger, newest first.',
      complexity: connectionComplexity,
      args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string(), type: t.arg({ type: WalletTransactionType }) },
      resolve: (w, a, gctx) =>
        nestedConnection(gctx, 'Wallet.transactions', w.id, listArgs(wallets.transactionListQuery, a), wallets.listTransactionsOfWallets, wallets.countTransactionsOfWallets),
    }),
    topups: t.field({
      type: TopupConnection,
      complexity: connectionComplexity,
      description: 'Top-ups of this wallet, newest first.',
      args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string() },
      resolve: (w, a, gctx) =>
        nestedConnection(gctx, 'Wallet.topups', w.id, listArgs(wallets.topupListQuery, a), topups.listTopupsOfWallets, (ctx, ids) => topups.countTopupsOfWallets(ctx, ids)),
    }),
  }),
});
nodeKind('wallet', Wallet);

const WalletConnection = connectionType(Wallet, 'Wallet');

builder.prismaObjectField('Customer', 'wallets', (t) =>
  t.relation('wallets', { description: 'The customer’s wallets, newest first.', query: { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] } }),
);

builder.queryFields((t) => ({
  wallet: t.field({
    type: Wallet,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, { ctx }) => orNull(wallets.getWallet(ctx, String(id))),
  }),
  wallets: t.field({
    type: WalletConnection,
    complexity: connectionComplexity,
    description: 'Wallets, newest first.',
    args: {
      first: t.arg.int({ description: '1 to 100, default 20.' }),
      after: t.arg.string(),
      customerId: t.arg.id(),
      currency: t.arg.string({ description: 'ISO 4217' }),
      status: t.arg({ type: WalletStatus }),
    },
    resolve: async (_, a, { ctx }) => toConnection(await wallets.listWallets(ctx, listArgs(wallets.walletListQuery, a))),
  }),
}));

const CreateWalletInput = builder.inputType('CreateWalletInput', {
  fields: (t) => ({ customerId: t.id({ required: true }), currency: t.string({ required: true }), metadata: t.field({ type: 'JSON' }), idempotencyKey: t.string() }),
});
const WalletIdInput = builder.inputType('WalletIdInput', { fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }) });
const DebitWalletInput = builder.inputType('DebitWalletInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    amount: t.field({ type: 'Money', required: true }),
    description: t.string({ required: true }),
    reference: t.string({ required: true, description: 'Unique per wallet; a repeat returns the original transaction.' }),
    metadata: t.field({ type: 'JSON' }),
    idempotencyKey: t.string(),
  }),
});
const CreditWalletInput = builder.inputType('CreditWalletInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    amount: t.field({ type: 'Money', required: true }),
    description: t.string({ required: true }),
    reference: t.string({ required: true }),
    expiresAt: t.field({ type: 'DateTime' }),
    metadata: t.field({ type: 'JSON' }),
    idempotencyKey: t.string(),
  }),
});
const CreateWalletTopupInput = builder.inputType('CreateWalletTopupInput', {
  fields: (t) => ({
    walletId: t.id({ required: true }),
    amount: t.field({ type: 'Money', required: true }),
    redirectUrl: t.string({ required: true }),
    cancelUrl: t.string(),
    idempotencyKey: t.string(),
  }),
});

const CompleteTestWalletTopupInput = builder.inputType('CompleteTestWalletTopupInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    outcome: t.field({ type: TestOutcome, required: true }),
    idempotencyKey: t.string(),
  }),
});

const STATE = [...COMMON_ERRORS, NotFoundError, StateError];

function walletMutation(name: string, op: (ctx: Ctx, id: string) => Promise<import('../generated/prisma/client.ts').Wallet>) {
  const cap = name[0]!.toUpperCase() + name.slice(1);
  builder.mutationField(name, (t) =>
    t.field({
      type: Wallet,
      errors: { types: STATE, dataField: { name: 'wallet' }, result: { name: `${cap}Success` }, union: { name: `${cap}Result` } },
      args: { input: t.arg({ type: WalletIdInput, required: true }) },
      resolve: (_, { input }, gctx) => mutate(gctx, name, input, (ctx, { id }) => op(ctx, id)),
    }),
  );
}
walletMutation('freezeWallet', wallets.freezeWallet);
walletMutation('unfreezeWallet', wallets.unfreezeWallet);
walletMutation('closeWallet', (ctx, id) => wallets.closeWallet(ctx, id, topups.cancelTopupPayment));

builder.mutationFields((t) => ({
  createWallet: t.field({
    type: Wallet,
    errors: { types: STATE, dataField: { name: 'wallet' }, result: { name: 'CreateWalletSuccess' }, union: { name: 'CreateWalletResult' } },
    args: { input: t.arg({ type: CreateWalletInput, required: true }) },
    resolve: (_, { input }, gctx) => mutate(gctx, 'createWallet', input, (ctx, fields) => wallets.createWallet(ctx, domainInput(wallets.walletCreate, fields))),
  }),
  debitWallet: t.field({
    type: WalletTransaction,
    description: 'Debits the wallet. The reference makes retries safe: a repeat returns the original transaction.',
    errors: {
      types: [...STATE, InsufficientBalanceError],
      dataField: { name: 'transaction' },
      result: { name: 'DebitWalletSuccess' },
      union: { name: 'DebitWalletResult' },
    },
    args: { input: t.arg({ type: DebitWalletInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'debitWallet', input, (ctx, { id, ...fields }) => wallets.debitWallet(ctx, id, domainInput(wallets.walletDebit, fields))),
  }),
  creditWallet: t.field({
    type: WalletTransaction,
    errors: { types: STATE, dataField: { name: 'transaction' }, result: { name: 'CreditWalletSuccess' }, union: { name: 'CreditWalletResult' } },
    args: { input: t.arg({ type: CreditWalletInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(
        gctx,
        'creditWallet',
        input,
        async (ctx, { id, ...fields }) => (await wallets.creditWallet(ctx, id, domainInput(wallets.walletCredit, fields))).transaction,
      ),
  }),
  completeTestWalletTopup: t.field({
    type: WalletTopup,
    description: 'Test mode only: finish a top-up checkout as the customer would.',
    errors: { types: STATE, dataField: { name: 'topup' }, result: { name: 'CompleteTestWalletTopupSuccess' }, union: { name: 'CompleteTestWalletTopupResult' } },
    args: { input: t.arg({ type: CompleteTestWalletTopupInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(
        gctx,
        'completeTestWalletTopup',
        input,
        (ctx, { id, ...fields }) => topups.completeTopupForTest(ctx, id, domainInput(wallets.topupCompleteBody, fields)),
        PHASED,
      ),
  }),
  createWalletTopup: t.field({
    type: WalletTopup,
    errors: { types: STATE, dataField: { name: 'topup' }, result: { name: 'CreateWalletTopupSuccess' }, union: { name: 'CreateWalletTopupResult' } },
    args: { input: t.arg({ type: CreateWalletTopupInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(
        gctx,
        'createWalletTopup',
        input,
        (ctx, { walletId, ...fields }) => topups.createTopup(ctx, walletId, domainInput(wallets.topupCreate, fields)),
      ),
  }),
}));

import * as customers from '../domain/customers/index.ts';
import { deleteCustomer, getCustomerWithEmbeds, updateCustomer } from '../services/customers.ts';
import { NotFoundError } from '../platform/errors.ts';
import { LOCALES } from '../platform/validation.ts';
import { builder, connectionComplexity, loadNodeWith, nodeKind } from './builder.ts';
import { COMMON_ERRORS } from './errors.ts';
import { connectionType, domainInput, listArgs, mutate, nestedConnection, orNull, PHASED, toConnection } from './helpers.ts';
import * as balance from '../domain/customers/balance.ts';

/** The languages of the hosted pages and e-mails: a checkout's, a portal session's, a customer's. */
export const CheckoutLocale = builder.enumType('CheckoutLocale', { values: LOCALES });

const CreditBalance = builder.objectRef<{ currency: string; amount: bigint }>('CreditBalance').implement({
  description: 'The credit balance in one currency.',
  fields: (t) => ({
    currency: t.exposeString('currency'),
    amount: t.field({ type: 'Money', resolve: (b) => b.amount }),
  }),
});

const BalanceTransactionType = builder.enumType('CustomerBalanceTransactionType', {
  values: balance.BALANCE_TRANSACTION_TYPES,
});

export const CustomerBalanceTransaction = builder.prismaNode('CustomerBalanceTransaction', {
  id: { field: 'id' },
  description: 'An entry of a customer’s credit balance ledger: amount > 0 added credit, < 0 used it.',
  fields: (t) => ({
    customer: t.relation('customer'),
    currency: t.exposeString('currency'),
    amount: t.field({ type: 'Money', resolve: (x) => x.amount }),
    endingBalance: t.field({ type: 'Money', description: 'The balance in this currency after this entry.', resolve: (x) => x.endingBalance }),
    type: t.field({ type: BalanceTransactionType, resolve: (x) => x.type as balance.BalanceTransactionType }),
    invoiceId: t.exposeString('invoiceId', { nullable: true }),
    subscriptionId: t.exposeString('subscriptionId', { nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
nodeKind('customer_balance_transaction', CustomerBalanceTransaction);

const BalanceTransactionConnection = connectionType(CustomerBalanceTransaction, 'CustomerBalanceTransaction');

export const Customer = builder.prismaNode('Customer', {
  id: { field: 'id' },
  // node(id:) must not find deleted customers either.
  findUnique: (id) => ({ id, deletedAt: null }),
  fields: (t) => ({
    email: t.exposeString('email'),
    name: t.exposeString('name', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true, description: 'E.164' }),
    currency: t.exposeString('currency', { nullable: true, description: 'Default currency (ISO 4217).' }),
    locale: t.field({ type: CheckoutLocale, nullable: true, description: customers.LOCALE_DESCRIPTION, resolve: (c) => customers.localeOf(c) }),
    metadata: t.field({ type: 'JSON', resolve: (c) => c.metadata ?? {} }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    creditBalance: t.field({
      type: [CreditBalance],
      description: 'Credit owed to the customer, per currency (non-zero only), drawn by their invoices before charging.',
      select: { balances: { where: { balance: { not: 0n } }, orderBy: { currency: 'asc' } } },
      resolve: (c) => c.balances.map((b) => ({ currency: b.currency, amount: b.balance })),
    }),
    balanceTransactions: t.field({
      type: BalanceTransactionConnection,
      description: 'The credit balance’s ledger, newest first.',
      complexity: connectionComplexity,
      args: { first: t.arg.int({ description: '1 to 100, default 20.' }), after: t.arg.string() },
      resolve: (c, a, gctx) =>
        nestedConnection(
          gctx,
          'Customer.balanceTransactions',
          c.id,
          listArgs(customers.balanceTransactionListQuery, a),
          balance.listBalanceTransactionsOfCustomers,
          (ctx, ids) => balance.countBalanceTransactionsOfCustomers(ctx, ids),
        ),
    }),
  }),
});
nodeKind('customer', Customer);

loadNodeWith('Customer', (ctx, id) => orNull(customers.getCustomer(ctx, id)));

export const CustomerConnection = connectionType(Customer, 'Customer');

builder.queryFields((t) => ({
  customer: t.field({
    type: Customer,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, { id }, { ctx }) => orNull(customers.getCustomer(ctx, String(id))),
  }),
  customers: t.field({
    type: CustomerConnection,
    description: 'Customers, newest first; `search` finds them by email or name.',
    complexity: connectionComplexity,
    args: {
      first: t.arg.int({ description: '1 to 100, default 20.' }),
      after: t.arg.string(),
      email: t.arg.string({ description: 'Exact email match.' }),
      search: t.arg.string({ description: customers.SEARCH_DESCRIPTION }),
    },
    resolve: async (_, a, { ctx }) => toConnection(await customers.listCustomers(ctx, listArgs(customers.customerListQuery, a))),
  }),
}));

const metadataDescription = 'String key-value pairs (≤ 50 keys, values ≤ 500 characters).';

const CreateCustomerInput = builder.inputType('CreateCustomerInput', {
  fields: (t) => ({
    email: t.string({ required: true }),
    name: t.string(),
    phone: t.string({ description: 'E.164, e.g. +256700000001' }),
    currency: t.string({ description: 'ISO 4217' }),
    locale: t.field({ type: CheckoutLocale, description: 'Language of the customer’s e-mails and hosted pages (null: en).' }),
    metadata: t.field({ type: 'JSON', description: metadataDescription }),
    idempotencyKey: t.string({ description: 'Retries with the same key and input within 24 h return the first result.' }),
  }),
});

const UpdateCustomerInput = builder.inputType('UpdateCustomerInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    email: t.string(),
    name: t.string({ description: 'null clears it' }),
    phone: t.string({ description: 'null clears it' }),
    currency: t.string({ description: 'null clears it' }),
    locale: t.field({ type: CheckoutLocale, description: 'Language of the customer’s e-mails and hosted pages; null clears it (en).' }),
    defaultPaymentMethodId: t.id({ description: 'An attached saved method of this customer; null clears it.' }),
    metadata: t.field({ type: 'JSON', description: `${metadataDescription} Merged; an empty string removes a key.` }),
    idempotencyKey: t.string(),
  }),
});

const CreateCustomerBalanceTransactionInput = builder.inputType('CreateCustomerBalanceTransactionInput', {
  fields: (t) => ({
    id: t.id({ required: true, description: 'The customer.' }),
    amount: t.field({ type: 'Money', required: true, description: '> 0 gives credit; < 0 takes unused credit back (never below 0).' }),
    currency: t.string({ required: true, description: 'ISO 4217' }),
    description: t.string(),
    idempotencyKey: t.string(),
  }),
});

const DeleteCustomerInput = builder.inputType('DeleteCustomerInput', {
  fields: (t) => ({ id: t.id({ required: true }), idempotencyKey: t.string() }),
});

const DeletedCustomer = builder.objectRef<{ id: string }>('DeletedCustomer').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    deleted: t.boolean({ resolve: () => true }),
  }),
});


builder.mutationFields((t) => ({
  createCustomer: t.field({
    type: Customer,
    errors: { types: COMMON_ERRORS, dataField: { name: 'customer' }, result: { name: 'CreateCustomerSuccess' }, union: { name: 'CreateCustomerResult' } },
    args: { input: t.arg({ type: CreateCustomerInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'createCustomer', input, (ctx, fields) => customers.createCustomer(ctx, domainInput(customers.customerCreate, fields))),
  }),
  updateCustomer: t.field({
    type: Customer,
    description: 'A new defaultPaymentMethodId retries at once the open or uncollectible invoices of the customer’s past_due and unpaid subscriptions that charge the default.',
    errors: { types: [...COMMON_ERRORS, NotFoundError], dataField: { name: 'customer' }, result: { name: 'UpdateCustomerSuccess' }, union: { name: 'UpdateCustomerResult' } },
    args: { input: t.arg({ type: UpdateCustomerInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'updateCustomer', input, (ctx, { id, ...fields }) => updateCustomer(ctx, id, domainInput(customers.customerUpdate, fields)), PHASED),
  }),
  createCustomerBalanceTransaction: t.field({
    type: CustomerBalanceTransaction,
    description: 'Adjusts the customer’s credit balance (REST: POST /v1/customers/{id}/balance-transactions).',
    errors: {
      types: [...COMMON_ERRORS, NotFoundError],
      dataField: { name: 'transaction' },
      result: { name: 'CreateCustomerBalanceTransactionSuccess' },
      union: { name: 'CreateCustomerBalanceTransactionResult' },
    },
    args: { input: t.arg({ type: CreateCustomerBalanceTransactionInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'createCustomerBalanceTransaction', input, (ctx, { id, ...fields }) =>
        balance.createBalanceTransaction(ctx, id, domainInput(customers.balanceTransactionCreate, fields)),
      ),
  }),
  deleteCustomer: t.field({
    type: DeletedCustomer,
    errors: { types: [...COMMON_ERRORS, NotFoundError], dataField: { name: 'deletedCustomer' }, result: { name: 'DeleteCustomerSuccess' }, union: { name: 'DeleteCustomerResult' } },
    args: { input: t.arg({ type: DeleteCustomerInput, required: true }) },
    resolve: (_, { input }, gctx) =>
      mutate(gctx, 'deleteCustomer', input, (ctx, { id }) => deleteCustomer(ctx, id)),
  }),
}));

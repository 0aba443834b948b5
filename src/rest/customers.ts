import * as customers from '../domain/customers/index.ts';
import { deleteCustomer, getCustomerWithEmbeds, updateCustomer } from '../services/customers.ts';
import { customerJSON, customersJSON, customerToJSON } from '../domain/customers/index.ts';
import { route, listEnvelope } from './route.ts';
import { subscriptionToJSON } from '../domain/billing/subscriptions.ts';
import { paymentMethodToJSON } from '../domain/payment-methods/index.ts';
import { balanceTransactionObject, customerObject, customerWithEmbedsObject, deletedObject, idParam, listOf } from './schemas.ts';
import * as balance from '../domain/customers/balance.ts';

const tag = 'Customers';

export const customerRoutes = [
  route({
    method: 'post', path: '/v1/customers', operationId: 'createCustomer', tag, summary: 'Create a customer',
    example: { email: 'jane@example.com', name: 'Jane Doe', currency: 'USD', locale: 'en', metadata: { crm_id: '6735' } },
    body: customers.customerCreate,
    response: { status: 201, description: 'The new customer.', schema: customerObject },
    // A customer just made has no credit balance.
    handler: async (ctx, { body }) => customerToJSON(await customers.createCustomer(ctx, body), {}),
  }),
  route({
    method: 'get', path: '/v1/customers/{id}', operationId: 'getCustomer', tag, summary: 'Retrieve a customer, with their credit balance, payment methods and subscriptions',
    params: idParam,
    response: { status: 200, description: 'The customer, embedding its attached payment methods and its subscriptions.', schema: customerWithEmbedsObject },
    handler: async (ctx, { params }) => {
      const { customer, paymentMethods, subscriptions, creditBalance } = await getCustomerWithEmbeds(ctx, params.id);
      return {
        ...customerToJSON(customer, creditBalance),
        payment_methods: paymentMethods.map(paymentMethodToJSON),
        subscriptions: subscriptions.map(subscriptionToJSON),
      };
    },
  }),
  route({
    method: 'patch', path: '/v1/customers/{id}', operationId: 'updateCustomer', tag, summary: 'Update a customer',
    example: { name: 'Jane Smith', metadata: { crm_id: '6736' } },
    description: 'A new `default_payment_method_id` retries at once the open or uncollectible invoices of the customer’s `past_due` and `unpaid` subscriptions that charge the default.',
    params: idParam, body: customers.customerUpdate,
    response: { status: 200, description: 'The updated customer.', schema: customerObject },
    // A new default method charges invoices after the change commits: phased under an Idempotency-Key.
    phased: true,
    handler: async (ctx, { params, body }) => customerJSON(ctx, await updateCustomer(ctx, params.id, body)),
  }),
  route({
    method: 'delete', path: '/v1/customers/{id}', operationId: 'deleteCustomer', tag,
    summary: 'Delete a customer', description: 'Soft delete: the customer disappears from reads and lists; payments and ledgers keep referring to it. Its saved payment methods are detached.',
    params: idParam,
    response: { status: 200, description: 'The deleted customer stub.', schema: deletedObject },
    handler: async (ctx, { params }) => {
      const c = await deleteCustomer(ctx, params.id);
      return { id: c.id, object: 'customer', deleted: true as const };
    },
  }),
  route({
    method: 'get', path: '/v1/customers', operationId: 'listCustomers', tag, summary: 'List customers, newest first',
    query: customers.customerListQuery,
    response: { status: 200, description: 'A page of customers.', schema: listOf(customerObject, 'CustomerList') },
    // The page's credit balances in one statement (customersJSON), not one per customer.
    handler: async (ctx, { query }) => {
      const page = await customers.listCustomers(ctx, query);
      const json = await customersJSON(ctx, page.data);
      return listEnvelope({ ...page, data: json }, (c) => c);
    },
  }),
  route({
    method: 'post', path: '/v1/customers/{id}/balance-transactions', operationId: 'createCustomerBalanceTransaction', tag,
    example: { amount: 500, currency: 'USD', description: 'Goodwill credit for the outage of May 3' },
    summary: 'Adjust the customer’s credit balance',
    description:
      'A positive `amount` gives the customer credit in `currency`, drawn by their invoices before charging; a negative one takes unused credit back (never below 0: 400 `balance_insufficient`). Records `customer.balance_changed`.\n\n' +
      'Limits: one adjustment moves at most 99,999,999,999 either way (the most one payment may charge; above it 400 `amount_too_large`, below −99,999,999,999 400 `parameter_invalid`, param `amount`); `0` is 400 `parameter_invalid`; the balance of a currency never exceeds 999,999,999,999,999 (400 `amount_too_large`, as a wallet balance); `description` is at most 500 characters.',
    params: idParam, body: customers.balanceTransactionCreate,
    response: { status: 201, description: 'The new ledger entry, with the balance after it.', schema: balanceTransactionObject },
    handler: async (ctx, { params, body }) => balance.balanceTransactionToJSON(await balance.createBalanceTransaction(ctx, params.id, body)),
  }),
  route({
    method: 'get', path: '/v1/customers/{id}/balance-transactions', operationId: 'listCustomerBalanceTransactions', tag,
    summary: 'The credit balance’s ledger, newest first',
    params: idParam, query: customers.balanceTransactionListQuery,
    response: { status: 200, description: 'A page of ledger entries.', schema: listOf(balanceTransactionObject, 'CustomerBalanceTransactionList') },
    handler: async (ctx, { params, query }) => listEnvelope(await balance.listBalanceTransactions(ctx, params.id, query), balance.balanceTransactionToJSON),
  }),
];

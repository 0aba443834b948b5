// The GraphQL client: urql over POST /graphql with the session cookie (same origin only) and the
// header a cross-site form cannot send. A 401 means the session ended: back to sign-in.
import { Client, cacheExchange, fetchExchange } from 'urql';

export function createClient(onUnauthorized: () => void): Client {
  return new Client({
    url: '/graphql',
    exchanges: [cacheExchange, fetchExchange],
    preferGetMethod: false,
    requestPolicy: 'cache-and-network',
    fetchOptions: {
      credentials: 'same-origin',
      headers: { 'X-Billing-Dashboard': '1', accept: 'application/graphql-response+json, application/json' },
    },
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if (res.status === 401) onUnauthorized();
      return res;
    },
  });
}

/**
 * The context of a list query: the types it lists, so that a mutation returning one of them
 * refetches the list even when it was empty (urql's document cache otherwise only knows the types
 * a result contained, and an empty list contains none: a first plan created would not appear).
 * Constants, so that the query's context stays the same object from render to render.
 */
const lists = (name: string) => ({ additionalTypenames: [name] });
export const LISTS = {
  customers: lists('Customer'),
  events: lists('Event'),
  invoices: lists('Invoice'),
  payments: lists('Payment'),
  plans: lists('Plan'),
  subscriptions: lists('BillingSubscription'),
  wallets: lists('Wallet'),
  webhookEndpoints: lists('WebhookEndpoint'),
  apiKeys: lists('ApiKey'),
  coupons: lists('Coupon'),
  taxRates: lists('TaxRate'),
  creditNotes: lists('CreditNote'),
} as const;

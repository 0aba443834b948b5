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

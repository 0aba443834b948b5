// API keys over GraphQL (issue 24): apiKeys, createApiKey (the secret once), revokeApiKey — the
// merchant's own keys only, never a secret or hash in a listing, never the last active key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startApp, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;
let other: Client;

beforeAll(async () => {
  app = await startApp({}, { worker: false });
  api = await app.merchant();
  other = await app.merchant({ name: 'Other merchant' });
});
afterAll(() => app?.close());

const LIST = `{ apiKeys(first: 10) { totalCount edges { node { clientId secretLast4 createdAt revokedAt active } } } }`;
const CREATE = `mutation($input: CreateApiKeyInput) { createApiKey(input: $input) { __typename
  ... on CreateApiKeySuccess { newApiKey { clientSecret apiKey { clientId secretLast4 active } } }
  ... on ValidationError { code param message } } }`;
const REVOKE = `mutation($clientId: String!) { revokeApiKey(input: { clientId: $clientId }) { __typename
  ... on RevokeApiKeySuccess { apiKey { clientId active revokedAt } }
  ... on NotFoundError { code param }
  ... on StateError { code param message } } }`;

describe('API keys over GraphQL', () => {
  it('lists the merchant’s own keys without secrets', async () => {
    const r = await api.post('/graphql', { query: LIST });
    expect(r.status).toBe(200);
    expect(r.body.data.apiKeys.totalCount).toBe(1);
    expect(r.body.data.apiKeys.edges[0].node).toMatchObject({ clientId: api.creds.client_id, secretLast4: api.creds.client_secret.slice(-4), revokedAt: null, active: true });
    expect(r.text).not.toContain(api.creds.client_secret);
    expect(r.text).not.toMatch(/scrypt/);
    const o = await other.gql(LIST);
    expect(o.data.apiKeys.edges.map((e: any) => e.node.clientId)).toEqual([other.creds.client_id]);
  });

  it('creates a key whose secret works and is shown once; revokes it; refuses the last active key', async () => {
    const c = await api.gql(CREATE);
    expect(c.data.createApiKey.__typename).toBe('CreateApiKeySuccess');
    const { clientSecret, apiKey } = c.data.createApiKey.newApiKey;
    expect(clientSecret).toMatch(/^sk_test_/);
    expect(apiKey).toMatchObject({ secretLast4: clientSecret.slice(-4), active: true });
    const second = new Client(app.url, { ...api.creds, client_id: apiKey.clientId, client_secret: clientSecret });
    expect((await second.get('/v1/customers')).status).toBe(200);
    const list = await api.post('/graphql', { query: LIST });
    expect(list.body.data.apiKeys.totalCount).toBe(2);
    expect(list.body.data.apiKeys.edges[0].node.clientId).toBe(apiKey.clientId); // newest first
    expect(list.text).not.toContain(clientSecret);

    // Another merchant cannot revoke it (nor learn that it exists).
    const foreign = await other.gql(REVOKE, { clientId: apiKey.clientId });
    expect(foreign.data.revokeApiKey).toEqual({ __typename: 'NotFoundError', code: 'resource_missing', param: 'clientId' });

    // The key of the request itself may be revoked: the answer arrives, the key then stops working.
    const own = await second.gql(REVOKE, { clientId: apiKey.clientId });
    expect(own.data.revokeApiKey.__typename).toBe('RevokeApiKeySuccess');
    expect(own.data.revokeApiKey.apiKey).toMatchObject({ clientId: apiKey.clientId, active: false });
    await expect.poll(async () => (await second.get('/v1/customers')).status, { timeout: 15_000, interval: 250 }).toBe(401);
    expect((await api.gql(REVOKE, { clientId: apiKey.clientId })).data.revokeApiKey.__typename).toBe('NotFoundError');

    // The last active key stays.
    const last = await api.gql(REVOKE, { clientId: api.creds.client_id });
    expect(last.data.revokeApiKey).toMatchObject({ __typename: 'StateError', code: 'last_api_key', param: 'clientId' });
    expect((await api.get('/v1/customers')).status).toBe(200);
  });

  it('revokes with an idempotencyKey (in that key’s transaction, also on the one-connection embedded database); a retry gets the same answer', async () => {
    const REVOKE_KEYED = `mutation($clientId: String!, $key: String) { revokeApiKey(input: { clientId: $clientId, idempotencyKey: $key }) { __typename
      ... on RevokeApiKeySuccess { apiKey { clientId active revokedAt } }
      ... on Error { code message } } }`;
    const c = (await other.gql(CREATE)).data.createApiKey.newApiKey;
    const started = Date.now();
    const first = await other.gql(REVOKE_KEYED, { clientId: c.apiKey.clientId, key: 'revoke-1' });
    expect(first.data.revokeApiKey).toMatchObject({ __typename: 'RevokeApiKeySuccess', apiKey: { clientId: c.apiKey.clientId, active: false } });
    expect(Date.now() - started).toBeLessThan(4000); // no wait for a second connection
    const again = await other.gql(REVOKE_KEYED, { clientId: c.apiKey.clientId, key: 'revoke-1' });
    expect(again.data.revokeApiKey).toEqual(first.data.revokeApiKey);
    // Without the key, the same request now finds no active key.
    expect((await other.gql(REVOKE_KEYED, { clientId: c.apiKey.clientId })).data.revokeApiKey.__typename).toBe('NotFoundError');
    const keyed = new Client(app.url, { ...other.creds, client_id: c.apiKey.clientId, client_secret: c.clientSecret });
    await expect.poll(async () => (await keyed.get('/v1/customers')).status, { timeout: 15_000, interval: 250 }).toBe(401);
    // The last active key is refused the same way with a key.
    expect((await other.gql(REVOKE_KEYED, { clientId: other.creds.client_id, key: 'revoke-2' })).data.revokeApiKey).toMatchObject({ __typename: 'StateError', code: 'last_api_key' });
  });

  it('refuses an idempotencyKey on createApiKey (the answer holds a secret that is never stored)', async () => {
    const r = await api.gql(CREATE, { input: { idempotencyKey: 'k1' } });
    expect(r.data.createApiKey).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'idempotencyKey' });
    expect((await api.gql(LIST)).data.apiKeys.totalCount).toBe(2); // one active and one revoked from above
  });
});

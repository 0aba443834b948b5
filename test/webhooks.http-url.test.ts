// An http:// webhook URL refused (issue 24, "the first hour"): the refusal says how to allow one for
// a receiver on the developer's own machine (BILLING_ALLOW_HTTP_WEBHOOKS=1, loopback only), on both
// surfaces and for create and update; with the setting on, loopback is accepted and any other
// host is still refused with a message saying why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

const HINT = 'For local development, start the service with BILLING_ALLOW_HTTP_WEBHOOKS=1 to allow http:// to a loopback address (localhost, 127.0.0.1, [::1]).';
const REFUSED = `Invalid url: must use https://. ${HINT}`;

const CREATE = `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) {
  __typename ... on WebhookEndpointWithSecret { webhookEndpoint { id url } } ... on Error { code message } ... on ValidationError { param } } }`;
const UPDATE = `mutation($input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(input: $input) {
  __typename ... on UpdateWebhookEndpointSuccess { webhookEndpoint { id url } } ... on Error { code message } ... on ValidationError { param } } }`;

describe('http:// refused (BILLING_ALLOW_HTTP_WEBHOOKS unset)', () => {
  let app: TestApp;
  let m: Client;
  beforeAll(async () => {
    app = await startApp({ BILLING_ALLOW_HTTP_WEBHOOKS: '0' }, { worker: false });
    m = await app.merchant();
  });
  afterAll(() => app?.close());

  it('REST: create and update say how to allow it for local development', async () => {
    for (const url of ['http://localhost:3000/webhooks', 'http://127.0.0.1:3000/webhooks', 'http://hooks.example.com/x']) {
      const r = await m.post('/v1/webhook-endpoints', { url });
      expect(r.status, url).toBe(400);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'url', message: REFUSED });
    }
    const ok = await m.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/billing' });
    expect(ok.status).toBe(201);
    const upd = await m.patch(`/v1/webhook-endpoints/${ok.body.id}`, { url: 'http://localhost:3000/webhooks' });
    expect(upd.status).toBe(400);
    expect(upd.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url', message: REFUSED });
    expect((await m.get(`/v1/webhook-endpoints/${ok.body.id}`)).body.url).toBe('https://hooks.example.com/billing');
  });

  it('GraphQL: the same ValidationError as data, for create and update', async () => {
    const created = await m.gql(CREATE, { input: { url: 'http://localhost:3000/webhooks' } });
    expect(created.errors).toBeUndefined();
    expect(created.data.createWebhookEndpoint).toEqual({ __typename: 'ValidationError', code: 'parameter_invalid', message: REFUSED, param: 'url' });
    const ok = await m.gql(CREATE, { input: { url: 'https://hooks.example.com/graphql' } });
    const id = ok.data.createWebhookEndpoint.webhookEndpoint.id;
    const updated = await m.gql(UPDATE, { input: { id, url: 'http://127.0.0.1:3000/webhooks' } });
    expect(updated.data.updateWebhookEndpoint).toEqual({ __typename: 'ValidationError', code: 'parameter_invalid', message: REFUSED, param: 'url' });
  });
});

describe('http:// allowed to loopback (BILLING_ALLOW_HTTP_WEBHOOKS=1)', () => {
  let app: TestApp;
  let m: Client;
  beforeAll(async () => {
    app = await startApp({ BILLING_ALLOW_HTTP_WEBHOOKS: '1' }, { worker: false });
    m = await app.merchant();
  });
  afterAll(() => app?.close());

  it('accepts loopback on both surfaces, and still refuses another host saying why', async () => {
    expect((await m.post('/v1/webhook-endpoints', { url: 'http://localhost:3000/webhooks' })).status).toBe(201);
    const gql = await m.gql(CREATE, { input: { url: 'http://127.0.0.1:3000/webhooks' } });
    expect(gql.data.createWebhookEndpoint.__typename).toBe('WebhookEndpointWithSecret');
    const message =
      'Invalid url: http:// is only allowed to a loopback address (localhost, 127.0.0.1, [::1]), for local development with BILLING_ALLOW_HTTP_WEBHOOKS=1; use https:// for any other host.';
    const r = await m.post('/v1/webhook-endpoints', { url: 'http://hooks.example.com/x' });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url', message });
    const g = await m.gql(CREATE, { input: { url: 'http://hooks.example.com/x' } });
    expect(g.data.createWebhookEndpoint).toMatchObject({ __typename: 'ValidationError', message });
  });
});

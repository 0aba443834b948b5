// Saved payment methods, setup intents and portal sessions over GraphQL: the same domain as REST,
// errors as data, the same codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;
let other: Client;

beforeAll(async () => {
  app = await startApp();
  api = await app.merchant();
  other = await app.merchant();
});
afterAll(() => app?.close());

const RESULT = `__typename ... on Error { code message param }`;

async function customer(client = api) {
  return (await client.post('/v1/customers', { email: `g${Math.random().toString(36).slice(2)}@example.com` })).body;
}

async function setupIntent(customerId: string, client = api) {
  const r = await client.gql(
    `mutation($input: CreateSetupIntentInput!) { createSetupIntent(input: $input) { ${RESULT} ... on CreateSetupIntentSuccess { setupIntent { id status setupUrl paymentMethodTypes customer { id } } } } }`,
    { input: { customerId, returnUrl: 'https://shop.example/account', idempotencyKey: `si-${customerId}-${Math.random()}` } },
  );
  return r.data.createSetupIntent;
}

async function complete(id: string, cardNumber?: string, client = api) {
  const r = await client.gql(
    `mutation($input: CompleteTestSetupIntentInput!) { completeTestSetupIntent(input: $input) { ${RESULT} ... on CompleteTestSetupIntentSuccess { setupIntent { id status paymentMethod { id type card { brand last4 expMonth expYear } mobileMoney { phoneLast4 } customer { id } } } } } }`,
    { input: { id, cardNumber } },
  );
  return r.data.completeTestSetupIntent;
}

const CUSTOMER = `query($id: ID!) { customer(id: $id) { defaultPaymentMethod { id } paymentMethods(first: 5) { totalCount edges { node { id type card { last4 } } } } } }`;

describe('payment methods over GraphQL', () => {
  it('creates a setup intent, saves cards, lists them on the customer, sets the default, detaches', async () => {
    const c = await customer();
    const si = await setupIntent(c.id);
    expect(si.__typename).toBe('CreateSetupIntentSuccess');
    expect(si.setupIntent).toMatchObject({ status: 'requires_payment_method', paymentMethodTypes: ['card', 'mobile_money'], customer: { id: c.id } });
    expect(si.setupIntent.setupUrl).toMatch(/\/hosted\/setup\/[0-9A-Za-z]{40}$/);

    const first = await complete(si.setupIntent.id);
    expect(first.__typename).toBe('CompleteTestSetupIntentSuccess');
    const pm1 = first.setupIntent.paymentMethod;
    expect(pm1).toMatchObject({ type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12 }, mobileMoney: null, customer: { id: c.id } });
    expect(first.setupIntent.status).toBe('succeeded');

    const pm2 = (await complete((await setupIntent(c.id)).setupIntent.id, '5555555555554444')).setupIntent.paymentMethod;
    let view = (await api.gql(CUSTOMER, { id: c.id })).data.customer;
    expect(view.defaultPaymentMethod.id).toBe(pm1.id);
    expect(view.paymentMethods.totalCount).toBe(2);
    expect(view.paymentMethods.edges.map((e: any) => e.node.id)).toEqual([pm2.id, pm1.id]);

    const def = await api.gql(
      `mutation($input: SetDefaultPaymentMethodInput!) { setDefaultPaymentMethod(input: $input) { ${RESULT} ... on SetDefaultPaymentMethodSuccess { customer { defaultPaymentMethod { id } } } } }`,
      { input: { customerId: c.id, paymentMethodId: pm2.id } },
    );
    expect(def.data.setDefaultPaymentMethod.customer.defaultPaymentMethod.id).toBe(pm2.id);

    const DETACH = `mutation($input: DetachPaymentMethodInput!) { detachPaymentMethod(input: $input) { ${RESULT} ... on DetachPaymentMethodSuccess { paymentMethod { id customer { id } } } } }`;
    const detached = await api.gql(DETACH, { input: { id: pm2.id } });
    expect(detached.data.detachPaymentMethod).toEqual({ __typename: 'DetachPaymentMethodSuccess', paymentMethod: { id: pm2.id, customer: null } });
    view = (await api.gql(CUSTOMER, { id: c.id })).data.customer;
    expect(view.defaultPaymentMethod.id).toBe(pm1.id);
    expect(view.paymentMethods.totalCount).toBe(1);
    const again = await api.gql(DETACH, { input: { id: pm2.id } });
    expect(again.data.detachPaymentMethod).toMatchObject({ __typename: 'StateError', code: 'payment_method_detached' });
    // node(id:) finds the new types by their prefixes.
    const node = await api.gql(`query($id: ID!) { node(id: $id) { __typename id } }`, { id: pm1.id });
    expect(node.data.node).toEqual({ __typename: 'PaymentMethod', id: pm1.id });
    expect((await api.gql(`query($id: ID!) { node(id: $id) { __typename } }`, { id: si.setupIntent.id })).data.node.__typename).toBe('SetupIntent');
  });

  it('refuses the declined card with a typed error and saves nothing', async () => {
    const c = await customer();
    const si = await setupIntent(c.id);
    const r = await complete(si.setupIntent.id, '4000000000000002');
    expect(r).toMatchObject({ __typename: 'StateError', code: 'card_declined', param: 'cardNumber' });
    expect((await api.gql(CUSTOMER, { id: c.id })).data.customer.paymentMethods.totalCount).toBe(0);
    const bad = await setupIntent('cus_nope');
    expect(bad).toMatchObject({ __typename: 'NotFoundError', code: 'resource_missing', param: 'customerId' });
  });

  it('charges a saved method with createPayment(paymentMethodId); …9995 fails with insufficient_funds', async () => {
    const c = await customer();
    const ok = (await complete((await setupIntent(c.id)).setupIntent.id)).setupIntent.paymentMethod;
    const nsf = (await complete((await setupIntent(c.id)).setupIntent.id, '4000000000009995')).setupIntent.paymentMethod;
    const PAY = `mutation($input: CreatePaymentInput!) { createPayment(input: $input) { ${RESULT} ... on CreatePaymentSuccess { payment { status failureCode redirectUrl customer { id } savedPaymentMethod { id } } } } }`;
    const paid = await api.gql(PAY, { input: { amount: 1200, currency: 'USD', paymentMethodId: ok.id, idempotencyKey: `pay-${ok.id}` } });
    expect(paid.data.createPayment.payment).toEqual({ status: 'succeeded', failureCode: null, redirectUrl: null, customer: { id: c.id }, savedPaymentMethod: { id: ok.id } });
    // The same key again: the first result, not a second charge.
    const replay = await api.gql(PAY, { input: { amount: 1200, currency: 'USD', paymentMethodId: ok.id, idempotencyKey: `pay-${ok.id}` } });
    expect(replay.data.createPayment.payment.status).toBe('succeeded');
    expect((await api.get(`/v1/payments?customer_id=${c.id}`)).body.data).toHaveLength(1);
    const failed = await api.gql(PAY, { input: { amount: 1200, currency: 'USD', paymentMethodId: nsf.id } });
    expect(failed.data.createPayment.payment).toMatchObject({ status: 'failed', failureCode: 'insufficient_funds' });
    const missing = await api.gql(PAY, { input: { amount: 1200, currency: 'USD', customerId: c.id } });
    expect(missing.data.createPayment).toMatchObject({ __typename: 'ValidationError', code: 'parameter_missing', param: 'redirectUrl' });
  });

  it('updateCustomer takes defaultPaymentMethodId; another merchant’s method is not found', async () => {
    const c = await customer();
    const pm = (await complete((await setupIntent(c.id)).setupIntent.id)).setupIntent.paymentMethod;
    const UPDATE = `mutation($input: UpdateCustomerInput!) { updateCustomer(input: $input) { ${RESULT} ... on UpdateCustomerSuccess { customer { defaultPaymentMethod { id } } } } }`;
    expect((await api.gql(UPDATE, { input: { id: c.id, defaultPaymentMethodId: null } })).data.updateCustomer.customer.defaultPaymentMethod).toBeNull();
    expect((await api.gql(UPDATE, { input: { id: c.id, defaultPaymentMethodId: pm.id } })).data.updateCustomer.customer.defaultPaymentMethod.id).toBe(pm.id);
    const theirs = await customer(other);
    const theirPm = (await complete((await setupIntent(theirs.id, other)).setupIntent.id, undefined, other)).setupIntent.paymentMethod;
    expect((await api.gql(`query($id: ID!) { paymentMethod(id: $id) { id } }`, { id: theirPm.id })).data.paymentMethod).toBeNull();
    const detach = await api.gql(`mutation($input: DetachPaymentMethodInput!) { detachPaymentMethod(input: $input) { ${RESULT} } }`, { input: { id: theirPm.id } });
    expect(detach.data.detachPaymentMethod).toMatchObject({ __typename: 'NotFoundError', code: 'resource_missing' });
    expect((await api.gql(UPDATE, { input: { id: c.id, defaultPaymentMethodId: theirPm.id } })).data.updateCustomer).toMatchObject({ __typename: 'NotFoundError', param: 'defaultPaymentMethodId' });
  });

  it('creates a portal session with its url; bad input is a typed error', async () => {
    const c = await customer();
    const PORTAL = `mutation($input: CreatePortalSessionInput!) { createPortalSession(input: $input) { ${RESULT} ... on CreatePortalSessionSuccess { portalSession { id url returnUrl locale expiresAt customer { id } } } } }`;
    const r = await api.gql(PORTAL, { input: { customerId: c.id, returnUrl: 'https://shop.example/account', locale: 'fr' } });
    const s = r.data.createPortalSession.portalSession;
    expect(s).toMatchObject({ id: expect.stringMatching(/^cps_/), returnUrl: 'https://shop.example/account', locale: 'fr', customer: { id: c.id } });
    // The url opens once, for the session cookie and the token-less portal (docs/payment-methods.md).
    const opened = await fetch(s.url, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    const cookie = opened.headers.getSetCookie().find((k) => k.startsWith('billing_portal='))!.split(';')[0]!;
    expect((await fetch(new URL(opened.headers.get('location')!, s.url), { headers: { cookie } })).status).toBe(200);
    const bad = await api.gql(PORTAL, { input: { customerId: c.id, returnUrl: 'javascript:alert(1)' } });
    expect(bad.data.createPortalSession).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'returnUrl' });
  });
});

// Billing lifecycle rules, "Recovery": a new default retries what past_due subscriptions owe.
describe('setDefaultPaymentMethod retries what a past_due subscription owes', () => {
  it('with an idempotencyKey: the open invoice is paid for real (payment succeeded), the subscription active; a replay charges nothing more', async () => {
    const m = await app.merchant(); // its own clock
    const c = (await m.post('/v1/customers', { email: `r${Math.random()}@example.com` })).body;
    const bad = (await complete((await setupIntent(c.id, m)).setupIntent.id, '4000000000009995', m)).setupIntent.paymentMethod;
    const p = (await m.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month', trial_period_days: 7 })).body;
    const sub = (await m.post('/v1/subscriptions', { customer_id: c.id, plan_id: p.id })).body;
    expect((await m.post('/v1/test-helpers/clock/advance', { to: sub.trial_end })).status).toBe(200);
    const due = (await m.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(due.status).toBe('past_due');
    expect((await m.get(`/v1/customers/${c.id}`)).body.default_payment_method_id).toBe(bad.id);
    const good = (await complete((await setupIntent(c.id, m)).setupIntent.id, '4242424242424242', m)).setupIntent.paymentMethod;

    const SET = `mutation($input: SetDefaultPaymentMethodInput!) { setDefaultPaymentMethod(input: $input) { ${RESULT} ... on SetDefaultPaymentMethodSuccess { customer { defaultPaymentMethod { id } } } } }`;
    const input = { customerId: c.id, paymentMethodId: good.id, idempotencyKey: `default-${c.id}` };
    const first = await m.gql(SET, { input });
    expect(first.data.setDefaultPaymentMethod, JSON.stringify(first)).toEqual({ __typename: 'SetDefaultPaymentMethodSuccess', customer: { defaultPaymentMethod: { id: good.id } } });
    const inv = (await m.get(`/v1/invoices/${due.latest_invoice_id}`)).body;
    expect(inv).toMatchObject({ status: 'paid', attempt_count: 2, last_payment_error: null });
    expect((await m.get(`/v1/payments/${inv.payment_id}`)).body).toMatchObject({ status: 'succeeded', payment_method_id: good.id });
    expect((await m.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
    const payments = (await m.get(`/v1/payments?customer_id=${c.id}&limit=100`)).body.data.length;
    expect((await m.gql(SET, { input })).data).toEqual(first.data);
    expect((await m.get(`/v1/payments?customer_id=${c.id}&limit=100`)).body.data.length).toBe(payments);
  });
});

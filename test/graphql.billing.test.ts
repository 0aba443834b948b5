// Plans, subscriptions and invoices over GraphQL: the same domain as /v1/subscriptions and
// /v1/invoices, errors as data with the same codes, every mutation replayable with its
// idempotencyKey, and the nested connections (Customer.subscriptions, Subscription.invoices)
// loaded in batches: the same SQL for 5 parents as for 50.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inBatches, queryCounter } from './helpers/query-count.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

let app: TestApp;
let api: Client;
let other: Client;

beforeAll(async () => {
  // No background worker: the batching counts are the request's own queries. Nothing here waits
  // for a job (charges of new subscriptions and plan changes run in the request).
  app = await startApp({ AUTH_CACHE_TTL_MS: '60000' }, { worker: false });
  api = await app.merchant();
  other = await app.merchant();
});
afterAll(() => app?.close());

const RESULT = `__typename ... on Error { code message param }`;
const DAY_MS = 86_400_000;
let keys = 0;
const key = (name: string) => `${name}-${++keys}-${Math.random().toString(36).slice(2)}`;

const SUB = `id status cancelAtPeriodEnd cancelAt cancelledAt currentPeriodStart currentPeriodEnd billingCycleAnchor trialStart trialEnd
  pausedAt resumesAt pauseCollection { resumesAt } applyWalletBalance metadata createdAt updatedAt
  customer { id } plan { id name } paymentMethod { id }
  latestInvoice { id number status billingReason total totalFormatted amountDue amountPaid amountRemaining currency
    lines { id description amount amountFormatted proration periodStart periodEnd } pdfUrl subscription { id } customer { id } payment { id status } }`;

const INVOICE = `id number status billingReason total amountDue amountPaid voidedAt lines { amount proration } subscription { id }`;

/** Runs a mutation whose input type is `${Name}Input` and returns its result (success or error). */
async function mutation(client: Client, name: string, input: Record<string, unknown>, selection: string) {
  const Name = name[0]!.toUpperCase() + name.slice(1);
  const r = await client.gql(`mutation($input: ${Name}Input!) { ${name}(input: $input) { ${RESULT} ... on ${Name}Success { ${selection} } } }`, { input });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data[name];
}

const subMutation = (client: Client, name: string, input: Record<string, unknown>) => mutation(client, name, input, `subscription { ${SUB} }`);

/** The mutation, then the same again with the same idempotencyKey: the first result, not a second run. */
async function replayed(client: Client, name: string, input: Record<string, unknown>, selection: string) {
  const first = await mutation(client, name, input, selection);
  const again = await mutation(client, name, input, selection);
  expect(again, `${name} replayed`).toEqual(stripFresh(first));
  return first;
}

/** pdfUrl is signed afresh on each read; everything else of a replay is the first result. */
function stripFresh(v: any): any {
  if (Array.isArray(v)) return v.map(stripFresh);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'pdfUrl' ? expect.stringMatching(/\/hosted\/invoices\/in_/) : stripFresh(x)]));
}

async function plan(client: Client, input: Record<string, unknown> = {}) {
  const r = await replayed(client, 'createPlan', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month', idempotencyKey: key('plan'), ...input }, 'plan { id name amount active }');
  expect(r.__typename).toBe('CreatePlanSuccess');
  return r.plan as { id: string };
}

async function customerWithCard(client: Client, card = '4242424242424242') {
  const c = (await client.post('/v1/customers', { email: `s${Math.random().toString(36).slice(2)}@example.com`, name: 'Ada Lovelace' })).body;
  const si = (await client.post('/v1/setup-intents', { customer_id: c.id })).body;
  const done = await client.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: card });
  expect(done.status).toBe(200);
  return { customer: c as { id: string }, pm: done.body.payment_method_id as string };
}

async function billingNow(client: Client): Promise<number> {
  const r = await client.gql('{ testClock { now } }');
  return new Date(r.data.testClock.now).getTime();
}

describe('subscriptions and invoices over GraphQL', () => {
  it('subscribes, bills, lists, finds by node id, and goes through every lifecycle action (each replayable)', async () => {
    const pro = await plan(api);
    const plus = await plan(api, { name: 'Pro Plus', amount: 5000 });
    const { customer } = await customerWithCard(api);

    // Without a trial: the first invoice is charged at once to the default card → active, paid.
    const created = await replayed(api, 'createSubscription', { customerId: customer.id, planId: pro.id, metadata: { seat: '1' }, idempotencyKey: key('create') }, `subscription { ${SUB} }`);
    expect(created.__typename).toBe('CreateSubscriptionSuccess');
    const sub = created.subscription;
    expect(sub).toMatchObject({
      status: 'active',
      customer: { id: customer.id },
      plan: { id: pro.id, name: 'Pro' },
      paymentMethod: null,
      metadata: { seat: '1' },
      cancelAtPeriodEnd: false,
      pauseCollection: null,
      trialEnd: null,
      applyWalletBalance: false,
      billingCycleAnchor: sub.currentPeriodStart,
    });
    expect(sub.id).toMatch(/^sub_/);
    const first = sub.latestInvoice;
    expect(first).toMatchObject({
      number: expect.stringMatching(/^INV-\d{6}$/),
      status: 'paid',
      billingReason: 'subscription_create',
      total: 3000,
      totalFormatted: '$30.00',
      amountPaid: 3000,
      amountRemaining: 0,
      currency: 'USD',
      lines: [{ amount: 3000, amountFormatted: '$30.00', proration: false, periodStart: sub.currentPeriodStart, periodEnd: sub.currentPeriodEnd }],
      subscription: { id: sub.id },
      customer: { id: customer.id },
      payment: { status: 'succeeded' },
    });
    expect(first.lines[0].id).toMatch(/^il_/);
    // The replay made no second subscription (nor a second charge).
    expect((await api.get(`/v1/subscriptions?customer_id=${customer.id}`)).body.data).toHaveLength(1);
    expect((await api.get(`/v1/payments?customer_id=${customer.id}`)).body.data).toHaveLength(1);
    // GraphQL shows what REST shows.
    const rest = (await api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(rest).toMatchObject({ status: 'active', latest_invoice_id: first.id, current_period_end: sub.currentPeriodEnd, billing_cycle_anchor: sub.billingCycleAnchor });

    // The PDF's signed address needs no credentials.
    const pdf = await fetch(first.pdfUrl);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toMatch(/^application\/pdf/);
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 4).toString('latin1')).toBe('%PDF');

    // Connections with REST's filters and totalCount.
    const lists = await api.gql(
      `query($c: ID!, $s: ID!) {
        active: subscriptions(customerId: $c, status: active) { totalCount edges { node { id } } }
        cancelled: subscriptions(customerId: $c, status: cancelled) { totalCount edges { node { id } } }
        byPlan: subscriptions(planId: "${plus.id}") { totalCount }
        paid: invoices(subscriptionId: $s, status: paid) { totalCount edges { node { id number } } }
        open: invoices(customerId: $c, status: open) { totalCount }
      }`,
      { c: customer.id, s: sub.id },
    );
    expect(lists.errors).toBeUndefined();
    expect(lists.data).toEqual({
      active: { totalCount: 1, edges: [{ node: { id: sub.id } }] },
      cancelled: { totalCount: 0, edges: [] },
      byPlan: { totalCount: 0 },
      paid: { totalCount: 1, edges: [{ node: { id: first.id, number: first.number } }] },
      open: { totalCount: 0 },
    });

    // node(id:) finds both by their prefixes; so do subscription(id:) and invoice(id:).
    const nodes = await api.gql(
      `query($s: ID!, $i: ID!) {
        s: node(id: $s) { __typename id ... on BillingSubscription { status plan { id } } }
        i: node(id: $i) { __typename id ... on Invoice { number lines { amount } } }
        subscription(id: $s) { id } invoice(id: $i) { id status }
      }`,
      { s: sub.id, i: first.id },
    );
    expect(nodes.data).toEqual({
      s: { __typename: 'BillingSubscription', id: sub.id, status: 'active', plan: { id: pro.id } },
      i: { __typename: 'Invoice', id: first.id, number: first.number, lines: [{ amount: 3000 }] },
      subscription: { id: sub.id },
      invoice: { id: first.id, status: 'paid' },
    });

    // Nested: the customer's subscriptions, the subscription's invoices.
    const nested = await api.gql(
      `query($c: ID!) { customer(id: $c) { subscriptions(first: 5) { totalCount edges { node { id invoices(first: 5) { totalCount edges { node { id status } } } } } } } }`,
      { c: customer.id },
    );
    expect(nested.data.customer.subscriptions).toEqual({
      totalCount: 1,
      edges: [{ node: { id: sub.id, invoices: { totalCount: 1, edges: [{ node: { id: first.id, status: 'paid' } }] } } }],
    });

    // Cancel at period end ⇄ reactivate.
    const atEnd = await replayed(api, 'cancelSubscription', { id: sub.id, cancelAtPeriodEnd: true, idempotencyKey: key('cancel-end') }, `subscription { ${SUB} }`);
    expect(atEnd.subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: true, cancelAt: sub.currentPeriodEnd, cancelledAt: null });
    const reactivated = await replayed(api, 'reactivateSubscription', { id: sub.id, idempotencyKey: key('reactivate') }, `subscription { ${SUB} }`);
    expect(reactivated.subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: false, cancelAt: null });
    expect(await subMutation(api, 'reactivateSubscription', { id: sub.id })).toMatchObject({ __typename: 'StateError', code: 'subscription_not_cancelling', param: null });

    // Pause with an automatic resume, then resume by hand.
    const resumesAt = new Date(Math.floor((await billingNow(api)) / 1000) * 1000 + 10 * DAY_MS).toISOString();
    const pauseKey = key('pause');
    const paused = await replayed(api, 'pauseSubscription', { id: sub.id, resumesAt, idempotencyKey: pauseKey }, `subscription { ${SUB} }`);
    expect(paused.subscription).toMatchObject({ status: 'paused', resumesAt, pauseCollection: { resumesAt }, pausedAt: expect.any(String) });
    // The same key with another instant is another request, not a replay.
    const otherInstant = new Date(Date.parse(resumesAt) + DAY_MS).toISOString();
    expect(await subMutation(api, 'pauseSubscription', { id: sub.id, resumesAt: otherInstant, idempotencyKey: pauseKey })).toMatchObject({
      __typename: 'IdempotencyError',
      code: 'idempotency_key_reused',
    });
    expect(await subMutation(api, 'pauseSubscription', { id: sub.id })).toMatchObject({ __typename: 'StateError', code: 'subscription_not_active' });
    const resumed = await replayed(api, 'resumeSubscription', { id: sub.id, idempotencyKey: key('resume') }, `subscription { ${SUB} }`);
    expect(resumed.subscription).toMatchObject({ status: 'active', pausedAt: null, resumesAt: null, pauseCollection: null });
    expect(await subMutation(api, 'resumeSubscription', { id: sub.id })).toMatchObject({ __typename: 'StateError', code: 'subscription_not_paused' });
    // A past resumesAt is refused with REST's code and the GraphQL field name.
    expect(await subMutation(api, 'pauseSubscription', { id: sub.id, resumesAt: '2001-01-01T00:00:00Z' })).toMatchObject({
      __typename: 'ValidationError',
      code: 'parameter_invalid',
      param: 'resumesAt',
    });

    // A plan change invoiced at once: a subscription_update invoice with the two proration lines, charged.
    const updated = await replayed(
      api,
      'updateSubscription',
      { id: sub.id, planId: plus.id, prorationBehavior: 'always_invoice', metadata: { seat: '2' }, idempotencyKey: key('update') },
      `subscription { ${SUB} }`,
    );
    expect(updated.__typename).toBe('UpdateSubscriptionSuccess');
    const upgrade = updated.subscription;
    expect(upgrade).toMatchObject({ status: 'active', plan: { id: plus.id }, metadata: { seat: '2' } });
    expect(upgrade.latestInvoice.id).not.toBe(first.id);
    expect(upgrade.latestInvoice).toMatchObject({ billingReason: 'subscription_update', status: 'paid' });
    // Credit for the unused time on Pro, charge for the rest of the period on Pro Plus. (Both lines
    // have the same created_at and random ids, so their order is not fixed: compare as a set.)
    expect(upgrade.latestInvoice.lines.map((l: any) => [Math.sign(l.amount), l.proration]).sort()).toEqual([
      [-1, true],
      [1, true],
    ]);
    expect(upgrade.latestInvoice.total).toBe(upgrade.latestInvoice.lines[0].amount + upgrade.latestInvoice.lines[1].amount);
    const invoices = await api.gql(`query($s: ID!) { invoices(subscriptionId: $s) { totalCount edges { node { id billingReason } } } }`, { s: sub.id });
    expect(invoices.data.invoices.totalCount).toBe(2); // the replay issued no third invoice
    expect(invoices.data.invoices.edges[0].node).toEqual({ id: upgrade.latestInvoice.id, billingReason: 'subscription_update' });

    // A paid invoice cannot be voided: a StateError as data, replayed as the same error.
    const voidKey = key('void-paid');
    const notOpen = await replayed(api, 'voidInvoice', { id: first.id, idempotencyKey: voidKey }, `invoice { ${INVOICE} }`);
    expect(notOpen).toMatchObject({ __typename: 'StateError', code: 'invoice_not_open', param: null });

    // Cancel now: final. The replay answers the first result; without the key it is refused.
    const cancelled = await replayed(api, 'cancelSubscription', { id: sub.id, idempotencyKey: key('cancel-now') }, `subscription { ${SUB} }`);
    expect(cancelled.subscription).toMatchObject({ status: 'cancelled', cancelledAt: expect.any(String) });
    expect(await subMutation(api, 'cancelSubscription', { id: sub.id })).toMatchObject({ __typename: 'StateError', code: 'subscription_cancelled' });
    expect(await subMutation(api, 'updateSubscription', { id: sub.id, metadata: { a: 'b' } })).toMatchObject({ __typename: 'StateError', code: 'subscription_cancelled' });
    const after = await api.gql(`query($c: ID!) { customer(id: $c) { active: subscriptions(status: active) { totalCount } cancelled: subscriptions(status: cancelled) { totalCount } } }`, {
      c: customer.id,
    });
    expect(after.data.customer).toEqual({ active: { totalCount: 0 }, cancelled: { totalCount: 1 } });
  });

  it('voids the open invoice of an incomplete subscription (the card fails), replayably', async () => {
    const p = await plan(api);
    const { customer, pm } = await customerWithCard(api, '4000000000009995');
    const r = await subMutation(api, 'createSubscription', { customerId: customer.id, planId: p.id, paymentMethodId: pm });
    expect(r.subscription).toMatchObject({ status: 'incomplete', paymentMethod: { id: pm }, latestInvoice: { status: 'open', amountRemaining: 3000, payment: { status: 'failed' } } });
    const id = r.subscription.latestInvoice.id;
    const open = await api.gql(`query($c: ID!) { invoices(customerId: $c, status: open) { totalCount edges { node { id } } } }`, { c: customer.id });
    expect(open.data.invoices).toEqual({ totalCount: 1, edges: [{ node: { id } }] });
    const voided = await replayed(api, 'voidInvoice', { id, idempotencyKey: key('void') }, `invoice { ${INVOICE} }`);
    expect(voided).toMatchObject({ __typename: 'VoidInvoiceSuccess', invoice: { id, status: 'void', voidedAt: expect.any(String), subscription: { id: r.subscription.id } } });
    expect(await mutation(api, 'voidInvoice', { id }, 'invoice { id }')).toMatchObject({ __typename: 'StateError', code: 'invoice_not_open' });
    expect((await api.get(`/v1/invoices/${id}`)).body.status).toBe('void');
  });

  it('cancelSubscription with invoiceNow charges the open invoice at once (then the retry schedule); without it collection stops', async () => {
    // A merchant of its own: this moves its clock.
    const own = await app.merchant();
    const p = await plan(own, { trialPeriodDays: 7 });
    const { customer } = await customerWithCard(own, '4000000000009995');
    const mk = async () => (await subMutation(own, 'createSubscription', { customerId: customer.id, planId: p.id })).subscription;
    const [now, stop] = [await mk(), await mk()];
    const trialEnd = Date.parse(now.trialEnd);
    expect((await own.post('/v1/test-helpers/clock/advance', { to: new Date(trialEnd + 3600_000).toISOString() })).status).toBe(200);
    const invoiceOf = async (id: string) => (await own.get(`/v1/invoices/${(await own.get(`/v1/subscriptions/${id}`)).body.latest_invoice_id}`)).body;
    expect(await invoiceOf(now.id)).toMatchObject({ status: 'open', attempt_count: 1 });

    const cancelled = await replayed(own, 'cancelSubscription', { id: now.id, invoiceNow: true, idempotencyKey: key('cancel-invoice-now') }, `subscription { ${SUB} }`);
    expect(cancelled.subscription).toMatchObject({ status: 'cancelled', latestInvoice: { status: 'open' } });
    // One attempt at once (the replay made no other), the next on the schedule: 3 days after the first failure.
    expect(await invoiceOf(now.id)).toMatchObject({ status: 'open', attempt_count: 2, next_payment_attempt: new Date(Date.parse(now.trialEnd) + 3 * DAY_MS).toISOString() });

    const stopped = await subMutation(own, 'cancelSubscription', { id: stop.id, idempotencyKey: key('cancel-stop') });
    expect(stopped.subscription).toMatchObject({ status: 'cancelled' });
    expect(await invoiceOf(stop.id)).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: null });
    expect((await own.post('/v1/test-helpers/clock/advance', { to: new Date(trialEnd + 10 * DAY_MS).toISOString() })).status).toBe(200);
    expect(await invoiceOf(stop.id)).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: null });
    expect(await invoiceOf(now.id)).toMatchObject({ status: 'uncollectible', attempt_count: 4 });
    // invoiceNow applies to an immediate cancel only.
    const other = await mk();
    expect(await subMutation(own, 'cancelSubscription', { id: other.id, cancelAtPeriodEnd: true, invoiceNow: true })).toMatchObject({
      __typename: 'ValidationError',
      code: 'parameter_invalid',
      param: 'invoiceNow',
    });
  });

  it('voids the uncollectible invoice of an unpaid subscription, which is active again (issue 23), replayably', async () => {
    // A merchant of its own: this moves its clock through a whole dunning.
    const own = await app.merchant();
    const p = await plan(own, { trialPeriodDays: 7 });
    const { customer } = await customerWithCard(own, '4000000000009995');
    const r = await subMutation(own, 'createSubscription', { customerId: customer.id, planId: p.id });
    expect(r.subscription.status).toBe('trialing');
    // The trial ends, the first charge and its retries 1, 3 and 5 days later are declined.
    const trialEnd = Date.parse(r.subscription.trialEnd);
    for (const at of [trialEnd, trialEnd + DAY_MS, trialEnd + 3 * DAY_MS, trialEnd + 5 * DAY_MS]) {
      expect((await own.post('/v1/test-helpers/clock/advance', { to: new Date(at).toISOString() })).status).toBe(200);
    }
    const unpaid = await own.gql(`query($id: ID!) { subscription(id: $id) { status currentPeriodEnd latestInvoice { id status } } }`, { id: r.subscription.id });
    expect(unpaid.data.subscription).toMatchObject({ status: 'unpaid', latestInvoice: { status: 'uncollectible' } });
    const id = unpaid.data.subscription.latestInvoice.id;

    const selection = `invoice { ${INVOICE} subscription { id status currentPeriodEnd } }`;
    const voided = await replayed(own, 'voidInvoice', { id, idempotencyKey: key('void-uncollectible') }, selection);
    expect(voided).toMatchObject({
      __typename: 'VoidInvoiceSuccess',
      invoice: { id, status: 'void', voidedAt: expect.any(String), subscription: { id: r.subscription.id, status: 'active', currentPeriodEnd: unpaid.data.subscription.currentPeriodEnd } },
    });
    expect(await mutation(own, 'voidInvoice', { id }, 'invoice { id }')).toMatchObject({ __typename: 'StateError', code: 'invoice_not_open' });
    // The same events as through REST: the void and the subscription's change, with its previous status.
    const updated = (await own.get('/v1/events?type=subscription.updated&limit=1')).body.data[0];
    expect(updated.data).toMatchObject({ object: { id: r.subscription.id, status: 'active' }, previous_attributes: { status: 'unpaid' } });
    expect((await own.get('/v1/events?type=invoice.voided')).body.data.map((e: any) => e.data.object.id)).toEqual([id]);
    // The replay did the work once.
    expect((await own.get('/v1/events?type=subscription.updated')).body.data.filter((e: any) => e.data.previous_attributes?.status === 'unpaid')).toHaveLength(1);
  });

  it('takes a trial as trialEnd (DateTime) or trialPeriodDays, and changes trialEnd while trialing', async () => {
    const p = await plan(api, { trialPeriodDays: 14 });
    const { customer } = await customerWithCard(api);
    const byPlan = await subMutation(api, 'createSubscription', { customerId: customer.id, planId: p.id });
    expect(byPlan.subscription).toMatchObject({ status: 'trialing', latestInvoice: null });
    expect(Date.parse(byPlan.subscription.trialEnd) - Date.parse(byPlan.subscription.trialStart)).toBe(14 * DAY_MS);

    const trialEnd = new Date(Math.floor((await billingNow(api)) / 1000) * 1000 + 3 * DAY_MS).toISOString();
    const explicit = await replayed(api, 'createSubscription', { customerId: customer.id, planId: p.id, trialEnd, cancelAtPeriodEnd: true, idempotencyKey: key('trial') }, `subscription { ${SUB} }`);
    expect(explicit.subscription).toMatchObject({ status: 'trialing', trialEnd, currentPeriodEnd: trialEnd, cancelAtPeriodEnd: true, cancelAt: trialEnd });
    const later = new Date(Date.parse(trialEnd) + 2 * DAY_MS).toISOString();
    const moved = await replayed(api, 'updateSubscription', { id: explicit.subscription.id, trialEnd: later, idempotencyKey: key('trial-move') }, `subscription { ${SUB} }`);
    expect(moved.subscription).toMatchObject({ trialEnd: later, currentPeriodEnd: later, billingCycleAnchor: later, cancelAt: later });
    expect((await api.get(`/v1/subscriptions/${explicit.subscription.id}`)).body.trial_end).toBe(later);

    const both = await subMutation(api, 'createSubscription', { customerId: customer.id, planId: p.id, trialEnd, trialPeriodDays: 3 });
    expect(both).toMatchObject({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'trialEnd' });
    const active = (await subMutation(api, 'createSubscription', { customerId: customer.id, planId: p.id, trialPeriodDays: 0 })).subscription;
    expect(active.status).toBe('active');
    expect(await subMutation(api, 'updateSubscription', { id: active.id, trialEnd: later })).toMatchObject({ __typename: 'StateError', code: 'subscription_not_trialing', param: 'trialEnd' });
  });

  it('answers typed errors with REST’s codes: unknown or archived plan, another merchant’s records', async () => {
    const p = await plan(api);
    const { customer, pm } = await customerWithCard(api);
    expect(await subMutation(api, 'createSubscription', { customerId: customer.id, planId: 'plan_nope' })).toMatchObject({
      __typename: 'NotFoundError',
      code: 'resource_missing',
      param: 'planId',
    });
    expect(await subMutation(api, 'createSubscription', { customerId: 'cus_nope', planId: p.id })).toMatchObject({ __typename: 'NotFoundError', param: 'customerId' });
    const archived = await replayed(api, 'archivePlan', { id: p.id, idempotencyKey: key('archive') }, 'plan { id active archivedAt }');
    expect(archived.plan).toMatchObject({ active: false, archivedAt: expect.any(String) });
    expect(await subMutation(api, 'createSubscription', { customerId: customer.id, planId: p.id })).toMatchObject({
      __typename: 'StateError',
      code: 'plan_archived',
      param: 'planId',
    });

    // Another merchant's subscription and invoice: not found (as data), null from the queries.
    const live = await plan(api);
    const sub = (await subMutation(api, 'createSubscription', { customerId: customer.id, planId: live.id, paymentMethodId: pm })).subscription;
    for (const name of ['cancelSubscription', 'reactivateSubscription', 'pauseSubscription', 'resumeSubscription', 'updateSubscription']) {
      expect(await subMutation(other, name, { id: sub.id, idempotencyKey: key(`theirs-${name}`) }), name).toMatchObject({ __typename: 'NotFoundError', code: 'resource_missing' });
    }
    expect(await mutation(other, 'voidInvoice', { id: sub.latestInvoice.id }, 'invoice { id }')).toMatchObject({ __typename: 'NotFoundError', code: 'resource_missing' });
    const theirs = await other.gql(
      `query($s: ID!, $i: ID!) { subscription(id: $s) { id } invoice(id: $i) { id } a: node(id: $s) { id } b: node(id: $i) { id } subscriptions { totalCount } invoices { totalCount } }`,
      { s: sub.id, i: sub.latestInvoice.id },
    );
    expect(theirs.data).toEqual({ subscription: null, invoice: null, a: null, b: null, subscriptions: { totalCount: 0 }, invoices: { totalCount: 0 } });
    // Their plan cannot be subscribed to either.
    const theirPlan = await plan(other);
    expect(await subMutation(api, 'createSubscription', { customerId: customer.id, planId: theirPlan.id })).toMatchObject({ __typename: 'NotFoundError', param: 'planId' });
    // And their saved method cannot be charged.
    const theirCard = await customerWithCard(other);
    expect(await subMutation(api, 'updateSubscription', { id: sub.id, paymentMethodId: theirCard.pm })).toMatchObject({ __typename: 'NotFoundError', param: 'paymentMethodId' });
  });

  it('validates list arguments as REST validates the query string', async () => {
    const cases: [string, string, string][] = [
      ['{ invoices(first: 1000) { edges { cursor } } }', '/v1/invoices?limit=1000', 'first'],
      ['{ subscriptions(first: 0) { edges { cursor } } }', '/v1/subscriptions?limit=0', 'first'],
      [`{ subscriptions(customerId: "${'x'.repeat(70)}") { edges { cursor } } }`, `/v1/subscriptions?customer_id=${'x'.repeat(70)}`, 'customerId'],
      ['{ invoices(after: "nope") { edges { cursor } } }', '/v1/invoices?after=nope', 'after'],
      ['{ customers(first: 1) { edges { node { subscriptions(first: 101) { edges { cursor } } } } } }', '/v1/subscriptions?limit=101', 'first'],
    ];
    await api.post('/v1/customers', { email: 'list-args@example.com' });
    for (const [query, path, param] of cases) {
      const rest = await api.get(path);
      expect(rest.status, path).toBe(400);
      const gql = await api.gql(query);
      expect(gql.data ?? null, query).toBeNull();
      expect(gql.errors?.[0].extensions, query).toMatchObject({ code: rest.body.error.code, param });
      expect(rest.body.error.code).toBe('parameter_invalid');
    }
    // An impossible status never reaches the resolver: it is not a value of the enum.
    const bad = await api.gql('{ subscriptions(status: ended) { totalCount } }');
    expect(bad.errors?.[0].message).toMatch(/SubscriptionStatus/);
  });
});

// ---------------------------------------------------------------- batching

const PARENTS = 50;

describe('Customer.subscriptions and Subscription.invoices cost the same SQL for 5 parents or 50', () => {
  let b: Client;
  const expectConstant = queryCounter(() => app, () => b, PARENTS);

  beforeAll(async () => {
    b = await app.merchant();
    const pro = (await b.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month' })).body;
    const plus = (await b.post('/v1/plans', { name: 'Plus', amount: 5000, currency: 'USD', interval: 'month' })).body;
    // Each customer: an active subscription with two paid invoices, and a trialing one without.
    await inBatches(PARENTS, async () => {
      const { customer } = await customerWithCard(b);
      const s = await b.post('/v1/subscriptions', { customer_id: customer.id, plan_id: pro.id });
      expect(s.body.status).toBe('active');
      const u = await b.patch(`/v1/subscriptions/${s.body.id}`, { plan_id: plus.id, proration_behavior: 'always_invoice' });
      expect(u.status).toBe(200);
      expect((await b.post('/v1/subscriptions', { customer_id: customer.id, plan_id: pro.id, trial_period_days: 7 })).body.status).toBe('trialing');
    });
  }, 300_000);

  it('customers → subscriptions (with totalCount, plan, customer, method, latest invoice) → invoices', async () => {
    const q = `query($n: Int) { customers(first: $n) { edges { node { id
      subscriptions(first: 1) { totalCount pageInfo { hasNextPage endCursor } edges { node { id status customer { id } plan { name } paymentMethod { id }
        latestInvoice { id status lines { amount } }
        invoices(first: 1) { totalCount pageInfo { hasNextPage } edges { node { id billingReason lines { amount proration } subscription { id } } } } } } } } } } }`;
    const { data } = await expectConstant(q, (d, n) => {
      expect(d.customers.edges).toHaveLength(n);
      for (const e of d.customers.edges) {
        const subs = e.node.subscriptions;
        expect(subs.totalCount).toBe(2);
        expect(subs.pageInfo.hasNextPage).toBe(true);
        // Newest first: the trialing one, no invoices yet.
        expect(subs.edges[0].node).toMatchObject({ status: 'trialing', customer: { id: e.node.id }, plan: { name: 'Pro' }, latestInvoice: null, invoices: { totalCount: 0 } });
      }
    });
    // The next page of one customer's subscriptions continues with its cursor: the active one and its invoices.
    const one = data.customers.edges[7].node;
    const rest = (await b.get(`/v1/subscriptions?customer_id=${one.id}`)).body.data.map((s: any) => s.id);
    expect(one.subscriptions.edges.map((e: any) => e.node.id)).toEqual(rest.slice(0, 1));
    const next = await b.gql(`query($id: ID!, $after: String) { customer(id: $id) { subscriptions(first: 1, after: $after) { edges { node { id } } pageInfo { hasNextPage } } } }`, {
      id: one.id,
      after: one.subscriptions.pageInfo.endCursor,
    });
    expect(next.data.customer.subscriptions).toEqual({ edges: [{ node: { id: rest[1] } }], pageInfo: { hasNextPage: false } });
    // Filters apply per parent.
    const active = await b.gql(`query($id: ID!) { customer(id: $id) { subscriptions(status: active) { totalCount edges { node { id status } } } } }`, { id: one.id });
    expect(active.data.customer.subscriptions).toEqual({ totalCount: 1, edges: [{ node: { id: rest[1], status: 'active' } }] });
  });

  it('subscriptions → invoices (with status filter) and the latest invoice', async () => {
    const q = `query($n: Int) { subscriptions(first: $n, status: active) { totalCount edges { node { id
      latestInvoice { id billingReason lines { amount } }
      paid: invoices(first: 1, status: paid) { totalCount pageInfo { hasNextPage } edges { node { id billingReason status lines { amount proration } } } }
      void: invoices(status: void) { totalCount edges { node { id } } } } } } }`;
    const { data } = await expectConstant(q, (d, n) => {
      expect(d.subscriptions.edges).toHaveLength(n);
      expect(d.subscriptions.totalCount).toBe(PARENTS);
      for (const e of d.subscriptions.edges) {
        const s = e.node;
        expect(s.paid.totalCount).toBe(2);
        expect(s.paid.pageInfo.hasNextPage).toBe(true);
        // The newest invoice is the plan change's, and it is the latest invoice.
        expect(s.paid.edges[0].node).toMatchObject({ id: s.latestInvoice.id, billingReason: 'subscription_update', status: 'paid' });
        expect(s.paid.edges[0].node.lines.map((l: any) => l.proration)).toEqual([true, true]);
        expect(s.void).toEqual({ totalCount: 0, edges: [] });
      }
    });
    const one = data.subscriptions.edges[3].node;
    const rest = (await b.get(`/v1/invoices?subscription_id=${one.id}`)).body.data.map((i: any) => i.id);
    expect(one.paid.edges.map((e: any) => e.node.id)).toEqual(rest.slice(0, 1));
    expect(rest).toHaveLength(2);
  });
});

// An endpoint's own delivery attempts: GET /v1/webhook-endpoints/:id/delivery-attempts and
// GraphQL WebhookEndpoint.deliveryAttempts — newest first, keyset pages, a status filter, the
// same cursors on both surfaces, 404 (null) for another merchant's endpoint, and the nested
// connection's SQL does not grow with the number of endpoints.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { listAll } from './helpers/list.ts';
import { inBatches, queryCounter } from './helpers/query-count.ts';

let app: TestApp;
let m: Client;
let other: Client;
let busy: any; // subscribed to every event: 30 attempts (25 failed, 5 pending)
let rare: any; // subscribed to payment.succeeded only: 1 attempt, older than the busy endpoint's last 29
let theirs: any; // the other merchant's endpoint
const ENDPOINTS = 12;

const newestFirst = (a: any, b: any) => (b.created_at === a.created_at ? (b.id < a.id ? -1 : b.id > a.id ? 1 : 0) : b.created_at < a.created_at ? -1 : 1);

beforeAll(async () => {
  // No background worker: attempts stay pending until the test changes them, and the SQL counted is the request's own.
  app = await startApp({ AUTH_CACHE_TTL_MS: '60000' }, { worker: false });
  m = await app.merchant();
  other = await app.merchant();
  busy = (await m.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/all' })).body;
  rare = (await m.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/paid', events: ['payment.succeeded'] })).body;
  theirs = (await other.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/theirs' })).body;
  await other.post('/v1/customers', { email: 'theirs@example.com' });
  const c = (await m.post('/v1/customers', { email: 'first@example.com' })).body;
  const p = (await m.post('/v1/payments', { amount: 500, currency: 'USD', customer_id: c.id, redirect_url: 'https://shop.example/r' })).body;
  await m.post(`/v1/test-helpers/payments/${p.id}/complete`, { outcome: 'succeeded' });
  await inBatches(20, (i) => m.post('/v1/customers', { email: `busy${i}@example.com` }), 5);
  // Disabling fails the pending attempts (cancelled); enabled again, new events get pending ones.
  expect((await m.patch(`/v1/webhook-endpoints/${busy.id}`, { status: 'disabled' })).status).toBe(200);
  expect((await m.patch(`/v1/webhook-endpoints/${busy.id}`, { status: 'active' })).status).toBe(200);
  for (let i = 0; i < 5; i++) await m.post('/v1/customers', { email: `later${i}@example.com` });
}, 120_000);
afterAll(() => app?.close());

/** Every attempt to `endpointId`, gathered event by event through the event's own list (the old way). */
async function attemptsViaEvents(endpointId: string) {
  const out: any[] = [];
  for (const e of await listAll(m, '/v1/events')) out.push(...(await listAll(m, `/v1/events/${e.id}/delivery-attempts?endpoint_id=${endpointId}`)));
  return out.sort(newestFirst);
}

describe('GET /v1/webhook-endpoints/:id/delivery-attempts', () => {
  it("lists the endpoint's own attempts newest first, page by page, and the cursors page back too", async () => {
    const expected = await attemptsViaEvents(busy.id);
    // customer.created ×22, payment.created, payment.succeeded (+ customer.updated? whatever the events are: all of them)
    expect(expected.length).toBeGreaterThanOrEqual(27);
    const pages: any[] = [];
    const cursors: (string | undefined)[] = [undefined];
    for (;;) {
      const after = cursors[cursors.length - 1];
      const r = await m.get(`/v1/webhook-endpoints/${busy.id}/delivery-attempts?limit=7${after ? `&after=${after}` : ''}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.object).toBe('list');
      pages.push(r.body);
      if (!r.body.has_more) break;
      expect(r.body.data).toHaveLength(7);
      cursors.push(r.body.next_cursor);
    }
    expect(pages.flatMap((p) => p.data)).toEqual(expected);
    expect(pages.at(-1).next_cursor).toBeNull();
    for (const a of expected) expect(a).toMatchObject({ object: 'delivery_attempt', endpoint_id: busy.id });
    // Back: each earlier cursor gives its page again (what the dashboard's "Previous page" does).
    for (let i = cursors.length - 2; i >= 0; i--) {
      const after = cursors[i];
      const r = await m.get(`/v1/webhook-endpoints/${busy.id}/delivery-attempts?limit=7${after ? `&after=${after}` : ''}`);
      expect(r.body.data).toEqual(pages[i].data);
    }
  });

  it('shows an endpoint its own attempts however many newer events went elsewhere', async () => {
    const r = await m.get(`/v1/webhook-endpoints/${rare.id}/delivery-attempts?limit=5`);
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    const [a] = r.body.data;
    expect(a).toMatchObject({ endpoint_id: rare.id, status: 'pending', attempt_number: 1 });
    expect((await m.get(`/v1/events/${a.event_id}`)).body.type).toBe('payment.succeeded');
    // the newest 10 events do not include it: paging events (the old dashboard) showed nothing
    expect((await m.get('/v1/events?limit=10')).body.data.map((e: any) => e.id)).not.toContain(a.event_id);
  });

  it('filters by status', async () => {
    const all = await listAll(m, `/v1/webhook-endpoints/${busy.id}/delivery-attempts`);
    for (const status of ['failed', 'pending', 'succeeded'] as const) {
      const got = await listAll(m, `/v1/webhook-endpoints/${busy.id}/delivery-attempts?status=${status}`);
      expect(got).toEqual(all.filter((a) => a.status === status));
    }
    expect((await listAll(m, `/v1/webhook-endpoints/${busy.id}/delivery-attempts?status=pending`)).length).toBe(5);
    const failed = await m.get(`/v1/webhook-endpoints/${busy.id}/delivery-attempts?status=failed&limit=3`);
    expect(failed.body.data.map((a: any) => a.response_body)).toEqual(Array(3).fill('cancelled: endpoint disabled'));
    const bad = await m.get(`/v1/webhook-endpoints/${busy.id}/delivery-attempts?status=paused`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'status' });
    const unknown = await m.get(`/v1/webhook-endpoints/${busy.id}/delivery-attempts?event_id=evt_x`);
    expect(unknown.body.error).toMatchObject({ code: 'parameter_unknown', param: 'event_id' });
    expect((await m.get(`/v1/webhook-endpoints/${busy.id}/delivery-attempts?limit=0`)).body.error).toMatchObject({ code: 'parameter_invalid', param: 'limit' });
    expect((await m.get(`/v1/webhook-endpoints/${busy.id}/delivery-attempts?after=nope`)).body.error).toMatchObject({ code: 'parameter_invalid', param: 'after' });
  });

  it("answers 404 for an unknown, deleted or other merchant's endpoint, and never shows its attempts", async () => {
    const mine = await m.get(`/v1/webhook-endpoints/${theirs.id}/delivery-attempts`);
    expect(mine.status).toBe(404);
    expect(mine.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing', param: 'id' });
    expect((await m.get(`/v1/webhook-endpoints/${theirs.id}`)).body).toEqual({ ...mine.body, error: { ...mine.body.error, request_id: expect.any(String) } });
    expect((await m.get('/v1/webhook-endpoints/we_0000000000000000000000/delivery-attempts')).status).toBe(404);
    // the owner sees them
    const own = await other.get(`/v1/webhook-endpoints/${theirs.id}/delivery-attempts`);
    expect(own.status).toBe(200);
    expect(own.body.data.length).toBeGreaterThan(0);
    // nothing of theirs in any of ours
    const ids = new Set(own.body.data.map((a: any) => a.id));
    for (const e of [busy, rare]) for (const a of await listAll(m, `/v1/webhook-endpoints/${e.id}/delivery-attempts`)) expect(ids.has(a.id)).toBe(false);
    const gone = (await other.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/gone' })).body;
    await other.del(`/v1/webhook-endpoints/${gone.id}`);
    expect((await other.get(`/v1/webhook-endpoints/${gone.id}/delivery-attempts`)).status).toBe(404);
  });
});

describe('GraphQL WebhookEndpoint.deliveryAttempts', () => {
  const Q = `query($id: ID!, $first: Int, $after: String, $status: DeliveryAttemptStatus) {
    webhookEndpoint(id: $id) { id deliveryAttempts(first: $first, after: $after, status: $status) {
      totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id status attemptNumber event { id } endpoint { id } } } } } }`;

  it('pages exactly as REST does, with the same cursors, and counts', async () => {
    for (const status of [undefined, 'failed', 'pending'] as const) {
      const qs = status ? `&status=${status}` : '';
      let after: string | undefined;
      let restAfter: string | undefined;
      for (let guard = 0; guard < 20; guard++) {
        const g = await m.gql(Q, { id: busy.id, first: 6, after, status });
        expect(g.errors).toBeUndefined();
        const conn = g.data.webhookEndpoint.deliveryAttempts;
        const rest = (await m.get(`/v1/webhook-endpoints/${busy.id}/delivery-attempts?limit=6${qs}${restAfter ? `&after=${restAfter}` : ''}`)).body;
        expect(conn.edges.map((e: any) => e.node.id)).toEqual(rest.data.map((a: any) => a.id));
        expect(conn.pageInfo.hasNextPage).toBe(rest.has_more);
        for (const e of conn.edges) expect(e.node).toMatchObject({ endpoint: { id: busy.id }, ...(status ? { status } : {}) });
        if (!rest.has_more) break;
        expect(conn.pageInfo.endCursor).toBe(rest.next_cursor);
        after = conn.pageInfo.endCursor;
        restAfter = rest.next_cursor;
      }
      const total = (await listAll(m, `/v1/webhook-endpoints/${busy.id}/delivery-attempts${status ? `?status=${status}` : ''}`)).length;
      expect((await m.gql(Q, { id: busy.id, first: 1, status })).data.webhookEndpoint.deliveryAttempts.totalCount).toBe(total);
    }
    const rareConn = (await m.gql(Q, { id: rare.id })).data.webhookEndpoint.deliveryAttempts;
    expect(rareConn.totalCount).toBe(1);
    expect(rareConn.edges[0].node.status).toBe('pending');
  });

  it("is null for another merchant's endpoint; bad arguments are refused as REST refuses them", async () => {
    const g = await m.gql(Q, { id: theirs.id });
    expect(g.errors).toBeUndefined();
    expect(g.data.webhookEndpoint).toBeNull();
    const first = await m.gql(Q, { id: busy.id, first: 101 });
    expect(first.errors?.[0]).toMatchObject({ message: 'Invalid first: must be an integer between 1 and 100.', extensions: { code: 'parameter_invalid', param: 'first' } });
    const status = await m.gql(Q, { id: busy.id, status: 'paused' });
    expect(status.errors?.[0]).toMatchObject({ message: "Invalid status: must be one of 'failed', 'pending', 'succeeded'.", extensions: { code: 'parameter_invalid', param: 'status' } });
  });

  it('costs the same SQL for 5 endpoints or 12', async () => {
    const many = await app.merchant();
    await inBatches(ENDPOINTS, (i) => many.post('/v1/webhook-endpoints', { url: `https://hooks.example.com/n${i}` }), 4);
    for (let i = 0; i < 3; i++) await many.post('/v1/customers', { email: `n${i}@example.com` });
    const expectConstant = queryCounter(() => app, () => many, ENDPOINTS);
    await expectConstant(
      `query($n: Int) { webhookEndpoints(first: $n) { edges { node { id
        deliveryAttempts(first: 2, status: pending) { totalCount pageInfo { hasNextPage } edges { node { id status event { id type } } } } } } } }`,
      (d, n) => {
        expect(d.webhookEndpoints.edges).toHaveLength(n);
        for (const e of d.webhookEndpoints.edges) {
          expect(e.node.deliveryAttempts.totalCount).toBe(3);
          expect(e.node.deliveryAttempts.edges).toHaveLength(2);
          expect(e.node.deliveryAttempts.pageInfo.hasNextPage).toBe(true);
          for (const a of e.node.deliveryAttempts.edges) expect(a.node.event.type).toBe('customer.created');
        }
      },
    );
  });
});

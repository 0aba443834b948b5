// Webhook endpoints and delivery against a real receiver on 127.0.0.1.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

class Receiver {
  server: Server;
  received: Received[] = [];
  status = 200;
  url = '';
  constructor() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body, at: Date.now() });
        res.writeHead(this.status, { 'content-type': 'text/plain' }).end(this.status < 300 ? 'ok' : 'boom '.repeat(20_000));
      });
    });
  }
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }
  async waitFor(n: number, ms = 5000) {
    const end = Date.now() + ms;
    while (this.received.length < n && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    return this.received;
  }
}

let app: TestApp;
const receivers: Receiver[] = [];
beforeAll(async () => {
  app = await startApp({ BILLING_ALLOW_HTTP_WEBHOOKS: '1' });
});
afterAll(async () => {
  for (const r of receivers) r.server.close();
  await app?.close();
});

async function receiver() {
  const r = await new Receiver().start();
  receivers.push(r);
  return r;
}

async function endpoint(m: Client, rcv: Receiver, extra: Record<string, unknown> = {}) {
  const r = await m.post('/v1/webhook-endpoints', { url: rcv.url, ...extra });
  expect(r.status).toBe(201);
  return r.body;
}

const attemptsOf = async (m: Client, eventId: string) => (await m.get(`/v1/events/${eventId}/delivery-attempts?limit=100`)).body.data;

describe('webhook endpoints', () => {
  it('creates an endpoint with a secret shown once, and validates input', async () => {
    const m = await app.merchant();
    const rcv = await receiver();
    const e = await endpoint(m, rcv, { events: ['customer.created', 'payment.succeeded'], description: 'CRM sync' });
    expect(e).toMatchObject({ object: 'webhook_endpoint', url: rcv.url, events: ['customer.created', 'payment.succeeded'], description: 'CRM sync', status: 'active' });
    expect(e.id).toMatch(/^we_/);
    expect(e.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = (await m.get(`/v1/webhook-endpoints/${e.id}`)).body;
    expect(got.secret).toBeUndefined();
    expect((await m.get('/v1/webhook-endpoints')).body.data.map((x: any) => x.id)).toEqual([e.id]);

    for (const [body, code, param] of [
      [{}, 'parameter_missing', 'url'],
      [{ url: 'http://example.com/hook' }, 'parameter_invalid', 'url'],
      [{ url: 'ftp://example.com/hook' }, 'parameter_invalid', 'url'],
      [{ url: 'https://10.0.0.5/hook' }, 'parameter_invalid', 'url'],
      [{ url: 'https://169.254.169.254/latest' }, 'parameter_invalid', 'url'],
      [{ url: 'not a url' }, 'parameter_invalid', 'url'],
      [{ url: rcv.url, events: ['customer.exploded'] }, 'parameter_invalid', 'events[0]'],
      [{ url: rcv.url, secret: 'mine' }, 'parameter_unknown', 'secret'],
    ] as const) {
      const r = await m.post('/v1/webhook-endpoints', body);
      expect({ body, code: r.body.error?.code, param: r.body.error?.param }).toEqual({ body, code, param });
    }
    const upd = await m.patch(`/v1/webhook-endpoints/${e.id}`, { events: [], description: null });
    expect(upd.body).toMatchObject({ events: [], description: null });
    expect((await m.patch(`/v1/webhook-endpoints/${e.id}`, { status: 'paused' })).status).toBe(400);
  });

  it('without BILLING_ALLOW_HTTP_WEBHOOKS only https:// is accepted', async () => {
    const strict = await startApp({ BILLING_ALLOW_HTTP_WEBHOOKS: '0' }, { worker: false });
    try {
      const m = await strict.merchant();
      const r = await m.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hook' });
      expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
      expect((await m.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/x' })).status).toBe(201);
    } finally {
      await strict.close();
    }
  });
});

describe('delivery', () => {
  it('delivers a signed event within a second of the change; the signature verifies', async () => {
    const m = await app.merchant();
    const rcv = await receiver();
    const e = await endpoint(m, rcv);
    const t0 = Date.now();
    const c = (await m.post('/v1/customers', { email: 'hook@example.com' })).body;
    const [got] = await rcv.waitFor(1);
    expect(got).toBeDefined();
    expect(got!.at - t0).toBeLessThan(1000);
    const evt = JSON.parse(got!.body);
    expect(evt).toMatchObject({ object: 'event', type: 'customer.created', data: { object: { id: c.id, email: 'hook@example.com' } } });
    expect(got!.headers['webhook-id']).toBe(evt.id);
    expect(got!.headers['content-type']).toBe('application/json');
    const verified = new Webhook(e.secret).verify(got!.body, {
      'webhook-id': String(got!.headers['webhook-id']),
      'webhook-timestamp': String(got!.headers['webhook-timestamp']),
      'webhook-signature': String(got!.headers['webhook-signature']),
    });
    expect(verified).toEqual(evt);
    expect(() =>
      new Webhook(`whsec_${Buffer.from('x'.repeat(32)).toString('base64')}`).verify(got!.body, {
        'webhook-id': String(got!.headers['webhook-id']),
        'webhook-timestamp': String(got!.headers['webhook-timestamp']),
        'webhook-signature': String(got!.headers['webhook-signature']),
      }),
    ).toThrow();
    // the event as served by the API is exactly what was delivered
    expect((await m.get(`/v1/events/${evt.id}`)).body).toEqual(evt);
    await app.idle(m);
    const attempts = await attemptsOf(m, evt.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ object: 'delivery_attempt', endpoint_id: e.id, status: 'succeeded', attempt_number: 1, response_status: 200, response_body: 'ok', next_retry_at: null });
  });

  it('an endpoint subscribed to one type never gets others', async () => {
    const m = await app.merchant();
    const only = await receiver();
    const all = await receiver();
    await endpoint(m, only, { events: ['customer.updated'] });
    await endpoint(m, all);
    const c = (await m.post('/v1/customers', { email: 'sub@example.com' })).body;
    await m.patch(`/v1/customers/${c.id}`, { name: 'Changed' });
    await m.del(`/v1/customers/${c.id}`);
    await all.waitFor(3);
    await app.idle(m);
    expect(only.received.map((r) => JSON.parse(r.body).type)).toEqual(['customer.updated']);
    expect(all.received.map((r) => JSON.parse(r.body).type).sort()).toEqual(['customer.created', 'customer.deleted', 'customer.updated']);
  });

  it('an event reaches every one of many subscribed endpoints once (more than one statement prepares ids for)', async () => {
    const m = await app.merchant();
    const rcvs = await Promise.all(Array.from({ length: 11 }, () => receiver()));
    for (const r of rcvs) await endpoint(m, r, { events: ['customer.created'] });
    const other = await receiver();
    await endpoint(m, other, { events: ['customer.updated'] });
    await m.post('/v1/customers', { email: 'many@example.com' });
    for (const r of rcvs) await r.waitFor(1);
    const [evt] = (await m.get('/v1/events?type=customer.created')).body.data;
    const attempts = await attemptsOf(m, evt.id);
    expect(attempts).toHaveLength(11);
    expect(new Set(attempts.map((a: any) => a.endpoint_id)).size).toBe(11);
    await app.idle(m);
    for (const r of rcvs) expect(r.received).toHaveLength(1);
    expect(other.received).toHaveLength(0);
  });

  it('retries a failing endpoint on the schedule as the clock advances, 8 attempts in all', async () => {
    const m = await app.merchant();
    const rcv = await receiver();
    rcv.status = 500;
    await endpoint(m, rcv);
    await m.post('/v1/customers', { email: 'retry@example.com' });
    await rcv.waitFor(1);
    await app.idle(m);
    const evt = (await m.get('/v1/events?type=customer.created')).body.data[0];
    let attempts = await attemptsOf(m, evt.id);
    const failed = attempts.find((a: any) => a.attempt_number === 1);
    expect(failed).toMatchObject({ status: 'failed', response_status: 500 });
    expect(failed.response_body.length).toBe(64 * 1024);
    expect(new Date(failed.next_retry_at).getTime() - new Date(failed.attempted_at).getTime()).toBe(5000);
    const second = attempts.find((a: any) => a.attempt_number === 2);
    expect(second).toMatchObject({ status: 'pending', scheduled_at: failed.next_retry_at });

    await m.post('/v1/test-helpers/clock/advance', { seconds: 5 });
    expect(rcv.received).toHaveLength(2);
    await m.post('/v1/test-helpers/clock/advance', { seconds: 2 * 86400 });
    expect(rcv.received).toHaveLength(8);
    attempts = await attemptsOf(m, evt.id);
    expect(attempts.map((a: any) => a.attempt_number)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    const gaps = [...attempts].reverse().slice(0, 7).map((a: any) => (new Date(a.next_retry_at).getTime() - new Date(a.attempted_at).getTime()) / 1000);
    expect(gaps).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(attempts[0]).toMatchObject({ status: 'failed', next_retry_at: null });
    // each attempt carries the same webhook-id: receivers dedupe by it
    expect(new Set(rcv.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  it('after DELETE pending retries are cancelled and nothing more arrives', async () => {
    const m = await app.merchant();
    const rcv = await receiver();
    rcv.status = 503;
    const e = await endpoint(m, rcv);
    await m.post('/v1/customers', { email: 'gone@example.com' });
    await rcv.waitFor(1);
    await app.idle(m);
    const del = await m.del(`/v1/webhook-endpoints/${e.id}`);
    expect(del.body).toEqual({ id: e.id, object: 'webhook_endpoint', deleted: true });
    await m.post('/v1/test-helpers/clock/advance', { seconds: 3 * 86400 });
    await m.post('/v1/customers', { email: 'after@example.com' });
    await app.idle(m);
    expect(rcv.received).toHaveLength(1);
    expect((await m.get(`/v1/webhook-endpoints/${e.id}`)).status).toBe(404);
    const evt = (await m.get('/v1/events?type=customer.created&limit=2')).body.data[1];
    const attempts = await attemptsOf(m, evt.id);
    expect(attempts.every((a: any) => a.status !== 'pending')).toBe(true);
  });

  it('replay delivers again to every active subscribed endpoint', async () => {
    const m = await app.merchant();
    const rcv = await receiver();
    const e = await endpoint(m, rcv);
    await m.post('/v1/customers', { email: 'replay@example.com' });
    await rcv.waitFor(1);
    const evt = (await m.get('/v1/events?type=customer.created')).body.data[0];
    const r = await m.post(`/v1/events/${evt.id}/replay`);
    expect(r.status).toBe(200);
    expect(r.body.object).toBe('list');
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0]).toMatchObject({ event_id: evt.id, endpoint_id: e.id, status: 'pending', attempt_number: 1 });
    await rcv.waitFor(2);
    expect(rcv.received.map((x) => x.headers['webhook-id'])).toEqual([evt.id, evt.id]);
    expect((await m.post('/v1/events/evt_0000000000000000000000/replay')).status).toBe(404);
    const filtered = await m.get(`/v1/events/${evt.id}/delivery-attempts?endpoint_id=${e.id}`);
    expect(filtered.body.data).toHaveLength(2);
  });

  it('keeps signing with the old secret for 24 h after a rotation', async () => {
    const m = await app.merchant();
    const rcv = await receiver();
    const e = await endpoint(m, rcv);
    const rotated = (await m.post(`/v1/webhook-endpoints/${e.id}/rotate-secret`)).body;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(e.secret);
    await m.post('/v1/customers', { email: 'rot@example.com' });
    const [got] = await rcv.waitFor(1);
    const headers = {
      'webhook-id': String(got!.headers['webhook-id']),
      'webhook-timestamp': String(got!.headers['webhook-timestamp']),
      'webhook-signature': String(got!.headers['webhook-signature']),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(rotated.secret).verify(got!.body, headers)).toBeTruthy();
    expect(new Webhook(e.secret).verify(got!.body, headers)).toBeTruthy();
  });

  it('disables an endpoint whose deliveries failed for 5 days and says so with an event', async () => {
    const m = await app.merchant();
    const bad = await receiver();
    bad.status = 500;
    const watcher = await receiver();
    const e = await endpoint(m, bad);
    await endpoint(m, watcher, { events: ['webhook_endpoint.disabled'] });
    await m.post('/v1/customers', { email: 'd1@example.com' });
    await bad.waitFor(1);
    await app.idle(m);
    await m.post('/v1/test-helpers/clock/advance', { seconds: 3 * 86400 });
    await m.post('/v1/customers', { email: 'd2@example.com' });
    await bad.waitFor(10);
    await m.post('/v1/test-helpers/clock/advance', { seconds: 3 * 86400 });
    expect((await m.get(`/v1/webhook-endpoints/${e.id}`)).body.status).toBe('active');
    // six days after the first failure, another failed delivery disables it
    await m.post('/v1/customers', { email: 'd3@example.com' });
    const deadline = Date.now() + 5000;
    while ((await m.get(`/v1/webhook-endpoints/${e.id}`)).body.status !== 'disabled' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await m.get(`/v1/webhook-endpoints/${e.id}`)).body.status).toBe('disabled');
    const disabled = (await m.get('/v1/events?type=webhook_endpoint.disabled')).body.data;
    expect(disabled).toHaveLength(1);
    expect(disabled[0].data.object).toMatchObject({ id: e.id, status: 'disabled' });
    await watcher.waitFor(1);
    expect(JSON.parse(watcher.received[0]!.body).type).toBe('webhook_endpoint.disabled');
    expect(bad.received.every((r) => JSON.parse(r.body).type !== 'webhook_endpoint.disabled')).toBe(true);
    // re-enabling works
    expect((await m.patch(`/v1/webhook-endpoints/${e.id}`, { status: 'active' })).body.status).toBe('active');
  });

  it('survives a restart: due deliveries of a stopped process are still sent', async () => {
    const m = await app.merchant();
    const rcv = await receiver();
    await endpoint(m, rcv);
    // A process that crashed after claiming the delivery (lease still running) …
    await m.post('/v1/customers', { email: 'crash@example.com' });
    const p = app.services.db.prisma;
    await rcv.waitFor(1);
    expect(rcv.received).toHaveLength(1);
    const evt = (await m.get('/v1/events?type=customer.created')).body.data[0];
    // … simulated by a second job for this event, claimed by a runner that died a minute ago.
    const attempt = (await m.post(`/v1/events/${evt.id}/replay`)).body.data[0];
    // (Only while it is still pending: if a live worker took it already, it is simply delivered.)
    await p.job.updateMany({ where: { key: attempt.id, status: 'pending' }, data: { status: 'running', lockedUntil: new Date(Date.now() - 1000), attempts: 1 } });
    await rcv.waitFor(2);
    expect(rcv.received).toHaveLength(2);
  });
});

describe('webhooks over GraphQL', () => {
  it('creates, lists, rotates, replays and deletes', async () => {
    const m = await app.merchant();
    const rcv = await receiver();
    const c = await m.gql(`mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) {
      __typename ... on WebhookEndpointWithSecret { secret webhookEndpoint { id url events status } } ... on Error { code param } } }`, { input: { url: rcv.url, events: ['customer.created'] } });
    expect(c.data.createWebhookEndpoint.__typename).toBe('WebhookEndpointWithSecret');
    const ep = c.data.createWebhookEndpoint.webhookEndpoint;
    expect(ep).toMatchObject({ url: rcv.url, events: ['customer.created'], status: 'active' });
    const bad = await m.gql(`mutation { createWebhookEndpoint(input: { url: "http://example.com" }) { __typename ... on Error { code param } } }`);
    expect(bad.data.createWebhookEndpoint).toEqual({ __typename: 'ValidationError', code: 'parameter_invalid', param: 'url' });

    await m.post('/v1/customers', { email: 'gqlhook@example.com' });
    await rcv.waitFor(1);
    await app.idle(m);
    const q = await m.gql(`{ webhookEndpoints { edges { node { id } } } events(type: "customer.created", first: 1) { edges { node { id deliveryAttempts { edges { node { status attemptNumber responseStatus endpoint { id } } } } } } } }`);
    expect(q.data.webhookEndpoints.edges.map((e: any) => e.node.id)).toEqual([ep.id]);
    const evt = q.data.events.edges[0].node;
    expect(evt.deliveryAttempts.edges[0].node).toEqual({ status: 'succeeded', attemptNumber: 1, responseStatus: 200, endpoint: { id: ep.id } });

    const replay = await m.gql(`mutation { replayEvent(input: { id: "${evt.id}" }) { __typename ... on ReplayEventSuccess { attempts { status } } } }`);
    expect(replay.data.replayEvent.attempts).toEqual([{ status: 'pending' }]);
    const rot = await m.gql(`mutation { rotateWebhookEndpointSecret(input: { id: "${ep.id}" }) { __typename ... on WebhookEndpointWithSecret { secret } } }`);
    expect(rot.data.rotateWebhookEndpointSecret.secret).toMatch(/^whsec_/);
    const upd = await m.gql(`mutation { updateWebhookEndpoint(input: { id: "${ep.id}", status: disabled }) { __typename ... on UpdateWebhookEndpointSuccess { webhookEndpoint { status } } } }`);
    expect(upd.data.updateWebhookEndpoint.webhookEndpoint.status).toBe('disabled');
    // A replay to a disabled endpoint sends nothing and says which endpoint is why.
    const REPLAY = `mutation($id: ID!) { replayEvent(input: { id: $id }) { __typename ... on ReplayEventSuccess { attempts { id } disabledEndpoints { id url status } } } }`;
    expect((await m.gql(REPLAY, { id: evt.id })).data.replayEvent).toEqual({ __typename: 'ReplayEventSuccess', attempts: [], disabledEndpoints: [{ id: ep.id, url: rcv.url, status: 'disabled' }] });
    expect((await m.get(`/v1/events/${evt.id}/delivery-attempts?endpoint_id=${ep.id}`)).body.data).toHaveLength(2);
    // An endpoint subscribed to other types only is neither sent to nor named.
    const elsewhere = (await m.post('/v1/webhook-endpoints', { url: rcv.url, events: ['payment.succeeded'] })).body;
    expect((await m.patch(`/v1/webhook-endpoints/${elsewhere.id}`, { status: 'disabled' })).status).toBe(200);
    expect((await m.gql(REPLAY, { id: evt.id })).data.replayEvent.disabledEndpoints.map((e: any) => e.id)).toEqual([ep.id]);
    const del = await m.gql(`mutation { deleteWebhookEndpoint(input: { id: "${ep.id}" }) { __typename } }`);
    expect(del.data.deleteWebhookEndpoint.__typename).toBe('DeleteWebhookEndpointSuccess');
    expect((await m.gql(`{ webhookEndpoint(id: "${ep.id}") { id } }`)).data.webhookEndpoint).toBeNull();
    // A deleted endpoint is not named either: no endpoint is subscribed any more.
    expect((await m.gql(REPLAY, { id: evt.id })).data.replayEvent).toEqual({ __typename: 'ReplayEventSuccess', attempts: [], disabledEndpoints: [] });
  });
});

describe('slow endpoints', () => {
  it('a slow endpoint gets at most 8 deliveries at once and does not hold up another; a timeout is a failed attempt', async () => {
    const slowApp = await startApp({ WEBHOOK_TIMEOUT_MS: '1500' });
    const open: (() => void)[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const slow = createServer((req, res) => {
      req.resume();
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      // answers only when released (or never: the timeout then fails the attempt)
      let done = false;
      const finish = () => {
        if (!done) inFlight--;
        done = true;
      };
      open.push(() => {
        if (!res.destroyed) res.writeHead(200).end('late');
      });
      // the response closes when it is answered or when the sender gives up (timeout)
      res.on('close', finish);
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const fast = await receiver();
    try {
      const m = await slowApp.merchant();
      await m.post('/v1/webhook-endpoints', { url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow` });
      await m.post('/v1/webhook-endpoints', { url: fast.url });
      for (let i = 0; i < 20; i++) await m.post('/v1/customers', { email: `s${i}@example.com` });
      // the fast endpoint has all 20 while the slow one still holds its first ones
      await fast.waitFor(20, 4000);
      expect(fast.received).toHaveLength(20);
      expect(maxInFlight).toBeGreaterThan(1);
      // The worker could run 64 deliveries at once; the cap (per process) keeps the endpoint at 8.
      expect(maxInFlight).toBe(8);
      // the slow endpoint never answers: its attempts time out and become failed attempts
      const timedOut = async () => {
        const evts = (await m.get('/v1/events?type=customer.created&limit=100')).body.data;
        for (const e of evts) {
          const a = (await m.get(`/v1/events/${e.id}/delivery-attempts?limit=100`)).body.data.find((x: any) => /timed out after 1500 ms/.test(x.response_body ?? ''));
          if (a) return a;
        }
        return null;
      };
      let failed = null;
      for (let i = 0; i < 80 && !failed; i++) {
        failed = await timedOut();
        if (!failed) await new Promise((r) => setTimeout(r, 250));
      }
      expect(failed).toMatchObject({ status: 'failed', response_status: null, attempt_number: 1 });
      expect(failed.next_retry_at).not.toBeNull();
    } finally {
      for (const release of open) release();
      slow.close();
      await slowApp.close();
    }
  }, 45_000);
});

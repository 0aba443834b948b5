// Webhook delivery to host names and the SSRF guard, through the real app over HTTP.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: Server[] = [];
async function receiver() {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  servers.push(server);
  // IPv4 loopback only: a client that tried just ::1 for "localhost" would never get here.
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { received, port: (server.address() as AddressInfo).port };
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, tries = 100): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

const attemptsOf = async (m: Client, eventId: string) => (await m.get(`/v1/events/${eventId}/delivery-attempts?limit=100`)).body.data as any[];

afterAll(() => {
  for (const s of servers) s.close();
});

describe('delivery to host names (BILLING_ALLOW_HTTP_WEBHOOKS=1)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ BILLING_ALLOW_HTTP_WEBHOOKS: '1' });
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each(['localhost', '127.0.0.1'])('delivers a signed event to http://%s:<port> and records the attempt as succeeded', async (host) => {
    const m = await app.merchant();
    const rcv = await receiver();
    const url = `http://${host}:${rcv.port}/hooks`;
    const e = (await m.post('/v1/webhook-endpoints', { url })).body;
    expect(e).toMatchObject({ object: 'webhook_endpoint', url, status: 'active' });

    const c = (await m.post('/v1/customers', { email: `${host}@example.com` })).body;
    const got = await until('the delivery', async () => rcv.received[0]);
    expect(got.headers.host).toBe(`${host}:${rcv.port}`);
    const evt = new Webhook(e.secret).verify(got.body, {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    }) as any;
    expect(evt).toMatchObject({ object: 'event', type: 'customer.created', data: { object: { id: c.id } } });

    const attempt = await until('the recorded attempt', async () => (await attemptsOf(m, evt.id)).find((a) => a.status !== 'pending'));
    expect(attempt).toMatchObject({ endpoint_id: e.id, status: 'succeeded', attempt_number: 1, response_status: 200, response_body: 'ok', next_retry_at: null });
  });

  it('refuses endpoint URLs whose literal IP is, or embeds, a forbidden address (create and update)', async () => {
    const m = await app.merchant(); // no events for this merchant: the public URLs below are never called
    const bad = (await m.post('/v1/webhook-endpoints', { url: 'https://[::7f00:1]/x' })).body;
    expect(bad.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
    expect(bad.error.message).not.toMatch(/7f00/);
    for (const url of [
      'https://[::ffff:169.254.169.254]/x',
      'https://[::ffff:0:a9fe:a9fe]/x',
      'https://[::a9fe:a9fe]/x',
      'https://[64:ff9b::a9fe:a9fe]/x',
      'https://[64:ff9b:1::808:808]/x',
      'https://[2002:a9fe:a9fe::1]/x',
      'https://[2001:0:808:808::80ff:fffe]/x',
      'https://[fe80::1]/x',
      'http://[::7f00:1]:8080/x',
      'http://[2002:7f00:1::1]:8080/x',
    ]) {
      const r = await m.post('/v1/webhook-endpoints', { url });
      expect({ url, status: r.status, code: r.body.error?.code, param: r.body.error?.param }).toEqual({ url, status: 400, code: 'parameter_invalid', param: 'url' });
    }
    for (const url of ['https://[2606:4700::1111]/x', 'https://[64:ff9b::808:808]/x', 'https://[2002:808:808::1]/x']) {
      expect((await m.post('/v1/webhook-endpoints', { url })).status, url).toBe(201);
    }
    const ok = (await m.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/x' })).body;
    const upd = await m.patch(`/v1/webhook-endpoints/${ok.id}`, { url: 'https://[::7f00:1]/x' });
    expect(upd.status).toBe(400);
    expect(upd.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
    expect((await m.get(`/v1/webhook-endpoints/${ok.id}`)).body.url).toBe('https://hooks.example.com/x');
  });
});

// Each test app's worker serves only its own merchants, so this strict app's refusal is what runs.
describe('delivery-time refusal (BILLING_ALLOW_HTTP_WEBHOOKS=0)', () => {
  it('a host name resolving to loopback is refused at delivery, and the attempt names no address', async () => {
    const strict = await startApp({ BILLING_ALLOW_HTTP_WEBHOOKS: '0' });
    try {
      const m = await strict.merchant();
      const rcv = await receiver();
      // a host name passes the static check; its addresses are checked when delivering
      const e = (await m.post('/v1/webhook-endpoints', { url: `https://localhost:${rcv.port}/hooks` })).body;
      expect(e.status).toBe('active');
      await m.post('/v1/customers', { email: 'refused@example.com' });
      const evt = (await m.get('/v1/events?type=customer.created')).body.data[0];
      const attempt = await until('the failed attempt', async () => (await attemptsOf(m, evt.id)).find((a) => a.status === 'failed'));
      expect(attempt).toMatchObject({ endpoint_id: e.id, attempt_number: 1, response_status: null, response_body: 'refused: the host resolves to a forbidden address' });
      expect(rcv.received).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });
});

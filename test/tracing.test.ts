// Traces (issue 26 §2): with tracing on (here an in-memory exporter; in production OTLP), a request
// is a SERVER span in the caller's trace, with the REST operation or the GraphQL execution inside
// it and every SQL statement inside that; processor calls are spans; the jobs a request enqueues
// (a webhook delivery) are traces of their own linked to it, with the delivery's HTTP call inside.
// No span carries a secret.
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../src/platform/tracing.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { receivers } from './helpers/receivers.ts';
import { testPort } from './helpers/ports.ts';

const exporter = new InMemorySpanExporter();
let stop: (() => Promise<void>) | null;
let app: TestApp;
let m: Client;
const hooks = receivers();

beforeAll(async () => {
  stop = await startTracing({}, { exporter });
  app = await startApp();
  m = await app.merchant();
});
afterAll(async () => {
  hooks.close();
  await app?.close();
  await stop?.();
});

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const traceparent = (span = '00f067aa0ba902b7') => `00-${TRACE_ID}-${span}-01`;
const spans = () => exporter.getFinishedSpans();
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const childrenOf = (p: ReadableSpan) => spans().filter((s) => parentOf(s) === p.spanContext().spanId && s.spanContext().traceId === p.spanContext().traceId);
const descendantsOf = (p: ReadableSpan): ReadableSpan[] => childrenOf(p).flatMap((c) => [c, ...descendantsOf(c)]);

async function until<T>(f: () => T | undefined, ms = 10_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const v = f();
    if (v) return v;
  }
  throw new Error('timed out');
}

describe('traces', () => {
  it('a REST request: SERVER span in the caller\'s trace, the operation inside, its SQL inside that; no secrets', async () => {
    exporter.reset();
    const res = await m.post('/v1/customers', { email: 'traced@example.com' }, { traceparent: traceparent(), 'Idempotency-Key': 'trace-1' });
    expect(res.status).toBe(201);
    const server = await until(() => spans().find((s) => s.name === 'POST /v1/customers'));
    expect(server.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(server)).toBe('00f067aa0ba902b7');
    expect(server.attributes['http.route']).toBe('/v1/customers');
    expect(server.attributes['http.response.status_code']).toBe(201);
    expect(server.attributes['billing.request_id']).toBe(res.headers.get('request-id'));
    expect(server.attributes['billing.merchant_id']).toMatch(/^mer_/);
    const op = childrenOf(server).find((s) => s.name === 'createCustomer');
    expect(op, childrenOf(server).map((s) => s.name).join(', ')).toBeDefined();
    const sql = descendantsOf(op!).filter((s) => s.attributes['db.system'] === 'postgresql');
    if (process.env.TEST_DATABASE_URL) {
      expect(sql.length).toBeGreaterThan(0);
      expect(sql.some((s) => /INSERT INTO customers/i.test(String(s.attributes['db.query.text'])))).toBe(true);
    }
    // An id in the path is not in the span's name or route: GET /v1/customers/:id.
    const id = res.body.id as string;
    await m.get(`/v1/customers/${id}`);
    const read = await until(() => spans().find((s) => s.name === 'GET /v1/customers/:id'));
    expect(read.attributes['http.route']).toBe('/v1/customers/:id');
    const everything = JSON.stringify(spans().map((s) => [s.name, s.attributes, s.events]));
    expect(everything).not.toMatch(/Basic |sk_[A-Za-z0-9]{8,}|authorization/i);
  });

  it('a GraphQL mutation: the execution span inside the request, its SQL inside that', async () => {
    exporter.reset();
    const r = await m.gql(`mutation TracedCreate($input: CreateCustomerInput!) { createCustomer(input: $input) { __typename } }`, { input: { email: 'gql-traced@example.com' } });
    expect(r.data.createCustomer.__typename).toBe('CreateCustomerSuccess');
    const server = await until(() => spans().find((s) => s.name === 'POST /graphql'));
    const exec = childrenOf(server).find((s) => s.name === 'graphql.mutation TracedCreate');
    expect(exec, childrenOf(server).map((s) => s.name).join(', ')).toBeDefined();
    expect(exec!.attributes['graphql.operation.type']).toBe('mutation');
    if (process.env.TEST_DATABASE_URL) expect(descendantsOf(exec!).some((s) => /INSERT INTO customers/i.test(String(s.attributes['db.query.text'])))).toBe(true);
  });

  it('a processor call is a span of the request that makes it', async () => {
    exporter.reset();
    const customer = (await m.post('/v1/customers', { email: 'card@example.com' })).body;
    const si = (await m.post('/v1/setup-intents', { customer_id: customer.id })).body;
    await m.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {}, { traceparent: traceparent('00f067aa0ba902b8') });
    const call = await until(() => spans().find((s) => s.name === 'processor.save'));
    expect(call.spanContext().traceId).toBe(TRACE_ID);
    expect(call.attributes['billing.processor']).toBeTruthy();
    expect(JSON.stringify(call.attributes)).not.toMatch(/4242/);
  });

  it('a webhook delivery is a job trace of its own, linked to the request that caused it, with the HTTP call inside', async () => {
    const url = await hooks.listen((_req, res) => res.writeHead(200).end('ok'));
    await m.post('/v1/webhook-endpoints', { url, events: ['customer.created'] });
    exporter.reset();
    await m.post('/v1/customers', { email: 'hooked@example.com' }, { traceparent: traceparent('00f067aa0ba902b9') });
    const request = await until(() => spans().find((s) => s.name === 'POST /v1/customers'));
    const job = await until(() => spans().find((s) => s.name === 'job webhook.deliver'));
    expect(job.spanContext().traceId).not.toBe(TRACE_ID); // a trace of its own …
    expect(parentOf(job)).toBeUndefined();
    // … linked to the request: to the span that recorded the event, inside the request's span
    const inRequest = [request, ...descendantsOf(request)].map((s) => s.spanContext().spanId);
    expect(job.links).toHaveLength(1);
    expect(job.links[0]!.context.traceId).toBe(TRACE_ID);
    expect(inRequest).toContain(job.links[0]!.context.spanId);
    expect(job.attributes['billing.job.outcome']).toBe('done');
    const http = childrenOf(job).find((s) => s.name === 'webhook.deliver');
    expect(http).toBeDefined();
    expect(http!.attributes['http.response.status_code']).toBe(200);
    expect(http!.attributes['server.address']).toMatch(/^127\.0\.0\.1:\d+$/);
  });
});

describe('traces over OTLP, as an operator turns them on', () => {
  it('the server started with OTEL_EXPORTER_OTLP_ENDPOINT sends its spans there', async () => {
    const { serverProcesses } = await import('./helpers/server-process.ts');
    const bodies: Buffer[] = [];
    const collector = await hooks.listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/v1/traces') bodies.push(Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    const servers = serverProcesses('otlp', { LOG_LEVEL: 'warn', OTEL_EXPORTER_OTLP_ENDPOINT: collector.replace(/\/hooks$/, ''), OTEL_BSP_SCHEDULE_DELAY: '100' });
    try {
      const port = testPort();
      await servers.start(port);
      const r = await fetch(`http://127.0.0.1:${port}/v1/customers`, {
        method: 'POST',
        headers: { authorization: servers.auth, 'content-type': 'application/json', traceparent: traceparent() },
        body: JSON.stringify({ email: 'otlp@example.com' }),
      });
      expect(r.status).toBe(201);
      await until(() => bodies.some((b) => b.includes(Buffer.from('/v1/customers'))), 20_000);
      // The exported spans (OTLP/JSON here; protobuf would carry the id as bytes) name the route and the caller's trace.
      const all = Buffer.concat(bodies);
      expect(all.includes(Buffer.from('POST /v1/customers'))).toBe(true);
      expect(all.includes(Buffer.from(TRACE_ID)) || all.includes(Buffer.from(TRACE_ID, 'hex'))).toBe(true);
    } finally {
      await servers.cleanup();
    }
  }, 60_000);
});

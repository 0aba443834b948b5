import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../src/rest/index.ts';
import { send, startApp, type TestApp } from './helpers/app.ts';

let app: TestApp;
let doc: any;

beforeAll(async () => {
  app = await startApp();
  doc = (await send(`${app.url}/openapi.json`)).body;
});
afterAll(() => app?.close());

describe('OpenAPI document', () => {
  it('passes Redocly’s recommended lint without errors or warnings', async () => {
    expect(doc.openapi).toBe('3.1.0');
    // The server URL is the operator's own PUBLIC_BASE_URL (127.0.0.1 here): the rule that wants
    // a public host does not apply to a self-hosted service.
    const config = await createConfig({ extends: ['recommended'], rules: { 'no-server-example.com': 'off' } });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    const found = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`);
    // One exception, at two places: the invoice and credit note PDF operations answer only 302 (to
    // the signed address); a redirect is their success, so they have no 2XX.
    const redirectOnly = (path: string) => `warn operation-2xx-response: Operation must have at least one \`2XX\` response. at #/paths/${path}/get/responses`;
    const allowed = [redirectOnly('~1v1~1invoices~1{id}~1pdf'), redirectOnly('~1v1~1credit-notes~1{id}~1pdf')];
    expect(found.filter((f) => !allowed.includes(f))).toEqual([]);
    expect(doc.paths['/v1/invoices/{id}/pdf'].get.responses['302'].headers.Location).toBeDefined();
    expect(doc.paths['/v1/credit-notes/{id}/pdf'].get.responses['302'].headers.Location).toBeDefined();
  });

  it('defines every component schema, none of them a reference to itself', () => {
    const schemas = doc.components.schemas as Record<string, any>;
    expect(Object.keys(schemas).length).toBeGreaterThan(15);
    for (const [name, schema] of Object.entries(schemas)) {
      expect(schema.$ref, name).toBeUndefined();
      expect(schema.type === 'object' || Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf), name).toBe(true);
    }
    // every $ref anywhere resolves to a defined component
    for (const ref of JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? []) {
      const name = ref.slice(ref.lastIndexOf('/') + 1, -1);
      expect(schemas[name], ref).toBeDefined();
    }
  });

  it('gives every string a reader fills in or gets back a real example (the reference page shows "string" otherwise)', () => {
    const bare: string[] = [];
    const walk = (s: any, path: string) => {
      if (!s || typeof s !== 'object' || s.$ref) return;
      if (s.type === 'string' && s.example === undefined && s.examples === undefined && !s.enum && s.const === undefined && !String(s.format).startsWith('date')) bare.push(path);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${path}.${k}`);
      for (const k of ['items', 'anyOf', 'oneOf', 'allOf']) [s[k]].flat().forEach((x, i) => walk(x, `${path}.${k}[${i}]`));
    };
    for (const [p, ops] of Object.entries<any>(doc.paths)) {
      for (const [m, op] of Object.entries<any>(ops)) walk(op.requestBody?.content?.['application/json']?.schema, `${m.toUpperCase()} ${p}`);
    }
    for (const [n, s] of Object.entries<any>(doc.components.schemas)) walk(s, n);
    expect(bare).toEqual([]);
    // URLs say so
    expect(doc.components.schemas.WebhookEndpoint.properties.url.format ?? doc.paths['/v1/webhook-endpoints'].post.requestBody.content['application/json'].schema.properties.url.format).toBe('uri');
  });

  it('describes every route of the route table, generated from its schemas', () => {
    for (const r of routes) {
      const op = doc.paths[r.path]?.[r.method];
      expect(op, `${r.method.toUpperCase()} ${r.path}`).toBeDefined();
      expect(op.operationId).toBe(r.operationId);
      expect(op.responses[String(r.response.status)]).toBeDefined();
      expect(op.responses['401'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    const count = Object.values(doc.paths).reduce((n: number, p: any) => n + Object.keys(p).length, 0);
    expect(count).toBe(routes.length);
  });

  it('carries the validation rules of the request schemas', () => {
    const body = doc.paths['/v1/customers'].post.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['email']);
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.phone.anyOf?.[0]?.pattern ?? body.properties.phone.pattern).toMatch(/\\\+/);
    const params = doc.paths['/v1/customers'].get.parameters.map((p: any) => p.name);
    expect(params).toEqual(['email', 'search', 'limit', 'after']);
    const idem = doc.paths['/v1/customers'].post.parameters.find((p: any) => p.name === 'Idempotency-Key');
    expect(idem).toMatchObject({ in: 'header', required: false });
    expect(doc.components.securitySchemes.basicAuth).toEqual({ type: 'http', scheme: 'basic' });
  });

  it('documents the billing engine: subscriptions embedded in the customer, every lifecycle action, the PDF redirect', () => {
    expect(doc.components.schemas.CustomerWithEmbeds.properties.subscriptions).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Subscription' } });
    for (const path of ['/v1/subscriptions', '/v1/subscriptions/{id}', '/v1/subscriptions/{id}/cancel', '/v1/subscriptions/{id}/reactivate', '/v1/subscriptions/{id}/pause', '/v1/subscriptions/{id}/resume', '/v1/invoices', '/v1/invoices/{id}', '/v1/invoices/{id}/void', '/v1/invoices/{id}/pdf']) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.components.schemas.Subscription.properties.status.enum).toEqual(['trialing', 'active', 'past_due', 'paused', 'cancelled', 'incomplete', 'unpaid']);
    expect(doc.components.schemas.Invoice.properties.status.enum).toEqual(['draft', 'open', 'paid', 'void', 'uncollectible']);
  });

  it('renders the reference page at /docs from local assets', async () => {
    const page = await send(`${app.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/openapi\.json/);
    for (const asset of page.text.match(/\/docs\/assets\/[\w.-]+/g) ?? []) {
      expect((await fetch(`${app.url}${asset}`)).status, asset).toBe(200);
    }
    expect((await send(`${app.url}/docs/assets/../../package.json`)).status).toBe(404);
  });
});

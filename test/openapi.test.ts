import SwaggerParser from '@apidevtools/swagger-parser';
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
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    // Throws with the first problem when the document is invalid (all $refs must resolve).
    await SwaggerParser.validate(structuredClone(doc));
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
    expect(params).toEqual(['email', 'limit', 'after']);
    const idem = doc.paths['/v1/customers'].post.parameters.find((p: any) => p.name === 'Idempotency-Key');
    expect(idem).toMatchObject({ in: 'header', required: false });
    expect(doc.components.securitySchemes.basicAuth).toEqual({ type: 'http', scheme: 'basic' });
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

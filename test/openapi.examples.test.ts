// The examples of the API reference (issue 24, "the first hour"): every one is real. Each
// operation's request example passes the operation's own zod schema (what the router validates
// with) and its documented schema; every response example validates against its schema; each
// error status has its own example, made by the error class that answers it, and the service
// answers exactly that (400, 401, 404 sent for real below); examples use the configured origin
// and the real shapes of ids and tokens; no number example is a JSON-Schema bound.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../src/rest/index.ts';
import { kindOfId } from '../src/platform/ids.ts';
import { send, startApp, type Client, type TestApp } from './helpers/app.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const ORIGIN = 'https://billing.example.test';

let app: TestApp;
let m: Client;
let doc: any;
let ajv: Ajv2020;

beforeAll(async () => {
  app = await startApp({ PUBLIC_BASE_URL: ORIGIN, AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: '0', RATE_LIMIT_PER_SECOND: '0' }, { worker: false });
  m = await app.merchant();
  doc = (await send(`${app.url}/openapi.json`)).body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi.json');
});
afterAll(() => app?.close());

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
const op = (r: (typeof routes)[number]) => doc.paths[r.path][r.method];

function validates(ref: string, value: unknown): string[] {
  const validate = ajv.getSchema(ref);
  if (!validate) throw new Error(`no schema at ${ref}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** The examples of a media type: `example`, or every `examples` entry's value. */
const examplesOf = (media: any): unknown[] => (media.example !== undefined ? [media.example] : Object.values<any>(media.examples ?? {}).map((e) => e.value));
const withoutRequestId = (body: any) => ({ ...body.error, request_id: undefined });
const pathOf = (r: (typeof routes)[number]) => {
  const id = op(r).parameters.find((p: any) => p.in === 'path' && p.name === 'id');
  return r.path.replace('{id}', id?.example ?? '');
};

describe('examples in /openapi.json', () => {
  it('every request example passes its operation’s zod schema and its documented schema', () => {
    let checked = 0;
    for (const r of routes) {
      const media = op(r).requestBody?.content['application/json'];
      if (!media) continue;
      expect(media.example, r.operationId).toBeDefined();
      const parsed = (r.body ?? (undefined as never))?.safeParse(media.example);
      if (r.body) expect(parsed.success, `${r.operationId}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      else expect(media.example, r.operationId).toEqual({});
      expect(validates(`openapi.json#/paths/${pointer(r.path)}/${r.method}/requestBody/content/application~1json/schema`, media.example), r.operationId).toEqual([]);
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
  });

  it('every path id has an example of the right kind and shape', () => {
    for (const r of routes) {
      for (const p of op(r).parameters.filter((x: any) => x.in === 'path')) {
        expect(p.example, `${r.operationId} ${p.name}`).toMatch(/^[a-z]+_[0-9A-Za-z]{22}$/);
        expect(kindOfId(p.example), `${r.operationId} ${p.example}`).not.toBeNull();
      }
    }
  });

  it('every response example validates against its response schema', () => {
    let checked = 0;
    for (const r of routes) {
      for (const [status, res] of Object.entries<any>(op(r).responses)) {
        const media = res.content?.['application/json'];
        if (!media) continue;
        const list = examplesOf(media);
        expect(list.length, `${r.operationId} ${status}`).toBeGreaterThan(0);
        for (const value of list) {
          expect(validates(`openapi.json#/paths/${pointer(r.path)}/${r.method}/responses/${status}/content/application~1json/schema`, value), `${r.operationId} ${status}`).toEqual([]);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(routes.length * 7);
  });

  it('each error status of an operation has its own example, of the type that status answers', () => {
    const typeOf: Record<string, string[]> = {
      400: ['invalid_request_error'], 401: ['authentication_error'], 402: ['wallet_error', 'card_error'], 404: ['invalid_request_error'],
      409: ['state_error', 'idempotency_error'], 413: ['invalid_request_error'], 415: ['invalid_request_error'], 429: ['rate_limit_error'],
      500: ['api_error'], 503: ['api_error'],
    };
    for (const r of routes) {
      const seen = new Map<string, string>();
      for (const [status, res] of Object.entries<any>(op(r).responses)) {
        if (Number(status) < 400) continue;
        for (const value of examplesOf(res.content['application/json']) as any[]) {
          expect(typeOf[status], `${r.operationId} ${status}`).toContain(value.error.type);
          expect(value.error.request_id).toMatch(/^req_[0-9A-Za-z]{22}$/);
          const key = `${value.error.code} ${value.error.message}`;
          expect(seen.get(key), `${r.operationId}: ${status} repeats the example of ${seen.get(key)}`).toBeUndefined();
          seen.set(key, status);
        }
      }
      expect(seen.size, r.operationId).toBeGreaterThanOrEqual(6);
    }
  });

  it('no example is a JSON-Schema bound, a bare "string", another origin or a malformed token', () => {
    expect(JSON.stringify(doc).match(/127\.0\.0\.1|localhost|public-base-url/)).toBeNull();
    expect(doc.servers).toEqual([{ url: ORIGIN }]);
    const strings: string[] = [];
    const numbers: number[] = [];
    const walk = (v: unknown, inExample: boolean) => {
      if (typeof v === 'string' && inExample) strings.push(v);
      else if (typeof v === 'number' && inExample) numbers.push(v);
      else if (Array.isArray(v)) v.forEach((x) => walk(x, inExample));
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, inExample || k === 'example' || k === 'examples');
    };
    walk(doc, false);
    expect(numbers.length).toBeGreaterThan(100);
    expect(numbers.filter((n) => Math.abs(n) >= 2 ** 53 - 1)).toEqual([]);
    expect(strings).not.toContain('string');
    // This service's addresses are the configured origin's; hosted pages carry a 40-character token.
    const ours = strings.filter((s) => /\/hosted\/|\/v1\//.test(s) && /^https?:/.test(s));
    expect(ours.length).toBeGreaterThanOrEqual(5);
    for (const u of ours) expect(u.startsWith(`${ORIGIN}/`), u).toBe(true);
    for (const u of ours.filter((s) => /\/hosted\/(checkout|setup|portal)\//.test(s))) expect(u, u).toMatch(/\/hosted\/(checkout|setup|portal)\/[0-9A-Za-z]{40}$/);
    // Ids have their kind's prefix and 22 base62 characters.
    for (const s of strings.filter((x) => /^[a-z]+_[0-9A-Za-z]+$/.test(x) && kindOfId(x.replace(/_.*/, '_0123456789abcdefGHIJKL')))) expect(s, s).toMatch(/^[a-z]+_[0-9A-Za-z]{22}$/);
    const secret = strings.find((s) => s.startsWith('whsec_'))!;
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
  });
});

describe('the documented error examples are what the service answers', () => {
  it('401 for every operation', async () => {
    for (const r of routes) {
      const res = await send(`${app.url}${pathOf(r)}`, { method: r.method.toUpperCase() });
      expect(res.status, r.operationId).toBe(401);
      expect(withoutRequestId(res.body), r.operationId).toEqual(withoutRequestId(op(r).responses['401'].content['application/json'].example));
    }
  });

  it('400 for every operation with a required body field (sent {}), and the unknown parameter of the others', async () => {
    let checked = 0;
    for (const r of routes) {
      const documented = op(r).responses['400'].content['application/json'].example;
      const init: Record<string, unknown> = {};
      if (documented.error.code === 'parameter_missing' && r.method !== 'get') init.body = {};
      else if (documented.error.code === 'parameter_unknown' && op(r).requestBody) init.body = { ...op(r).requestBody.content['application/json'].example, expand: ['customer'] };
      const path = documented.error.code === 'parameter_invalid' ? `${pathOf(r)}?limit=500` : documented.error.code === 'parameter_unknown' && !op(r).requestBody ? `${pathOf(r)}?expand=customer` : pathOf(r);
      const res = await m.request(r.method.toUpperCase(), path, init.body);
      expect(res.status, `${r.operationId}: ${res.text}`).toBe(400);
      expect(withoutRequestId(res.body), r.operationId).toEqual(withoutRequestId(documented));
      checked++;
    }
    expect(checked).toBe(routes.length);
  });

  it('404 for every operation on a record, with the example id (and the test helpers of a live merchant)', async () => {
    let checked = 0;
    for (const r of routes.filter((x) => x.path.includes('{id}'))) {
      const documented = op(r).responses['404'].content['application/json'].example;
      const body = op(r).requestBody?.content['application/json'].example;
      const res = await m.request(r.method.toUpperCase(), pathOf(r), body);
      expect(res.status, `${r.operationId}: ${res.text}`).toBe(404);
      expect(withoutRequestId(res.body), r.operationId).toEqual(withoutRequestId(documented));
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
    // Test helpers of a live-mode merchant.
    const live = await app.merchant({ mode: 'live' });
    for (const r of routes.filter((x) => x.path.startsWith('/v1/test-helpers/') && !x.path.includes('{id}'))) {
      const documented = op(r).responses['404'].content['application/json'].example;
      const res = await live.request(r.method.toUpperCase(), pathOf(r), op(r).requestBody?.content['application/json'].example);
      expect(res.status, `${r.operationId}: ${res.text}`).toBe(404);
      expect(withoutRequestId(res.body), r.operationId).toEqual(withoutRequestId(documented));
    }
  });

  it('the prefilled POST /v1/payments body creates a payment for a test-mode merchant', async () => {
    const example = doc.paths['/v1/payments'].post.requestBody.content['application/json'].example;
    const res = await m.post('/v1/payments', example);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ object: 'payment', status: 'created', amount: 2599, currency: 'EUR' });
    expect(res.body.checkout_url).toMatch(new RegExp(`^${ORIGIN.replaceAll('.', '\\.')}/hosted/checkout/[0-9A-Za-z]{40}$`));
  });
});

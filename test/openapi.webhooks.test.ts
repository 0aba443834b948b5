// The `webhooks` section of /openapi.json (issue 24, "the first hour"): one entry per event type
// with that type's payload, so users can generate typed handlers. The event types the code can
// emit (EVENT_TYPES, which recordEvent's `type` parameter is typed by), the table in
// docs/conventions.md and the document agree; and real events, made over HTTP, validate against
// their type's payload schema (JSON Schema 2020-12, objects closed).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/domain/events/types.ts';
import { send, startApp, type Client, type TestApp } from './helpers/app.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

let app: TestApp;
let m: Client;
let doc: any;
let ajv: Ajv2020;

beforeAll(async () => {
  app = await startApp();
  m = await app.merchant();
  doc = (await send(`${app.url}/openapi.json`)).body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi.json');
});
afterAll(() => app?.close());

/** The event types in the table of docs/conventions.md, section "Events". */
function documentedTypes(): string[] {
  const text = readFileSync(join(import.meta.dirname, '..', 'docs', 'conventions.md'), 'utf8');
  const section = text.slice(text.indexOf('## Events'), text.indexOf('\n## ', text.indexOf('## Events') + 1));
  return [...section.matchAll(/^\| `([a-z_.]+)` \|/gm)].map((x) => x[1]!);
}

const payloadRef = (type: string) => `openapi.json#/webhooks/${type.replaceAll('~', '~0').replaceAll('/', '~1')}/post/requestBody/content/application~1json/schema`;

function problems(type: string, value: unknown): string[] {
  const validate = ajv.getSchema(payloadRef(type));
  if (!validate) throw new Error(`no webhook payload for ${type}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

describe('OpenAPI webhooks', () => {
  it('the code’s event types, docs/conventions.md and the document list the same types, in the same order', () => {
    expect(Object.keys(doc.webhooks)).toEqual([...EVENT_TYPES]);
    expect(documentedTypes()).toEqual([...EVENT_TYPES]);
  });

  it('each entry is the event envelope with its own type and its record as data.object, with an example that validates', () => {
    for (const type of EVENT_TYPES) {
      const post = doc.webhooks[type].post;
      const media = post.requestBody.content['application/json'];
      expect(media.schema.properties.type).toEqual({ type: 'string', const: type });
      expect(media.schema.properties.data.properties.object.$ref, type).toMatch(/^#\/components\/schemas\/\w+$/);
      expect(post.parameters.map((p: any) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
      expect(post.security).toEqual([]);
      expect(media.example.type).toBe(type);
      expect(problems(type, media.example), type).toEqual([]);
      // Another type's example is refused: the type is part of the payload's schema.
      const other = EVENT_TYPES.find((t) => t !== type)!;
      expect(problems(other, media.example).length, `${type} example accepted as ${other}`).toBeGreaterThan(0);
    }
    expect(doc.components.schemas[doc.webhooks['payment.succeeded'].post.requestBody.content['application/json'].schema.properties.data.properties.object.$ref.split('/').pop()].properties.object.const).toBe('payment');
  });

  it('real events match the payload schema of their type', { timeout: 120_000 }, async () => {
    const ok = async (p: Promise<any>, status = 200) => {
      const r = await p;
      expect([status, 201], `${r.status} ${r.text}`).toContain(r.status);
      return r.body;
    };
    const customer = await ok(m.post('/v1/customers', { email: 'events@example.com', name: 'Eve' }), 201);
    await ok(m.patch(`/v1/customers/${customer.id}`, { name: 'Eve Adams' }));
    const pay = async (outcome: string) => {
      const p = await ok(m.post('/v1/payments', { amount: 1500, currency: 'USD', customer_id: customer.id, redirect_url: 'https://shop.example.com/thanks' }), 201);
      await ok(m.post(`/v1/test-helpers/payments/${p.id}/complete`, { outcome }));
      return p;
    };
    const paid = await pay('succeeded');
    await pay('failed');
    await pay('cancelled');
    await ok(m.post('/v1/refunds', { payment_id: paid.id, amount: 500 }), 201);
    const si = await ok(m.post('/v1/setup-intents', { customer_id: customer.id }), 201);
    const done = await ok(m.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {}));
    const plan = await ok(m.post('/v1/plans', { name: 'Pro', amount: 2900, currency: 'USD', interval: 'month' }), 201);
    const trialPlan = await ok(m.post('/v1/plans', { name: 'Trial', amount: 900, currency: 'USD', interval: 'month', trial_period_days: 7 }), 201);
    const sub = await ok(m.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id }), 201);
    await ok(m.post('/v1/subscriptions', { customer_id: customer.id, plan_id: trialPlan.id }), 201);
    await ok(m.patch(`/v1/subscriptions/${sub.id}`, { metadata: { seat: '2' } }));
    await ok(m.post(`/v1/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true }));
    await ok(m.post(`/v1/subscriptions/${sub.id}/reactivate`));
    await ok(m.post(`/v1/subscriptions/${sub.id}/pause`, {}));
    await ok(m.post(`/v1/subscriptions/${sub.id}/resume`));
    // A trial's end and a renewal's notice come on the clock.
    await ok(m.post('/v1/test-helpers/clock/advance', { seconds: 28 * 86400 }));
    await ok(m.post(`/v1/customers/${customer.id}/balance-transactions`, { amount: 500, currency: 'USD', description: 'Goodwill' }), 201);
    const wallet = await ok(m.post('/v1/wallets', { customer_id: customer.id, currency: 'USD' }), 201);
    await ok(m.post(`/v1/wallets/${wallet.id}/credit`, { amount: 5000, description: 'Credit', reference: 'c1' }), 201);
    await ok(m.post(`/v1/wallets/${wallet.id}/debit`, { amount: 1000, description: 'Use', reference: 'd1' }));
    await ok(m.post(`/v1/wallets/${wallet.id}/freeze`));
    await ok(m.post(`/v1/wallets/${wallet.id}/unfreeze`));
    await ok(m.post(`/v1/wallets/${wallet.id}/close`));
    // One-off invoicing: a send_invoice invoice credited, overdue, written off (issue 25).
    await ok(m.post('/v1/invoice-items', { customer_id: customer.id, amount: 4000, currency: 'USD', description: 'Workshop' }), 201);
    const draft = await ok(m.post('/v1/invoices', { customer_id: customer.id, currency: 'USD', collection_method: 'send_invoice', days_until_due: 1 }), 201);
    await ok(m.post(`/v1/invoices/${draft.id}/finalize`));
    await ok(m.post('/v1/credit-notes', { invoice_id: draft.id, amount: 1000 }), 201);
    await ok(m.post('/v1/test-helpers/clock/advance', { seconds: 2 * 86400 }));
    await ok(m.post(`/v1/invoices/${draft.id}/mark-uncollectible`));
    await ok(m.post(`/v1/plans/${plan.id}/archive`));
    await ok(m.post(`/v1/subscriptions/${sub.id}/cancel`, {}));
    await ok(m.del(`/v1/payment-methods/${done.payment_method_id}`));
    await ok(m.del(`/v1/customers/${customer.id}`));

    const events: any[] = [];
    for (let after: string | null = null; ; ) {
      const page: any = await ok(m.get(`/v1/events?limit=100${after ? `&after=${after}` : ''}`));
      events.push(...page.data);
      if (!page.has_more) break;
      after = page.next_cursor;
    }
    const failures = events.map((e) => ({ type: e.type, problems: problems(e.type, e) })).filter((f) => f.problems.length > 0);
    expect(failures).toEqual([]);
    const seen = new Set(events.map((e) => e.type));
    const missing = EVENT_TYPES.filter((t) => !seen.has(t));
    // Most types are made for real here; the rest (expiries, failed refunds, top-ups, a disabled
    // endpoint) have their own tests, and their payload is the same schema as a type seen here.
    expect(seen.size, `not made: ${missing.join(', ')}`).toBeGreaterThanOrEqual(31);
  });
});

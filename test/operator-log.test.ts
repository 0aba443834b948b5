// Operators see the service's business events in its JSON log (issue 26, "Logs"): one line per
// charge that failed, dunning step, subscription that fell into past_due/unpaid or was cancelled
// while unpaid, webhook endpoint disabled, clock advanced — with the merchant and the ids involved,
// at warn/info — and never a secret (API secret, webhook signing secret, card number).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { clockMerchant } from './helpers/clock-merchant.ts';
import { createApp } from '../src/server/app.ts';

const NSF = '4000000000009995'; // saves, then every charge of it fails with insufficient_funds
const DAY = 86_400;
const lines: string[] = [];
let app: TestApp;
beforeAll(async () => {
  app = await startApp({}, { logLines: lines });
});
afterAll(() => app?.close());

const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, any>);

/** The keys of a JSON line's top-level object that appear more than once (JSON.parse keeps only the last). */
function duplicateKeys(line: string): string[] {
  const seen = new Set<string>();
  const dups: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '"') {
      let j = i + 1;
      while (line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      const key = line.slice(i + 1, j);
      if (depth === 1 && expectKey) {
        if (seen.has(key)) dups.push(key);
        seen.add(key);
        expectKey = false;
      }
      i = j;
    } else if (ch === '{' || ch === '[') {
      depth++;
      if (depth === 1) expectKey = true;
    } else if (ch === '}' || ch === ']') depth--;
    else if (ch === ',' && depth === 1) expectKey = true;
  }
  return dups;
}
const withMsg = (msg: string, merchantId: string) => parsed().filter((l) => l.msg === msg && l.merchant_id === merchantId);

describe('operator log lines', () => {
  it('a declining subscription through dunning, a failing endpoint and clock advances each leave their line; no secret is logged', async () => {
    const m = await clockMerchant(app);
    const { api } = m;
    const merchantId = api.creds.merchant_id;
    const endpoint = (await api.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hook' })).body;
    expect(endpoint.secret).toMatch(/^whsec_/);
    const c = (await api.post('/v1/customers', { email: 'ops@example.com', name: 'Ops' })).body;
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    expect((await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: NSF })).status).toBe(200);
    const plan = (await api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month', trial_period_days: 7 })).body;
    const sub = (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;

    await m.advance({ to: sub.trial_end });
    const pastDue = (await api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(pastDue.status).toBe('past_due');
    const invoiceId = pastDue.latest_invoice_id;

    const failed = withMsg('payment failed', merchantId);
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed[0]).toMatchObject({ level: 'warn', customer_id: c.id, amount: 3000, currency: 'USD', failure_code: 'insufficient_funds' });
    expect(failed[0]!.payment_id).toMatch(/^pay_/);
    expect(failed[0]!.event_id).toMatch(/^evt_/);
    expect(withMsg('invoice payment failed (dunning step)', merchantId)[0]).toMatchObject({
      level: 'warn', invoice_id: invoiceId, subscription_id: sub.id, customer_id: c.id, attempt_count: 1, next_payment_attempt: expect.any(String),
    });
    expect(withMsg('subscription past_due', merchantId)).toEqual([
      expect.objectContaining({ level: 'warn', subscription_id: sub.id, customer_id: c.id, from_status: 'active', status: 'past_due' }),
    ]);
    expect(withMsg('clock advanced', merchantId)[0]).toMatchObject({ level: 'info', to: expect.any(String), jobs_run: expect.any(Number) });

    // Dunning runs its course (retries over the following weeks), and the endpoint keeps failing.
    await m.advance({ seconds: 30 * DAY });
    const end = (await api.get(`/v1/subscriptions/${sub.id}`)).body;
    expect(end.status).toBe('unpaid');
    const steps = withMsg('invoice payment failed (dunning step)', merchantId).map((l) => l.attempt_count);
    expect(steps.length).toBeGreaterThan(1);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(withMsg('subscription unpaid', merchantId)).toEqual([expect.objectContaining({ level: 'warn', subscription_id: sub.id, from_status: 'past_due' })]);
    expect(withMsg('webhook endpoint disabled after repeated failures', merchantId)).toEqual([
      expect.objectContaining({ level: 'warn', webhook_endpoint_id: endpoint.id }),
    ]);

    expect((await api.post(`/v1/subscriptions/${sub.id}/cancel`, {})).status).toBe(200);
    await expect.poll(() => withMsg('subscription cancelled while unpaid', merchantId)).toEqual([
      expect.objectContaining({ level: 'warn', subscription_id: sub.id, from_status: 'unpaid' }),
    ]);

    // Every line is JSON with a level and a message; none carries a secret.
    const text = lines.join('\n');
    for (const secret of [api.creds.client_secret, endpoint.secret, NSF]) expect(text.includes(secret), `a log line carries ${secret.slice(0, 6)}…`).toBe(false);
    for (const l of parsed()) expect(l).toMatchObject({ level: expect.any(String), msg: expect.any(String) });
    // Each key once per line: a line written inside a request or a job whose logger already carries
    // merchant_id must not carry it again (log pipelines reject or mangle duplicate keys).
    expect(duplicateKeys('{"a":1,"b":{"a":2},"a":"x\\"y"}')).toEqual(['a']);
    const twice = lines.filter((l) => duplicateKeys(l).length > 0);
    expect(twice.length, `lines with a key twice, e.g. ${twice[0]}`).toBe(0);
  });

  it('the bearer links a customer opens (the hosted invoice page, the e-mails\' durable links) never reach the log', async () => {
    const { api } = await clockMerchant(app);
    const c = (await api.post('/v1/customers', { email: 'links@example.com' })).body;
    // A paid subscription invoice: its receipt carries a durable link (/hosted/email-links/<token>) to the PDF.
    const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
    expect((await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4242424242424242' })).status).toBe(200);
    const plan = (await api.post('/v1/plans', { name: 'Links', amount: 1500, currency: 'USD', interval: 'month' })).body;
    expect((await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body.status).toBe('active');
    expect((await api.post('/v1/invoice-items', { customer_id: c.id, amount: 4000, currency: 'USD', description: 'Workshop' })).status).toBe(201);
    const draft = (await api.post('/v1/invoices', { customer_id: c.id, currency: 'USD', collection_method: 'send_invoice' })).body;
    const invoice = (await api.post(`/v1/invoices/${draft.id}/finalize`, {})).body;
    expect(invoice.hosted_invoice_url).toMatch(/\/hosted\/invoice\/[^/]+$/);
    const page = new URL(invoice.hosted_invoice_url);
    expect((await fetch(`${app.url}${page.pathname}`)).status).toBe(200);
    const invoiceToken = page.pathname.split('/').pop()!;

    await expect
      .poll(async () => JSON.stringify((await api.get('/v1/test-helpers/emails?to=links@example.com')).body).match(/\/hosted\/email-links\/[^\s"<>\\]+/g) ?? [], { timeout: 20_000 })
      .not.toEqual([]);
    const mail = JSON.stringify((await api.get('/v1/test-helpers/emails?to=links@example.com')).body);
    const linkPaths = [...new Set(mail.match(/\/hosted\/email-links\/[^\s"<>\\]+/g))];
    for (const path of linkPaths) expect((await fetch(`${app.url}${path}`, { redirect: 'manual' })).status).toBe(303);
    const tokens = [invoiceToken, ...linkPaths.map((p) => p.split('/').pop()!)];
    expect(tokens.every((t) => t.length >= 20)).toBe(true);

    const logged = lines.filter((l) => tokens.some((t) => l.includes(t)));
    expect(logged, logged[0]).toEqual([]);
    expect(lines.some((l) => l.includes('"path":"/hosted/invoice/[token]"'))).toBe(true);
    expect(lines.some((l) => l.includes('"path":"/hosted/email-links/[token]"'))).toBe(true);
  });

  it('a request refused while the process drains (shutdown) is logged at info, not as a failed request', async () => {
    const drainingApp = createApp(app.services, { draining: () => true });
    const r = await drainingApp.request('/v1/customers');
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('1');
    const id = r.headers.get('request-id');
    expect(parsed().filter((l) => l.request_id === id)).toEqual([
      expect.objectContaining({ level: 'info', msg: 'request refused: shutting down', status: 503, path: '/v1/customers' }),
    ]);
  });

  it('a customer whose card works, renewed for a month, leaves no warning', async () => {
    const m = await clockMerchant(app);
    const merchantId = m.api.creds.merchant_id;
    const c = (await m.api.post('/v1/customers', { email: 'fine@example.com' })).body;
    const si = (await m.api.post('/v1/setup-intents', { customer_id: c.id })).body;
    await m.api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, { card_number: '4242424242424242' });
    const plan = (await m.api.post('/v1/plans', { name: 'Basic', amount: 1000, currency: 'USD', interval: 'month' })).body;
    expect((await m.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).status).toBe(201);
    await m.advance({ seconds: 40 * DAY });
    expect(parsed().filter((l) => l.merchant_id === merchantId && l.level !== 'info')).toEqual([]);
  });
});

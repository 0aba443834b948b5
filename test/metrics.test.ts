// GET /metrics (issue 26, "Metrics"; conventions "Operations"): Prometheus text format behind the
// METRICS_TOKEN bearer on the main port (404 when neither a token nor METRICS_PORT is configured,
// 401 with the documented error body for a wrong token), requests counted by ROUTE TEMPLATE (never
// an id), the scrape-time families (jobs due and their age, invoices by status, pool connections),
// webhook and dunning outcomes, Node's default process metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, startApp, usingPostgres, type TestApp } from './helpers/app.ts';
import { clockMerchant } from './helpers/clock-merchant.ts';
import { receivers } from './helpers/receivers.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../src/platform/config.ts';
import { coalesce, registry } from '../src/platform/metrics.ts';
import { createMetricsApp } from '../src/server/metrics.ts';

const root = join(import.meta.dirname, '..');

const TOKEN = 'metrics-token-0123456789abcdef';
const NSF = '4000000000009995'; // saves, then every charge of it fails with insufficient_funds
let app: TestApp;
let plain: TestApp;
const hooks = receivers();
beforeAll(async () => {
  app = await startApp({ METRICS_TOKEN: TOKEN });
  plain = await startApp({}, { worker: false });
});
afterAll(async () => {
  hooks.close();
  await app?.close();
  await plain?.close();
});

const scrape = async (a: TestApp = app) => {
  const r = await fetch(`${a.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.text();
};

/** The value of one sample (name and exact label set), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    const want = Object.entries(labels);
    if (want.length === Object.keys(got).length && want.every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

const PROMQL_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan']);

/**
 * What a PromQL expression names that the service does not export: metric names (with or without
 * braces; an identifier not followed by "(" is a metric), label names in matchers (checked against
 * that family) and grouping labels (by/without/on/ignoring: on some family).
 */
function exprProblems(expr: string, labels: Map<string, Set<string>>): string[] {
  const problems: string[] = [];
  const plain = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  for (const [, metric, body] of plain.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}/g)) {
    for (const [, label] of body!.matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)) if (labels.has(metric!) && !labels.get(metric!)!.has(label!)) problems.push(`${metric}{${label}} in ${expr.trim()}`);
  }
  const bare = plain
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_m, _k, list: string) => {
      for (const l of list.split(',').map((x) => x.trim()).filter(Boolean)) if (![...labels.values()].some((set) => set.has(l))) problems.push(`grouping label ${l} in ${expr.trim()}`);
      return ' ';
    });
  for (const [, id] of bare.matchAll(/(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)) {
    if (PROMQL_KEYWORDS.has(id!) || id === 'up') continue; // up: Prometheus's own
    if (!labels.has(id!)) problems.push(`${id} in ${expr.trim()}`);
  }
  return problems;
}

describe('GET /metrics', () => {
  it('does not exist without METRICS_TOKEN or METRICS_PORT; a wrong or missing token gets 401 with the error body', async () => {
    const none = await fetch(`${plain.url}/metrics`);
    expect(none.status).toBe(404);
    const missing = await send(`${app.url}/metrics`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(missing.body).toEqual({ error: expect.objectContaining({ type: 'authentication_error', code: 'unauthorized', request_id: expect.stringMatching(/^req_/) }) });
    const wrong = await send(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('unauthorized');
    expect(wrong.text).not.toContain('http_requests_total');
  });

  it('the METRICS_PORT app is open without METRICS_TOKEN, and asks for the token when METRICS_TOKEN is set too', async () => {
    const open = createMetricsApp(plain.services);
    expect((await open.request('/metrics')).status).toBe(200);
    expect((await open.request('/')).status).toBe(404);
    const guarded = createMetricsApp(app.services); // METRICS_TOKEN set
    const refused = await guarded.request('/metrics', { headers: { Origin: 'https://evil.example' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect(await refused.text()).not.toContain('http_requests_total');
    expect((await guarded.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    const ok = await guarded.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('http_requests_total');
  });

  it('the scrape-time queries run once for concurrent scrapes and at most once a second (coalesce)', async () => {
    let t = 0;
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const load = coalesce(async () => {
      runs++;
      await gate;
      return runs;
    }, 1000, () => t);
    const all = Promise.all(Array.from({ length: 20 }, () => load()));
    release();
    expect(await all).toEqual(Array(20).fill(1));
    t = 999;
    expect(await load()).toBe(1);
    t = 1000;
    expect(await load()).toBe(2);
    // A failure is not kept: the next call runs again.
    const failing = coalesce(async () => {
      runs++;
      if (runs === 3) throw new Error('database down');
      return runs;
    }, 1000, () => t);
    await expect(failing()).rejects.toThrow('database down');
    expect(await failing()).toBe(4);
    // Twenty scrapes at once all answer.
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    await Promise.all(answers.map((r) => r.text()));
  });

  it('METRICS_PORT takes /metrics off the main port; a short token and METRICS_PORT = PORT are refused at start', async () => {
    const other = await startApp({ METRICS_TOKEN: TOKEN, METRICS_PORT: '9464' }, { worker: false });
    try {
      expect((await fetch(`${other.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    } finally {
      await other.close();
    }
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
    expect(() => loadConfig({ PORT: '4000', METRICS_PORT: '4000' })).toThrow(/METRICS_PORT must differ from PORT/);
  });

  it('counts requests by route template, method and status: never an id, GraphQL as /graphql, unknown paths as unmatched', async () => {
    const api = await app.merchant();
    const c = (await api.post('/v1/customers', { email: 'metrics@example.com' })).body;
    expect((await api.get(`/v1/customers/${c.id}`)).status).toBe(200);
    expect((await api.get(`/v1/customers/${c.id}`)).status).toBe(200);
    expect((await api.get('/v1/customers/cus_doesnotexist0000')).status).toBe(404);
    expect((await api.gql(`{ customer(id: "${c.id}") { id } }`)).status).toBe(200);
    expect((await fetch(`${app.url}/v1/customers`)).status).toBe(401); // refused by the auth middleware
    expect((await fetch(`${app.url}/no/such/path/${c.id}`)).status).toBe(404);

    const text = await scrape();
    expect(text).not.toContain(c.id);
    expect(text).not.toContain('cus_doesnotexist0000');
    expect(sample(text, 'http_requests_total', { route: '/v1/customers/:id', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'http_requests_total', { route: '/v1/customers/:id', method: 'GET', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_requests_total', { route: '/v1/customers', method: 'POST', status: '201' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_requests_total', { route: '/v1/customers', method: 'GET', status: '401' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_requests_total', { route: '/graphql', method: 'POST', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBeGreaterThanOrEqual(1);
    // The histogram: every route's count, sum and buckets.
    expect(sample(text, 'http_request_duration_seconds_count', { route: '/v1/customers/:id', method: 'GET' })).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'http_request_duration_seconds_bucket', { route: '/v1/customers/:id', method: 'GET', le: '+Inf' })).toBeGreaterThanOrEqual(3);
    // Every route label is a template: no segment that looks like an id (prefix_…).
    const routes = [...text.matchAll(/route="([^"]*)"/g)].map((m) => m[1]!);
    expect(routes.filter((r) => /\/[a-z]+_[A-Za-z0-9]{6,}/.test(r))).toEqual([]);
    // Outcome counters are exported at 0 before their first outcome (a series that appears at 1
    // has no increase() for Prometheus: the first give-up after a start would not alert).
    for (const outcome of ['succeeded', 'failed', 'gave_up', 'cancelled']) expect(sample(text, 'webhook_deliveries_total', { outcome }), outcome).toBeDefined();
    for (const outcome of ['retry_scheduled', 'final_attempt_failed', 'past_due', 'unpaid', 'incomplete_expired', 'recovered', 'cancelled_unpaid']) {
      expect(sample(text, 'billing_dunning_outcomes_total', { outcome }), outcome).toBeDefined();
    }
    expect(sample(text, 'billing_payment_failures_total', { failure_code: 'card_declined' })).toBeDefined();
    // Node's default process metrics.
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \S+$/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \S+$/m);
  });

  it('jobs due and the oldest due age per kind, computed at scrape time', async () => {
    // An app without a worker: a webhook delivery stays due.
    const idle = await startApp({ METRICS_TOKEN: TOKEN }, { worker: false });
    let text: string;
    try {
      const api = await idle.merchant();
      expect((await api.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hook' })).status).toBe(201);
      expect((await api.post('/v1/customers', { email: 'due@example.com' })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 1100));
      text = await scrape(idle);
    } finally {
      await idle.close();
    }
    const kinds = [...text.matchAll(/^jobs_due\{kind="([^"]+)"\} (\S+)$/gm)].map((m) => [m[1], Number(m[2])] as const);
    const deliver = kinds.find(([k]) => /webhook/.test(k!));
    expect(deliver, text.split('\n').filter((l) => l.startsWith('jobs_')).join('\n')).toBeDefined();
    expect(deliver![1]).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'jobs_oldest_due_age_seconds', { kind: deliver![0]! })).toBeGreaterThanOrEqual(1);
  });

  it('webhook outcomes, invoices by status, failed payments and dunning outcomes', async () => {
    const before = await scrape();
    const value = (text: string, name: string, labels: Record<string, string>) => sample(text, name, labels) ?? 0;

    // A delivery to a receiver that answers 200.
    const url = await hooks.listen((_req, res) => res.writeHead(200).end('ok'));
    const m = await clockMerchant(app);
    const { api } = m;
    expect((await api.post('/v1/webhook-endpoints', { url })).status).toBe(201);
    // A paid subscription, then one on a card that declines into dunning.
    const plan = (await api.post('/v1/plans', { name: 'Pro', amount: 3000, currency: 'USD', interval: 'month', trial_period_days: 7 })).body;
    const subscribe = async (card?: string) => {
      const c = (await api.post('/v1/customers', { email: 'dun@example.com' })).body;
      const si = (await api.post('/v1/setup-intents', { customer_id: c.id })).body;
      expect((await api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, card ? { card_number: card } : {})).status).toBe(200);
      return (await api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id })).body;
    };
    await subscribe();
    const sub = await subscribe(NSF);
    await m.advance({ to: sub.trial_end });
    expect((await api.get(`/v1/subscriptions/${sub.id}`)).body.status).toBe('past_due');
    await app.idle(api);

    const after = await scrape();
    expect(value(after, 'webhook_deliveries_total', { outcome: 'succeeded' })).toBeGreaterThan(value(before, 'webhook_deliveries_total', { outcome: 'succeeded' }));
    expect(value(after, 'billing_invoices_total', { status: 'paid' })).toBeGreaterThanOrEqual(1);
    expect(value(after, 'billing_invoices_total', { status: 'open' })).toBeGreaterThanOrEqual(1);
    expect(value(after, 'billing_payment_failures_total', { failure_code: 'insufficient_funds' })).toBeGreaterThan(
      value(before, 'billing_payment_failures_total', { failure_code: 'insufficient_funds' }),
    );
    expect(value(after, 'billing_dunning_outcomes_total', { outcome: 'retry_scheduled' })).toBe(value(before, 'billing_dunning_outcomes_total', { outcome: 'retry_scheduled' }) + 1);
    expect(value(after, 'billing_dunning_outcomes_total', { outcome: 'past_due' })).toBe(value(before, 'billing_dunning_outcomes_total', { outcome: 'past_due' }) + 1);
  });

  it.runIf(usingPostgres)('the database pools: connections by state and the configured maximum', async () => {
    const text = await scrape();
    expect(sample(text, 'db_pool_connections', { state: 'max' })).toBe(2 * app.services.config.DB_POOL_SIZE);
    expect(sample(text, 'db_pool_connections', { state: 'idle' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'db_pool_connections', { state: 'active' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'db_pool_connections', { state: 'waiting' })).toBe(0);
  });

  it('the example alert rules and the Grafana dashboard (docs/monitoring) use only families and labels the service exports', async () => {
    const text = await scrape();
    // Every family and its label names, from the registry (a family with no sample yet has its labels too).
    const labels = new Map<string, Set<string>>();
    for (const m of registry.getMetricsAsArray() as unknown as { name: string; type: string; labelNames?: string[] }[]) {
      const names = new Set([...(m.labelNames ?? []), 'job', 'instance']); // the scrape's target labels
      if (m.type === 'histogram') {
        for (const suffix of ['_count', '_sum']) labels.set(m.name + suffix, names);
        labels.set(`${m.name}_bucket`, new Set([...names, 'le']));
      } else labels.set(m.name, names);
    }
    for (const [, name] of text.matchAll(/^# TYPE (\S+)/gm)) expect(labels.has(name!) || labels.has(`${name}_count`), name).toBe(true);

    const dashboardText = readFileSync(join(root, 'docs', 'monitoring', 'grafana-dashboard.json'), 'utf8');
    const dashboard = JSON.parse(dashboardText); // importable: valid JSON
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })]);
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(10);
    expect(new Set(dashboard.panels.map((p: any) => p.id)).size).toBe(dashboard.panels.length);
    const dashboardExprs: string[] = dashboard.panels.flatMap((p: any) => p.targets.map((t: any) => t.expr));
    expect(dashboardExprs.every((e) => typeof e === 'string' && e.includes('job=~"$job"'))).toBe(true);

    // alerts.yml: each rule's expr (inline, or a `|` block), and its name, severity and summary.
    const alertsText = readFileSync(join(root, 'docs', 'monitoring', 'alerts.yml'), 'utf8');
    const rules = alertsText.split(/\n(?=[ ]+- alert: )/).slice(1);
    expect(rules.length).toBeGreaterThanOrEqual(10);
    const alertExprs = rules.map((r) => {
      expect(r).toMatch(/labels: \{ severity: (page|ticket) \}/);
      expect(r).toMatch(/summary: ".+"/);
      const inline = /\n[ ]+expr: (?!\|)(.+)/.exec(r);
      if (inline) return inline[1]!;
      const block = /\n([ ]+)expr: \|\n((?:\1[ ]+.+\n?)+)/.exec(r);
      expect(block, r).not.toBeNull();
      return block![2]!;
    });
    const names = new Set(rules.map((r) => /- alert: (\w+)/.exec(r)![1]));
    expect(names.size).toBe(rules.length);

    expect([...dashboardExprs, ...alertExprs].flatMap((e) => exprProblems(e, labels))).toEqual([]);
    // The check can fail: a misspelt family used without braces, an unknown label, an unknown grouping label.
    expect(exprProblems('rate(http_request_total[5m])', labels)).toEqual(['http_request_total in rate(http_request_total[5m])']);
    expect(exprProblems('sum(webhook_deliveries_total{result="gave_up"})', labels)).toHaveLength(1);
    expect(exprProblems('sum by (endpoint) (rate(webhook_deliveries_total[5m]))', labels)).toHaveLength(1);
    expect(exprProblems('time() - max(billing_ledger_invariant_last_check_timestamp_seconds{job="billing"}) > 3 * 3600', labels)).toEqual([]);
  });
});

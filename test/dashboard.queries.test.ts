// What each dashboard page costs the database (issue 24: "each page's queries stay within the
// complexity limit and a bounded number of SQL statements (N+1-free), measured on 10,000
// customers"). One merchant gets 10,000 customers, 5,000 payments, 1,000 subscriptions and
// invoices, 500 wallets and 3,000 events with their delivery attempts (bulk SQL), plus a "small"
// and a "large" record of each kind the detail pages show (API calls: 2 vs 25 children). Then every
// query document the dashboard's pages declare — read from dashboard/src, so a changed page is
// measured as it is — goes through POST /graphql with the dashboard's session cookie and headers,
// and the SQL statements of each request are counted (the app's query log, no background worker;
// transaction control and the row-level-security setting left out, so both databases count alike).
//
// A list page must cost the same for first 5, 20 (what it sends) and 100; a detail page the same
// for a record with 2 children as for one with 25 (give or take 2: see below); every page at most MAX_STATEMENTS; every
// document within the complexity limit. A page whose required variables this file cannot fill
// (a new detail page) fails here: add its root field to DETAIL below.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatDocument } from '@urql/core';
import { complexityFromQuery } from '@pothos/plugin-complexity';
import { Kind, parse, print, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardUser } from '../src/domain/merchants/dashboard.ts';
import { schema } from '../src/graphql/schema.ts';
import { startApp, type Client, type TestApp } from './helpers/app.ts';

// 3 of them are the session check (session, user, merchant); the heaviest pages are the customer
// and subscription details (a dozen nested lists and records, each one batched statement or two).
const MAX_STATEMENTS = 25;
const CUSTOMERS = 10_000;
const PAGES_DIR = join(import.meta.dirname, '..', 'dashboard', 'src');

/** Every `graphql(\`…\`)` query of the dashboard's sources, as urql sends it (with __typename). */
function dashboardQueries(): { name: string; file: string; doc: DocumentNode; op: OperationDefinitionNode }[] {
  const files = (readdirSync(PAGES_DIR, { recursive: true }) as string[]).filter((f) => f.endsWith('.tsx') || f.endsWith('.ts'));
  const out: { name: string; file: string; doc: DocumentNode; op: OperationDefinitionNode }[] = [];
  for (const file of files) {
    const text = readFileSync(join(PAGES_DIR, file), 'utf8');
    for (const m of text.matchAll(/graphql\(\s*`([^`]*)`/g)) {
      const doc = formatDocument(parse(m[1]!));
      for (const def of doc.definitions) {
        if (def.kind === Kind.OPERATION_DEFINITION && def.operation === 'query') out.push({ name: def.name?.value ?? `(anonymous in ${file})`, file, doc, op: def });
      }
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** The root field that takes `$id`: which record a detail page shows. */
function idField(op: OperationDefinitionNode): string | null {
  for (const sel of op.selectionSet.selections) {
    if (sel.kind !== Kind.FIELD) continue;
    if (sel.arguments?.some((a) => a.value.kind === Kind.VARIABLE && a.value.name.value === 'id')) return sel.name.value;
  }
  return null;
}

let app: TestApp;
let api: Client;
let cookie = '';
let n = 0;
const tag = Math.random().toString(36).slice(2, 10).padEnd(8, 'x');
const uid = (p: string) => `${p}_${tag}${(n++).toString().padStart(8, '0')}`;
/** The "small" (2 children) and "large" (25 children) record of each detail page's root field. */
const DETAIL: Record<string, { small: string; large: string }> = {};

async function sql(text: string, ...params: unknown[]) {
  return app.services.db.prisma.$executeRawUnsafe(text, ...params);
}

async function ok(r: Promise<{ status: number; body: any }>) {
  const res = await r;
  expect([200, 201], JSON.stringify(res.body)).toContain(res.status);
  return res.body;
}

/**
 * A customer with `k` saved cards, subscriptions, payments (k refunds on the first), wallets, a wallet
 * with k ledger lines, a subscription with k invoices, an event with k delivery attempts, a one-off
 * invoice with k lines and k credit notes, and k invoice items still waiting.
 */
async function record(k: number, plans: { id: string }[], endpoint: { id: string }) {
  // Through the API, so the records are what the service makes; the k children of each kind are
  // made side by side (one after the other, the large record alone took ~25 s: ~130 requests).
  const times = <T>(fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: k }, (_, i) => fn(i)));
  const c = await ok(api.post('/v1/customers', { email: `rich${k}.${tag}@example.com`, name: `Rich ${k}` }));
  await times(async () => {
    const si = await ok(api.post('/v1/setup-intents', { customer_id: c.id }));
    await ok(api.post(`/v1/test-helpers/setup-intents/${si.id}/complete`, {}));
  });
  const subs = await times((i) => ok(api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plans[i % plans.length]!.id })));
  expect(subs.every((s) => s.status === 'active')).toBe(true);
  const pm = (await ok(api.get(`/v1/payment-methods?customer_id=${c.id}&limit=1`))).data[0].id;
  const payment = await ok(api.post('/v1/payments', { amount: 100 * k, currency: 'USD', payment_method_id: pm }));
  await times(() => ok(api.post('/v1/refunds', { payment_id: payment.id, amount: 10 })));
  const wallets = await Promise.all(['USD', 'EUR', 'KES', 'GBP', 'UGX'].slice(0, Math.min(k, 5)).map((currency) => ok(api.post('/v1/wallets', { customer_id: c.id, currency }))));
  await times((i) => ok(api.post(`/v1/wallets/${wallets[0].id}/credit`, { amount: 100 + i, description: `Credit ${i}`, reference: `r${k}-${i}` })));
  // The subscription's invoices: k in all (one from its creation, the rest bulk).
  const sub = subs[0];
  await sql(
    `INSERT INTO invoices (id, merchant_id, customer_id, subscription_id, number, status, billing_reason, currency, subtotal, total, amount_due, amount_paid, payment_id, period_start, period_end, finalized_at, paid_at, created_at, updated_at)
     SELECT 'in_' || $1 || lpad(i::text, 6, '0'), $2, $3, $4, 'INV-B' || $1 || i, 'paid', 'subscription_cycle', 'USD', 1500, 1500, 1500, 1500, $5, now() - i * interval '30 days', now() - (i - 1) * interval '30 days', now(), now(), now() - i * interval '30 days', now()
       FROM generate_series(1, $6::int) i`,
    `${tag}k${k}`, api.creds.merchant_id, c.id, sub.id, payment.id, k - 1,
  );
  // An event with k delivery attempts (to the endpoint, attempts 1..k).
  const event = (await ok(api.get(`/v1/events?limit=1`))).data[0];
  await sql(
    `INSERT INTO delivery_attempts (id, merchant_id, event_id, endpoint_id, status, attempt_number, response_status, scheduled_at, attempted_at, duration_ms, created_at, updated_at)
     SELECT 'wda_' || $1 || lpad(i::text, 6, '0'), $2, $3, $4, CASE WHEN i = $5 THEN 'succeeded' ELSE 'failed' END, i, CASE WHEN i = $5 THEN 200 ELSE 500 END, now(), now(), 12, now(), now()
       FROM generate_series(1, $5::int) i`,
    `${tag}k${k}`, api.creds.merchant_id, event.id, endpoint.id, k,
  );
  // A one-off invoice of k items, sent, with k credit notes; then k more items left waiting.
  for (let i = 0; i < k; i++) await ok(api.post('/v1/invoice-items', { customer_id: c.id, amount: 100 + i, currency: 'USD', description: `Item ${i}` }));
  const draft = await ok(api.post('/v1/invoices', { customer_id: c.id, currency: 'USD', collection_method: 'send_invoice' }));
  const invoice = await ok(api.post(`/v1/invoices/${draft.id}/finalize`));
  expect(invoice.lines).toHaveLength(k);
  for (let i = 0; i < k; i++) await ok(api.post('/v1/credit-notes', { invoice_id: invoice.id, amount: 1 }));
  for (let i = 0; i < k; i++) await ok(api.post('/v1/invoice-items', { customer_id: c.id, amount: 100 + i, currency: 'USD', description: `Waiting ${i}` }));
  return { customer: c.id, payment: payment.id, subscription: sub.id, wallet: wallets[0].id, event: event.id, invoice: invoice.id };
}

describe('dashboard pages on 10,000 customers: SQL statements per request and complexity', () => {
  const measured: { name: string; file: string; vars: string; statements: number; complexity: number }[] = [];

  beforeAll(async () => {
    app = await startApp({ RATE_LIMIT_PER_SECOND: '0' }, { worker: false });
    api = await app.merchant({ name: 'Big merchant' });
    const m = api.creds.merchant_id;
    const password = 'correct horse battery staple';
    const user = await createDashboardUser(app.services.db.prisma, { merchantId: m, email: `owner.${tag}@big.example`, password });
    const res = await fetch(`${app.url}/dashboard/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: app.url }, body: JSON.stringify({ email: user.email, password }) });
    expect(res.status).toBe(200);
    cookie = /billing_session=[^;]*/.exec(res.headers.get('set-cookie') ?? '')![0];

    // Volume, in bulk: customers (their search terms kept by the trigger), plans, payments,
    // subscriptions with an invoice each, wallets, events with a delivery attempt each.
    const t0 = performance.now();
    await sql(
      `INSERT INTO customers (id, merchant_id, email, name, created_at, updated_at)
       SELECT 'cus_' || $2 || lpad(i::text, 10, '0'), $1, 'u' || i || '@big.example', 'Customer ' || i, now() - i * interval '1 second', now()
         FROM generate_series(1, $3::int) i`,
      m, tag, CUSTOMERS,
    );
    const plans = [];
    for (const [name, amount] of [['Basic', 1000], ['Pro', 3000], ['Max', 5000]] as const) plans.push(await ok(api.post('/v1/plans', { name, amount, currency: 'USD', interval: 'month' })));
    await sql(
      `INSERT INTO payments (id, merchant_id, customer_id, amount, currency, status, checkout_token, expires_at, completed_at, created_at, updated_at)
       SELECT 'pay_' || $2 || lpad(i::text, 10, '0'), $1, 'cus_' || $2 || lpad((i % $3::int + 1)::text, 10, '0'), 1000 + i % 500, 'USD',
              CASE WHEN i % 9 = 0 THEN 'failed' ELSE 'succeeded' END, 'tok_' || $2 || i, now(), now(), now() - i * interval '1 minute', now()
         FROM generate_series(1, 5000) i`,
      m, tag, CUSTOMERS,
    );
    await sql(
      `INSERT INTO subscriptions (id, merchant_id, customer_id, plan_id, status, billing_anchor, current_period_start, current_period_end, latest_invoice_id, created_at, updated_at)
       SELECT 'sub_' || $2 || lpad(i::text, 10, '0'), $1, 'cus_' || $2 || lpad(i::text, 10, '0'), ($3::text[])[1 + i % 3], 'active', now(), now(), now() + interval '30 days',
              'in_' || $2 || lpad(i::text, 10, '0'), now() - i * interval '1 minute', now()
         FROM generate_series(1, 1000) i`,
      m, tag, plans.map((p) => p.id),
    );
    await sql(
      `INSERT INTO invoices (id, merchant_id, customer_id, subscription_id, number, status, billing_reason, currency, subtotal, total, amount_due, amount_paid, payment_id, period_start, period_end, finalized_at, paid_at, created_at, updated_at)
       SELECT 'in_' || $2 || lpad(i::text, 10, '0'), $1, 'cus_' || $2 || lpad(i::text, 10, '0'), 'sub_' || $2 || lpad(i::text, 10, '0'), 'INV-' || $2 || i, 'paid', 'subscription_create', 'USD',
              1000, 1000, 1000, 1000, 'pay_' || $2 || lpad(i::text, 10, '0'), now(), now() + interval '30 days', now(), now(), now() - i * interval '1 minute', now()
         FROM generate_series(1, 1000) i`,
      m, tag,
    );
    await sql(
      `INSERT INTO wallets (id, merchant_id, customer_id, currency, balance, created_at, updated_at)
       SELECT 'wal_' || $2 || lpad(i::text, 10, '0'), $1, 'cus_' || $2 || lpad(i::text, 10, '0'), 'USD', 0, now() - i * interval '1 minute', now()
         FROM generate_series(1, 500) i`,
      m, tag,
    );
    // Coupons, tax rates, and a credit note on each of the first 500 invoices.
    await sql(
      `INSERT INTO coupons (merchant_id, id, name, percent_off_bp, duration, created_at)
       SELECT $1, 'BULK-' || $2 || i, 'Bulk ' || i, 500, 'once', now() - i * interval '1 second' FROM generate_series(1, 300) i`,
      m, tag,
    );
    await sql(
      `INSERT INTO tax_rates (id, merchant_id, display_name, percentage, inclusive, active, created_at)
       SELECT 'txr_' || $2 || lpad(i::text, 10, '0'), $1, 'Tax ' || i, 200000, i % 2 = 0, i % 3 <> 0, now() - i * interval '1 second' FROM generate_series(1, 300) i`,
      m, tag,
    );
    await sql(
      `INSERT INTO credit_notes (id, merchant_id, customer_id, invoice_id, number, currency, amount, type, credit_amount, created_at)
       SELECT 'cn_' || $2 || lpad(i::text, 10, '0'), $1, 'cus_' || $2 || lpad(i::text, 10, '0'), 'in_' || $2 || lpad(i::text, 10, '0'), 'CN-B' || $2 || i, 'USD', 100, 'post_payment', 100, now() - i * interval '1 second'
         FROM generate_series(1, 500) i`,
      m, tag,
    );
    const endpoint = await ok(api.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', description: 'Backend' }));
    await sql(
      `INSERT INTO events (id, merchant_id, type, data, created_at)
       SELECT 'evt_' || $2 || lpad(i::text, 10, '0'), $1, 'customer.created',
              jsonb_build_object('object', jsonb_build_object('id', 'cus_' || $2 || lpad(i::text, 10, '0'), 'object', 'customer', 'email', 'u' || i || '@big.example')),
              now() - interval '1 day' - i * interval '1 second'
         FROM generate_series(1, 3000) i`,
      m, tag,
    );
    await sql(
      `INSERT INTO delivery_attempts (id, merchant_id, event_id, endpoint_id, status, attempt_number, response_status, scheduled_at, attempted_at, duration_ms, created_at, updated_at)
       SELECT 'wda_' || $2 || lpad(i::text, 10, '0'), $1, 'evt_' || $2 || lpad(i::text, 10, '0'), $3, 'succeeded', 1, 200, now(), now(), 9, now(), now()
         FROM generate_series(1, 3000) i`,
      m, tag, endpoint.id,
    );
    const seeded = performance.now() - t0;

    // The small and the large record of each detail page, through the API.
    const small = await record(2, plans, endpoint);
    const large = await record(25, plans, endpoint);
    for (const field of ['customer', 'payment', 'subscription', 'wallet', 'event', 'invoice'] as const) DETAIL[field] = { small: small[field], large: large[field] };
    // The customer page's own lists ($id is the customer), a filter's record (node), a subscription's preview.
    for (const field of ['invoiceItems', 'wallets', 'invoices', 'creditNotes', 'node']) DETAIL[field] = DETAIL.customer!;
    DETAIL.upcomingInvoice = DETAIL.subscription!;
    // A second endpoint with one attempt at each of the 10 newest events: its page lists 10 attempts, the first's 20 of 3,000.
    const endpoint2 = await ok(api.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/other', description: 'Few deliveries' }));
    await sql(
      `INSERT INTO delivery_attempts (id, merchant_id, event_id, endpoint_id, status, attempt_number, response_status, scheduled_at, attempted_at, duration_ms, created_at, updated_at)
       SELECT 'wda_' || $2 || 'e2' || row_number() OVER (), $1, e.id, $3, 'succeeded', 1, 200, now(), now(), 9, now(), now()
         FROM (SELECT id FROM events WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT 10) e`,
      m, tag, endpoint2.id,
    );
    DETAIL.webhookEndpoint = { small: endpoint2.id, large: endpoint.id };
    await analyze();
    console.log(`seeded ${CUSTOMERS} customers and the rest in bulk in ${(seeded / 1000).toFixed(1)} s, the detail records in ${((performance.now() - t0 - seeded) / 1000).toFixed(1)} s`);
  }, 600_000);

  afterAll(async () => {
    if (measured.length) {
      console.log(['| query | file | variables | statements | complexity |', '|---|---|---|---:|---:|', ...measured.map((r) => `| ${r.name} | ${r.file} | ${r.vars} | ${r.statements} | ${r.complexity} |`)].join('\n'));
    }
    await app?.close();
  });

  /** The planner's statistics for the bulk rows (ANALYZE needs the tables' owner on PostgreSQL). */
  async function analyze() {
    const tables = 'customers, customer_search_terms, payments, subscriptions, invoices, wallets, events, delivery_attempts, coupons, tax_rates, credit_notes, pending_invoice_items';
    if (process.env.TEST_DATABASE_URL) {
      const pg = await import('pg');
      const c = new pg.default.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await c.connect();
      await c.query(`ANALYZE ${tables}`);
      await c.end();
    } else await sql(`ANALYZE ${tables}`);
  }

  /** One request as the dashboard sends it: the session cookie, JSON, X-Billing-Dashboard, our Origin. */
  async function cost(doc: DocumentNode, variables: Record<string, unknown>) {
    app.queries.reset();
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', 'x-billing-dashboard': '1', origin: app.url, cookie },
      body: JSON.stringify({ query: print(doc), variables }),
    });
    const body = (await res.json()) as { data?: any; errors?: unknown[] };
    expect(res.status).toBe(200);
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    // Data statements: transaction control and the row-level-security setting (PGlite wraps each raw
    // statement in BEGIN + set_config; PostgreSQL's raw pool keeps it per connection) are not counted.
    const data = app.queries.sql.filter((q) => !/^\s*(BEGIN|COMMIT|ROLLBACK|SELECT set_config\()/i.test(q));
    const statements = data.length;
    const sqlText = data.map((s) => s.replace(/\s+/g, ' ').slice(0, 160));
    return { statements, sql: sqlText, data: body.data };
  }

  const queries = dashboardQueries();

  it('finds the pages’ queries in dashboard/src', () => {
    expect(queries.map((q) => q.name)).toEqual(
      expect.arrayContaining([
        'DashboardPayments',
        'DashboardCustomers',
        'DashboardCustomer',
        'DashboardSubscription',
        'DashboardEvents',
        'DashboardWebhookEndpoint',
        'DashboardWebhookDeliveries',
        'DashboardCoupons',
        'DashboardTaxRates',
        'DashboardCreditNotes',
        'DashboardInvoice',
        'DashboardPickCustomers',
        'DashboardPickPlans',
        'DashboardPickCoupons',
        'DashboardPickTaxRates',
        'DashboardWaitingInvoiceItems',
        'DashboardCustomerPayments',
        'DashboardCustomerInvoices',
        'DashboardCustomerBalance',
        'DashboardSubscriptionPreview',
        'DashboardFilterTarget',
      ]),
    );
    expect(queries.length).toBeGreaterThanOrEqual(25);
  });

  for (const q of queries) {
    it(`${q.name} (${q.file}): bounded statements whatever the page size or the record's children, within the complexity limit`, async () => {
      const vars = q.op.variableDefinitions ?? [];
      const names = vars.map((v) => v.variable.name.value);
      const required = vars.filter((v) => v.type.kind === Kind.NON_NULL_TYPE && !v.defaultValue).map((v) => v.variable.name.value);
      const unknown = required.filter((r) => r !== 'id');
      expect(unknown, `${q.name}: required variables this test cannot fill`).toEqual([]);
      let runs: { label: string; variables: Record<string, unknown> }[];
      if (required.includes('id')) {
        const field = idField(q.op);
        const ids = field ? DETAIL[field] : undefined;
        expect(ids, `${q.name}: no small/large record for root field ${field}; add one to DETAIL`).toBeDefined();
        runs = [
          { label: 'a record with 2 children', variables: { id: ids!.small } },
          { label: 'a record with 25 children', variables: { id: ids!.large } },
        ];
      } else if (names.includes('first')) {
        runs = [5, 20, 100].map((first) => ({ label: `first: ${first}`, variables: { first } }));
      } else runs = [{ label: 'no variables', variables: {} }];

      const results = [];
      for (const run of runs) {
        await cost(q.doc, run.variables); // warm (the merchant's settings, the document caches)
        const r = await cost(q.doc, run.variables);
        const complexity = complexityFromQuery(q.doc, { schema, variables: run.variables }).complexity;
        expect(complexity, `${q.name} ${run.label}`).toBeLessThanOrEqual(app.services.config.GRAPHQL_MAX_COMPLEXITY);
        measured.push({ name: q.name, file: q.file, vars: run.label, statements: r.statements, complexity });
        results.push({ ...run, ...r });
      }
      // The data is there: lists fill their page, records are found.
      const first = results[0]!;
      const root = Object.values(first.data)[0] as any;
      expect(root, q.name).not.toBeNull();
      if (names.includes('first') && typeof root?.totalCount === 'number') {
        const last = results.at(-1)!.data[Object.keys(first.data)[0]!];
        expect(last.edges.length, q.name).toBe(Math.min(root.totalCount, 100));
      }
      // The same count (an N+1 would add 20 or more). One or two apart is allowed: a DataLoader
      // batches the loads of one tick, and whether two resolvers' loads (an invoice's payment in
      // latestInvoice and in the invoices list) land in one tick can vary from run to run.
      for (const r of results.slice(1)) {
        expect(Math.abs(r.statements - first.statements), `${q.name}: ${r.label} vs ${first.label}\n${r.sql.join('\n')}\n---\n${first.sql.join('\n')}`).toBeLessThanOrEqual(2);
      }
      expect(first.statements, `${q.name}\n${first.sql.join('\n')}`).toBeLessThanOrEqual(MAX_STATEMENTS);
    });
  }
});

// Prometheus metrics (prom-client): one registry per process, served by GET /metrics
// (src/server/metrics.ts). Three kinds of families:
//   - per request: http_requests_total and http_request_duration_seconds, labelled with the ROUTE
//     TEMPLATE (/v1/customers/:id, never an id) — one counter inc and one histogram observe, on
//     label children cached per (route, method, status): the hot path does no label hashing;
//   - per outcome, where the outcome is decided: webhook deliveries, dunning steps, failed payments,
//     and the periodic ledger invariant check (src/services/ledger-check.ts);
//   - at scrape time, from one cheap query each (src/platform/metrics.store.ts): jobs due and the
//     oldest due age per kind, invoices by status, and the database pools' connections.
// Node's default process metrics (CPU, memory, event-loop lag, GC) come from collectDefaultMetrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from './db/index.ts';
import { dueJobsByKind, invoiceCountsByStatus } from './metrics.store.ts';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by route template, method and status.',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
});

const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from a request reaching the application to its answer, by route template and method.',
  labelNames: ['route', 'method'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome: succeeded, failed (a retry is scheduled), gave_up (the last attempt failed), cancelled (endpoint disabled or deleted).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const dunning = new Counter({
  name: 'billing_dunning_outcomes_total',
  help: 'Dunning steps by outcome: retry_scheduled and final_attempt_failed (an invoice payment failed), past_due, unpaid, recovered, cancelled_unpaid, incomplete_expired.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const paymentFailures = new Counter({
  name: 'billing_payment_failures_total',
  help: 'Charges declined or failed (payment.failed events), by failure code.',
  labelNames: ['failure_code'] as const,
  registers: [registry],
});

const ledgerChecks = new Counter({
  name: 'billing_ledger_invariant_checks_total',
  help: 'Balances checked against their ledger (the periodic ledger invariant check), by ledger (wallet, customer_balance) and result (ok, violated).',
  labelNames: ['ledger', 'result'] as const,
  registers: [registry],
});

const ledgerViolations = new Gauge({
  name: 'billing_ledger_invariant_violations',
  help: "Balances that differed from the sum of their ledger in this process's last complete check, by ledger. Absent until the first check.",
  labelNames: ['ledger'] as const,
  registers: [registry],
});

const ledgerLastCheck = new Gauge({
  name: 'billing_ledger_invariant_last_check_timestamp_seconds',
  help: "When this process's last complete ledger invariant check ended (Unix time), by ledger.",
  labelNames: ['ledger'] as const,
  registers: [registry],
});

const jobsDue = new Gauge({
  name: 'jobs_due',
  help: 'Background jobs due now (pending, run_at at or before the wall clock) and not run yet, by kind. Computed at scrape time.',
  labelNames: ['kind'] as const,
  registers: [registry],
});

const jobsOldestDueAge = new Gauge({
  name: 'jobs_oldest_due_age_seconds',
  help: 'How long the oldest due job of each kind has been waiting (wall clock). Computed at scrape time.',
  labelNames: ['kind'] as const,
  registers: [registry],
});

const invoicesByStatus = new Gauge({
  name: 'billing_invoices_total',
  help: 'Invoices that exist now, by status, all merchants (a gauge computed at scrape time, not a counter).',
  labelNames: ['status'] as const,
  registers: [registry],
});

const poolConnections = new Gauge({
  name: 'db_pool_connections',
  help: "This process's PostgreSQL pool connections by state: active (checked out), idle, waiting (requests queued for one), max (the configured size of both pools). Not reported on the embedded database.",
  labelNames: ['state'] as const,
  registers: [registry],
});

// Every label value an outcome counter can take is exported at 0 from the start: a series that
// first appears at 1 has no increase for Prometheus (`increase(webhook_deliveries_total{outcome=
// "gave_up"}[1h])` would miss the first give-up after each start, and with it the alert).
const WEBHOOK_OUTCOMES = ['succeeded', 'failed', 'gave_up', 'cancelled'] as const;
const DUNNING_OUTCOMES = ['retry_scheduled', 'final_attempt_failed', 'past_due', 'unpaid', 'incomplete_expired', 'recovered', 'cancelled_unpaid'] as const;
/** The processors' failure codes (docs/payments.md); another code gets its series when it first happens. */
const FAILURE_CODES = ['card_declined', 'insufficient_funds', 'mobile_money_declined', 'payment_method_detached', 'processing_error', 'processor_unavailable'] as const;
for (const o of WEBHOOK_OUTCOMES) webhookDeliveries.labels(o).inc(0);
for (const o of DUNNING_OUTCOMES) dunning.labels(o).inc(0);
for (const c of FAILURE_CODES) paymentFailures.labels(c).inc(0);
const LEDGERS = ['wallet', 'customer_balance'] as const;
for (const l of LEDGERS) for (const r of ['ok', 'violated']) ledgerChecks.labels(l, r).inc(0);

// ---- per request

/** Methods kept as they are; anything else is counted as "other" (a label value per method sent would be unbounded). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

interface RouteChildren {
  count: Map<number, { inc(): void }>;
  duration: { observe(v: number): void };
}
const children = new Map<string, RouteChildren>();

/** Counts one answered request: `route` is the template it matched ("unmatched" when none did). */
export function observeRequest(route: string, method: string, status: number, seconds: number): void {
  const m = METHODS.has(method) ? method : 'other';
  const key = `${m} ${route}`;
  let c = children.get(key);
  if (c === undefined) {
    c = { count: new Map(), duration: httpDuration.labels(route, m) };
    children.set(key, c);
  }
  let counter = c.count.get(status);
  if (counter === undefined) {
    counter = httpRequests.labels(route, m, String(status));
    c.count.set(status, counter);
  }
  counter.inc();
  c.duration.observe(seconds);
}

// ---- outcomes

export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];
export function countWebhookDelivery(outcome: WebhookOutcome): void {
  webhookDeliveries.labels(outcome).inc();
}

const UNPAID = new Set(['past_due', 'unpaid']);

/**
 * Counts the outcomes an event stands for (called after its change commits): a failed payment,
 * a dunning step. Only types an operator watches reach here (src/domain/events/operator-log.ts).
 */
export function countEvent(type: string, object: Record<string, unknown>, previous?: Record<string, unknown>): void {
  switch (type) {
    case 'payment.failed':
      paymentFailures.labels(typeof object.failure_code === 'string' ? object.failure_code : 'unknown').inc();
      return;
    case 'invoice.payment_failed':
      dunning.labels(object.next_payment_attempt == null ? 'final_attempt_failed' : 'retry_scheduled').inc();
      return;
    case 'subscription.updated': {
      const from = previous?.status;
      const to = object.status;
      if (typeof from !== 'string' || from === to) return;
      if (to === 'past_due' || to === 'unpaid' || to === 'incomplete_expired') dunning.labels(to).inc();
      else if (to === 'active' && UNPAID.has(from)) dunning.labels('recovered').inc();
      return;
    }
    case 'subscription.cancelled':
      if (typeof previous?.status === 'string' && UNPAID.has(previous.status)) dunning.labels('cancelled_unpaid').inc();
      return;
    default:
  }
}

/** Records one complete pass of the ledger invariant check over one ledger (src/services/ledger-check.ts). */
export function recordLedgerCheck(ledger: (typeof LEDGERS)[number], checked: number, violated: number): void {
  ledgerChecks.labels(ledger, 'ok').inc(checked - violated);
  ledgerChecks.labels(ledger, 'violated').inc(violated);
  ledgerViolations.labels(ledger).set(violated);
  ledgerLastCheck.labels(ledger).set(Date.now() / 1000);
}

// ---- at scrape time

/**
 * `load` run at most once per `minIntervalMs`, however often it is asked for: callers while it runs
 * share its promise, callers within `minIntervalMs` of its end get its result. A failure is not kept.
 * So the scrape-time queries (a count over every invoice) cost one run per second per process at
 * most, whoever scrapes how often (an unauthenticated METRICS_PORT reached by a loop of scrapes).
 */
export function coalesce<T>(load: () => Promise<T>, minIntervalMs: number, now: () => number = Date.now): () => Promise<T> {
  let last: { at: number; value: T } | undefined;
  let inFlight: Promise<T> | undefined;
  return () => {
    if (inFlight) return inFlight;
    if (last && now() - last.at < minIntervalMs) return Promise.resolve(last.value);
    inFlight = load().then(
      (value) => {
        last = { at: now(), value };
        inFlight = undefined;
        return value;
      },
      (err: unknown) => {
        inFlight = undefined;
        throw err;
      },
    );
    return inFlight;
  };
}

/** How long the scrape-time query results are reused (per process and database). */
export const SCRAPE_QUERIES_INTERVAL_MS = 1_000;
const scrapeQueries = new WeakMap<Database, () => Promise<[Awaited<ReturnType<typeof dueJobsByKind>>, Awaited<ReturnType<typeof invoiceCountsByStatus>>]>>();

/** Refreshes the scrape-time gauges (one query each, at most once a second) and renders every family. */
export async function renderMetrics(db: Database): Promise<string> {
  let queries = scrapeQueries.get(db);
  if (!queries) {
    queries = coalesce(() => Promise.all([dueJobsByKind(db.prisma), invoiceCountsByStatus(db.prisma)]), SCRAPE_QUERIES_INTERVAL_MS);
    scrapeQueries.set(db, queries);
  }
  const [due, invoices] = await queries();
  jobsDue.reset();
  jobsOldestDueAge.reset();
  for (const j of due) {
    jobsDue.labels(j.kind).set(j.due);
    jobsOldestDueAge.labels(j.kind).set(Math.max(0, j.oldestAgeSeconds));
  }
  invoicesByStatus.reset();
  for (const r of invoices) invoicesByStatus.labels(r.status).set(r.n);
  poolConnections.reset();
  const pool = db.poolStats();
  if (pool) {
    poolConnections.labels('active').set(pool.total - pool.idle);
    poolConnections.labels('idle').set(pool.idle);
    poolConnections.labels('waiting').set(pool.waiting);
    poolConnections.labels('max').set(pool.max);
  }
  return registry.metrics();
}

// Configuration from the environment, validated once at start. A bad value stops the process
// with a message naming the variable, instead of failing later in some request.
import { z } from 'zod';

const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgresql:// connection string')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  DATA_DIR: z.string().min(1).default('./.data'),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional().or(z.literal('').transform(() => undefined)),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** Server processes sharing the port (node:cluster), each with its pool and job worker; > 1 needs DATABASE_URL. */
  WEB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  BILLING_BOOTSTRAP_CLIENT_ID: z.string().regex(/^ck_[A-Za-z0-9_-]{8,}$/, 'must look like ck_…').optional(),
  BILLING_BOOTSTRAP_CLIENT_SECRET: z.string().regex(/^sk_[A-Za-z0-9_-]{16,}$/, 'must look like sk_… (16+ characters after the prefix)').optional(),
  BILLING_ALLOW_HTTP_WEBHOOKS: bool.default(false),
  /** A webhook delivery that has not answered 2xx within this time is a failed attempt. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(15_000),
  /** Requests per second allowed per API key (0 = no limit); above it: 429 rate_limited. */
  RATE_LIMIT_PER_SECOND: z.coerce.number().int().min(0).max(1_000_000).default(500),
  /**
   * Where the request rate limit and the abuse limits count: `database` (the default on PostgreSQL:
   * every instance on the database counts against one limit) or `memory` (per process). The
   * embedded database is one process: always memory.
   */
  RATE_LIMIT_STORE: z.enum(['database', 'memory']).optional().or(z.literal('').transform(() => undefined)),
  /**
   * With the database store: the request-rate points an instance takes from a key's budget at a
   * time (0 = a twentieth of RATE_LIMIT_PER_SECOND, between 1 and 50; 1 = one statement per request).
   */
  RATE_LIMIT_LEASE: z.coerce.number().int().min(0).max(100_000).default(0),
  /** How long a verified API key stays cached before it is checked against the database again. */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  /**
   * Failed authentications per client id per minute answered at once (0 = never held); each further
   * failure in the minute is answered late (0.1 s, doubling, at most 5 s). Never refused: a correct
   * secret is always checked and answered at once, so nobody can lock a merchant out.
   */
  AUTH_FAILURES_PER_CLIENT_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(10),
  /**
   * Authentication attempts that need a secret check, per source address per minute (successes are
   * given back, so this counts failures; 0 = no limit); above it: 429 rate_limited, no scrypt.
   */
  AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(30),
  /**
   * Merchant dashboard sessions: absolute lifetime in hours from sign-in (fractions allowed), after
   * which the session cookie stops working whatever the activity.
   */
  DASHBOARD_SESSION_HOURS: z.coerce.number().positive().max(24 * 90).default(12),
  /** Take the client address from the last X-Forwarded-For entry (only behind a proxy that sets it). */
  TRUST_PROXY: bool.default(false),
  /**
   * Failed payment-method attempts (a declined card or mobile-money number) on the hosted checkout,
   * top-up and setup pages, per source address per minute and per hour (0 = no limit); above
   * either: the page answers 429 with Retry-After and the processor is not called.
   */
  PAYMENT_FAILURES_PER_ADDRESS_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(10),
  PAYMENT_FAILURES_PER_ADDRESS_PER_HOUR: z.coerce.number().int().min(0).max(1_000_000).default(30),
  JOBS_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(500),
  /** Internal jobs (expiries, refund settling …) a process runs at once, and per merchant. */
  JOBS_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(16),
  JOBS_MERCHANT_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(8),
  /** Webhook deliveries a process has in flight at once, and per merchant (their own lane). */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  WEBHOOK_MERCHANT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(32),
  /** How long a claimed job is reserved; a job whose process died is run again after this. */
  JOBS_LEASE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
  /** Finished jobs (done or cancelled) are deleted once this many days old (0 = kept forever); failed ones are kept. */
  JOBS_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(7),
  /** Finished webhook delivery attempts (succeeded or failed) are deleted once this many days old (0 = kept forever); pending ones never. */
  RETENTION_DELIVERY_ATTEMPTS_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
  /**
   * Every this many minutes each process checks every wallet's and customer credit balance against
   * the sum of its ledger (src/services/ledger-check.ts; the first check 2 minutes after the start); 0 = never.
   */
  LEDGER_CHECK_INTERVAL_MINUTES: z.coerce.number().int().min(0).max(10_080).default(60),
  /**
   * Test clock advances run one at a time per merchant. At most this many due jobs a second for
   * one advance (a second's worth at once, then paced); and how long an advance waits for the
   * merchant's running one before answering 409 clock_advance_in_progress (0 = answer at once).
   */
  CLOCK_ADVANCE_JOBS_PER_SECOND: z.coerce.number().int().min(1).max(100_000).default(200),
  CLOCK_ADVANCE_WAIT_MS: z.coerce.number().int().min(0).max(120_000).default(30_000),
  /**
   * How long a merchant's clock-advance lease in the database lasts unless renewed (renewed every
   * third of it while the advance runs): a process that dies mid-advance holds the merchant's
   * advances up for at most this long. Lowered by the crash tests, which wait for it.
   */
  CLOCK_ADVANCE_LEASE_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  /**
   * A clock advance (and the background worker) runs due renewals, notices and customer e-mails in
   * batches of up to this many (their
   * invoices, payments, events and messages written set-wise: docs/jobs.md "Batches"); 1 runs
   * every job one by one.
   */
  CLOCK_ADVANCE_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(100),
  /**
   * Browser origins allowed to call /v1 and /graphql cross-site (CORS), comma-separated, e.g.
   * https://dashboard.example.com. Empty (the default): no cross-origin access at all.
   */
  CORS_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((v, ctx) => {
      const origins = v.split(',').map((o) => o.trim()).filter(Boolean);
      for (const o of origins) {
        let ok = false;
        try {
          const u = new URL(o);
          ok = (u.protocol === 'https:' || u.protocol === 'http:') && u.origin === o;
        } catch {
          ok = false;
        }
        if (!ok) ctx.addIssue({ code: 'custom', message: `'${o}' is not an origin such as https://dashboard.example.com (scheme, host and port only)` });
      }
      return origins;
    }),
  /**
   * A multi-step idempotent request (a charge or refund around the processor, a clock advance)
   * holds its key with a lease it renews while it runs; when its process dies, a retry with the
   * same key takes over after this long and carries on from where it stopped.
   */
  IDEMPOTENCY_LEASE_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  /** How long a charge attempt may stay `processing` before the recovery job asks the processor again (its process died). */
  PAYMENT_RECOVERY_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
  /** A processor charge not answered within this stays `processing` for the recovery job; must be below PAYMENT_RECOVERY_MS. */
  PROCESSOR_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** Test mode only: the built-in test processor answers after this long (simulates a processor's latency; 0 = at once). */
  TEST_PROCESSOR_LATENCY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  /**
   * Customer e-mails go out through this SMTP server (smtp:// or smtps://, credentials in the URL).
   * Unset: test-mode merchants' messages are kept in the dev mailbox (GET /v1/test-helpers/emails);
   * live merchants' are not sent.
   */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^\s]+$/, 'must be an smtp:// or smtps:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** The From of customer e-mails: an address, or "Name <address>". */
  EMAIL_FROM: z
    .string()
    .regex(/^([^<>\r\n]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/, 'must be an address such as billing@example.com or "Acme Billing <billing@example.com>"')
    .default('billing@localhost'),
  /**
   * GET /metrics (Prometheus): on this port of its own when set (listening on METRICS_HOST, default
   * HOST), without authentication unless METRICS_TOKEN is set too; otherwise on the main port behind
   * `Authorization: Bearer METRICS_TOKEN`. Neither set: no /metrics (404).
   */
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional().or(z.literal('').transform(() => undefined)),
  METRICS_HOST: z.string().min(1).optional().or(z.literal('').transform(() => undefined)),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional().or(z.literal('').transform(() => undefined)),
  /**
   * On SIGTERM/SIGINT, how long requests in flight and running jobs are waited for; then the jobs
   * still running are given back (pending) and the process exits.
   */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(25_000),
  /** GraphQL limits: maximum query depth and estimated cost. */
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(2).max(50).default(12),
  GRAPHQL_MAX_COMPLEXITY: z.coerce.number().int().min(10).default(20000),
});

export type Config = z.infer<typeof schema> & { publicBaseUrl: string };

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const r = schema.safeParse(env);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const c = r.data;
  if (!!c.BILLING_BOOTSTRAP_CLIENT_ID !== !!c.BILLING_BOOTSTRAP_CLIENT_SECRET) {
    throw new ConfigError('Invalid configuration:\n  BILLING_BOOTSTRAP_CLIENT_ID and BILLING_BOOTSTRAP_CLIENT_SECRET must be set together');
  }
  if (c.PROCESSOR_TIMEOUT_MS >= c.PAYMENT_RECOVERY_MS) {
    throw new ConfigError(
      'Invalid configuration:\n  PROCESSOR_TIMEOUT_MS must be below PAYMENT_RECOVERY_MS (the recovery job must not ask about a charge whose process is still waiting for it)',
    );
  }
  if (c.WEB_CONCURRENCY > 1 && !c.DATABASE_URL) {
    throw new ConfigError('Invalid configuration:\n  WEB_CONCURRENCY: more than one process needs DATABASE_URL (the embedded database serves one process)');
  }
  if (c.METRICS_PORT !== undefined && c.METRICS_PORT === c.PORT) {
    throw new ConfigError('Invalid configuration:\n  METRICS_PORT must differ from PORT (or leave it unset and set METRICS_TOKEN to serve /metrics on the main port)');
  }
  const publicBaseUrl = (c.PUBLIC_BASE_URL ?? `http://localhost:${c.PORT}`).replace(/\/+$/, '');
  return { ...c, publicBaseUrl };
}

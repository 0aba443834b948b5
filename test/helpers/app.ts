// Boots the real application on an ephemeral port: embedded PGlite (in memory) by default, the
// PostgreSQL at TEST_DATABASE_URL when set. Tests talk to it over HTTP like any client.
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { createMerchant, type IssuedCredentials, type Mode } from '../../src/domain/merchants/index.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { openDatabase } from '../../src/platform/db/index.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createApp } from '../../src/server/app.ts';
import type { Services } from '../../src/platform/env.ts';
import { openServices } from '../../src/server/services.ts';
import { startWorker, workerOptions } from '../../src/jobs/worker.ts';
import { checkResponse } from './openapi-validator.ts';
import type { Plugin as GraphQLPlugin } from 'graphql-yoga';
import { billingNowSql } from '../../src/platform/clock.ts';

export interface TestApp {
  url: string;
  /** SQL statements sent since the last reset */
  queries: { count: number; sql: string[]; reset(): void };
  services: Services;
  merchant(opts?: { mode?: Mode; name?: string }): Promise<Client>;
  /**
   * Waits until the merchant has no due work left (no job pending or running that is due on its
   * clock), then for `quietMs` more in which none appears: for assertions that something did
   * NOT happen ("no second delivery"), instead of a fixed sleep. Throws after `timeoutMs`.
   */
  idle(merchant: Client, opts?: { quietMs?: number; timeoutMs?: number }): Promise<void>;
  close(): Promise<void>;
}

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export class Client {
  constructor(
    readonly url: string,
    readonly creds: IssuedCredentials,
  ) {}

  get auth() {
    return 'Basic ' + Buffer.from(`${this.creds.client_id}:${this.creds.client_secret}`).toString('base64');
  }

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
    const init: RequestInit = { method, headers: { authorization: this.auth, ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    return send(this.url + path, init);
  }

  get = (path: string, headers?: Record<string, string>) => this.request('GET', path, undefined, headers);
  post = (path: string, body?: unknown, headers?: Record<string, string>) => this.request('POST', path, body, headers);
  patch = (path: string, body?: unknown, headers?: Record<string, string>) => this.request('PATCH', path, body, headers);
  del = (path: string, headers?: Record<string, string>) => this.request('DELETE', path, undefined, headers);

  async gql<T = any>(query: string, variables?: Record<string, unknown>): Promise<{ data: T; errors?: any[]; status: number }> {
    const r = await this.post('/graphql', { query, variables });
    return { ...r.body, status: r.status };
  }
}

export async function send(url: string, init: RequestInit = {}): Promise<Res> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  // Every /v1 response must be what the OpenAPI document says (status and body schema).
  const method = (init.method ?? 'GET').toUpperCase();
  if (['GET', 'POST', 'PATCH', 'DELETE', 'PUT'].includes(method)) checkResponse(method, url, res.status, res.headers.get('content-type'), body);
  return { status: res.status, headers: res.headers, body, text };
}

export const usingPostgres = !!process.env.TEST_DATABASE_URL;

export async function startApp(
  env: Record<string, string> = {},
  opts: { worker?: boolean; graphqlPlugins?: GraphQLPlugin[]; /** every log line, at `info` and up, goes here */ logLines?: string[] } = {},
): Promise<TestApp> {
  // Loopback webhooks are allowed by default: the receivers all live on 127.0.0.1.
  // Limits count in memory unless a test asks for the database store: on PostgreSQL every test
  // file shares one database, and with it the shared counters of 127.0.0.1 and of 'unknown'.
  const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0', BILLING_ALLOW_HTTP_WEBHOOKS: '1', RATE_LIMIT_STORE: 'memory', ...env });
  const lines = opts.logLines;
  const log = lines
    ? createLogger('info', { write: (line: string) => void lines.push(line) })
    : createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const queries = {
    count: 0,
    sql: [] as string[],
    reset: () => {
      queries.count = 0;
      queries.sql = [];
    },
  };
  const db = await openDatabase({ url: process.env.TEST_DATABASE_URL, dataDir: null, poolSize: 10, logger: log, onQuery: (sql) => {
    queries.count++;
    queries.sql.push(sql);
  } });
  const services = await openServices(config, { log, db });
  const app = createApp(services, { graphqlPlugins: opts.graphqlPlugins });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The hosted pages' absolute addresses (checkout_url, setup_url, portal url) point at this server,
  // as PUBLIC_BASE_URL would in production, so a browser can follow them.
  if (!env.PUBLIC_BASE_URL) config.publicBaseUrl = url;
  // On PostgreSQL every test file shares one database: each app's worker serves only the
  // merchants that app created, so one file's settings (timeouts, fakes) never run another's jobs.
  const merchantIds = new Set<string>();
  const worker =
    opts.worker === false ? null : startWorker(services.runtime, log, { ...workerOptions(config), pollMs: 100, merchants: () => [...merchantIds] });
  return {
    url,
    queries,
    services,
    async merchant(opts = {}) {
      const creds = await createMerchant(services.db.prisma, { name: opts.name ?? 'Test merchant', mode: opts.mode ?? 'test' });
      merchantIds.add(creds.merchant_id);
      return new Client(url, creds);
    },
    async idle(merchant, { quietMs = 100, timeoutMs = 15_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      const due = async () => {
        const [row] = await services.db.prisma.$queryRawUnsafe<{ n: bigint }[]>(
          `SELECT count(*) AS n FROM jobs j JOIN merchants m ON m.id = j.merchant_id
           WHERE j.merchant_id = $1 AND j.status IN ('pending', 'running') AND j.run_at <= ${billingNowSql('m')}`,
          merchant.creds.merchant_id,
        );
        return Number(row!.n);
      };
      let quietSince: number | null = null;
      for (;;) {
        if ((await due()) === 0) {
          quietSince ??= Date.now();
          if (Date.now() - quietSince >= quietMs) return;
        } else quietSince = null;
        if (Date.now() > deadline) throw new Error(`merchant ${merchant.creds.merchant_id} still has due work after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      await worker?.stop();
      await new Promise<void>((r) => server.close(() => r()));
      await db.close();
    },
  };
}

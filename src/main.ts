// npm start: serve the billing API. Embedded PostgreSQL (PGlite in DATA_DIR) unless DATABASE_URL
// is set; migrations applied at start; a test merchant created on an empty database with its
// credentials printed once. WEB_CONCURRENCY=N (N > 1, PostgreSQL only) runs N server processes
// on the port with node:cluster: the primary migrates and bootstraps once, then forks; each
// process has its own pool and job worker, and the database keeps them consistent (jobs are
// claimed with SKIP LOCKED, idempotency keys and wallet rows are locked in the database).
import cluster from 'node:cluster';
import { serve } from '@hono/node-server';
import { giveBackAdvanceLeases } from './jobs/clock-advance.ts';
import { startMaintenance } from './jobs/maintenance.ts';
import { startWorker, workerOptions } from './jobs/worker.ts';
import { bootstrapMerchant } from './domain/merchants/index.ts';
import { ConfigError, loadConfig } from './platform/config.ts';
import { lockDataDir } from './platform/db/data-dir-lock.ts';
import { createLogger, urlWithoutSecrets } from './platform/logger.ts';
import { createApp } from './server/app.ts';
import { createMetricsApp } from './server/metrics.ts';
import { firstStartLines, printLines, startLines } from './server/banner.ts';
import { openServices } from './server/services.ts';
import { startTracing } from './platform/tracing.ts';
import { dashboardLogin, serveCli } from './server/first-start.ts';

type Config = ReturnType<typeof loadConfig>;
type Log = ReturnType<typeof createLogger>;

/** Creates the first test merchant on an empty database (or the configured one) and prints its key. */
async function bootstrap(services: Awaited<ReturnType<typeof openServices>>, config: Config, log: Log) {
  const explicit =
    config.BILLING_BOOTSTRAP_CLIENT_ID && config.BILLING_BOOTSTRAP_CLIENT_SECRET
      ? { clientId: config.BILLING_BOOTSTRAP_CLIENT_ID, clientSecret: config.BILLING_BOOTSTRAP_CLIENT_SECRET }
      : undefined;
  const created = await bootstrapMerchant(services.db.prisma, explicit, log);
  if (created) {
    log.info({ merchant_id: created.merchant_id, client_id: created.client_id }, 'test merchant created');
    // stderr, for the person at the terminal: the JSON log stream (stdout) never carries the secret.
    // The first start's lines: the merchant's key, then the dashboard sign-in (src/server/first-start.ts).
    printLines([...firstStartLines(created, config.publicBaseUrl), ...(await dashboardLogin(services, created.merchant_id))]);
  }
}

/**
 * WEB_CONCURRENCY > 1: migrate and bootstrap once, then fork the server processes and keep them
 * running (a process that dies is replaced); SIGTERM/SIGINT stop them all gracefully.
 */
async function primary(config: Config, log: Log) {
  const services = await openServices(config, { log });
  await bootstrap(services, config, log);
  await services.db.close();
  let stopping = false;
  const fork = () => cluster.fork();
  for (let i = 0; i < config.WEB_CONCURRENCY; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    log.error({ process: worker.id, code, signal }, 'server process exited; starting another');
    setTimeout(fork, 1000);
  });
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping server processes');
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 30_000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  const root = createLogger(config.LOG_LEVEL);
  // Traces, when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set (src/platform/tracing.ts); before the
  // services open, so that their connections and the GraphQL server are made traced.
  const stopTracing = await startTracing(process.env);
  if (stopTracing) root.info({ endpoint: urlWithoutSecrets(process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_ENDPOINT || '') ?? '(not a URL)' }, 'tracing on (OTLP)');
  if (config.WEB_CONCURRENCY > 1 && cluster.isPrimary) return primary(config, root);
  // With several processes, every log line says which one wrote it.
  const log = cluster.isWorker ? root.child({ process: cluster.worker!.id }) : root;
  const isWorker = cluster.isWorker;
  const unlock = config.DATABASE_URL ? () => {} : lockDataDir(config.DATA_DIR);
  const services = await openServices(config, { log });
  if (!isWorker) await bootstrap(services, config, log);
  const stopMaintenance = startMaintenance(services);
  const worker = startWorker(services.runtime, log.child({ component: 'worker' }), workerOptions(config));
  const draining = { on: false };
  const app = createApp(services, { draining: () => draining.on });
  const stopCli = await serveCli(services);
  // Prometheus metrics on a port of their own (METRICS_PORT), without authentication.
  const metricsServer =
    config.METRICS_PORT !== undefined
      ? serve({ fetch: createMetricsApp(services).fetch, port: config.METRICS_PORT, hostname: config.METRICS_HOST ?? config.HOST }, (info) =>
          log.info({ port: info.port, host: config.METRICS_HOST ?? config.HOST }, 'metrics listening'),
        )
      : undefined;
  const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
    log.info({ port: info.port, host: config.HOST, database: services.db.kind, public_base_url: config.publicBaseUrl }, 'billing service listening');
    if (!isWorker || cluster.worker?.id === 1) {
      printLines(startLines({
        listening: `http://${config.HOST}:${info.port}`,
        database: services.db.kind === 'pglite' ? `embedded, ${config.DATA_DIR}` : 'PostgreSQL',
        baseUrl: config.publicBaseUrl,
      }));
    }
  });

  // Graceful shutdown (SIGTERM, SIGINT): stop accepting connections; a request that still arrives
  // on an open keep-alive connection is refused with 503 + Retry-After + Connection: close (the
  // client retries elsewhere); requests in flight are answered; the job worker claims nothing more
  // and waits for its running jobs. After SHUTDOWN_TIMEOUT_MS, the jobs still running are given
  // back (pending, lease released), so are the leases of clock advances still running, and the
  // process exits anyway. Exit code 0.
  const shutdown = async (signal: string) => {
    if (draining.on) return;
    draining.on = true;
    const started = Date.now();
    log.info({ signal }, 'shutting down: draining requests and jobs');
    stopMaintenance();
    const timeout = config.SHUTDOWN_TIMEOUT_MS;
    const closed = (s: typeof server | undefined) =>
      new Promise<void>((resolve) => {
        if (!s) return resolve();
        s.close(() => resolve());
        (s as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      });
    const serverClosed = closed(server);
    // The requests in flight, SHUTDOWN_TIMEOUT_MS at most.
    const requestsDone = () => Promise.race([serverClosed, new Promise<void>((r) => setTimeout(r, timeout).unref())]);
    const requests = requestsDone();
    const [, givenBack] = await Promise.all([requests, worker.stop(timeout)]);
    // A clock advance still running (a long one) gives back its lease: the retry need not wait
    // for it to run out.
    const advances = await giveBackAdvanceLeases().catch((err: unknown) => {
      log.warn({ err }, 'shutdown: could not give back a clock advance lease');
      return 0;
    });
    if (advances > 0) {
      log.info({ clock_advances: advances }, 'shutdown: clock advance leases given back');
      // Each stops at its next job; the job it is running finishes (another SHUTDOWN_TIMEOUT_MS at
      // most) rather than being cut off by the database closing, which would leave that job
      // claimed until its lease (JOBS_LEASE_MS) ran out and hold up the advance's retry as long.
      await requestsDone();
    }
    metricsServer?.close();
    (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    await stopCli();
    await services.db.close().catch(() => {});
    await stopTracing?.().catch(() => {});
    unlock();
    log.info({ duration_ms: Date.now() - started, jobs_given_back: givenBack.length }, 'stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`billing: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

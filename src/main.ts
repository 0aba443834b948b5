// npm start: serve the billing API. Embedded PostgreSQL (PGlite in DATA_DIR) unless DATABASE_URL
// is set; migrations applied at start; a test merchant created on an empty database with its
// credentials printed once.
import { serve } from '@hono/node-server';
import { startMaintenance } from './jobs/maintenance.ts';
import { startWorker, workerOptions } from './jobs/worker.ts';
import { bootstrapMerchant, type IssuedCredentials } from './domain/merchants/index.ts';
import { ConfigError, loadConfig } from './platform/config.ts';
import { lockDataDir } from './platform/db/data-dir-lock.ts';
import { createLogger } from './platform/logger.ts';
import { createApp } from './server/app.ts';
import { openServices } from './server/services.ts';

function banner(creds: IssuedCredentials, baseUrl: string) {
  const auth = `${creds.client_id}:${creds.client_secret}`;
  const lines = [
    '',
    '  A test-mode merchant was created. Its secret is shown only this once:',
    '',
    `    merchant_id    ${creds.merchant_id}`,
    `    client_id      ${creds.client_id}`,
    `    client_secret  ${creds.client_secret}`,
    '',
    '  Try it:',
    `    curl -u ${auth} ${baseUrl}/v1/customers -H 'Content-Type: application/json' -d '{"email":"jane@example.com"}'`,
    '',
    `  GraphiQL: ${baseUrl}/graphql   API reference: ${baseUrl}/docs`,
    '',
  ];
  process.stderr.write(lines.join('\n') + '\n');
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
  const log = createLogger(config.LOG_LEVEL);
  const unlock = config.DATABASE_URL ? () => {} : lockDataDir(config.DATA_DIR);
  const services = await openServices(config, { log });
  const explicit =
    config.BILLING_BOOTSTRAP_CLIENT_ID && config.BILLING_BOOTSTRAP_CLIENT_SECRET
      ? { clientId: config.BILLING_BOOTSTRAP_CLIENT_ID, clientSecret: config.BILLING_BOOTSTRAP_CLIENT_SECRET }
      : undefined;
  const created = await bootstrapMerchant(services.db.prisma, explicit, log);
  if (created) {
    log.info({ merchant_id: created.merchant_id, client_id: created.client_id }, 'test merchant created');
    banner(created, config.publicBaseUrl);
  }
  const stopMaintenance = startMaintenance(services);
  const worker = startWorker(services.runtime, log.child({ component: 'worker' }), workerOptions(config));
  const app = createApp(services);
  const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
    log.info({ port: info.port, host: config.HOST, database: services.db.kind, public_base_url: config.publicBaseUrl }, 'billing service listening');
    process.stderr.write(`  Listening on http://${config.HOST}:${info.port} (database: ${services.db.kind === 'pglite' ? `embedded, ${config.DATA_DIR}` : 'PostgreSQL'})\n`);
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    stopMaintenance();
    await worker.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await services.db.close().catch(() => {});
    unlock();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`billing: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

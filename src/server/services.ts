// Opens what the server needs: configuration, logger, database (migrated), authenticator.
import { Authenticator } from '../platform/auth.ts';
import type { Config } from '../platform/config.ts';
import { openDatabase, type Database } from '../platform/db/index.ts';
import { migrate } from '../platform/db/migrate.ts';
import { createLogger, type Logger } from '../platform/logger.ts';
import { createJobRegistry } from '../jobs/index.ts';
import { processorFor, setTestProcessorLatency } from '../platform/processor.ts';
import type { Services } from '../platform/env.ts';

export async function openServices(config: Config, opts: { log?: Logger; db?: Database } = {}): Promise<Services> {
  const log = opts.log ?? createLogger(config.LOG_LEVEL);
  const db =
    opts.db ??
    (await openDatabase({
      url: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      poolSize: config.DB_POOL_SIZE,
      logger: log,
    }));
  setTestProcessorLatency(config.TEST_PROCESSOR_LATENCY_MS);
  const { applied } = await migrate(db);
  if (applied.length > 0) log.info({ applied }, 'migrations applied');
  // Row-level security holds every merchant's statements to its rows (docs/architecture.md).
  const tenancy = await db.enforceTenancy();
  if (tenancy === 'off') {
    log.warn('row-level security is not enforced: the database role bypasses it (superuser or BYPASSRLS) and cannot become billing_tenant here (the role is missing, this role is not a member of it, or it has no privileges in this database): connect as the tables\' owner without BYPASSRLS, or as a superuser that migrates a database where billing_tenant is granted');
  }
  return {
    config,
    db,
    log,
    auth: new Authenticator(db.prisma, config.AUTH_CACHE_TTL_MS),
    runtime: {
      prisma: db.prisma,
      jobs: createJobRegistry({ batchSize: config.CLOCK_ADVANCE_BATCH_SIZE }),
      config,
      processorFor,
      idempotencyLeaseMs: config.IDEMPOTENCY_LEASE_MS,
      chargeRecoveryMs: config.PAYMENT_RECOVERY_MS,
      processorTimeoutMs: config.PROCESSOR_TIMEOUT_MS,
    },
  };
}

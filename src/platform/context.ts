// What every domain operation receives: the merchant it acts for, a database handle already
// scoped to that merchant (possibly a transaction), and the runtime it runs in. Built by REST,
// GraphQL and the job runner alike.
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { Config } from './config.ts';
import type { Db } from './db/tenant.ts';
import type { Logger } from './logger.ts';
import type { JobRegistry } from './jobs.ts';
import type { Processor } from './processor.ts';
import type { IdempotentRun } from './idempotency.ts';
import type { Clock } from './clock.ts';

export interface MerchantRef {
  id: string;
  mode: 'test' | 'live';
  name?: string;
}

export interface Runtime {
  /** the unscoped client: only for platform work (clock, jobs); never for merchant data */
  prisma: PrismaClient;
  jobs: JobRegistry;
  config: Config;
  /** The payment processor that charges and refunds for a merchant (tests inject fakes here). */
  processorFor(merchant: MerchantRef): Processor;
  /** How long a multi-step idempotent request's claim lasts without a heartbeat before a retry takes it over (default 30 s). */
  idempotencyLeaseMs?: number;
  /** How old a charge claimed by a process that died must be before a recovery job asks the processor again (default 60 s). */
  chargeRecoveryMs?: number;
  /** a processor charge not answered within this is left `processing` for the recovery job (PROCESSOR_TIMEOUT_MS) */
  processorTimeoutMs?: number;
  /** How long one clock advance may run due work before it stops part-way (default 2 minutes). */
  clockAdvanceBudgetMs?: number;
  /** How long the clock stays parked at the stop point of an advance that stopped part-way, waiting for its repeat (default 30 s). */
  clockParkMs?: number;
}

/**
 * Who acts, when it is not the merchant's API key: a customer in the hosted portal, who may see and
 * change that one customer's records only (src/domain/portal).
 */
export interface PortalActor {
  kind: 'portal';
  sessionId: string;
  customerId: string;
}

export interface Ctx {
  merchant: MerchantRef;
  db: Db;
  requestId: string;
  log: Logger;
  runtime: Runtime;
  /** Absent for API requests and jobs (the merchant acts). */
  actor?: PortalActor;
  /**
   * The request's or job's billing clock (src/platform/clock.ts): one per request, made with the
   * Ctx; inside a job frozen at the time the job runs at. Absent only in Ctx objects tests build by
   * hand (clockOf then makes a fresh one).
   */
  clock?: Clock;
  /** Set while a multi-step operation runs under an idempotency key: its recovery points. */
  idempotency?: IdempotentRun | undefined;
}

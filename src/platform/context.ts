// What every domain operation receives: the merchant it acts for and a database handle that is
// already scoped to that merchant (and may be a transaction). Built by REST and GraphQL alike.
import type { AuthenticatedMerchant } from './auth.ts';
import type { Db } from './db/tenant.ts';
import type { Logger } from './logger.ts';

export interface Ctx {
  merchant: AuthenticatedMerchant;
  db: Db;
  requestId: string;
  log: Logger;
}

/** The same context with another db handle (a transaction). */
export function withDb(ctx: Ctx, db: Db): Ctx {
  return { ...ctx, db };
}

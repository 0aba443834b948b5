// Hono environment: what middleware puts on each request.
import type { Authenticator } from '../platform/auth.ts';
import type { Config } from '../platform/config.ts';
import type { Ctx, Runtime } from '../platform/context.ts';
import type { Database } from '../platform/db/index.ts';
import type { Logger } from '../platform/logger.ts';

export interface Services {
  config: Config;
  db: Database;
  log: Logger;
  auth: Authenticator;
  /** what domain operations and jobs get: base client, job registry, config */
  runtime: Runtime;
}

export interface AppEnv {
  Variables: {
    services: Services;
    requestId: string;
    /** the request's logger (request_id bound), made on first use: most requests never log */
    log: () => Logger;
    /** set by the auth middleware on authenticated routes */
    ctx?: Ctx;
  };
}

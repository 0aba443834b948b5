// Hono environment: what middleware puts on each request.
import type { Authenticator } from './auth.ts';
import type { Config } from './config.ts';
import type { Ctx, Runtime } from './context.ts';
import type { Database } from './db/index.ts';
import type { Logger } from './logger.ts';

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

// The request id and logger of the request being served, reachable from code that is not handed
// them (Yoga's error masking, database error logging) through AsyncLocalStorage.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from './logger.ts';

export interface RequestScope {
  requestId: string;
  log: Logger;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

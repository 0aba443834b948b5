// Per-API-key request rate limit (rate-limiter-flexible, in memory: the limit applies per
// process; a shared store — its PostgreSQL or Redis limiter — would make it global).
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitError } from './errors.ts';

export class RateLimiter {
  private readonly limiter: RateLimiterMemory | null;

  constructor(perSecond: number) {
    this.limiter = perSecond > 0 ? new RateLimiterMemory({ points: perSecond, duration: 1 }) : null;
  }

  /** Counts one request for the key; throws RateLimitError (429, Retry-After) over the limit. */
  async consume(key: string): Promise<void> {
    if (!this.limiter) return;
    try {
      await this.limiter.consume(key);
    } catch (res) {
      if (res instanceof RateLimiterRes) throw new RateLimitError(Math.max(1, Math.ceil(res.msBeforeNext / 1000)));
      throw res;
    }
  }
}

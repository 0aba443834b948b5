// Request and authentication rate limits (rate-limiter-flexible, in memory: the limits apply per
// process; a shared store — its PostgreSQL or Redis limiter — would make them global).
import { isIP } from 'node:net';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitError } from './errors.ts';

const retryAfter = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/** Per-API-key request rate limit (RATE_LIMIT_PER_SECOND). */
export class RateLimiter {
  private readonly limiter: RateLimiterMemory | null;

  constructor(perSecond: number) {
    this.limiter = perSecond > 0 ? new RateLimiterMemory({ points: perSecond, duration: 1 }) : null;
  }

  /**
   * Counts `points` requests for the key (a request is 1; a GraphQL mutation operation counts
   * its root fields); throws RateLimitError (429, Retry-After) over the limit.
   */
  async consume(key: string, points = 1): Promise<void> {
    if (!this.limiter || points <= 0) return;
    try {
      await this.limiter.consume(key, points);
    } catch (res) {
      if (res instanceof RateLimiterRes) throw new RateLimitError(retryAfter(res));
      throw res;
    }
  }
}

/**
 * Limits authentication attempts that need a scrypt (everything except a secret this process has
 * already verified), per client id and per source address, over a one-minute window. An attempt
 * is counted *before* its scrypt runs, so concurrent guesses cannot slip past the limit; a
 * successful one gives its points back, so only failures (and attempts in flight) count.
 */
export class AuthFailureLimiter {
  private readonly byClient: RateLimiterMemory | null;
  private readonly byAddress: RateLimiterMemory | null;

  constructor(opts: { perClientPerMinute: number; perAddressPerMinute: number }) {
    this.byClient = opts.perClientPerMinute > 0 ? new RateLimiterMemory({ keyPrefix: 'auth_client', points: opts.perClientPerMinute, duration: 60 }) : null;
    this.byAddress = opts.perAddressPerMinute > 0 ? new RateLimiterMemory({ keyPrefix: 'auth_addr', points: opts.perAddressPerMinute, duration: 60 }) : null;
  }

  /**
   * Counts one attempt for the client id and the address; throws RateLimitError (429,
   * Retry-After) when either is over its limit. Returns the function that refunds the attempt
   * (call it when the credentials turned out to be right).
   */
  async take(clientId: string, address: string | undefined): Promise<() => void> {
    const addr = addressKey(address);
    if (this.byAddress) {
      try {
        await this.byAddress.consume(addr);
      } catch (res) {
        if (res instanceof RateLimiterRes) throw new RateLimitError(retryAfter(res));
        throw res;
      }
    }
    if (this.byClient) {
      try {
        await this.byClient.consume(clientId);
      } catch (res) {
        // Refused before any work: the address is not charged for it.
        void this.byAddress?.reward(addr).catch(() => {});
        if (res instanceof RateLimiterRes) throw new RateLimitError(retryAfter(res));
        throw res;
      }
    }
    return () => {
      void this.byAddress?.reward(addr).catch(() => {});
      void this.byClient?.reward(clientId).catch(() => {});
    };
  }
}

/**
 * The key an address is limited under: IPv4 as is (IPv4-mapped IPv6 unwrapped), IPv6 by its /64
 * (one host usually holds a whole /64), anything else (no socket, e.g. app.fetch in-process) as
 * 'unknown'.
 */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  let a = address.trim().toLowerCase();
  if (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4) a = a.slice(7);
  const kind = isIP(a.replace(/%.*$/, ''));
  if (kind === 4) return a;
  if (kind !== 6) return 'unknown';
  a = a.replace(/%.*$/, '');
  const [head, tail] = a.includes('::') ? (a.split('::') as [string, string]) : [a, undefined];
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  // An embedded IPv4 tail (e.g. ::1.2.3.4) takes two groups; the /64 prefix never contains it.
  const rightGroups = right.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - rightGroups).fill('0'), ...right];
  return groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':') + '::/64';
}

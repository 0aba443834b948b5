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

/** The first held failure waits this long; each further one twice as long as the one before … */
export const AUTH_TARPIT_FIRST_MS = 100;
/** … up to this (the tarpit is a brake, never a wall). */
export const AUTH_TARPIT_MAX_MS = 5_000;

/**
 * How long a failed attempt for a client id is held before its 401 is sent, given the client id's
 * failures in the current minute (this one included): nothing up to `freePerMinute`, then 0.1 s,
 * 0.2 s, 0.4 s … at most 5 s. `freePerMinute` 0: never held.
 */
export function authTarpitMs(failures: number, freePerMinute: number): number {
  if (freePerMinute <= 0 || failures <= freePerMinute) return 0;
  const excess = Math.min(failures - freePerMinute, 32);
  return Math.min(AUTH_TARPIT_MAX_MS, AUTH_TARPIT_FIRST_MS * 2 ** (excess - 1));
}

/**
 * Limits the harm of failed authentications (everything except a secret this process has already
 * verified needs a scrypt):
 *
 * - **per source address** (`perAddressPerMinute`): an attempt is counted *before* its scrypt
 *   runs, so concurrent guesses cannot slip past the limit, and given back when it succeeds; over
 *   the limit the address is refused (429) without any work. This is what protects the CPU, and
 *   it only ever refuses the address that keeps failing.
 * - **per client id** (`perClientPerMinute`): never refused. Anyone can send a client id, so a
 *   refusal keyed on it would let a stranger lock its merchant out (a correct secret refused on
 *   every process that has not verified it yet). Instead the id's failures are counted after the
 *   scrypt, and beyond the free ones each failure is answered late (`authTarpitMs`): guessing gets
 *   slower, while a correct secret is answered at once.
 */
export class AuthFailureLimiter {
  private readonly byAddress: RateLimiterMemory | null;
  private readonly failuresByClient: RateLimiterMemory | null;
  private readonly freePerClient: number;
  private readonly failuresByAccount: RateLimiterMemory | null;

  constructor(opts: { perClientPerMinute: number; perAddressPerMinute: number }) {
    // Dashboard sign-in: failures per email (known or not, alike), the same number per minute as
    // a client id's free failures; over it the email is refused (429) until its minute is over.
    this.failuresByAccount = opts.perClientPerMinute > 0 ? new RateLimiterMemory({ keyPrefix: 'auth_account', points: opts.perClientPerMinute, duration: 60 }) : null;
    this.byAddress = opts.perAddressPerMinute > 0 ? new RateLimiterMemory({ keyPrefix: 'auth_addr', points: opts.perAddressPerMinute, duration: 60 }) : null;
    this.freePerClient = opts.perClientPerMinute;
    // Only counted (penalty), never consumed: `points` plays no part.
    this.failuresByClient = opts.perClientPerMinute > 0 ? new RateLimiterMemory({ keyPrefix: 'auth_client', points: opts.perClientPerMinute, duration: 60 }) : null;
  }

  /**
   * Counts one attempt for the source address; throws RateLimitError (429, Retry-After) when the
   * address is over its limit. Returns the function that gives the attempt back (call it when the
   * credentials turned out to be right, or when the check could not be made).
   */
  async take(address: string | undefined): Promise<() => void> {
    if (!this.byAddress) return () => {};
    const addr = addressKey(address);
    try {
      await this.byAddress.consume(addr);
    } catch (res) {
      if (res instanceof RateLimiterRes) throw new RateLimitError(retryAfter(res));
      throw res;
    }
    return () => void this.byAddress?.reward(addr).catch(() => {});
  }

  /**
   * Records a failed check for the client id (known or not: the answer must not tell them apart)
   * and returns how long to hold its 401, in milliseconds (0 = answer now).
   */
  async failed(clientId: string): Promise<number> {
    if (!this.failuresByClient) return 0;
    const res = await this.failuresByClient.penalty(clientId, 1);
    return authTarpitMs(res.consumedPoints, this.freePerClient);
  }

  /**
   * Dashboard sign-in, per email. Unlike a
   * client id — a random secret nobody guesses — a password is chosen by a person, so an email whose
   * failures reach the limit within a minute is refused outright (429 with Retry-After, no scrypt)
   * until the minute is over. The price, documented in docs/dashboard.md: someone who knows a user's
   * email can keep that user from *signing in* for a minute at a time (signed-in sessions and API
   * keys keep working).
   * An attempt is counted before its scrypt (concurrent guesses cannot slip past) and given back
   * when it succeeds, as for addresses. Throws RateLimitError (429, Retry-After) when the account
   * is over its limit, counting nothing; returns the function that gives the attempt back.
   */
  async takeAccount(account: string): Promise<() => void> {
    const limiter = this.failuresByAccount;
    if (!limiter) return () => {};
    try {
      await limiter.consume(account);
    } catch (res) {
      if (res instanceof RateLimiterRes) throw new RateLimitError(retryAfter(res));
      throw res;
    }
    return () => void limiter.reward(account).catch(() => {});
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

/**
 * Failed payment-method attempts on the hosted pages (checkout, top-up checkout, setup) per source
 * address (IPv6 by /64, as `addressKey`), over a minute and over an hour: what stops one address
 * from testing cards across many links (each link has its own cap in the database). An attempt is
 * counted *before* the processor is called, so concurrent submissions cannot slip past the limit,
 * and given back when it did not fail (a saved method, a paid checkout): only declines count. In
 * memory, per process, like the limits above.
 */
export class PaymentFailureLimiter {
  private readonly windows: RateLimiterMemory[] = [];

  constructor(opts: { perMinute: number; perHour: number }) {
    if (opts.perMinute > 0) this.windows.push(new RateLimiterMemory({ keyPrefix: 'pay_fail_minute', points: opts.perMinute, duration: 60 }));
    if (opts.perHour > 0) this.windows.push(new RateLimiterMemory({ keyPrefix: 'pay_fail_hour', points: opts.perHour, duration: 3600 }));
  }

  /**
   * Counts one attempt for the address; throws RateLimitError (429, Retry-After: when the window
   * that refused ends) when a window is full, counting nothing. Returns the function that gives
   * the attempt back (call it when the attempt did not fail; a second call does nothing).
   */
  async take(address: string | undefined): Promise<() => void> {
    const key = addressKey(address);
    const taken: RateLimiterMemory[] = [];
    const giveBack = (windows: RateLimiterMemory[]) => {
      for (const w of windows) void w.reward(key).catch(() => {});
    };
    for (const window of this.windows) {
      try {
        await window.consume(key);
        taken.push(window);
      } catch (res) {
        giveBack(taken);
        if (!(res instanceof RateLimiterRes)) throw res;
        giveBack([window]); // the refused attempt is not counted either
        throw new RateLimitError(Math.max(1, Math.ceil(res.msBeforeNext / 1000)));
      }
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      giveBack(taken);
    };
  }
}

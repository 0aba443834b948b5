// Request and abuse limits: the per-key request rate (RATE_LIMIT_PER_SECOND), failed
// authentications per source address and per client id, dashboard sign-ins per email, failed
// payment attempts on the hosted pages per address. Each counts in fixed windows per key, in a
// `LimitStore`: this process's memory on the embedded database (one process), or — on PostgreSQL
// — the `rate_limits` table every instance shares (src/platform/rate-limit.store.ts), so that a
// limit holds across instances instead of once per instance (docs/operations.md "Several
// instances"; the choice and its cost: docs/decisions.md "Limits shared across instances").
import { isIP } from 'node:net';
import { rawQueryOf, type RawQuery } from './db/raw.ts';
import type { Services } from './env.ts';
import { RateLimitError } from './errors.ts';
import { addToWindow, removeFromWindow, type CounterWindow } from './rate-limit.store.ts';

/** Where limits count: add to a key's window (a new one of `windowMs` when it has none), or take back. */
export interface LimitStore {
  /** 'memory': this process only; 'database': every instance on the database. */
  readonly kind: 'memory' | 'database';
  add(key: string, points: number, windowMs: number): Promise<CounterWindow>;
  remove(key: string, points: number): Promise<void>;
}

/** Ended entries of a map of windows are dropped once it holds this many (a sweep per growth step). */
const SWEEP_AT = 10_000;
function sweep<V extends { endsAt: number }>(map: Map<string, V>, now: number): void {
  if (map.size < SWEEP_AT) return;
  for (const [k, v] of map) if (v.endsAt <= now) map.delete(k);
}

/** Counters in this process's memory: the limits hold per process. */
export class MemoryLimitStore implements LimitStore {
  readonly kind = 'memory';
  private readonly windows = new Map<string, { points: number; endsAt: number }>();
  private sweepAt = SWEEP_AT;

  constructor(private readonly now: () => number = Date.now) {}

  async add(key: string, points: number, windowMs: number): Promise<CounterWindow> {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || w.endsAt <= now) {
      if (this.windows.size >= this.sweepAt) {
        sweep(this.windows, now);
        this.sweepAt = Math.max(SWEEP_AT, this.windows.size * 2);
      }
      w = { points: 0, endsAt: now + windowMs };
      this.windows.set(key, w);
    }
    w.points += points;
    return { points: w.points, msLeft: w.endsAt - now };
  }

  async remove(key: string, points: number): Promise<void> {
    const w = this.windows.get(key);
    if (w && w.endsAt > this.now()) w.points = Math.max(0, w.points - points);
  }
}

/** Counters in the database (table `rate_limits`): one window per key for every instance, on the database's clock. */
export class DatabaseLimitStore implements LimitStore {
  readonly kind = 'database';
  constructor(private readonly q: RawQuery) {}
  add(key: string, points: number, windowMs: number): Promise<CounterWindow> {
    return addToWindow(this.q, key, points, windowMs);
  }
  remove(key: string, points: number): Promise<void> {
    return removeFromWindow(this.q, key, points);
  }
}

const retryAfterSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * `limit` points per window of `windowMs` per key, counted in `store` under `prefix:key`. An attempt
 * that would go over is refused (RateLimitError with Retry-After: the rest of the window) and not
 * counted. A key found over its limit is then refused from memory until its window ends, without
 * asking the store again (an address hammering while refused costs no statement).
 */
export class WindowLimit {
  private readonly blocked = new Map<string, { endsAt: number }>();

  constructor(
    private readonly store: LimitStore,
    private readonly prefix: string,
    readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /**
   * Counts one attempt for the key; throws RateLimitError when the key is over its limit.
   * Returns the function that gives the attempt back (a second call does nothing).
   */
  async take(key: string): Promise<() => void> {
    const now = Date.now();
    const block = this.blocked.get(key);
    if (block && block.endsAt > now) throw new RateLimitError(retryAfterSeconds(block.endsAt - now));
    const w = await this.store.add(`${this.prefix}:${key}`, 1, this.windowMs);
    if (w.points > this.limit) {
      void this.store.remove(`${this.prefix}:${key}`, 1).catch(() => {}); // the refused attempt is not counted
      sweep(this.blocked, now);
      this.blocked.set(key, { endsAt: Date.now() + w.msLeft });
      throw new RateLimitError(retryAfterSeconds(w.msLeft));
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      void this.store.remove(`${this.prefix}:${key}`, 1).catch(() => {});
    };
  }

  /** Counts `points` for the key without a limit (a penalty); the key's total in its window. */
  async count(key: string, points = 1): Promise<number> {
    return (await this.store.add(`${this.prefix}:${key}`, points, this.windowMs)).points;
  }
}

/** What a process holds of a key's budget for the current second. */
interface Lease {
  /** points taken from the shared budget and not used yet */
  tokens: number;
  /** local time the window ends */
  endsAt: number;
  /** the window's total after our last lease (what the instances had taken) */
  taken: number;
  /** the last lease got less than it asked: the budget is spent until the window ends */
  spent: boolean;
  /** a lease on its way: the key's other requests wait for it … */
  pending: Promise<void> | null;
  /** … and add their points here, so that the next lease asks for all of them at once */
  queued: number;
}

/**
 * The lease an instance takes from a key's shared budget at a time, by default: a twentieth of
 * the per-second limit, between 1 and 50 (RATE_LIMIT_LEASE overrides it; 1 = a statement per
 * request, exact).
 */
export function defaultLease(perSecond: number): number {
  return Math.max(1, Math.min(50, Math.floor(perSecond / 20)));
}

/**
 * Per-API-key request rate limit (RATE_LIMIT_PER_SECOND): a window of one second per key. The
 * process takes points from the key's budget in the store a **lease** at a time and serves
 * requests from what it holds without asking the store, so the statement is paid once per lease,
 * not per request. A lease is at most `lease` points and at most a quarter of what was left at the
 * last one (leases shrink as the budget runs out, so little is left stranded in another
 * instance); when a lease gets less than it asked, the budget is spent and the key is refused
 * here until the window ends. Never more than `perSecond` points a second are served over every
 * instance together; fewer when an instance holds leased points that its share of the traffic does
 * not use before the second is over (at most `lease` − 1 per instance).
 */
export class RateLimiter {
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly perSecond: number,
    private readonly store: LimitStore = new MemoryLimitStore(),
    private readonly lease = 1,
  ) {}

  /**
   * Counts `points` requests for the key (a request is 1; a GraphQL mutation operation counts
   * its root fields); throws RateLimitError (429, Retry-After) over the limit.
   */
  async consume(key: string, points = 1): Promise<void> {
    if (this.perSecond <= 0 || points <= 0) return;
    for (;;) {
      const now = Date.now();
      let l = this.leases.get(key);
      if (l?.pending) {
        l.queued += points;
        try {
          await l.pending;
        } finally {
          l.queued -= points;
        }
        continue;
      }
      if (!l || l.endsAt <= now) {
        sweep(this.leases, now);
        l = { tokens: 0, endsAt: now + 1000, taken: 0, spent: false, pending: null, queued: 0 };
        this.leases.set(key, l);
      } else if (l.tokens >= points) {
        l.tokens -= points;
        return;
      } else if (l.spent) {
        throw new RateLimitError(retryAfterSeconds(l.endsAt - now));
      }
      const held = l;
      held.pending = this.refill(key, held, points).finally(() => (held.pending = null));
      await held.pending;
    }
  }

  private async refill(key: string, l: Lease, points: number): Promise<void> {
    // What this request lacks plus what the requests still waiting for the last lease want; at
    // least the lease, unless the budget is nearly spent.
    const need = points - l.tokens + l.queued;
    const want = Math.max(need, Math.min(this.lease, Math.max(1, Math.ceil((this.perSecond - l.taken) / 4))));
    const w = await this.store.add(`req:${key}`, want, 1000);
    const granted = Math.min(want, Math.max(0, this.perSecond - (w.points - want)));
    l.tokens += granted;
    l.taken = Math.min(w.points, this.perSecond);
    l.endsAt = Date.now() + w.msLeft;
    l.spent = granted < want;
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
 *
 * Counted in `store`: on PostgreSQL every instance counts against the same windows.
 */
export class AuthFailureLimiter {
  private readonly byAddress: WindowLimit | null;
  private readonly failuresByClient: WindowLimit | null;
  private readonly freePerClient: number;
  private readonly failuresByAccount: WindowLimit | null;

  constructor(opts: { perClientPerMinute: number; perAddressPerMinute: number }, store: LimitStore = new MemoryLimitStore()) {
    // Dashboard sign-in: failures per email (known or not, alike), the same number per minute as
    // a client id's free failures; over it the email is refused (429) until its minute is over.
    this.failuresByAccount = opts.perClientPerMinute > 0 ? new WindowLimit(store, 'auth_account', opts.perClientPerMinute, 60_000) : null;
    this.byAddress = opts.perAddressPerMinute > 0 ? new WindowLimit(store, 'auth_addr', opts.perAddressPerMinute, 60_000) : null;
    this.freePerClient = opts.perClientPerMinute;
    // Only counted (a penalty), never refused: its limit plays no part.
    this.failuresByClient = opts.perClientPerMinute > 0 ? new WindowLimit(store, 'auth_client', opts.perClientPerMinute, 60_000) : null;
  }

  /**
   * Counts one attempt for the source address; throws RateLimitError (429, Retry-After) when the
   * address is over its limit. Returns the function that gives the attempt back (call it when the
   * credentials turned out to be right, or when the check could not be made).
   */
  async take(address: string | undefined): Promise<() => void> {
    if (!this.byAddress) return () => {};
    return this.byAddress.take(addressKey(address));
  }

  /**
   * Records a failed check for the client id (known or not: the answer must not tell them apart)
   * and returns how long to hold its 401, in milliseconds (0 = answer now).
   */
  async failed(clientId: string): Promise<number> {
    if (!this.failuresByClient) return 0;
    return authTarpitMs(await this.failuresByClient.count(clientId), this.freePerClient);
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
    if (!this.failuresByAccount) return () => {};
    return this.failuresByAccount.take(account);
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
 * and given back when it did not fail (a saved method, a paid checkout): only declines count.
 * Counted in `store`, like the limits above.
 */
export class PaymentFailureLimiter {
  private readonly windows: WindowLimit[] = [];

  constructor(opts: { perMinute: number; perHour: number }, store: LimitStore = new MemoryLimitStore()) {
    if (opts.perMinute > 0) this.windows.push(new WindowLimit(store, 'pay_fail_minute', opts.perMinute, 60_000));
    if (opts.perHour > 0) this.windows.push(new WindowLimit(store, 'pay_fail_hour', opts.perHour, 3_600_000));
  }

  /**
   * Counts one attempt for the address; throws RateLimitError (429, Retry-After: when the window
   * that refused ends) when a window is full, counting nothing. Returns the function that gives
   * the attempt back (call it when the attempt did not fail; a second call does nothing).
   */
  async take(address: string | undefined): Promise<() => void> {
    const key = addressKey(address);
    const taken: (() => void)[] = [];
    try {
      for (const window of this.windows) taken.push(await window.take(key));
    } catch (err) {
      for (const giveBack of taken) giveBack();
      throw err;
    }
    return () => {
      for (const giveBack of taken) giveBack();
    };
  }
}

/** The limits of one service (one set per process, whatever the number of apps over it). */
export interface Limits {
  store: LimitStore;
  requests: RateLimiter;
  auth: AuthFailureLimiter;
  payments: PaymentFailureLimiter;
}

const limitsOf = new WeakMap<Services, Limits>();

/**
 * The limits of a service, made once per Services (the app and the hosted pages share them): in
 * the database when it is PostgreSQL, unless RATE_LIMIT_STORE=memory; in memory on the embedded
 * database (one process).
 */
export function limitsFor(services: Services): Limits {
  let limits = limitsOf.get(services);
  if (limits) return limits;
  const { config, db } = services;
  const store: LimitStore =
    db.kind === 'postgres' && config.RATE_LIMIT_STORE !== 'memory' ? new DatabaseLimitStore(rawQueryOf(db.prisma)) : new MemoryLimitStore();
  const lease = store.kind === 'memory' ? 1 : config.RATE_LIMIT_LEASE || defaultLease(config.RATE_LIMIT_PER_SECOND);
  limits = {
    store,
    requests: new RateLimiter(config.RATE_LIMIT_PER_SECOND, store, lease),
    auth: new AuthFailureLimiter(
      { perClientPerMinute: config.AUTH_FAILURES_PER_CLIENT_PER_MINUTE, perAddressPerMinute: config.AUTH_FAILURES_PER_ADDRESS_PER_MINUTE },
      store,
    ),
    payments: new PaymentFailureLimiter(
      { perMinute: config.PAYMENT_FAILURES_PER_ADDRESS_PER_MINUTE, perHour: config.PAYMENT_FAILURES_PER_ADDRESS_PER_HOUR },
      store,
    ),
  };
  limitsOf.set(services, limits);
  return limits;
}

// HTTP Basic authentication against API keys whose secrets are stored as scrypt hashes.
// A verified key is cached for AUTH_CACHE_TTL_MS (default 5 s) keyed by client id, holding only a
// SHA-256 digest of the secret; after the TTL the key row is re-read (cheap), so a revoked or
// rotated key stops working within seconds. All comparisons are constant-time.
//
// Only a success may be fast: presenting the secret this process already verified (the cache).
// Every other attempt costs the same work — one read of the key row and one scrypt with the same
// parameters: against the stored hash for a known, active key (also when a *different* secret of
// that key is cached), against a fixed dummy hash for an unknown or revoked client id. So neither
// the answer time nor the code path tells an unknown id from a wrong secret. Attempts that need a
// scrypt are counted per source address (AuthFailureLimiter) before the scrypt runs; an address
// over its limit gets 429 rate_limited without any work. A client id is never refused — anyone
// can send it, so refusing it would let a stranger lock its merchant out: the scrypt runs first,
// a correct secret is answered at once, and only failures for an id that keeps failing are
// answered late (a tarpit, at most a few seconds).
import { hash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { PrismaClient } from './db/index.ts';
import { findApiKeyWithMerchant, type ApiKeyWithMerchant } from './auth.store.ts';
import { AuthenticationError } from './errors.ts';
import type { AuthFailureLimiter } from './rate-limit.ts';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const N = 16384, R = 8, P = 1, LEN = 32;

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(secret, salt, LEN, { N, r: R, p: P, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(secret, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n), r: Number(r), p: Number(p), maxmem: 64 * 1024 * 1024,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

// crypto.hash: one call, no Hash object (a third of createHash's cost; this runs on every request)
const sha256 = (s: string) => hash('sha256', s, 'buffer');

/**
 * A well-formed hash (current parameters) of a random secret nobody knows: unknown and revoked
 * client ids are verified against it, so they cost exactly what a wrong secret costs.
 */
export const DUMMY_SECRET_HASH = `scrypt$${N}$${R}$${P}$DLQQLraOXgGsXVN1WoHLMg$QhPXlV0Du9MsLPQGDCV2OlXCx2M-V6dvQ7iYw16vHO0`;

export interface AuthenticatedMerchant {
  id: string;
  name: string;
  mode: 'test' | 'live';
  keyId: string;
  clientId: string;
}

type KeyRow = ApiKeyWithMerchant;

interface CacheEntry {
  digest: Buffer;
  secretHash: string;
  merchant: AuthenticatedMerchant;
  checkedAt: number;
}

/** Parses `Authorization: Basic base64(client_id:client_secret)`; null when absent or malformed. */
export function parseBasic(header: string | undefined | null): { clientId: string; secret: string } | null {
  if (!header) return null;
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i <= 0) return null;
  return { clientId: decoded.slice(0, i), secret: decoded.slice(i + 1) };
}

export interface AuthAttempt {
  /** where the attempt comes from (the TCP peer, or the trusted proxy's client address) */
  source?: string | undefined;
  /** limits attempts that need a scrypt (per address) and slows failures (per client id); absent = none (CLI, in-process use) */
  limiter?: AuthFailureLimiter | undefined;
}

export class Authenticator {
  private cache = new Map<string, CacheEntry>();
  private inFlight = new Map<string, Promise<AuthenticatedMerchant>>();
  private static readonly MAX_ENTRIES = 10_000;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Returns the merchant for the header's credentials or throws AuthenticationError (401) — held
   * back first when the client id keeps failing — or RateLimitError (429) when the attempt needs a
   * scrypt and its source address is over its failure limit.
   */
  async authenticate(header: string | undefined | null, attempt: AuthAttempt = {}): Promise<AuthenticatedMerchant> {
    const creds = parseBasic(header);
    if (!creds || !creds.clientId.startsWith('ck_') || creds.clientId.length > 100 || creds.secret.length > 200) {
      throw new AuthenticationError();
    }
    const digest = sha256(creds.secret);
    const cached = this.cache.get(creds.clientId);
    const verified = cached !== undefined && timingSafeEqual(cached.digest, digest);
    let key: KeyRow | null | undefined;
    if (verified) {
      // The secret this process verified: fresh → done; stale → re-read the row (revocation,
      // rotation) and skip the scrypt when the stored hash is unchanged.
      if (this.now() - cached.checkedAt < this.ttlMs) return cached.merchant;
      key = await this.findKey(creds.clientId);
      if (key && !key.revokedAt && key.secretHash === cached.secretHash) return this.remember(creds.clientId, digest, key);
    }
    // Everything else needs a scrypt. Identical attempts in flight at once (a client's first burst
    // to a fresh process) share one check: one scrypt, one point against the failure limits (and
    // a held failure's repeats wait for its answer instead of running scrypts of their own).
    const flightKey = `${creds.clientId}\n${digest.toString('hex')}`;
    let flight = this.inFlight.get(flightKey);
    if (!flight) {
      flight = this.check(creds, digest, key, attempt).finally(() => this.inFlight.delete(flightKey));
      this.inFlight.set(flightKey, flight);
    }
    return flight;
  }

  private async check(
    creds: { clientId: string; secret: string },
    digest: Buffer,
    key: KeyRow | null | undefined,
    attempt: AuthAttempt,
  ): Promise<AuthenticatedMerchant> {
    // Count the attempt against its source address first (over → 429, no work done). The client
    // id is not limited here: the scrypt decides, so a correct secret always gets through.
    const refund = attempt.limiter ? await attempt.limiter.take(attempt.source) : undefined;
    let active: KeyRow | null, ok: boolean;
    try {
      if (key === undefined) key = await this.findKey(creds.clientId);
      active = key && !key.revokedAt ? key : null;
      ok = await this.verify(creds.secret, active ? active.secretHash : DUMMY_SECRET_HASH);
    } catch (err) {
      refund?.(); // the database failed, not the credentials
      throw err;
    }
    if (!active) this.cache.delete(creds.clientId);
    if (!active || !ok) {
      // A wrong secret leaves the cached (right) one alone: its owner keeps working. The failure
      // counts against the client id (known or not, alike) and, beyond its free ones, is held.
      const holdMs = attempt.limiter ? await attempt.limiter.failed(creds.clientId) : 0;
      if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
      throw new AuthenticationError();
    }
    refund?.();
    return this.remember(creds.clientId, digest, active);
  }

  /** The scrypt check every attempt that is not a cache hit goes through (tests spy on it). */
  verify(secret: string, storedHash: string): Promise<boolean> {
    return verifySecret(secret, storedHash);
  }

  private findKey(clientId: string): Promise<KeyRow | null> {
    return findApiKeyWithMerchant(this.prisma, clientId);
  }

  private remember(clientId: string, digest: Buffer, key: KeyRow): AuthenticatedMerchant {
    const merchant: AuthenticatedMerchant = {
      id: key.merchant.id,
      name: key.merchant.name,
      mode: key.merchant.mode === 'live' ? 'live' : 'test',
      keyId: key.id,
      clientId: key.clientId,
    };
    this.cache.delete(clientId);
    if (this.cache.size >= Authenticator.MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(clientId, { digest, secretHash: key.secretHash, merchant, checkedAt: this.now() });
    return merchant;
  }

  /** Forget a key at once (used by this process when it revokes one). */
  invalidate(clientId: string): void {
    this.cache.delete(clientId);
  }
}

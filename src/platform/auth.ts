// HTTP Basic authentication against API keys whose secrets are stored as scrypt hashes.
// A verified key is cached for AUTH_CACHE_TTL_MS (default 5 s) keyed by client id, holding only a
// SHA-256 digest of the secret; after the TTL the key row is re-read (cheap), so a revoked or
// rotated key stops working within seconds, and the slow scrypt runs only when the stored hash
// changed or the process has not seen the key yet. All comparisons are constant-time.
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { PrismaClient } from './db/index.ts';
import { AuthenticationError } from './errors.ts';

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

const sha256 = (s: string) => createHash('sha256').update(s).digest();

export interface AuthenticatedMerchant {
  id: string;
  name: string;
  mode: 'test' | 'live';
  keyId: string;
  clientId: string;
}

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

export class Authenticator {
  private cache = new Map<string, CacheEntry>();
  private static readonly MAX_ENTRIES = 10_000;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Returns the merchant for the header's credentials or throws AuthenticationError. */
  async authenticate(header: string | undefined | null): Promise<AuthenticatedMerchant> {
    const creds = parseBasic(header);
    if (!creds || !creds.clientId.startsWith('ck_') || creds.clientId.length > 100 || creds.secret.length > 200) {
      throw new AuthenticationError();
    }
    const digest = sha256(creds.secret);
    const cached = this.cache.get(creds.clientId);
    if (cached && this.now() - cached.checkedAt < this.ttlMs) {
      if (timingSafeEqual(cached.digest, digest)) return cached.merchant;
      throw new AuthenticationError();
    }
    const key = await this.prisma.apiKey.findUnique({ where: { clientId: creds.clientId }, include: { merchant: true } });
    if (!key || key.revokedAt) {
      this.cache.delete(creds.clientId);
      throw new AuthenticationError();
    }
    const sameHashAsVerified = cached && cached.secretHash === key.secretHash && timingSafeEqual(cached.digest, digest);
    if (!sameHashAsVerified && !(await verifySecret(creds.secret, key.secretHash))) {
      throw new AuthenticationError();
    }
    const merchant: AuthenticatedMerchant = {
      id: key.merchant.id,
      name: key.merchant.name,
      mode: key.merchant.mode === 'live' ? 'live' : 'test',
      keyId: key.id,
      clientId: key.clientId,
    };
    if (this.cache.size >= Authenticator.MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(creds.clientId, { digest, secretHash: key.secretHash, merchant, checkedAt: this.now() });
    return merchant;
  }

  /** Forget a key at once (used by this process when it revokes one). */
  invalidate(clientId: string): void {
    this.cache.delete(clientId);
  }
}

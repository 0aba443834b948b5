// Prefixed random identifiers: `<prefix>_<22 base62 chars>` ≈ 131 bits of randomness.
// The prefix names the record type, so the same string serves as REST id and Relay global id.
import { randomFillSync } from 'node:crypto';

export const ID_PREFIXES = {
  payment: 'pay',
  refund: 're',
  customer: 'cus',
  setup_intent: 'seti',
  payment_method: 'pm',
  portal_session: 'cps',
  wallet: 'wal',
  wallet_transaction: 'wtx',
  wallet_topup: 'wtu',
  customer_balance_transaction: 'cbtxn',
  plan: 'plan',
  subscription: 'sub',
  invoice: 'in',
  invoice_line: 'il',
  coupon: 'coupon',
  tax_rate: 'txr',
  invoice_item: 'ii',
  credit_note: 'cn',
  webhook_endpoint: 'we',
  event: 'evt',
  delivery_attempt: 'wda',
  email: 'em',
  request: 'req',
  merchant: 'mer',
  api_key: 'key',
  dashboard_user: 'usr',
  dashboard_session: 'dses',
  client_id: 'ck',
  client_secret: 'sk',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn from the CSPRNG 4 KiB at a time (one call per ~90 ids instead of one
// per id: the call dominated a request's id cost). Each byte is used once.
const pool = Buffer.alloc(4096);
let next = pool.length;

function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]!;
}

/** Uniform base62 string of `length` characters (rejection sampling, no modulo bias). */
export function randomToken(length = 22): string {
  let out = '';
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}

export function newId(kind: IdKind, length = 22): string {
  return `${ID_PREFIXES[kind]}_${randomToken(length)}`;
}

const PREFIX_TO_KIND = new Map<string, IdKind>(Object.entries(ID_PREFIXES).map(([k, p]) => [p, k as IdKind]));

/** The record kind an id names, from its prefix, or null for a string that is not one of ours. */
export function kindOfId(id: string): IdKind | null {
  const m = /^([a-z]+)_[0-9A-Za-z]{16,40}$/.exec(id);
  return (m && PREFIX_TO_KIND.get(m[1]!)) || null;
}

/**
 * Documentation examples: `length` base62 characters derived from `seed` (the same string every
 * time for a seed; it looks like a real token and is not one the service would make by chance).
 */
export function exampleToken(seed: string, length = 40): string {
  // FNV-1a over the seed, then a small xorshift stream.
  let h = 2166136261;
  for (const ch of seed) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  let out = '';
  while (out.length < length) {
    h ^= h << 13;
    h ^= h >>> 17;
    h ^= h << 5;
    h >>>= 0;
    out += ALPHABET[h % 62];
  }
  return out;
}

/** A documentation example of an id of `kind`: its real shape (prefix and 22 base62 characters). */
export function exampleId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${exampleToken(kind, 22)}`;
}

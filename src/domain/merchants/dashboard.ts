// The merchant dashboard's users and sessions (docs/dashboard.md "Sign-in and sessions").
//
// A user belongs to one merchant and signs in with an email (unique across all merchants, compared
// trimmed and lower-cased) and a password, stored as a scrypt hash with a random per-user salt and
// its parameters (the same format and cost as API secrets: platform/auth.ts). A sign-in makes a
// session: the browser keeps a random token in an HttpOnly cookie, the database only its SHA-256,
// so several instances share sessions and a leaked table signs nobody in. A session lives
// DASHBOARD_SESSION_HOURS from sign-in (absolute) and ends at once when revoked (sign-out).
//
// Sign-in is system work (no merchant yet): it runs on the unscoped client, like API-key checks.
import { createHash, randomBytes } from 'node:crypto';
import type { PrismaClient } from '../../platform/db/index.ts';
import { DUMMY_SECRET_HASH, hashSecret, verifySecret, type AuthenticatedMerchant } from '../../platform/auth.ts';
import { AuthenticationError, ValidationError } from '../../platform/errors.ts';
import { newId, randomToken } from '../../platform/ids.ts';
import type { AuthFailureLimiter } from '../../platform/rate-limit.ts';
import {
  countDashboardUsers,
  deleteEndedDashboardSessions,
  findDashboardSession,
  findDashboardUserByEmail,
  findMerchant,
  insertDashboardSession,
  insertDashboardUser,
  revokeDashboardSession,
} from './store.ts';

export const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 1024;
const MAX_EMAIL_LENGTH = 254;
// One @, a local part, a domain of dot-separated labels (admin@localhost is allowed: a host name).
const EMAIL_SHAPE = /^[^\s\x00-\x1f\x7f@<>()[\]\\,;:"]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** The one message for a wrong email and a wrong password: the answer never tells them apart. */
export const SIGN_IN_FAILED = 'Invalid email or password.';

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

export interface CreatedDashboardUser {
  user_id: string;
  email: string;
}

/** Creates a dashboard user for a merchant. ValidationError (with a clear message) for bad input or a taken email. */
export async function createDashboardUser(prisma: PrismaClient, input: { merchantId: string; email: string; password: string }): Promise<CreatedDashboardUser> {
  const email = normalizeEmail(input.email ?? '');
  if (!email) throw new ValidationError('parameter_missing', 'Missing required parameter: email.', 'email');
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL_SHAPE.test(email)) {
    throw new ValidationError('parameter_invalid', `'${input.email}' is not an email address such as ops@example.com.`, 'email');
  }
  const password = input.password ?? '';
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new ValidationError('parameter_invalid', `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`, 'password');
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new ValidationError('parameter_invalid', `The password must be at most ${MAX_PASSWORD_LENGTH} characters long.`, 'password');
  }
  const merchant = input.merchantId ? await findMerchant(prisma, input.merchantId) : null;
  if (!merchant) throw new ValidationError('resource_missing', `No such merchant: '${input.merchantId}'.`, 'merchant_id');
  if (await findDashboardUserByEmail(prisma, email)) {
    throw new ValidationError('email_taken', `A dashboard user with the email ${email} already exists.`, 'email');
  }
  const id = newId('dashboard_user');
  try {
    await insertDashboardUser(prisma, { id, merchantId: merchant.id, email, passwordHash: await hashSecret(password) });
  } catch (err) {
    // Two creations of the same email at once: the unique index decides.
    if (await findDashboardUserByEmail(prisma, email)) throw new ValidationError('email_taken', `A dashboard user with the email ${email} already exists.`, 'email');
    throw err;
  }
  return { user_id: id, email };
}

/**
 * First start: the bootstrap merchant gets a dashboard user when it has none. Returns its email
 * and a random password (to be shown once), or null when the merchant already has a user.
 */
export async function bootstrapDashboardUser(prisma: PrismaClient, merchantId: string, publicBaseUrl: string): Promise<{ email: string; password: string } | null> {
  if ((await countDashboardUsers(prisma, merchantId)) > 0) return null;
  // admin@<the service's host name> (localhost when it is an IP address).
  let host = 'localhost';
  try {
    host = new URL(publicBaseUrl).hostname.replace(/^\[|\]$/g, '') || host;
  } catch {
    /* keep localhost */
  }
  const domain = /^[a-z0-9-]+(\.[a-z0-9-]+)*$/i.test(host) && !/^[0-9.]+$/.test(host) ? host.toLowerCase() : 'localhost';
  let email = `admin@${domain}`;
  if (await findDashboardUserByEmail(prisma, normalizeEmail(email))) email = `admin+${merchantId.slice(-6).toLowerCase()}@${domain}`;
  const password = randomBytes(18).toString('base64url'); // 24 characters, 144 bits
  await createDashboardUser(prisma, { merchantId, email, password });
  return { email: normalizeEmail(email), password };
}

export interface DashboardSessionView {
  user: { id: string; email: string };
  merchant: { id: string; name: string; mode: 'test' | 'live' };
}

export interface SignedIn extends DashboardSessionView {
  /** the cookie's value; only its hash is stored */
  token: string;
  expiresAt: Date;
}

/**
 * Checks an email and password and opens a session. Every attempt costs one scrypt: against the
 * user's hash, or a dummy hash for an unknown email, so time does not tell them apart. Counted
 * against the source address and the email before the scrypt (over either: 429, no work), given
 * back when it succeeds. Throws AuthenticationError with one message for both failures.
 */
export async function signIn(
  prisma: PrismaClient,
  input: { email: string; password: string },
  opts: { sessionHours: number; limiter?: AuthFailureLimiter | undefined; source?: string | undefined; now?: Date },
): Promise<SignedIn> {
  const email = normalizeEmail(input.email).slice(0, MAX_EMAIL_LENGTH + 1);
  const password = input.password.length > MAX_PASSWORD_LENGTH ? '' : input.password;
  const giveBackAddress = opts.limiter ? await opts.limiter.take(opts.source) : undefined;
  let giveBackAccount: (() => void) | undefined;
  try {
    giveBackAccount = opts.limiter ? await opts.limiter.takeAccount(email) : undefined;
  } catch (err) {
    giveBackAddress?.(); // refused for the email: not an attempt of the address's
    throw err;
  }
  let user, ok: boolean;
  try {
    user = await findDashboardUserByEmail(prisma, email);
    ok = await verifySecret(password, user ? user.passwordHash : DUMMY_SECRET_HASH);
  } catch (err) {
    giveBackAddress?.();
    giveBackAccount?.();
    throw err;
  }
  if (!user || !ok || !password) throw signInFailed();
  giveBackAddress?.();
  giveBackAccount?.();
  const now = opts.now ?? new Date();
  const token = randomToken(43);
  const expiresAt = new Date(now.getTime() + opts.sessionHours * 3_600_000);
  await insertDashboardSession(prisma, { id: newId('dashboard_session'), merchantId: user.merchantId, userId: user.id, tokenHash: tokenHash(token), createdAt: now, expiresAt });
  return { token, expiresAt, ...view(user, user.merchant) };
}

/** 401 for a failed sign-in or a missing/ended session: no WWW-Authenticate (a browser would prompt for Basic credentials). */
export function signInFailed(message = SIGN_IN_FAILED): AuthenticationError {
  const e = new AuthenticationError(message);
  e.headers = {};
  return e;
}

export interface LiveSession extends DashboardSessionView {
  sessionId: string;
  expiresAt: Date;
}

/** The live session of a cookie's token (not expired, not revoked), or null. */
export async function sessionByToken(prisma: PrismaClient, token: string, now = new Date()): Promise<LiveSession | null> {
  if (!token || token.length > 200) return null;
  const s = await findDashboardSession(prisma, tokenHash(token));
  if (!s || s.revokedAt || s.expiresAt.getTime() <= now.getTime()) return null;
  return { sessionId: s.id, expiresAt: s.expiresAt, ...view(s.user, s.merchant) };
}

/** Ends the session of a token (sign-out); false when there was no live one. */
export async function endSession(prisma: PrismaClient, token: string, now = new Date()): Promise<boolean> {
  if (!token || token.length > 200) return false;
  return (await revokeDashboardSession(prisma, tokenHash(token), now)) === 1;
}

/**
 * The merchant a session acts for, in the shape API-key authentication gives: `keyId` is the
 * session id and `clientId` the user id — the key the per-key request rate limit counts under, so
 * a user's requests share one budget across sign-ins (docs/dashboard.md).
 */
export function sessionMerchant(s: LiveSession): AuthenticatedMerchant {
  return { id: s.merchant.id, name: s.merchant.name, mode: s.merchant.mode, keyId: s.sessionId, clientId: s.user.id };
}

/** Housekeeping: deletes sessions that ended more than a day ago, a batch at a time; how many. */
export async function purgeEndedDashboardSessions(prisma: PrismaClient, now = new Date(), batch = 5_000): Promise<number> {
  const before = new Date(now.getTime() - 86_400_000);
  let total = 0;
  for (;;) {
    const n = await deleteEndedDashboardSessions(prisma, before, batch);
    total += n;
    if (n < batch) return total;
  }
}

function view(user: { id: string; email: string }, merchant: { id: string; name: string; mode: string }): DashboardSessionView {
  return { user: { id: user.id, email: user.email }, merchant: { id: merchant.id, name: merchant.name, mode: merchant.mode === 'live' ? 'live' : 'test' } };
}

// The merchant dashboard's sign-in over HTTP (docs/dashboard.md "Sign-in and sessions"):
//
//   POST   /dashboard/api/session  {"email","password"} → 200 {signed_in: true, user, merchant} + Set-Cookie billing_session
//   GET    /dashboard/api/session  → 200 {signed_in: true, user, merchant} for a live session, else
//                                    200 {signed_in: false} (the app's first question: a signed-out
//                                    visitor is no failure, so the browser logs no failed request)
//   DELETE /dashboard/api/session  → 204, the session revoked in the database, the cookie cleared
//
// and the cookie's use on /graphql (`dashboardContext`). The cookie is SameSite=Strict and
// HttpOnly; besides, every request the cookie authenticates must prove it was made by the
// dashboard's own script, which a page on another site cannot do: a POST with
// `Content-Type: application/json` (a form cannot send it, and a cross-site fetch with it needs
// a CORS preflight nobody answers with credentials), the header `X-Billing-Dashboard: 1` (same),
// and an `Origin` equal to the service's own. Anything else with only the cookie is 403 and nothing
// runs. Sign-in and sign-out get the Origin and JSON checks too (login CSRF).
import type { Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { endSession, sessionByToken, sessionMerchant, signIn, signInFailed, type DashboardSessionView } from '../domain/merchants/dashboard.ts';
import type { AuthenticatedMerchant } from '../platform/auth.ts';
import type { Config } from '../platform/config.ts';
import { clientAddress } from '../platform/client-address.ts';
import { HttpError, ValidationError } from '../platform/errors.ts';
import { checkInputText } from '../platform/validation.ts';
import type { AuthFailureLimiter } from '../platform/rate-limit.ts';
import type { AppEnv, Services } from '../platform/env.ts';
import { bodyText, declaredBodyLimit, isUtf8, mediaType, parseJson } from '../rest/router.ts';

export const SESSION_COOKIE = 'billing_session';
export const DASHBOARD_HEADER = 'x-billing-dashboard';
export const SESSION_PATH = '/dashboard/api/session';

const forbidden = (message: string) => new HttpError(403, 'forbidden', message);

/** Whether the request reached us over https: PUBLIC_BASE_URL is https, or (behind TRUST_PROXY) the proxy says so. */
export function overHttps(c: Context, config: Config): boolean {
  if (config.publicBaseUrl.startsWith('https://')) return true;
  if (new URL(c.req.url).protocol === 'https:') return true;
  if (config.TRUST_PROXY) {
    const proto = c.req.header('x-forwarded-proto')?.split(',').map((s) => s.trim()).filter(Boolean).pop();
    return proto?.toLowerCase() === 'https';
  }
  return false;
}

/**
 * The origins a cookie-authenticated request may come from: the origin of PUBLIC_BASE_URL, and —
 * only while PUBLIC_BASE_URL is left at its default (http://localhost:PORT, a development setup
 * reached as localhost, 127.0.0.1 or a LAN address) — the origin the request itself names in its
 * Host header (its scheme as `overHttps` decides). That second one is safe: a page on another site
 * sends its own Origin, which never equals our Host; a page that rebinds its own name to our
 * address matches its own Host but holds no cookie of ours (cookies belong to the host name) and
 * cannot read what sign-in answers to it about credentials it does not have. Set PUBLIC_BASE_URL
 * in production and only its origin is accepted.
 */
export function allowedOrigins(c: Context, config: Config): string[] {
  const origins = [new URL(config.publicBaseUrl).origin];
  if (!config.PUBLIC_BASE_URL) {
    const host = c.req.header('host');
    if (host) {
      try {
        origins.push(new URL(`${overHttps(c, config) ? 'https' : 'http'}://${host}`).origin);
      } catch {
        /* a Host that is no host: only PUBLIC_BASE_URL's origin */
      }
    }
  }
  return origins;
}

/**
 * The Origin check: present and one of ours; else 403. `what` names the request in the message:
 * sign-in carries no cookie yet, the rest are authenticated by it.
 */
function checkOrigin(c: Context, config: Config, what = 'Requests authenticated by the dashboard session cookie'): void {
  const origin = c.req.header('origin');
  if (!origin) throw forbidden(`${what} must carry an Origin header.`);
  if (!allowedOrigins(c, config).includes(origin)) throw forbidden(`${what} must come from this service's origin, not ${origin}.`);
}

/** JSON body check for the session endpoints (415 as REST). */
function checkJson(c: Context): void {
  const header = c.req.header('content-type');
  if (mediaType(header) !== 'application/json' || !isUtf8(header)) {
    throw new HttpError(415, 'unsupported_media_type', 'Request bodies must be JSON (UTF-8), sent with Content-Type: application/json.');
  }
}

const body = (s: DashboardSessionView) => ({ signed_in: true, user: s.user, merchant: s.merchant });

export function mountDashboardSession(app: Hono<AppEnv>, services: Services, limiter: AuthFailureLimiter): void {
  const { config, db } = services;

  app.post(SESSION_PATH, async (c) => {
    declaredBodyLimit(c);
    checkOrigin(c, config, 'Dashboard sign-in requests');
    checkJson(c);
    const input = parseJson(await bodyText(c));
    if (!input || typeof input !== 'object' || Array.isArray(input)) throw new ValidationError('invalid_json', 'The request body must be a JSON object.');
    checkInputText(input); // no NUL or lone surrogate (PostgreSQL cannot hold them), bounded nesting
    const { email, password } = input as Record<string, unknown>;
    for (const [name, v] of [['email', email], ['password', password]] as const) {
      if (v === undefined || v === null || v === '') throw new ValidationError('parameter_missing', `Missing required parameter: ${name}.`, name);
      if (typeof v !== 'string') throw new ValidationError('parameter_invalid', `${name} must be a string.`, name);
    }
    const s = await signIn(db.prisma, { email: email as string, password: password as string }, {
      sessionHours: config.DASHBOARD_SESSION_HOURS,
      limiter,
      source: clientAddress(c, config.TRUST_PROXY),
    });
    setCookie(c, SESSION_COOKIE, s.token, {
      path: '/',
      httpOnly: true,
      sameSite: 'Strict',
      secure: overHttps(c, config),
      maxAge: Math.max(1, Math.floor(config.DASHBOARD_SESSION_HOURS * 3600)),
    });
    c.header('Cache-Control', 'no-store');
    return c.json(body(s), 200);
  });

  app.get(SESSION_PATH, async (c) => {
    c.header('Cache-Control', 'no-store');
    const s = await sessionByToken(db.prisma, getCookie(c, SESSION_COOKIE) ?? '');
    if (!s) return c.json({ signed_in: false }, 200);
    return c.json(body(s), 200);
  });

  app.delete(SESSION_PATH, async (c) => {
    checkOrigin(c, config);
    // No body is needed; one that is sent must be JSON, as on REST.
    if (c.req.header('content-type') !== undefined) checkJson(c);
    const token = getCookie(c, SESSION_COOKIE);
    if (token) await endSession(db.prisma, token);
    deleteCookie(c, SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'Strict', secure: overHttps(c, config) });
    return c.body(null, 204);
  });
}

/**
 * /graphql without an Authorization header: the merchant of the request's session cookie, when the
 * request passes the cross-site checks (403 otherwise, before anything runs); null without a cookie
 * (the caller answers 401 as for missing credentials).
 */
export async function dashboardMerchant(c: Context<AppEnv>, services: Services): Promise<AuthenticatedMerchant | null> {
  const token = getCookie(c, SESSION_COOKIE);
  if (token === undefined) return null;
  if (c.req.method !== 'POST') throw forbidden('GraphQL requests authenticated by the dashboard session cookie must be POSTs.');
  if (mediaType(c.req.header('content-type')) !== 'application/json') {
    throw forbidden('GraphQL requests authenticated by the dashboard session cookie must be sent with Content-Type: application/json.');
  }
  if (c.req.header(DASHBOARD_HEADER) !== '1') {
    throw forbidden('GraphQL requests authenticated by the dashboard session cookie must carry the header X-Billing-Dashboard: 1.');
  }
  checkOrigin(c, services.config);
  const s = await sessionByToken(services.db.prisma, token);
  if (!s) throw signInFailed('Not signed in, or the session has ended. Sign in again.');
  return sessionMerchant(s);
}

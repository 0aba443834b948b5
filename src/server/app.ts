// The HTTP application: one Hono app hosting REST (/v1), GraphQL (/graphql), the OpenAPI
// document and reference, health checks and (later) hosted pages. Every response carries a
// Request-Id; every request is logged as one JSON line.
import { Hono, type Context } from 'hono';
import { cors } from 'hono/cors';
import { createGraphQLServer, graphqlAnswerType } from '../graphql/yoga.ts';
import { graphiqlSecurityHeaders, withNonce } from '../graphql/graphiql.ts';
import type { GraphQLParams, Plugin as GraphQLPlugin } from 'graphql-yoga';
import { mountCheckout } from '../hosted/checkout.ts';
import { mountSetup } from '../hosted/setup.ts';
import { mountPortal } from '../hosted/portal.ts';
import { mountInvoicePdf } from '../hosted/invoice-pdf.ts';
import { mountHostedInvoice } from '../hosted/invoice.ts';
import { mountEmailLinks } from '../hosted/email-links.ts';
import { loggedPath, notFound as hostedNotFound } from '../hosted/kit.ts';
import type { Ctx } from '../platform/context.ts';
import { forMerchant } from '../platform/db/tenant.ts';
import { Clock } from '../platform/clock.ts';
import { pendingMigrations } from '../platform/db/migrate.ts';
import { AppError, errorBody, HttpError, ValidationError, isDatabaseUnavailable, ServiceUnavailableError, toAppError } from '../platform/errors.ts';
import { newId, randomToken } from '../platform/ids.ts';
import { limitsFor } from '../platform/rate-limit.ts';
import { routes } from '../rest/index.ts';
import { buildOpenApi } from '../rest/openapi.ts';
import { bodyText, declaredBodyLimit, isUtf8, mediaType, mountRoutes, parseJson, unmatched } from '../rest/router.ts';
import { MAX_BODY_BYTES } from '../platform/limits.ts';
import { clientAddress } from '../platform/client-address.ts';
import { inServerSpan, tracingEnabled } from '../platform/tracing.ts';
import { observeRequest } from '../platform/metrics.ts';
import { mountMetrics, routeTemplate } from './metrics.ts';
import { docsAsset, docsHtml, docsSecurityHeaders } from './docs.ts';
import { landingHtml, landingSecurityHeaders } from './landing.ts';
import { dashboardUnauthorized, mountDashboard } from './dashboard.ts';
import { dashboardMerchant, mountDashboardSession } from './dashboard-auth.ts';
import type { AuthenticatedMerchant } from '../platform/auth.ts';
import type { AppEnv, Services } from '../platform/env.ts';
import type { Logger } from '../platform/logger.ts';

const escapeHtml = (v: string) => v.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

export { MAX_BODY_BYTES };
const GRAPHQL_BODY_TYPES = new Set(['application/json', 'application/graphql-response+json']);

export const VERSION = '0.1.0';

function sendError(c: Context<AppEnv>, err: AppError) {
  for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
  const requestId = c.get('requestId');
  if (c.req.path.startsWith('/hosted/')) {
    return c.html(
      err.status < 500
        ? `<!doctype html><html lang="en"><meta charset="utf-8"><title>Not available</title><main><h1>Not available</h1><p>${escapeHtml(err.message)} Reference: ${requestId}</p></main></html>`
        : `<!doctype html><html lang="en"><meta charset="utf-8"><title>Something went wrong</title><main><h1>Something went wrong</h1><p>Please try again in a moment. Reference: ${requestId}</p></main></html>`,
      err.status as 500,
    );
  }
  if (c.req.path === '/graphql') {
    const param = err.param ? { param: err.param } : {};
    return c.json({ errors: [{ message: err.message, extensions: { code: err.code, type: err.type, ...param, request_id: requestId } }] }, err.status as 400);
  }
  return c.json(errorBody(err, requestId), err.status as 400);
}

/**
 * The parameters of a GraphQL POST. Only JSON bodies: a form or a text/plain body is what a page
 * on another site can make a browser send without asking (cross-site request forgery). The body
 * is read here (size-limited, straight from node's request) so that bad JSON gets the documented
 * invalid_json error, as on REST.
 */
async function graphqlPostParams(c: Context<AppEnv>): Promise<GraphQLParams> {
  const header = c.req.header('content-type');
  if (!GRAPHQL_BODY_TYPES.has(mediaType(header)) || !isUtf8(header)) {
    throw new HttpError(415, 'unsupported_media_type', 'GraphQL requests must be POSTed as JSON (Content-Type: application/json, UTF-8).');
  }
  declaredBodyLimit(c);
  const body = parseJson(await bodyText(c));
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError('parameter_missing', 'The request body must be a JSON object with a "query" string (and optionally "variables" and "operationName").', 'query');
  }
  return body as GraphQLParams;
}

/** The parameters of a GraphQL GET (queries only: Yoga refuses a mutation with 405). */
function graphqlGetParams(c: Context<AppEnv>): GraphQLParams {
  const json = (name: 'variables' | 'extensions') => {
    const text = c.req.query(name);
    if (text === undefined || text === '') return undefined;
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new ValidationError('parameter_invalid', `"${name}" must be a JSON object.`, name);
    }
  };
  return { query: c.req.query('query'), operationName: c.req.query('operationName'), variables: json('variables'), extensions: json('extensions') };
}

/** Shutting down (src/main.ts): a request that arrives now, on a connection opened before, is
 * refused so that its client retries elsewhere (or after the restart); none is half-done. */
function refuseDraining(c: Context<AppEnv>): void {
  const e = new ServiceUnavailableError('The service is shutting down. Retry shortly.');
  e.headers = { 'Retry-After': '1', Connection: 'close' };
  c.res = sendError(c, e);
}

/** A request inside its SERVER span (tracing on): runs the rest of the chain, names the span after the route template and returns it. */
async function tracedRequest(c: Context<AppEnv>, next: () => Promise<void>, requestId: string, refused: boolean): Promise<string> {
  let route = '';
  await inServerSpan(`${c.req.method} request`, (h) => c.req.header(h), {}, async (span) => {
    if (refused) refuseDraining(c);
    else await next();
    route = routeTemplate(c);
    if (!span) return;
    span.updateName(`${c.req.method} ${route}`);
    span.setAttributes({
      'http.request.method': c.req.method,
      'http.route': route,
      'url.path': loggedPath(c.req.path),
      'http.response.status_code': c.res.status,
      'billing.request_id': requestId,
      ...(c.get('ctx') ? { 'billing.merchant_id': c.get('ctx')!.merchant.id } : {}),
    });
    if (c.res.status >= 500) span.setStatus({ code: 2 });
  });
  return route;
}

/** A request's access-log line (the path redacted by loggedPath). */
function accessEntry(c: Context<AppEnv>, status: number, elapsedMs: number) {
  return { method: c.req.method, path: loggedPath(c.req.path), status, duration_ms: Math.round(elapsedMs * 10) / 10, merchant_id: c.get('ctx')?.merchant.id };
}

export function createApp(services: Services, opts: { graphqlPlugins?: GraphQLPlugin[]; draining?: () => boolean } = {}) {
  const app = new Hono<AppEnv>();
  // Counted in the database on PostgreSQL (every instance shares them), in memory otherwise.
  const { requests: rateLimiter, auth: authFailures } = limitsFor(services);
  const yoga = createGraphQLServer({ maxDepth: services.config.GRAPHQL_MAX_DEPTH, maxAliases: 100, rateLimiter, log: services.log, plugins: opts.graphqlPlugins });
  let openapi: unknown;
  const draining = opts.draining ?? (() => false);

  // Request id and access log.
  app.use('*', async (c, next) => {
    const requestId = newId('request');
    let log: Logger | undefined;
    const requestLog = () => (log ??= services.log.child({ request_id: requestId }));
    c.set('services', services);
    c.set('requestId', requestId);
    c.set('log', requestLog);
    const started = performance.now();
    let route: string | undefined; // the route template (never the ids in the path): metrics and the span
    const refusedDraining = draining();
    // No closure here may capture c or next: one that did (an async function around next(), as the
    // span once was) kept ~7 KB of every request alive through two young-generation collections —
    // 3.5× the bytes promoted to the old generation and twice the collector's time (measured, with
    // the likely mechanism: c and next then live in this scope's heap context, which the request's
    // logger closure also holds; docs/performance.md, 2026-11-28 11:03–12:40). Hence the span's work
    // in functions of their own.
    if (tracingEnabled()) route = await tracedRequest(c, next, requestId, refusedDraining);
    else if (refusedDraining) refuseDraining(c);
    else await next();
    // Set on the response's own headers: c.header() on a finished response would rebuild it
    // around its body as a stream (a large share of a small request's cost).
    const headers = c.res.headers;
    headers.set('Request-Id', requestId);
    headers.set('X-Content-Type-Options', 'nosniff');
    // API answers carry merchant data: no cache (browser, proxy) keeps them.
    if (!headers.has('Cache-Control') && (c.req.path.startsWith('/v1/') || c.req.path === '/graphql')) headers.set('Cache-Control', 'no-store');
    const status = c.res.status;
    const elapsed = performance.now() - started;
    observeRequest(route ?? routeTemplate(c), c.req.method, status, elapsed / 1000);
    // A request refused while draining is the shutdown working as meant (its client retries
    // elsewhere), not a failure: every rolling deploy makes some, and they must not page anyone.
    // The line is made only when it is written (accessEntry: a function of its own, not a closure).
    if (refusedDraining) requestLog().info(accessEntry(c, status, elapsed), 'request refused: shutting down');
    else if (status >= 500) requestLog().error(accessEntry(c, status, elapsed), 'request failed');
    else if (services.log.isLevelEnabled('info')) requestLog().info(accessEntry(c, status, elapsed), 'request');
  });

  app.onError((err, c) => {
    const appErr = toAppError(err, (e) => c.get('log')?.().warn({ err: e }, 'database refused a value that validation let through'));
    if (appErr.status >= 500) {
      c.get('log')?.().error({ err, db_unavailable: isDatabaseUnavailable(err) }, 'unhandled error');
    }
    return sendError(c, appErr);
  });


  const authenticate = async (c: Context<AppEnv>, dashboardCookie = false) => {
    // The dashboard's session cookie authenticates /graphql when there is no Authorization header
    // (src/server/dashboard-auth.ts: 403 unless the request is the dashboard's own); its merchant's
    // clientId is the user id, the key of the per-key request rate limit.
    const merchant: AuthenticatedMerchant =
      (dashboardCookie && c.req.header('authorization') === undefined ? await dashboardMerchant(c, services) : null) ??
      (await services.auth.authenticate(c.req.header('authorization'), {
        source: clientAddress(c, services.config.TRUST_PROXY),
        limiter: authFailures,
      }));
    await rateLimiter.consume(merchant.clientId);
    const requestLog = c.get('log');
    let log: Logger | undefined;
    const ctx: Ctx = {
      merchant,
      db: forMerchant(services.db.prisma, merchant.id),
      requestId: c.get('requestId'),
      get log() {
        return (log ??= requestLog().child({ merchant_id: merchant.id }));
      },
      runtime: services.runtime,
      clock: new Clock(merchant),
    };
    c.set('ctx', ctx);
    return ctx;
  };

  // ---- the landing page: where everything is (src/server/landing.ts)
  app.get('/', (c) => {
    const nonce = randomToken(22);
    for (const [k, v] of Object.entries(landingSecurityHeaders(nonce))) c.header(k, v);
    return c.html(landingHtml({ nonce, baseUrl: services.config.publicBaseUrl, version: VERSION }));
  });

  // ---- health
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      const pending = await pendingMigrations(services.db);
      if (pending.length > 0) {
        return sendError(c, new ServiceUnavailableError(`Migrations not applied yet: ${pending.join(', ')}.`));
      }
      return c.json({ status: 'ready', database: services.db.kind });
    } catch {
      return sendError(c, new ServiceUnavailableError());
    }
  });

  // ---- Prometheus metrics (behind METRICS_TOKEN here; on METRICS_PORT it has its own listener)
  mountMetrics(app, services);

  // ---- API reference
  app.get('/openapi.json', (c) => {
    openapi ??= buildOpenApi(routes, { serverUrl: services.config.publicBaseUrl, version: VERSION });
    return c.json(openapi as object);
  });
  app.get('/docs', (c) => {
    const nonce = randomToken(22);
    for (const [k, v] of Object.entries(docsSecurityHeaders(nonce))) c.header(k, v);
    return c.html(docsHtml(nonce));
  });
  app.get('/docs/assets/:file', async (c) => {
    const asset = await docsAsset(c.req.param('file'));
    if (!asset) return sendError(c, new HttpError(404, 'resource_missing', 'No such asset.'));
    c.header('Cache-Control', 'public, max-age=86400');
    return c.body(new Uint8Array(asset.body), 200, { 'Content-Type': asset.type });
  });

  // ---- the merchant dashboard's sign-in (its session cookie also authenticates /graphql)
  app.use('/dashboard/api/*', async (c, next) => {
    await next();
    c.res.headers.set('Cache-Control', 'no-store');
  });
  mountDashboardSession(app, services, authFailures);

  // ---- hosted pages (end customers, no credentials)
  mountCheckout(app, services);
  mountSetup(app, services);
  mountPortal(app, services);
  mountInvoicePdf(app, services);
  mountHostedInvoice(app, services);
  mountEmailLinks(app, services);

  // ---- the merchant dashboard (a single-page app on /graphql; its session API is /dashboard/api/*)
  mountDashboard(app);

  // ---- CORS: only the configured origins (none by default), never with credentials: a browser
  // on an allowed origin sends the API key explicitly in the Authorization header.
  const allowedOrigins = new Set(services.config.CORS_ALLOWED_ORIGINS);
  const corsPolicy = cors({
    origin: (origin) => (allowedOrigins.has(origin) ? origin : null),
    allowMethods: ['GET', 'POST', 'PATCH', 'DELETE'],
    allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key'],
    exposeHeaders: ['Request-Id', 'Idempotent-Replayed', 'Retry-After'],
    credentials: false,
    maxAge: 600,
  });
  app.use('/v1/*', async (c, next) => (allowedOrigins.size > 0 ? corsPolicy(c, next) : next()));
  app.use('/graphql', async (c, next) => (allowedOrigins.size > 0 ? corsPolicy(c, next) : next()));
  app.use('/graphql', dashboardUnauthorized);

  // ---- REST
  // The body is read (and its size checked) by the router, from node's request: no web Request.
  app.use('/v1/*', async (c, next) => {
    declaredBodyLimit(c);
    await authenticate(c);
    await next();
  });
  mountRoutes(app, routes);

  // ---- GraphQL: GraphiQL (a browser's GET for HTML) is public; operations need credentials.
  app.on(['GET', 'POST'], '/graphql', async (c) => {
    // A browser opening the page. GraphiQL keeps the edited query in the address (?query=…): a
    // reload or a shared link, without credentials, gets the page again — not a 401 whose
    // WWW-Authenticate brings up the browser's own Basic-auth prompt.
    const wantsGraphiQL =
      c.req.method === 'GET' && (c.req.header('accept') ?? '').includes('text/html') && (!c.req.query('query') || !c.req.header('authorization'));
    if (wantsGraphiQL) {
      // The page asks for an API secret: a strict CSP with a nonce of its own for its scripts,
      // never framed, cached, or leaking its URL (src/graphql/graphiql.ts).
      const res = await yoga.fetch(c.req.raw, {});
      if (res.status !== 200 || !res.headers.get('content-type')?.startsWith('text/html')) return res;
      const nonce = randomToken(22);
      for (const [k, v] of Object.entries(graphiqlSecurityHeaders(nonce))) c.header(k, v);
      return c.body(withNonce(new Uint8Array(await res.arrayBuffer()), nonce), 200, { 'Content-Type': 'text/html; charset=UTF-8' });
    }
    const ctx = await authenticate(c, true);
    const params = c.req.method === 'POST' ? await graphqlPostParams(c) : graphqlGetParams(c);
    if (typeof params.query !== 'string') {
      throw new ValidationError('parameter_missing', 'A GraphQL request needs a "query" string (and optionally "variables" and "operationName").', 'query');
    }
    if (params.operationName != null && typeof params.operationName !== 'string') {
      throw new ValidationError('parameter_invalid', '"operationName" must be a string.', 'operationName');
    }
    const gctx = { ctx, services, loaders: new Map() };
    const answerType = graphqlAnswerType(c.req.header('accept'));
    if (answerType === 'stream') {
      // Event streams and multipart answers: Yoga's own HTTP handling.
      const request =
        c.req.method === 'POST'
          ? new Request(c.req.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: c.req.header('accept') ?? '' }, body: JSON.stringify(params) })
          : c.req.raw;
      return yoga.fetch(request, { gctx });
    }
    const answer = await yoga.execute(params, gctx, answerType, c.req.method as 'GET' | 'POST');
    return c.body(answer.body, answer.status as 200, answer.headers);
  });

  app.notFound((c) => {
    if (c.req.path.startsWith('/hosted/')) return hostedNotFound(c);
    if (c.req.path === '/') {
      const e = new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed on /. Use GET.`);
      e.headers = { Allow: 'GET, HEAD' };
      return sendError(c, e);
    }
    if (c.req.path === '/graphql') {
      const e = new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed on /graphql. Use GET or POST.`);
      e.headers = { Allow: 'GET, POST' };
      return sendError(c, e);
    }
    return sendError(c, unmatched(routes, c.req.method, c.req.path));
  });

  return app;
}

// GET /metrics (Prometheus text format) and the route template each request is counted under.
// Served on a port of its own when METRICS_PORT is set (without authentication — reach it only from
// the monitoring network — unless METRICS_TOKEN is set too); otherwise on the main port behind
// `Authorization: Bearer METRICS_TOKEN`;
// with neither configured it does not exist (404). The scrape-time families (jobs due, invoices by
// status, pool connections) are refreshed by one query each when scraped.
import { Hono, type Context } from 'hono';
import { matchedRoutes } from 'hono/route';
import { timingSafeEqual, createHash } from 'node:crypto';
import { registry, renderMetrics } from '../platform/metrics.ts';
import { AuthenticationError, errorBody, HttpError } from '../platform/errors.ts';
import type { AppEnv, Services } from '../platform/env.ts';

/**
 * The template of the route that answered (or would have: a request refused by a middleware, such
 * as a 401 on /v1/*, is counted under the route it was for): /v1/customers/:id, /graphql, never
 * the path with its ids. A request no route matches is "unmatched" (scanners must not create series).
 */
export function routeTemplate(c: Context): string {
  const routes = matchedRoutes(c);
  const at = c.req.routeIndex;
  for (let i = at; i < routes.length; i++) {
    const r = routes[i];
    if (r && r.method !== 'ALL') return r.path;
  }
  return 'unmatched';
}

async function answer(c: Context, services: Services) {
  const text = await renderMetrics(services.db);
  return c.body(text, 200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
}

const digest = (v: string) => createHash('sha256').update(v).digest();

/** null when the request carries `Authorization: Bearer <token>`, else the 401 to answer. */
function refusal(c: Context, expected: Buffer, requestId: string): Response | null {
  const header = c.req.header('authorization') ?? '';
  const given = /^Bearer (.+)$/i.exec(header)?.[1] ?? '';
  if (given && timingSafeEqual(digest(given), expected)) return null;
  const err = new AuthenticationError('GET /metrics needs the metrics token: Authorization: Bearer <METRICS_TOKEN>.');
  c.header('WWW-Authenticate', 'Bearer realm="metrics"');
  return c.json(errorBody(err, requestId), 401);
}

/** On the main app: GET /metrics behind the bearer token (only when METRICS_TOKEN is set and METRICS_PORT is not). */
export function mountMetrics(app: Hono<AppEnv>, services: Services): void {
  const token = services.config.METRICS_TOKEN;
  if (!token || services.config.METRICS_PORT !== undefined) return;
  const expected = digest(token);
  app.get('/metrics', async (c) => refusal(c, expected, c.get('requestId')) ?? answer(c, services));
}

/**
 * The app of the METRICS_PORT listener: GET /metrics, nothing else. Open to whoever reaches the
 * port, unless METRICS_TOKEN is set too: then the port asks for the same bearer token.
 */
export function createMetricsApp(services: Services): Hono {
  const app = new Hono();
  const token = services.config.METRICS_TOKEN;
  const expected = token ? digest(token) : undefined;
  app.get('/metrics', (c) => (expected ? refusal(c, expected, 'none') : null) ?? answer(c, services));
  app.notFound((c) => c.json(errorBody(new HttpError(404, 'resource_missing', 'Only GET /metrics is served on this port.'), 'none'), 404));
  return app;
}

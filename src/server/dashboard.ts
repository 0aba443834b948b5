// The merchant dashboard (dashboard/, a React app built by Vite into dashboard/dist — `npm start`
// builds it when its sources changed): served at /dashboard by this process. Every client route
// (/dashboard/…) answers the app's index.html, never cached; the hashed assets are cached for a
// year. A strict CSP: the app's own scripts and styles only, data from this origin only.
// /dashboard/api/* (the session) is not answered here.
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../platform/env.ts';

export const DASHBOARD_DIST = fileURLToPath(new URL('../../dashboard/dist/', import.meta.url));

export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  woff2: 'font/woff2',
  json: 'application/json',
  map: 'application/json',
};

interface Built {
  index: Buffer;
  assets: Map<string, { body: Buffer; type: string }>;
}

async function load(dir: string): Promise<Built | null> {
  try {
    const index = await readFile(dir + 'index.html');
    const assets = new Map<string, { body: Buffer; type: string }>();
    for (const name of await readdir(dir + 'assets').catch(() => [] as string[])) {
      const type = TYPES[name.split('.').pop() ?? ''];
      if (type) assets.set(name, { body: await readFile(`${dir}assets/${name}`), type });
    }
    return { index, assets };
  } catch {
    return null;
  }
}

const pageHeaders = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

export function mountDashboard(app: Hono<AppEnv>, opts: { dist?: string } = {}) {
  const dist = opts.dist ?? DASHBOARD_DIST;
  // Read once, on the first request (the build is done before the server starts); a missing
  // build is looked for again on the next request.
  let built: Promise<Built | null> | null = null;
  const get = async () => {
    const b = await (built ??= load(dist));
    if (!b) built = null;
    return b;
  };

  const page = async (c: Context<AppEnv>) => {
    const b = await get();
    if (!b) {
      return c.html(
        '<!doctype html><html lang="en"><meta charset="utf-8"><title>Dashboard not built</title><main><h1>The dashboard is not built</h1><p>Run <code>npm run dashboard:build</code> (or <code>npm start</code>, which builds it).</p></main></html>',
        503,
        { ...pageHeaders, 'Cache-Control': 'no-store' },
      );
    }
    return c.body(new Uint8Array(b.index), 200, { ...pageHeaders, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' });
  };

  app.get('/dashboard', page);
  app.get('/dashboard/assets/:file', async (c, next) => {
    const asset = (await get())?.assets.get(c.req.param('file'));
    if (!asset) return next();
    return c.body(new Uint8Array(asset.body), 200, { 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=31536000, immutable' });
  });
  app.get('/dashboard/*', async (c, next) => {
    // The session API, and a missing asset, are not pages.
    if (c.req.path.startsWith('/dashboard/api/') || c.req.path.startsWith('/dashboard/assets/')) return next();
    return page(c);
  });
}

/**
 * For /graphql: a 401 to the dashboard's own request (it sends X-Billing-Dashboard) carries no
 * `WWW-Authenticate: Basic` — that header makes a browser open its own sign-in prompt over the
 * page (or, headless, wait on it) instead of letting the app go back to its sign-in page.
 */
export const dashboardUnauthorized: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (c.res.status === 401 && c.req.header('x-billing-dashboard') !== undefined) c.res.headers.delete('WWW-Authenticate');
};

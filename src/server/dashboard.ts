// The merchant dashboard (dashboard/, a React app built by Vite into dashboard/dist — `npm start`
// builds it when its sources changed): served at /dashboard by this process. Every client route
// (/dashboard/…) answers the app's index.html, never cached; the hashed assets are cached for a
// year. A strict CSP: the app's own scripts and styles only, data from this origin only.
// Text files (index.html, scripts, styles, SVG, JSON) are gzipped once, at level 9, when the build
// is first read, and sent gzipped to a client that accepts gzip (`Content-Encoding: gzip`), as
// they are; always `Vary: Accept-Encoding`, and an ETag per variant (a 304 to If-None-Match).
// `npm run dashboard:size` measures the same gzip. /dashboard/api/* (the session) is not answered here.
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
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

/** Types worth compressing (images and fonts are compressed already). */
const COMPRESSIBLE = new Set(['js', 'css', 'svg', 'json', 'map', 'html']);
/** Below this a gzip header costs more than it saves. */
const MIN_GZIP_BYTES = 1024;

/** A file as served: its bytes, and (when it is text worth it) the same gzipped; an ETag each. */
interface File {
  body: Buffer;
  etag: string;
  gzip: { body: Buffer; etag: string } | null;
}

interface Built {
  index: File;
  assets: Map<string, File & { type: string }>;
}

function file(body: Buffer, ext: string): File {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 22);
  let gzip: File['gzip'] = null;
  if (COMPRESSIBLE.has(ext) && body.length >= MIN_GZIP_BYTES) {
    const z = gzipSync(body, { level: 9 });
    if (z.length < body.length) gzip = { body: z, etag: `"${hash}-gzip"` };
  }
  return { body, etag: `"${hash}"`, gzip };
}

async function load(dir: string): Promise<Built | null> {
  try {
    const index = file(await readFile(dir + 'index.html'), 'html');
    const assets = new Map<string, File & { type: string }>();
    for (const name of await readdir(dir + 'assets').catch(() => [] as string[])) {
      const ext = name.split('.').pop() ?? '';
      const type = TYPES[ext];
      if (type) assets.set(name, { ...file(await readFile(`${dir}assets/${name}`), ext), type });
    }
    return { index, assets };
  } catch {
    return null;
  }
}

/** Whether Accept-Encoding accepts gzip: `gzip` (or `*`, when gzip is not refused by name) with q > 0. */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (!coding) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qp ? Number(qp.slice(2)) : 1;
    q.set(coding.trim(), Number.isFinite(value) ? value : 0);
  }
  const gzip = q.get('gzip') ?? q.get('x-gzip') ?? q.get('*');
  return gzip !== undefined && gzip > 0;
}

/** The variant of `f` the request accepts, with its headers; a 304 when If-None-Match names it. */
function send(c: Context<AppEnv>, f: File, headers: Record<string, string>): Response {
  const z = f.gzip && acceptsGzip(c.req.header('accept-encoding')) ? f.gzip : null;
  const etag = z ? z.etag : f.etag;
  const h: Record<string, string> = { ...headers, ETag: etag };
  if (f.gzip) h.Vary = 'Accept-Encoding';
  const inm = c.req.header('if-none-match');
  if (inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) return c.body(null, 304, h);
  if (z) h['Content-Encoding'] = 'gzip';
  return c.body(new Uint8Array(z ? z.body : f.body), 200, h);
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
    return send(c, b.index, { ...pageHeaders, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' });
  };

  app.get('/dashboard', page);
  app.get('/dashboard/assets/:file', async (c, next) => {
    const asset = (await get())?.assets.get(c.req.param('file'));
    if (!asset) return next();
    return send(c, asset, { 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=31536000, immutable' });
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

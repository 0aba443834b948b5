// How /dashboard's built files are sent (src/server/dashboard.ts), without a database or a browser:
// gzipped to a client that accepts gzip (issue 24: the 453 KB script went out uncompressed), as
// they are otherwise; `Vary: Accept-Encoding`, an ETag per variant and a 304 for it, the caching
// headers unchanged. The same gzip (level 9) that `npm run dashboard:size` reports.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../src/platform/env.ts';
import { acceptsGzip, mountDashboard } from '../src/server/dashboard.ts';

function built() {
  const dist = mkdtempSync(join(tmpdir(), 'dash-serve-'));
  mkdirSync(join(dist, 'assets'));
  const js = `export const rows = [${Array.from({ length: 3000 }, (_, i) => `{id:${i},name:"row ${i}"}`).join(',')}];\n`;
  writeFileSync(join(dist, 'assets', 'index-abc123.js'), js);
  writeFileSync(join(dist, 'assets', 'tiny-abc123.js'), 'export {};');
  writeFileSync(join(dist, 'assets', 'logo-abc123.png'), Buffer.alloc(4096, 7));
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard</title>${'<!-- padding -->'.repeat(100)}<script type="module" src="/dashboard/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>`;
  writeFileSync(join(dist, 'index.html'), html);
  const app = new Hono<AppEnv>();
  mountDashboard(app, { dist: dist + '/' });
  return { app, js, html };
}

describe('the dashboard’s files over HTTP', () => {
  it('sends a script gzipped when the client accepts gzip, as it is when not; Vary and caching headers on both', async () => {
    const { app, js } = built();
    const gz = await app.request('/dashboard/assets/index-abc123.js', { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(gz.status).toBe(200);
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(gz.headers.get('vary')).toBe('Accept-Encoding');
    expect(gz.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(gz.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const zipped = Buffer.from(await gz.arrayBuffer());
    expect(zipped.length).toBe(gzipSync(js, { level: 9 }).length); // what dashboard:size counts
    expect(zipped.length).toBeLessThan(js.length / 3);
    expect(gunzipSync(zipped).toString()).toBe(js);

    const plain = await app.request('/dashboard/assets/index-abc123.js');
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(plain.headers.get('vary')).toBe('Accept-Encoding');
    expect(await plain.text()).toBe(js);
    const refused = await app.request('/dashboard/assets/index-abc123.js', { headers: { 'accept-encoding': 'gzip;q=0, identity' } });
    expect(refused.headers.get('content-encoding')).toBeNull();

    // Each variant has its own ETag, and a revalidation of it is a 304 with no body.
    const [etagGz, etagPlain] = [gz.headers.get('etag'), plain.headers.get('etag')];
    expect(etagGz).toMatch(/^"[\w-]+"$/);
    expect(etagPlain).toMatch(/^"[\w-]+"$/);
    expect(etagGz).not.toBe(etagPlain);
    const again = await app.request('/dashboard/assets/index-abc123.js', { headers: { 'accept-encoding': 'gzip', 'if-none-match': etagGz! } });
    expect(again.status).toBe(304);
    expect(again.headers.get('content-encoding')).toBeNull();
    expect(await again.text()).toBe('');
    // The plain variant's ETag does not revalidate the gzipped one.
    expect((await app.request('/dashboard/assets/index-abc123.js', { headers: { 'accept-encoding': 'gzip', 'if-none-match': etagPlain! } })).status).toBe(200);
  });

  it('gzips index.html (still no-cache, with its CSP) for every client route; leaves small files and images as they are', async () => {
    const { app, html } = built();
    for (const path of ['/dashboard', '/dashboard/customers/cus_x']) {
      const r = await app.request(path, { headers: { 'accept-encoding': 'gzip' } });
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-encoding'), path).toBe('gzip');
      expect(r.headers.get('cache-control'), path).toBe('no-cache');
      expect(r.headers.get('content-security-policy'), path).toMatch(/script-src 'self'/);
      expect(gunzipSync(Buffer.from(await r.arrayBuffer())).toString(), path).toBe(html);
    }
    const tiny = await app.request('/dashboard/assets/tiny-abc123.js', { headers: { 'accept-encoding': 'gzip' } });
    expect(tiny.headers.get('content-encoding')).toBeNull();
    expect(await tiny.text()).toBe('export {};');
    const png = await app.request('/dashboard/assets/logo-abc123.png', { headers: { 'accept-encoding': 'gzip' } });
    expect(png.headers.get('content-encoding')).toBeNull();
    expect(png.headers.get('vary')).toBeNull();
    expect((await app.request('/dashboard/assets/nope.js', { headers: { 'accept-encoding': 'gzip' } })).status).toBe(404);
  });

  it('reads Accept-Encoding as RFC 9110 says', () => {
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip('br')).toBe(false);
    expect(acceptsGzip('GZIP')).toBe(true);
    expect(acceptsGzip('br;q=1.0, gzip;q=0.8, *;q=0.1')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('*, gzip;q=0')).toBe(false);
    expect(acceptsGzip('x-gzip')).toBe(true);
  });
});

// GET /: the landing page (issue 24, "the first hour"): server-rendered, no script, nothing loaded
// from anywhere (works offline), a policy stricter than the hosted pages', and every link it shows
// answers (the dashboard's is another page's business and is only linked here).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_LINKS } from '../src/server/landing.ts';
import { send, startApp, type TestApp } from './helpers/app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ PUBLIC_BASE_URL: 'https://billing.example.test' });
});
afterAll(() => app?.close());

describe('GET /', () => {
  it('links the dashboard, GraphiQL, the reference, the OpenAPI document and the health checks', async () => {
    const r = await send(`${app.url}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html; charset=UTF-8/i);
    const hrefs = [...r.text.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    expect(hrefs).toEqual(['data:,', '/dashboard', '/graphql', '/docs', '/openapi.json', '/healthz', '/readyz']);
    expect(SERVICE_LINKS.map((l) => l.path)).toEqual(hrefs.slice(1));
    // The curl line names the configured origin; no other absolute address is on the page.
    expect(r.text).toContain('curl -u ck_…:sk_… https://billing.example.test/v1/customers');
    expect([...r.text.matchAll(/https?:\/\/[^\s"'<]+/g)].map((m) => m[0])).toEqual(['https://billing.example.test/v1/customers']);
    // Nothing to run and nothing to fetch.
    expect(r.text).not.toMatch(/<script|<link rel="stylesheet"|<img|@import|url\(/);
  });

  it('answers under a strict policy: no script, its one inline stylesheet by nonce, never framed', async () => {
    const r = await send(`${app.url}/`);
    const csp = r.headers.get('content-security-policy') ?? '';
    const nonce = /style-src 'nonce-([\w]+)'/.exec(csp)?.[1];
    expect(nonce).toMatch(/^\w{22}$/);
    expect(csp).toBe(`default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`);
    expect(r.text).toContain(`<style nonce="${nonce}">`);
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    // A new nonce every time.
    const again = await send(`${app.url}/`);
    expect(again.headers.get('content-security-policy')).not.toBe(csp);
  });

  it('every linked page but the dashboard answers 200', async () => {
    for (const { path } of SERVICE_LINKS) {
      if (path === '/dashboard') continue;
      // A browser following the link asks for HTML (GraphiQL answers a page, not a 401).
      const r = await fetch(`${app.url}${path}`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      expect(r.status, path).toBe(200);
    }
  });

  it('is only a GET: other methods on / get the documented error', async () => {
    const r = await send(`${app.url}/`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, HEAD');
    expect(r.body.error.code).toBe('method_not_allowed');
    const head = await fetch(`${app.url}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });
});

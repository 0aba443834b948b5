// GraphiQL and cross-site request forgery in a real browser (Debian's chromium via
// playwright-core): a page on another site cannot make a signed-in browser run GraphQL mutations,
// and GraphiQL signs in with an explicit key instead of the browser's Basic-auth prompt. The page
// runs under a strict Content-Security-Policy (its scripts by a per-response nonce): GraphiQL works
// with it in force and reports no violation, while a script injected without the nonce is blocked.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';

const available = requireChromium('graphiql.browser.test');

/**
 * Collects the page's CSP violations: the `securitypolicyviolation` events of every document the
 * page loads (listened for before any of its scripts run) and the browser's own console reports.
 */
async function watchCsp(page: Page): Promise<() => Promise<string[]>> {
  const reported: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) reported.push(m.text().slice(0, 300));
  });
  await page.addInitScript(() => {
    const seen: string[] = ((window as any).__cspViolations = []);
    document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.effectiveDirective} ${e.blockedURI} ${e.sample}`));
  });
  return async () => [...reported, ...(await page.evaluate(() => (window as any).__cspViolations as string[]))];
}

describe.runIf(available)('in a browser', () => {
  let app: TestApp;
  let api: Client;
  let browser: Browser;
  let attacker: Server;
  let attackerUrl: string;

  beforeAll(async () => {
    app = await startApp();
    api = await app.merchant({ name: 'GraphiQL shop' });
    browser = await launchBrowser();
    // Another site (localhost vs 127.0.0.1: another origin and another site). Each page
    // auto-submits one form as a top-level navigation, as a phishing page would.
    attacker = createServer((req, res) => {
      const gql = `${app.url}/graphql`;
      const mutation = 'mutation { createWebhookEndpoint(input: { url: \\"https://attacker.example/hook\\" }) { __typename } }';
      const forms: Record<string, string> = {
        '/text-plain': `<form method="post" action="${gql}" enctype="text/plain"><input name='{"query":"${mutation}","x":"' value='"}'></form>`,
        '/urlencoded': `<form method="post" action="${gql}"><input name="query" value="${mutation.replaceAll('\\"', '&quot;')}"></form>`,
        '/multipart': `<form method="post" action="${gql}" enctype="multipart/form-data"><input name="query" value="${mutation.replaceAll('\\"', '&quot;')}"></form>`,
        '/rest': `<form method="post" action="${app.url}/v1/webhook-endpoints" enctype="text/plain"><input name='{"url":"https://attacker.example/hook","x":"' value='"}'></form>`,
      };
      const fetches = `<script>
          const body = JSON.stringify({ query: "${mutation}" });
          window.results = Promise.allSettled([
            fetch('${gql}', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body }),
            fetch('${gql}', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body }).then((r) => r.status),
          ]).then((rs) => rs.map((r) => r.status));
        </script>`;
      const path = (req.url ?? '').split('?')[0]!;
      const body = path === '/fetch' ? fetches : `${forms[path] ?? ''}<script>document.forms[0].submit()</script>`;
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><body>${body}</body></html>`);
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
    attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    attacker?.close();
    await app?.close();
  });

  it('a page on another site cannot create anything with the credentials the browser remembers', async () => {
    // A developer who once answered the browser's Basic-auth prompt for this API.
    const context = await browser.newContext({ httpCredentials: { username: api.creds.client_id, password: api.creds.client_secret } });
    const page = await context.newPage();
    const seen = await page.goto(`${app.url}/v1/customers`);
    expect(seen?.status()).toBe(200); // the browser now sends these credentials by itself

    const posts: { url: string; status: number }[] = [];
    page.on('response', (r) => {
      if (r.request().method() === 'POST' && r.url().startsWith(app.url)) posts.push({ url: r.url(), status: r.status() });
    });
    for (const attack of ['/text-plain', '/urlencoded', '/multipart', '/rest']) {
      await Promise.all([page.waitForURL(`${app.url}/**`), page.goto(`${attackerUrl}${attack}`)]);
      await page.waitForLoadState();
    }
    await page.goto(`${attackerUrl}/fetch`);
    const results = await page.evaluate(() => (window as any).results);
    expect(results).toEqual(['fulfilled', 'rejected']); // the JSON fetch dies at the preflight
    await page.screenshot({ path: '/tmp/csrf-attack.png' });
    // The forms reached the server with the remembered credentials, and were refused.
    expect(posts.filter((p) => p.status === 415).length).toBeGreaterThanOrEqual(4);
    for (const p of posts) expect([401, 415], JSON.stringify(p)).toContain(p.status);
    expect((await api.get('/v1/webhook-endpoints')).body.data).toEqual([]);
    await context.close();
  });

  it('GraphiQL signs in with an explicit key kept in the tab, and runs queries with it', async () => {
    await api.post('/v1/customers', { email: 'graphiql@example.com', name: 'Grace' });
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const gqlRequests: { authorization: string | undefined; cookie: string | undefined }[] = [];
    page.on('request', (r) => {
      if (r.url() === `${app.url}/graphql` && r.method() === 'POST') gqlRequests.push({ authorization: r.headers().authorization, cookie: r.headers().cookie });
    });
    const cspViolations = await watchCsp(page);
    const loaded = await page.goto(`${app.url}/graphql`);
    expect(loaded?.headers()['content-security-policy']).toMatch(/^default-src 'none'; script-src 'self' 'nonce-[\w-]{22}';/);
    expect(await page.title()).toBe('Billing API · GraphiQL');
    await expect(page.getByRole('heading', { name: 'Billing API · GraphiQL' }).isVisible()).resolves.toBe(true);

    await page.getByLabel('Client id').fill(api.creds.client_id);
    await page.getByLabel('Client secret').fill('sk_wrong_wrong_wrong_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('wrong secret');
    errors.length = 0; // the browser logs that refused sign-in (401) as a failed resource: expected

    await page.getByLabel('Client secret').fill(api.creds.client_secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('.graphiql-container').first().waitFor();
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual(['billing.graphiql.authorization']);
    await page.locator('.graphiql-execute-button').click();
    await page.getByText('graphiql@example.com').first().waitFor();
    // The editor's language features run in Monaco's web workers (blob: URLs, allowed by
    // worker-src): typing a field asks them for completions.
    await page.locator('.graphiql-query-editor .monaco-editor').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('\n{ custo');
    await page.locator('.suggest-widget').getByText('customers').first().waitFor();
    await page.keyboard.press('Escape');
    // GraphiQL keeps the edited query in the address: reloading it must give the page again (it
    // answered 401, and a browser's Basic-auth prompt, when the address had a query).
    await expect.poll(() => new URL(page.url()).searchParams.get('query') ?? '').toContain('{ custo');
    // The schema loaded (GraphiQL's full introspection query): the Docs explorer shows the
    // root types and their fields.
    await page.getByRole('button', { name: /show documentation explorer/i }).click();
    await page.locator('.graphiql-doc-explorer').getByText('Query', { exact: true }).first().click();
    await page.locator('.graphiql-doc-explorer').getByText('customers', { exact: true }).first().waitFor();
    expect(await page.getByText('Error fetching schema').count()).toBe(0);
    await page.screenshot({ path: '/tmp/graphiql-signed-in.png', fullPage: true });
    expect(gqlRequests.length).toBeGreaterThan(1);
    for (const r of gqlRequests) {
      expect(r.authorization).toMatch(/^Basic /);
      expect(r.cookie).toBeUndefined();
    }
    // Still signed in after a reload of the tab; signing out forgets the key.
    expect((await page.reload())?.status()).toBe(200);
    await page.locator('.graphiql-container').first().waitFor();
    await page.locator('.graphiql-query-editor').getByText('custo').first().waitFor();
    expect(await cspViolations()).toEqual([]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Client id').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await cspViolations()).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('GraphiQL’s policy: scripts only by a nonce new for every response; a script injected into the page without it does not run', async () => {
    const headers = async () => (await fetch(`${app.url}/graphql`, { headers: { accept: 'text/html' } })).headers;
    const [first, second] = [await headers(), await headers()];
    const policy = (h: Headers) => Object.fromEntries(h.get('content-security-policy')!.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    const p = policy(first);
    expect(p).toEqual({
      'default-src': "'none'",
      'script-src': expect.stringMatching(/^'self' 'nonce-[\w-]{22}'$/),
      // Monaco adds <style> elements and style attributes without a nonce: inline styles only.
      'style-src': "'self' 'unsafe-inline'",
      'img-src': "'self' data:",
      'font-src': "'self' data:",
      'connect-src': "'self'",
      'worker-src': 'blob:',
      'object-src': "'none'",
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
    });
    expect(policy(second)['script-src']).not.toBe(p['script-src']);
    expect(first.get('cache-control')).toBe('no-store');
    expect(first.get('x-frame-options')).toBe('DENY');
    expect(first.get('referrer-policy')).toBe('no-referrer');

    // An HTML injection into the page (as a reflected or stored XSS would make it): an inline
    // script, one with a guessed nonce, an inline event handler. The server's policy stays in force.
    const context = await browser.newContext();
    const page = await context.newPage();
    const cspViolations = await watchCsp(page);
    await page.route(`${app.url}/graphql`, async (route) => {
      if (route.request().method() !== 'GET') return route.continue();
      const res = await route.fetch();
      const injected = [
        '<script>window.__injected = (window.__injected || []).concat("inline")</script>',
        '<script nonce="AAAAAAAAAAAAAAAAAAAAAA">window.__injected = (window.__injected || []).concat("guessed nonce")</script>',
        '<img src="data:," onerror="window.__injected = (window.__injected || []).concat(\'handler\')">',
      ].join('');
      await route.fulfill({ response: res, body: (await res.text()).replace('<div id="root"></div>', `${injected}<div id="root"></div>`) });
    });
    const loaded = await page.goto(`${app.url}/graphql`);
    expect(loaded?.headers()['content-security-policy']).toMatch(/; script-src 'self' 'nonce-[\w-]{22}';/);
    // The page's own scripts ran (the sign-in form is shown by them) …
    await page.getByLabel('Client id').waitFor();
    expect(await page.evaluate(() => typeof (window as any).billingStartGraphiQL)).toBe('function');
    // … the injected ones did not, and the browser reported each.
    expect(await page.evaluate(() => (window as any).__injected ?? [])).toEqual([]);
    // A script added later by the page's DOM (what a DOM-based XSS would do) is blocked too.
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__injected = (window.__injected || []).concat("dom")';
      document.body.appendChild(s);
    });
    expect(await page.evaluate(() => (window as any).__injected ?? [])).toEqual([]);
    await expect.poll(async () => (await cspViolations()).filter((v) => /^script-src/.test(v)).length).toBeGreaterThanOrEqual(4);
    await context.close();
  });
});

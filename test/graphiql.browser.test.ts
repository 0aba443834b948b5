// GraphiQL and cross-site request forgery in a real browser (Debian's chromium via
// playwright-core): a page on another site cannot make a signed-in browser run GraphQL mutations,
// and GraphiQL signs in with an explicit key instead of the browser's Basic-auth prompt.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type Client, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';

const available = requireChromium('graphiql.browser.test');

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
    await page.goto(`${app.url}/graphql`);
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
    await page.reload();
    await page.locator('.graphiql-container').first().waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Client id').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});

// The API reference at /docs as a developer sees it, in a real browser: Swagger UI (served from
// the swagger-ui-dist package, no CDN) renders every operation and every schema of /openapi.json
// without resolver errors, with real examples, and without console errors.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../src/rest/index.ts';
import { exampleId } from '../src/platform/ids.ts';
import { send, startApp, type TestApp } from './helpers/app.ts';
import { launchBrowser, requireChromium } from './helpers/browser.ts';

const available = requireChromium('docs.browser.test');

describe.runIf(available)('/docs in a browser', () => {
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    app = await startApp();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  // Expanding every schema deeply re-renders Swagger UI once per schema: ~50 s on a quiet 2-core
  // machine at 60 schemas; ~230 s since billing depth brought ~90 (and ~230 s too when the clicks
  // are made from the page in one go: the rendering is the cost, not Playwright). To be made
  // cheaper; until then a timeout with room.
  it('renders every operation and schema, with examples and no errors', { timeout: 600_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    const outside: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(app.url) && !r.url().startsWith('data:')) outside.push(r.url());
    });
    const response = await page.goto(`${app.url}/docs`);
    // A strict policy (the page's own scripts by nonce, data from this origin); a violation would
    // show below as a console error.
    expect(response?.headers()['content-security-policy']).toMatch(/script-src 'self' 'nonce-[\w-]+'; .*frame-ancestors 'none'/);
    expect(response?.headers()['x-frame-options']).toBe('DENY');
    expect(await page.title()).toBe('Billing API reference');
    await page.locator('.swagger-ui .info .title').getByText('Billing API').waitFor();
    // Every operation, and every webhook (one per event type) in its own section.
    const webhookCount = Object.keys((await send(`${app.url}/openapi.json`)).body.webhooks).length;
    expect(webhookCount).toBeGreaterThan(30);
    expect(await page.locator('.swagger-ui .opblock').count()).toBe(routes.length + webhookCount);

    await page.screenshot({ path: '/tmp/docs-top.png' });
    // Open one operation: its response example is real data, not "string".
    await page.locator('#operations-Payments-createPayment .opblock-summary').click();
    const example = page.locator('#operations-Payments-createPayment .responses-wrapper .microlight').first();
    await example.waitFor();
    const text = (await example.textContent()) ?? '';
    expect(text).toContain(exampleId('payment'));
    expect(text).toContain('"currency": "USD"');
    expect(text).not.toMatch(/"string"/);
    await page.locator('#operations-Payments-createPayment').screenshot({ path: '/tmp/docs-create-payment.png' });

    // Every schema in the Schemas section expands without a resolver error.
    const doc = (await send(`${app.url}/openapi.json`)).body;
    const models = page.locator('.swagger-ui section.models');
    await models.scrollIntoViewIfNeeded();
    const schemas = models.locator('article[data-json-schema-level="0"]');
    expect(await schemas.count()).toBe(Object.keys(doc.components.schemas).length);
    // "Expand all" on each: every nested reference must resolve.
    for (const expand of await models.locator('article[data-json-schema-level="0"] > .json-schema-2020-12-head .json-schema-2020-12-expand-deep-button').all()) {
      await expand.click();
    }
    await expect(models.getByText('balance_formatted').first().isVisible()).resolves.toBe(true);
    await page.screenshot({ path: '/tmp/docs-reference.png', fullPage: true });
    expect(await page.getByText(/Resolver error|Recursive Schema|Could not resolve reference/i).count()).toBe(0);
    expect(errors).toEqual([]);
    expect(outside).toEqual([]);
    // Authorizing does not leave the secret in the browser's storage.
    await page.locator('.swagger-ui .auth-wrapper .authorize').click();
    await page.locator('.swagger-ui .modal-ux input[type=text]').fill('ck_test');
    await page.locator('.swagger-ui .modal-ux input[type=password]').fill('sk_test_secret');
    await page.locator('.swagger-ui .modal-ux .auth-btn-wrapper .authorize').click();
    await page.locator('.swagger-ui .modal-ux').getByText('Authorized').waitFor();
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
    expect(stored).not.toContain('sk_test_secret');
    await context.close();
  });
});

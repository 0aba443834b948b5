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

  // Every schema is expanded deeply ("Expand all") in the real page, as before; what changed is the
  // order of the work (the file took 190–320 s alone on a busy 2-core machine, now 28–50 s).
  // Expanding a schema makes Swagger UI resolve that schema's references
  // (specActions.requestResolvedSubtree): one resolution per click, each replacing the resolved
  // spec and re-rendering every schema expanded before it — quadratic, and that was the time
  // (measured: with all schemas resolved first, the same 58 deep expansions took ~25 s instead of
  // ~170 s). So the page is first asked, through Swagger UI's own action (the one its Schemas
  // section calls itself when models open expanded), to resolve all of components.schemas at once;
  // an unresolvable reference there shows in its errors panel as a per-schema one did ("Resolver
  // error … Could not resolve reference"). Then each schema is expanded deeply by its own button,
  // the whole tree is waited for, and the test reads the rendered trees: no resolver error, no
  // `$ref` left unresolved, every schema's own properties rendered, and every referenced schema's
  // properties rendered inside each schema that refers to it. Checked by breaking a schema on
  // purpose (Invoice's lines pointing at a component that does not exist; InvoiceLine removed):
  // each of those three checks failed, each time.
  it('renders every operation and schema, with examples and no errors', { timeout: 180_000 }, async () => {
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
    const components: Record<string, any> = doc.components.schemas;
    const models = page.locator('.swagger-ui section.models');
    await models.scrollIntoViewIfNeeded();
    const schemas = models.locator('article[data-json-schema-level="0"]');
    expect(await schemas.count()).toBe(Object.keys(components).length);
    // All references of components.schemas resolved at once (see above), by Swagger UI itself.
    await page.evaluate(() => (window as any).ui.specActions.requestResolvedSubtree(['components', 'schemas']));
    await page.waitForFunction(() => (window as any).ui.specSelectors.specResolvedSubtree(['components', 'schemas']) != null, null, { polling: 100 });
    // "Expand all" on each: every nested reference must resolve. The schemas' buttons are clicked
    // from the page in one go (a click event on each, one after the other, in one task: the page
    // renders them together instead of once per Playwright click; ~8 s instead of ~50 s, measured
    // on a busy machine), then the test waits until the whole tree is open: no accordion left
    // closed, no "Expand all" left anywhere.
    const expandAll = 'article[data-json-schema-level="0"] > .json-schema-2020-12-head .json-schema-2020-12-expand-deep-button';
    expect(await models.locator(expandAll).count()).toBe(Object.keys(components).length);
    await models.evaluate((m, sel) => {
      for (const b of m.querySelectorAll<HTMLButtonElement>(sel)) b.click();
    }, expandAll);
    const closed = () =>
      models.evaluate((m) => ({
        accordions: m.querySelectorAll('button.json-schema-2020-12-accordion[aria-expanded="false"]').length,
        expandButtons: [...m.querySelectorAll('button.json-schema-2020-12-expand-deep-button')].filter((b) => b.textContent !== 'Collapse all').length,
      }));
    await expect.poll(closed, { timeout: 60_000, interval: 250 }).toEqual({ accordions: 0, expandButtons: 0 });
    await expect(models.getByText('balance_formatted').first().isVisible()).resolves.toBe(true);
    // What each expanded schema shows: its name and the titles of everything rendered inside it.
    const rendered: { name: string; titles: string[]; unresolved: string[] }[] = await schemas.evaluateAll((articles) =>
      articles.map((a) => ({
        name: a.querySelector(':scope > .json-schema-2020-12-head .json-schema-2020-12__title')?.textContent ?? '',
        titles: [...a.querySelectorAll('.json-schema-2020-12__title')].map((t) => (t.textContent ?? '').trim()),
        unresolved: [...a.querySelectorAll('[class~="json-schema-2020-12-keyword--$ref"]')].map((r) => r.textContent ?? ''),
      })),
    );
    expect(rendered.map((r) => r.name).sort()).toEqual(Object.keys(components).sort());
    const refsOf = (node: unknown, acc = new Set<string>()): Set<string> => {
      if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === '$ref' && typeof v === 'string') acc.add(v.replace('#/components/schemas/', ''));
          else refsOf(v, acc);
        }
      }
      return acc;
    };
    const missing: string[] = [];
    for (const r of rendered) {
      const titles = new Set(r.titles);
      // Its own properties, and those of every schema it refers to, rendered within it.
      for (const name of [r.name, ...refsOf(components[r.name])]) {
        if (!components[name]) missing.push(`${r.name}: ${name} (no such schema)`);
        for (const prop of Object.keys(components[name]?.properties ?? {})) {
          if (!titles.has(prop)) missing.push(`${r.name}: ${name}.${prop}`);
        }
      }
    }
    expect(rendered.filter((r) => r.unresolved.length > 0).map((r) => `${r.name}: ${r.unresolved.join(', ')}`)).toEqual([]);
    expect(missing).toEqual([]);
    // One expanded schema to look at (the whole expanded page was a 1280 × 94,000 px picture that
    // took ~25 s to take on a busy machine).
    await schemas.nth(rendered.findIndex((r) => r.name === 'Wallet')).screenshot({ path: '/tmp/docs-reference.png' });
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

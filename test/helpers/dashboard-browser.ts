// The dashboard's browser tests' shared steps: a browser context whose pages record every console
// error, signing in, waiting for a page's data, axe-core (through the DevTools protocol, so the
// page's CSP stays on) and the per-page checks (no serious or critical violation, no sideways
// scrolling, a screenshot in /tmp).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const PASSWORD = 'correct horse battery staple';

/** Console errors to let through: (text, url of the script that logged it). */
export type Allow = (text: string, url: string) => boolean;

export function dashboardBrowser(browser: () => Browser, url: () => string) {
  function watch(page: Page, errors: string[], allow: Allow) {
    page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      const from = m.location().url;
      if (!allow(m.text(), from)) errors.push(`${page.url()}: ${m.text()} (${from})`);
    });
  }

  /** A browser context (its own cookies) whose pages record every console error and failed request. */
  async function context(width: number, errors: string[], allow: Allow = () => false): Promise<BrowserContext> {
    const ctx = await browser().newContext({ viewport: { width, height: 900 } });
    ctx.on('page', (page) => watch(page, errors, allow));
    return ctx;
  }

  async function signIn(page: Page, who: string, password = PASSWORD) {
    await page.getByLabel('Email').fill(who);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function signedIn(width: number, errors: string[], who: string, path = ''): Promise<{ ctx: BrowserContext; page: Page }> {
    const ctx = await context(width, errors);
    const page = await ctx.newPage();
    await page.goto(`${url()}/dashboard${path}`);
    await signIn(page, who);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return { ctx, page };
  }

  /** Waits for the page's heading and for its data (no "Loading…" left). */
  async function settled(page: Page, heading: string | RegExp) {
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Loading…' }).first().waitFor({ state: 'detached' });
  }

  async function axe(page: Page): Promise<string[]> {
    await page.evaluate(AXE);
    const result = await page.evaluate(async () => (globalThis as any).axe.run(document, { resultTypes: ['violations'] }));
    return (result.violations as any[])
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
  }

  /** No serious or critical axe violation, no sideways scrolling; a screenshot for a person to look at. */
  async function checkPage(page: Page, label: string, width: number) {
    expect(await axe(page), label).toEqual([]);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${label} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `/tmp/dashboard-${label.replace(/[/?=&]/g, '_')}-${width}.png`, fullPage: true });
  }

  return { context, signIn, signedIn, settled, axe, checkPage };
}

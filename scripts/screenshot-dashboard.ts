// The README's screenshot of the dashboard, made again on demand: starts the service in this
// process on an in-memory embedded database, creates a test-mode merchant ("Kampala Coffee") with a
// dashboard user and a few customers and payments (succeeded, refunded, failed, waiting), signs in
// with headless Chromium (playwright-core) and saves the payments page, 1280×800.
//
//   npm run --silent dashboard:screenshot                 # → docs/dashboard-screenshot.png
//   npm run --silent dashboard:screenshot -- /tmp/x.png  # elsewhere
//
// Needs Chromium (/usr/bin/chromium, or CHROMIUM_PATH). Builds the dashboard first when its
// sources changed. Nothing leaves the machine. Keep the PNG under 200 KB.
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { chromium } from 'playwright-core';
import { createDashboardUser } from '../src/domain/merchants/dashboard.ts';
import { createMerchant } from '../src/domain/merchants/index.ts';
import { loadConfig } from '../src/platform/config.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createApp } from '../src/server/app.ts';
import { openServices } from '../src/server/services.ts';

const OUT = process.argv[2] ?? fileURLToPath(new URL('../docs/dashboard-screenshot.png', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const EMAIL = 'owner@kampala-coffee.example';
const PASSWORD = 'screenshot password 1';

async function main() {
  execFileSync(process.execPath, [fileURLToPath(new URL('./build-dashboard.mjs', import.meta.url))], { stdio: 'inherit' });
  const log = createLogger('silent');
  const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0' });
  const db = await openDatabase({ url: undefined, dataDir: null, logger: log });
  const services = await openServices(config, { log, db });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: createApp(services).fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  config.publicBaseUrl = base;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  try {
    const m = await createMerchant(db.prisma, { name: 'Kampala Coffee', mode: 'test' });
    await createDashboardUser(db.prisma, { merchantId: m.merchant_id, email: EMAIL, password: PASSWORD });
    const auth = 'Basic ' + Buffer.from(`${m.client_id}:${m.client_secret}`).toString('base64');
    const api = async (path: string, body: unknown) => {
      const r = await fetch(base + path, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = (await r.json()) as any;
      if (r.status >= 300) throw new Error(`${path}: ${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    // Oldest first (the list shows the newest first).
    const people: [string, string, number, string, 'paid' | 'refund' | 'failed' | 'open'][] = [
      ['grace.hopper@example.com', 'Grace Hopper', 4500, 'USD', 'paid'],
      ['amina.nakato@example.com', 'Amina Nakato', 2599, 'USD', 'refund'],
      ['kofi.mensah@example.com', 'Kofi Mensah', 120000, 'KES', 'paid'],
      ['lina.berg@example.com', 'Lina Berg', 1200, 'EUR', 'failed'],
      ['tomas.silva@example.com', 'Tomás Silva', 890, 'EUR', 'paid'],
      ['wanjiru.kamau@example.com', 'Wanjiru Kamau', 350000, 'UGX', 'open'],
      ['ada.lovelace@example.com', 'Ada Lovelace', 9900, 'USD', 'paid'],
    ];
    for (const [email, name, amount, currency, outcome] of people) {
      const c = await api('/v1/customers', { email, name });
      if (outcome === 'paid' || outcome === 'refund') {
        const si = await api('/v1/setup-intents', { customer_id: c.id });
        const pm = (await api(`/v1/test-helpers/setup-intents/${si.id}/complete`, {})).payment_method_id;
        const p = await api('/v1/payments', { amount, currency, payment_method_id: pm });
        if (outcome === 'refund') await api('/v1/refunds', { payment_id: p.id, amount: 1000 });
      } else {
        const p = await api('/v1/payments', { amount, currency, customer_id: c.id, redirect_url: 'https://kampala-coffee.example/thanks' });
        if (outcome === 'failed') await api(`/v1/test-helpers/payments/${p.id}/complete`, { outcome: 'failed' });
      }
    }

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signed in on the overview (the home page); the picture is of the payments page.
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payments' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor();
    await page.getByRole('table', { name: 'Payments' }).getByText('ada.lovelace@example.com').waitFor();
    await page.getByRole('status').filter({ hasText: 'Loading…' }).waitFor({ state: 'detached' });
    // The sign-in moved the focus to the heading; no focus ring in the picture.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.screenshot({ path: OUT, fullPage: false });
    const size = statSync(OUT).size;
    console.log(`${OUT}: ${(size / 1024).toFixed(0)} KB`);
    if (size > 200 * 1024) throw new Error(`the screenshot is ${(size / 1024).toFixed(0)} KB; keep it under 200 KB`);
  } finally {
    await browser.close();
    await new Promise<void>((r) => server.close(() => r()));
    await db.close();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

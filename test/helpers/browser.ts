// Headless Chromium for browser tests: Debian's chromium driven by playwright-core. Outside CI a
// missing chromium skips the browser tests with a message; in CI (.ci/run installs it) it fails.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);

export function requireChromium(testName: string): boolean {
  if (!chromiumAvailable && process.env.CI) throw new Error(`CI needs Chromium at ${CHROMIUM} (apt-get install chromium)`);
  if (!chromiumAvailable) console.warn(`${testName}: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium to run it)`);
  return chromiumAvailable;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

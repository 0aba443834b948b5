// Builds the dashboard (dashboard/ → dashboard/dist) when its sources changed: a hash of every
// source file, the build config and the lockfile is kept in dist/.source-hash, so an unchanged
// tree is a fast no-op (a few ms). Run by `npm start` (prestart) and once by the test suite's
// global setup; `--force` builds anyway. Only npm packages are used: nothing is fetched.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, 'dashboard');
const dist = join(dir, 'dist');
const hashFile = join(dist, '.source-hash');

function files(d) {
  return readdirSync(d, { withFileTypes: true })
    .filter((e) => e.name !== 'dist' && e.name !== 'node_modules')
    .flatMap((e) => (e.isDirectory() ? files(join(d, e.name)) : [join(d, e.name)]))
    .sort();
}

export function sourceHash() {
  const h = createHash('sha256');
  for (const f of [...files(dir), join(root, 'package-lock.json')]) {
    h.update(relative(root, f)).update('\0').update(readFileSync(f)).update('\0');
  }
  return h.digest('hex');
}

/** Builds when needed; returns true when it built. */
export async function buildDashboard({ force = false, quiet = false } = {}) {
  const hash = sourceHash();
  if (!force && existsSync(hashFile) && readFileSync(hashFile, 'utf8') === hash && existsSync(join(dist, 'index.html'))) return false;
  const started = Date.now();
  // Always React's production build, whatever NODE_ENV the caller has (vitest sets "test").
  process.env.NODE_ENV = 'production';
  const { build } = await import('vite');
  await build({ configFile: join(dir, 'vite.config.ts'), mode: 'production', logLevel: quiet ? 'silent' : 'warn' });
  writeFileSync(hashFile, hash);
  if (!quiet) process.stderr.write(`dashboard built in ${Date.now() - started} ms (dashboard/dist)\n`);
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildDashboard({ force: process.argv.includes('--force') });
}

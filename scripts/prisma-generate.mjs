#!/usr/bin/env node
// Runs `prisma generate` offline. The `prisma-client` and `prisma-pothos-types` generators do
// not need the native schema engine, but the CLI insists that PRISMA_SCHEMA_ENGINE_BINARY points
// at an existing executable before it will start; we point it at `node` itself, which is never
// invoked for generate. Migrations are applied by src/platform/db/migrate.ts, never by the CLI.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
let cli;
try {
  cli = require.resolve('prisma/build/index.js');
} catch {
  console.error('prisma-generate: the prisma package is not installed; run `npm ci` first.');
  process.exit(1);
}
const env = {
  ...process.env,
  // generators are looked up as executables (prisma-pothos-types lives in node_modules/.bin)
  PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  CHECKPOINT_DISABLE: '1',
};
if (!env.PRISMA_SCHEMA_ENGINE_BINARY || !existsSync(env.PRISMA_SCHEMA_ENGINE_BINARY)) {
  env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
}
const r = spawnSync(process.execPath, [cli, 'generate', '--schema', join(root, 'prisma/schema.prisma')], {
  cwd: root,
  env,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);

import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module). Vite would pick the ESM build for our source
    // while Node-native dependencies (Yoga, Pothos) load the CJS build: two `graphql` realms and
    // broken instanceof checks. Resolve it the way Node (and `npm start`) does.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Builds the dashboard once (a no-op when dashboard/dist matches its sources).
    globalSetup: ['test/helpers/dashboard-build.ts'],
    pool: 'forks',
    // Each test file gets its own embedded database (or its own merchants on PostgreSQL).
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    env: { LOG_LEVEL: 'silent' },
  },
});

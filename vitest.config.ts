import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Each test file gets its own embedded database (or its own merchants on PostgreSQL).
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    env: { LOG_LEVEL: 'silent' },
  },
});

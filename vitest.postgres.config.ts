/**
 * The end-to-end suite again, every server on PostgreSQL (SPEC §12, last paragraph; issue #15):
 * `vitest run --config vitest.postgres.config.ts`. Each server gets a fresh database.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The cluster tests start their own PostgreSQL deployment in every run.
    exclude: ['test/types/**', 'test/cluster.test.ts'],
    globalSetup: ['test/helpers/postgres-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});

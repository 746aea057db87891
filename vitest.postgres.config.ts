/**
 * The end-to-end suite again, every server on PostgreSQL (docs/reference/conformance.md, last paragraph; issue #15):
 * `vitest run --config vitest.postgres.config.ts`. Each server gets a fresh database.
 */
import { defineConfig } from 'vitest/config';
import { alias } from './vitest.alias.js';

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['test/**/*.test.ts'],
    // The cluster tests start their own PostgreSQL deployment in every run. The backup tests pick
    // their database themselves: continuous WAL shipping is SQLite's, and test/backup/postgres.test.ts
    // makes its own databases in the default run.
    exclude: ['test/types/**', 'test/cluster.test.ts', 'test/backup/**'],
    globalSetup: ['test/helpers/global-setup.ts', 'test/helpers/postgres-setup.ts'],
    // Sized for a loaded two-core machine (see vitest.config.ts).
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});

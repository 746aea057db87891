import { defineConfig } from 'vitest/config';
import { alias } from './vitest.alias.js';

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Sized for a loaded two-core machine (issue #27 item 9): a test that starts servers may wait
    // minutes for CPU when another suite runs beside it. Tests never assert on time.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    // A run folder as TMPDIR, and a teardown that kills every server a test left running.
    globalSetup: ['test/helpers/global-setup.ts'],
    // End-to-end files each start real servers; two cores, so keep the pool small.
    pool: 'forks',
    maxWorkers: 2,
  },
});

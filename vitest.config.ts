import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // End-to-end files each start real servers; two cores, so keep the pool small.
    pool: 'forks',
    maxWorkers: 2,
  },
});

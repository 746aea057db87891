/**
 * The photo e2e tests again, every server storing photos in an S3-compatible bucket (a real
 * s3rver on loopback; issue #22): `vitest run --config vitest.s3.config.ts`. Each server gets its
 * own key prefix in one bucket.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/photos/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts', 'test/helpers/s3-setup.ts'],
    // Sized for a loaded two-core machine (see vitest.config.ts).
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});

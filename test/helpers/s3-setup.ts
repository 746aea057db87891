/**
 * Global setup of the S3 run of the photo e2e tests (vitest.s3.config.ts): one s3rver for the
 * run; every server the tests start gets `--storage s3://<bucket>/<its own prefix>` and the
 * `S3_*` variables (test/helpers/server.ts, `storageArgs`).
 */
import { startTestS3 } from '../../src/s3/test-server.js';

export default async function setup(): Promise<() => Promise<void>> {
  const s3 = await startTestS3('tablebase-e2e');
  process.env.TABLEBASE_TEST_STORAGE = 's3';
  process.env.TABLEBASE_TEST_S3_BUCKET = s3.bucket;
  for (const [k, v] of Object.entries(s3.env)) process.env[k] = v;
  return () => s3.close();
}

/**
 * Global setup of the PostgreSQL run of the e2e suite (vitest.postgres.config.ts): one run id,
 * so teardown can drop every database the run created, even those of a test that crashed.
 */
import { randomBytes } from 'node:crypto';
import { dropTestRun } from '../../src/storage/postgres/test-database.js';

export default function setup(): () => Promise<void> {
  const run = randomBytes(4).toString('hex');
  process.env.TABLEBASE_TEST_RUN = run;
  process.env.TABLEBASE_TEST_DB = 'postgres';
  return () => dropTestRun(run);
}

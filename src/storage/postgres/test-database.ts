/**
 * A fresh PostgreSQL database per test run (issue #15: "each test run uses its own fresh
 * database and drops it afterwards"): `tb_test_<random>` created through the `postgres`
 * maintenance database, dropped with FORCE so a leftover connection cannot keep it alive.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server the tests use; CI and this machine run PostgreSQL on loopback with trust auth. */
export const TEST_SERVER_URL = process.env.TABLEBASE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: TEST_SERVER_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  // Lowercase hex only: the name is an identifier we build, never input. A run id (set by the
  // end-to-end global setup) lets the run's teardown drop whatever a crashed test left behind.
  const run = /^[0-9a-f]{1,16}$/.test(process.env.TABLEBASE_TEST_RUN ?? '') ? `${process.env.TABLEBASE_TEST_RUN}_` : '';
  const name = `tb_test_${run}${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(TEST_SERVER_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => admin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))),
  };
}

/** Drops every database of one test run (`tb_test_<run>_*`). */
export async function dropTestRun(run: string): Promise<void> {
  if (!/^[0-9a-f]{1,16}$/.test(run)) return;
  await admin(async (c) => {
    const { rows } = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [`tb_test_${run}_`]);
    for (const r of rows) await c.query(`DROP DATABASE IF EXISTS "${r.datname.replace(/"/g, '""')}" WITH (FORCE)`);
  });
}

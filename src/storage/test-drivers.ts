/**
 * The drivers every storage test runs against (the conformance suite, the SQL-injection file).
 * Each `open` gives a fresh, empty database; `dispose` closes and deletes it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Driver } from './driver.js';
import { openPostgres } from './postgres/driver.js';
import { createTestDatabase } from './postgres/test-database.js';
import { openSqlite } from './sqlite/driver.js';

export interface DriverHarness {
  readonly name: 'sqlite' | 'postgres';
  open(): Promise<{ driver: Driver; dispose(): Promise<void> }>;
}

export const sqliteHarness: DriverHarness = {
  name: 'sqlite',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'tb-driver-'));
    const driver = openSqlite(join(dir, 'db.sqlite'));
    return {
      driver,
      dispose: async () => {
        await driver.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

export const postgresHarness: DriverHarness = {
  name: 'postgres',
  async open() {
    const db = await createTestDatabase();
    const driver = await openPostgres(db.url);
    return {
      driver,
      dispose: async () => {
        await driver.close();
        await db.drop();
      },
    };
  },
};

export const harnesses: readonly DriverHarness[] = [sqliteHarness, postgresHarness];

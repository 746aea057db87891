/**
 * SQL injection, against every driver (issue #10 item 5): hostile text reaches SQL only as bound
 * parameters and matches only itself; identifiers are quoted from the schema. The same file runs
 * for SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { col, createSchema, insert, ITEMS, OWNERS, seed } from './conformance-model.js';
import type { Driver } from './driver.js';
import { cmp, readPlan, type CompareOp } from './plan.js';
import { countRows, selectRows } from './rows.js';
import { harnesses } from './test-drivers.js';

const HOSTILE = [
  "'; DROP TABLE items; --",
  "' OR '1'='1",
  '" OR ""="',
  '%',
  '_',
  '*',
  '?',
  '[a-z]',
  '\\',
  "\\'; SELECT pg_sleep(5); --",
  '$1',
  '?; DELETE FROM owners',
  '1); DROP TABLE owners; --',
  '.*',
  '(?i)ALPHA',
  "E'\\x41'",
  '/* */',
];

for (const harness of harnesses) {
  describe(`SQL injection: ${harness.name}`, () => {
    let driver: Driver;
    let dispose: () => Promise<void>;
    beforeAll(async () => {
      ({ driver, dispose } = await harness.open());
      await createSchema(driver);
      await seed(driver);
      for (const [i, s] of HOSTILE.entries()) await insert(driver, ITEMS, { id: `it_h${i}`, title: s, tags: [s], createdAt: '2026-01-01T00:00:00.000Z' });
    });
    afterAll(async () => dispose?.());

    const matching = async (column: string, op: CompareOp, value: unknown) =>
      (await selectRows(driver, driver.dialect, readPlan(ITEMS, cmp(col(ITEMS, column), op, value), { orderBy: [{ column: col(ITEMS, 'id'), direction: 'asc' }] }))).map((r) => r.id);

    it('stores hostile text verbatim and finds each value only by itself', async () => {
      for (const [i, s] of HOSTILE.entries()) {
        expect(await matching('title', 'eq', s)).toEqual([`it_h${i}`]);
        expect(await matching('tags', 'has', s)).toEqual([`it_h${i}`]);
        expect(await matching('title', 'in', [s, 'no such'])).toEqual([`it_h${i}`]);
      }
    });

    it('treats pattern characters in contains, startsWith and endsWith as literals', async () => {
      for (const [i, s] of HOSTILE.entries()) {
        const hits = await matching('title', 'contains', s);
        expect(hits).toContain(`it_h${i}`);
        // Every hit really contains the text: no wildcard widened the match.
        const rows = await selectRows(driver, driver.dialect, readPlan(ITEMS, cmp(col(ITEMS, 'title'), 'contains', s)));
        for (const r of rows) expect(String(r.title)).toContain(s);
        for (const r of await selectRows(driver, driver.dialect, readPlan(ITEMS, cmp(col(ITEMS, 'title'), 'startsWith', s)))) expect(String(r.title).startsWith(s)).toBe(true);
        for (const r of await selectRows(driver, driver.dialect, readPlan(ITEMS, cmp(col(ITEMS, 'title'), 'endsWith', s)))) expect(String(r.title).endsWith(s)).toBe(true);
      }
      expect(await matching('title', 'contains', '%')).toEqual(['it_a2', 'it_h3']);
    });

    it('leaves every table in place', async () => {
      expect(await countRows(driver, driver.dialect, readPlan(OWNERS))).toBe(2);
      expect(await countRows(driver, driver.dialect, readPlan(ITEMS))).toBe(5 + HOSTILE.length);
    });

    it('quotes identifiers, doubling embedded quotes', () => {
      expect(driver.dialect.quote('a"b')).toBe('"a""b"');
    });
  });
}

/**
 * The driver conformance suite (issue #10 item 5, Kysely-style): the same assertions for every
 * driver, so a second database is correct exactly when it answers what SQLite answers. Run by
 * `sqlite/driver.test.ts` and `postgres/driver.test.ts`; each run gets a fresh database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import type { CollectionModel, ColumnModel } from '../core/model.js';
import type { Change } from './changes.js';
import { BOARD, col, createSchema, insert, ITEM_ROWS, ITEMS, OWNERS, seed } from './conformance-model.js';
import type { Driver } from './driver.js';
import { allOf, anyOf, cmp, countPlan, negate, readPlan, type CompareOp, type OrderTerm, type WhereNode } from './plan.js';
import { countRows, deleteRowById, selectRows, updateRowById } from './rows.js';
import type { DriverHarness } from './test-drivers.js';
import { WriteQueue } from './writer.js';

const w = (name: string, op: CompareOp, value: unknown, c: CollectionModel = ITEMS): WhereNode => cmp(col(c, name), op, value);
const order = (name: string, direction: 'asc' | 'desc' = 'asc', c: CollectionModel = ITEMS): OrderTerm => ({ column: col(c, name), direction });
const byId = [order('id')];

function errorOf(driver: Driver, fn: () => Promise<unknown>): Promise<ApiError | null> {
  return fn().then(
    () => null,
    (err) => driver.mapError(err),
  );
}

export function driverConformance(harness: DriverHarness): void {
  describe(`driver conformance: ${harness.name}`, () => {
    let driver: Driver;
    let dispose: () => Promise<void>;
    const ids = async (where: WhereNode, orderBy: OrderTerm[] = byId, c: CollectionModel = ITEMS) => (await selectRows(driver, driver.dialect, readPlan(c, where, { orderBy }))).map((r) => r.id);

    beforeAll(async () => {
      ({ driver, dispose } = await harness.open());
      await createSchema(driver);
      await seed(driver);
    });
    afterAll(async () => dispose?.());

    it('reads rows back in their JSON form: booleans, safe integers, reals, ms UTC timestamps, lists, json, nulls', async () => {
      const rows = await selectRows(driver, driver.dialect, readPlan(ITEMS, undefined, { orderBy: byId }));
      expect(rows).toEqual(ITEM_ROWS);
      expect(typeof rows[4]!.nums).toBe('object');
      expect(rows[0]!.due).toBe('2026-01-01T00:00:00.000Z');
    });

    it('matches text literally and case-sensitively (no wildcard is ever a pattern)', async () => {
      expect(await ids(w('title', 'eq', 'Alpha'))).toEqual(['it_a1']);
      expect(await ids(w('title', 'contains', 'lph'))).toEqual(['it_a1', 'it_a5']);
      expect(await ids(w('title', 'contains', 'LPH'))).toEqual([]);
      expect(await ids(w('title', 'contains', '%'))).toEqual(['it_a2']);
      expect(await ids(w('title', 'contains', '_'))).toEqual([]);
      expect(await ids(w('note', 'contains', '_'))).toEqual(['it_a2']);
      expect(await ids(w('title', 'contains', '*?['))).toEqual(['it_a3']);
      expect(await ids(w('title', 'contains', '\\'))).toEqual(['it_a4']);
      expect(await ids(w('title', 'contains', "'"))).toEqual(['it_a4']);
      expect(await ids(w('note', 'startsWith', 'n'))).toEqual(['it_a2']);
      expect(await ids(w('title', 'startsWith', 'a'))).toEqual(['it_a5']);
      expect(await ids(w('title', 'endsWith', 'x]'))).toEqual(['it_a3']);
      expect(await ids(w('note', 'endsWith', '1'))).toEqual(['it_a2']);
      expect(await ids(w('title', 'startsWith', ''))).toEqual(['it_a1', 'it_a2', 'it_a3', 'it_a4', 'it_a5']);
      expect(await ids(w('note', 'endsWith', ''))).toEqual(['it_a2', 'it_a3', 'it_a4']);
    });

    it('compares with SQL-null semantics made explicit (docs/reference/data.md, docs/reference/where.md)', async () => {
      expect(await ids(w('note', 'eq', null))).toEqual(['it_a1', 'it_a5']);
      expect(await ids(w('note', 'ne', null))).toEqual(['it_a2', 'it_a3', 'it_a4']);
      expect(await ids(w('note', 'ne', 'N'))).toEqual(['it_a1', 'it_a2', 'it_a4', 'it_a5']);
      expect(await ids(w('note', 'nin', ['N']))).toEqual(['it_a1', 'it_a2', 'it_a4', 'it_a5']);
      expect(await ids(negate(w('note', 'eq', 'N')))).toEqual(['it_a1', 'it_a2', 'it_a4', 'it_a5']);
      expect(await ids(w('meta', 'isNull', true))).toEqual(['it_a2', 'it_a5']);
      expect(await ids(w('due', 'isNull', false))).toEqual(['it_a1', 'it_a3', 'it_a4']);
      expect(await ids(w('done', 'eq', false))).toEqual(['it_a2', 'it_a3', 'it_a5']);
    });

    it('orders and ranges numbers and timestamps (to the millisecond)', async () => {
      expect(await ids(w('priority', 'gt', 1))).toEqual(['it_a1', 'it_a3', 'it_a4', 'it_a5']);
      expect(await ids(w('score', 'lte', 0.25))).toEqual(['it_a2', 'it_a3']);
      expect(await ids(w('due', 'gt', '2026-01-01T00:00:00.000Z'))).toEqual(['it_a4']);
      expect(await ids(w('due', 'gte', '2026-01-01T00:00:00.000Z'))).toEqual(['it_a1', 'it_a4']);
      expect(await ids(w('due', 'lt', '2026-01-01T00:00:00.000Z'))).toEqual(['it_a3']);
      expect(await ids(w('title', 'gte', 'a'))).toEqual(['it_a2', 'it_a4', 'it_a5']);
      expect(await ids(w('priority', 'in', [1, 3]))).toEqual(['it_a2', 'it_a4']);
      expect(await ids(w('priority', 'in', []))).toEqual([]);
      expect(await ids(w('priority', 'nin', []))).toHaveLength(5);
      expect(await ids(w('priority', 'nin', [2]))).toEqual(['it_a2', 'it_a4']);
    });

    it('tests list membership per item kind', async () => {
      expect(await ids(w('tags', 'has', 'y'))).toEqual(['it_a1', 'it_a3']);
      expect(await ids(w('tags', 'has', 'X'))).toEqual(['it_a4']);
      expect(await ids(w('tags', 'has', '日本'))).toEqual(['it_a5']);
      expect(await ids(w('nums', 'has', 2))).toEqual(['it_a1', 'it_a4']);
      expect(await ids(w('nums', 'has', 9007199254740991))).toEqual(['it_a5']);
      expect(await ids(w('flags', 'has', false))).toEqual(['it_a2', 'it_a4']);
      expect(await ids(w('flags', 'has', true))).toEqual(['it_a1', 'it_a4']);
    });

    it('combines with and, or, not', async () => {
      expect(await ids(anyOf([w('title', 'eq', 'alpha'), w('score', 'lt', 0)]))).toEqual(['it_a2', 'it_a5']);
      expect(await ids(allOf([w('done', 'eq', true), w('priority', 'gt', 2)]))).toEqual(['it_a4']);
      expect(await ids(negate(w('priority', 'gt', 1)))).toEqual(['it_a2']);
      expect(await ids(negate(anyOf([w('note', 'eq', 'N'), w('due', 'lt', '2026-01-01T00:00:00.000Z')])))).toEqual(['it_a1', 'it_a2', 'it_a4', 'it_a5']);
      expect(await ids(anyOf([]))).toEqual([]);
      expect(await ids(allOf([]))).toHaveLength(5);
    });

    it('orders with id tie-breaks, nulls first ascending, byte order for text; limit and offset', async () => {
      expect(await ids(allOf([]), [order('priority')])).toEqual(['it_a2', 'it_a1', 'it_a3', 'it_a5', 'it_a4']);
      expect(await ids(allOf([]), [order('priority', 'desc')])).toEqual(['it_a4', 'it_a1', 'it_a3', 'it_a5', 'it_a2']);
      expect(await ids(allOf([]), [order('title')])).toEqual(['it_a1', 'it_a3', 'it_a5', 'it_a2', 'it_a4']);
      expect(await ids(allOf([]), [order('due')])).toEqual(['it_a2', 'it_a5', 'it_a3', 'it_a1', 'it_a4']);
      expect(await ids(allOf([]), [order('due', 'desc')])).toEqual(['it_a4', 'it_a1', 'it_a3', 'it_a2', 'it_a5']);
      const page = await selectRows(driver, driver.dialect, readPlan(ITEMS, undefined, { orderBy: [order('priority')], limit: 2, offset: 1 }));
      expect(page.map((r) => r.id)).toEqual(['it_a1', 'it_a3']);
    });

    it('counts with a filter', async () => {
      expect(await countRows(driver, driver.dialect, countPlan(readPlan(ITEMS, w('priority', 'gt', 1), { limit: 1 })))).toBe(4);
      expect(await countRows(driver, driver.dialect, readPlan(OWNERS))).toBe(2);
    });

    it('reads views: joined columns, filters and order on view columns', async () => {
      const rows = await selectRows(driver, driver.dialect, readPlan(BOARD, undefined, { orderBy: [order('ownerName', 'asc', BOARD), order('id', 'asc', BOARD)] }));
      expect(rows.map((r) => [r.id, r.ownerName])).toEqual([
        ['it_a2', null],
        ['it_a5', null],
        ['it_a1', 'Olga'],
        ['it_a4', 'Olga'],
        ['it_a3', 'Oskar'],
      ]);
      expect(await ids(w('ownerName', 'eq', 'Olga', BOARD), [order('id', 'asc', BOARD)], BOARD)).toEqual(['it_a1', 'it_a4']);
      expect(await countRows(driver, driver.dialect, readPlan(BOARD, w('ownerName', 'isNull', true, BOARD)))).toBe(2);
    });

    it('updates and deletes by id, answering the stored row', async () => {
      await insert(driver, ITEMS, { id: 'it_u1', title: 'u', createdAt: '2026-02-03T04:05:06.007Z' });
      const sets = new Map<ColumnModel, unknown>([
        [col(ITEMS, 'done'), true],
        [col(ITEMS, 'tags'), ['z']],
        [col(ITEMS, 'due'), '2030-12-31T23:59:59.999Z'],
      ]);
      const after = await driver.transaction(async (tx) => {
        // The before image, read locked for the write (FOR UPDATE where the database needs it).
        const [before] = await selectRows(tx, driver.dialect, readPlan(ITEMS, w('id', 'eq', 'it_u1'), { limit: 1 }), true);
        expect(before).toMatchObject({ id: 'it_u1', done: false });
        return updateRowById(tx, driver.dialect, ITEMS, 'it_u1', sets);
      });
      expect(after).toMatchObject({ id: 'it_u1', done: true, tags: ['z'], due: '2030-12-31T23:59:59.999Z', priority: 0, nums: [], createdAt: '2026-02-03T04:05:06.007Z' });
      await driver.transaction((tx) => deleteRowById(tx, driver.dialect, ITEMS, 'it_u1'));
      expect(await ids(w('id', 'eq', 'it_u1'))).toEqual([]);
    });

    it('maps constraint violations to client errors: unique → 409, foreign key and not-null → 400', async () => {
      expect((await errorOf(driver, () => insert(driver, OWNERS, { id: 'ow_9', name: 'Olga' })))?.status).toBe(409);
      expect((await errorOf(driver, () => insert(driver, OWNERS, { id: 'ow_1', name: 'Other' })))?.status).toBe(409);
      expect((await errorOf(driver, () => insert(driver, ITEMS, { id: 'it_fk', title: 't', ownerId: 'ow_missing', createdAt: '2026-01-01T00:00:00.000Z' })))?.status).toBe(400);
      expect((await errorOf(driver, () => insert(driver, ITEMS, { id: 'it_nn', createdAt: '2026-01-01T00:00:00.000Z' })))?.status).toBe(400);
      expect(driver.mapError(new Error('not a database error'))).toBeNull();
      expect(await countRows(driver, driver.dialect, readPlan(ITEMS))).toBe(5);
    });

    it('rolls a failed transaction back, and reads never see an uncommitted write', async () => {
      const before = await countRows(driver, driver.dialect, readPlan(OWNERS));
      let seenInside = -1;
      await expect(
        driver.transaction(async (tx) => {
          await tx.run(
            `INSERT INTO ${driver.dialect.quote('owners')} (${driver.dialect.quote('id')}, ${driver.dialect.quote('name')}) VALUES (${driver.dialect.param(1)}, ${driver.dialect.param(2)})`,
            ['ow_tx', 'T'],
          );
          seenInside = await countRows(driver, driver.dialect, readPlan(OWNERS));
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(seenInside).toBe(before);
      expect(await countRows(driver, driver.dialect, readPlan(OWNERS))).toBe(before);
    });

    it('commits a group of writer jobs together, a failing job undone alone by its savepoint', async () => {
      const q = new WriteQueue(driver);
      const commits: number[] = [];
      q.onCommit((c) => commits.push(c.length));
      const job = (id: string, name: string) => (tx: Parameters<Parameters<WriteQueue['submit']>[0]>[0], changes: Change[]) =>
        insertOwner(driver, tx, id, name).then(() => void changes.push({ table: 'owners', op: 'insert', id, before: null, after: { id } }));
      const results = await Promise.allSettled([q.submit(job('ow_g1', 'G1')), q.submit(job('ow_g2', 'Olga')), q.submit(job('ow_g3', 'G3'))]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(driver.mapError((results[1] as PromiseRejectedResult).reason)?.status).toBe(409);
      expect(commits).toEqual([2]);
      expect(await ids(w('id', 'in', ['ow_g1', 'ow_g2', 'ow_g3'], OWNERS), [order('id', 'asc', OWNERS)], OWNERS)).toEqual(['ow_g1', 'ow_g3']);
    });

    it('commits concurrent writer lanes (where the driver allows them) with every answered job stored once', async () => {
      const q = new WriteQueue(driver);
      const committed: string[] = [];
      q.onCommit((c) => committed.push(...c.map((x) => x.id)));
      const jobs: Promise<unknown>[] = [];
      for (let i = 0; i < 60; i++) {
        const id = `ow_l${String(i).padStart(3, '0')}`;
        jobs.push(q.submit((tx, changes) => insertOwner(driver, tx, id, `L${i}`).then(() => void changes.push({ table: 'owners', op: 'insert', id, before: null, after: { id } }))));
        if (i % 7 === 0) await new Promise((r) => setImmediate(r)); // spread over several batches
      }
      await Promise.all(jobs);
      await q.whenIdle();
      expect(committed.sort()).toEqual(Array.from({ length: 60 }, (_, i) => `ow_l${String(i).padStart(3, '0')}`));
      expect(await countRows(driver, driver.dialect, readPlan(OWNERS, w('id', 'startsWith', 'ow_l', OWNERS)))).toBe(60);
    });

    it('answers health, size and exclusive sections', async () => {
      expect(await driver.ping()).toBe(true);
      expect(await driver.sizeBytes()).toBeGreaterThan(0);
      expect(await driver.exclusive('conformance', async () => 42)).toBe(42);
    });
  });
}

function insertOwner(driver: Driver, tx: { run: Driver['run'] }, id: string, name: string) {
  const d = driver.dialect;
  return tx.run(`INSERT INTO ${d.quote('owners')} (${d.quote('id')}, ${d.quote('name')}) VALUES (${d.param(1)}, ${d.param(2)})`, [id, name]);
}

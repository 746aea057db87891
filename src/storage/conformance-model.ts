/**
 * The small project the driver conformance suite and the SQL-injection tests run on: one table
 * with every stored column kind, a referenced table and a view joining them. The schema is
 * created through the migration DDL of the driver's own dialect, as a server would create it.
 */
import { compileProject, type CollectionModel, type ColumnModel } from '../core/model.js';
import { column, defineProject, table, view } from '../define/index.js';
import type { Driver } from './driver.js';
import { migrationStatements } from './migrations/ddl.js';
import { diffSchemas } from './migrations/diff.js';
import { schemaOf } from './migrations/snapshot.js';
import type { Row } from './plan.js';
import { insertRow } from './rows.js';

const owners = table('owners', { prefix: 'ow', columns: { name: column.text().unique() } });

const items = table('items', {
  prefix: 'it',
  columns: {
    title: column.text(),
    note: column.text().nullable(),
    done: column.boolean().default(false),
    priority: column.integer().default(0),
    score: column.real().default(0),
    due: column.timestamp().nullable(),
    tags: column.list('text').default([]),
    nums: column.list('integer').default([]),
    flags: column.list('boolean').default([]),
    meta: column.json().nullable(),
    ownerId: column.text().nullable().references('owners'),
    createdAt: column.createdAt(),
  },
});

const board = view('item_board', {
  from: items,
  joins: [{ table: owners, on: [items.col('ownerId'), owners.col('id')], type: 'left' }],
  select: { id: items.col('id'), title: items.col('title'), ownerName: owners.col('name').nullable() },
});

export const model = compileProject(defineProject({ tables: [owners, items], views: [board] }));
export const OWNERS: CollectionModel = model.collections.get('owners')!;
export const ITEMS: CollectionModel = model.collections.get('items')!;
export const BOARD: CollectionModel = model.collections.get('item_board')!;

export const col = (c: CollectionModel, name: string): ColumnModel => c.columns.get(name)!;

/** Creates the tables in an empty database. */
export async function createSchema(driver: Driver): Promise<void> {
  const d = driver.dialect;
  const next = schemaOf(model, d);
  const statements = migrationStatements(diffSchemas(null, next), { dialect: d, prev: null, next, now: '2026-01-01T00:00:00.000Z' });
  await driver.execScript(statements.join(';\n'));
}

/** Inserts a row given in client (JSON) form through the driver's writer path. */
export async function insert(driver: Driver, c: CollectionModel, row: Record<string, unknown>): Promise<Row> {
  const values = new Map<ColumnModel, unknown>();
  for (const [k, v] of Object.entries(row)) values.set(col(c, k), v);
  return driver.transaction((tx) => insertRow(tx, driver.dialect, c, values));
}

export const CREATED = '2026-01-01T00:00:00.000Z';

/** The rows every read assertion is written against (ids in insertion order). */
export const ITEM_ROWS: readonly Record<string, unknown>[] = [
  { id: 'it_a1', title: 'Alpha', note: null, done: true, priority: 2, score: 1.5, due: '2026-01-01T00:00:00.000Z', tags: ['x', 'y'], nums: [1, 2], flags: [true], meta: { a: 1 }, ownerId: 'ow_1' },
  { id: 'it_a2', title: 'beta 100%', note: 'n_1', done: false, priority: 1, score: -2, due: null, tags: [], nums: [3], flags: [false], meta: null, ownerId: null },
  { id: 'it_a3', title: 'Gamma*?[x]', note: 'N', done: false, priority: 2, score: 0.25, due: '2025-06-30T12:34:56.789Z', tags: ['y'], nums: [], flags: [], meta: [1, 'two'], ownerId: 'ow_2' },
  { id: 'it_a4', title: "it's \\ back", note: '', done: true, priority: 3, score: 10, due: '2026-01-01T00:00:00.001Z', tags: ['X'], nums: [2], flags: [true, false], meta: 'str', ownerId: 'ow_1' },
  { id: 'it_a5', title: 'alpha', note: null, done: false, priority: 2, score: 9007199254740.5, due: null, tags: ['ü', '日本'], nums: [9007199254740991], flags: [], meta: null, ownerId: null },
].map((r) => ({ ...r, createdAt: CREATED }));

export async function seed(driver: Driver): Promise<void> {
  await insert(driver, OWNERS, { id: 'ow_1', name: 'Olga' });
  await insert(driver, OWNERS, { id: 'ow_2', name: 'Oskar' });
  for (const r of ITEM_ROWS) await insert(driver, ITEMS, r);
}

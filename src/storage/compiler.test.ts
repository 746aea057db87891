/**
 * The compiler's SQLite output (docs/reference/data.md): identifiers only from the schema, every value a bound
 * parameter, null-aware `ne`/`nin` (docs/reference/where.md), and statements SQLite runs with the meaning the where
 * grammar gives them. Plans come from the real where parser (src/testing/model.ts).
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ColumnModel } from '../core/model.js';
import { plan, TASKS, USERS, BOARD } from '../testing/model.js';
import { compileCount, compileDeleteById, compileInsert, compileSelect, compileUpdateById } from './compiler.js';
import { sqliteDialect as d } from './sqlite/dialect.js';

const COUNT = 'SELECT COUNT(*) AS n FROM "tasks"';
/** The WHERE clause compiled for `where` on tasks ('' when there is none), and its parameters. */
function whereOf(where: unknown): { sql: string; params: unknown[] } {
  const c = compileCount(d, plan(TASKS, where));
  expect(c.sql.startsWith(COUNT)).toBe(true);
  return { sql: c.sql.slice(COUNT.length).replace(/^ WHERE /, ''), params: c.params };
}

describe('where → SQL, one operator at a time', () => {
  const cases: [string, unknown, string, unknown[]][] = [
    ['eq', { priority: { eq: 2 } }, '"priority" = ?', [2]],
    ['eq null is IS NULL, no parameter', { ownerId: { eq: null } }, '"owner_id" IS NULL', []],
    ['ne keeps rows where the column is null (docs/reference/where.md)', { ownerId: { ne: 'x' } }, '("owner_id" IS NULL OR "owner_id" <> ?)', ['x']],
    ['ne null is IS NOT NULL', { ownerId: { ne: null } }, '"owner_id" IS NOT NULL', []],
    ['gt', { priority: { gt: 1 } }, '"priority" > ?', [1]],
    ['gte', { score: { gte: 1.5 } }, '"score" >= ?', [1.5]],
    ['lt on a timestamp binds its ISO form', { dueAt: { lt: 0 } }, '"due_at" < ?', ['1970-01-01T00:00:00.000Z']],
    ['lte', { priority: { lte: 3 } }, '"priority" <= ?', [3]],
    ['in', { priority: { in: [1, 3] } }, '"priority" IN (?, ?)', [1, 3]],
    ['in [] matches nothing', { priority: { in: [] } }, '1=0', []],
    ['nin keeps null rows', { ownerId: { nin: ['a', 'b'] } }, '("owner_id" IS NULL OR "owner_id" NOT IN (?, ?))', ['a', 'b']],
    ['nin [] matches everything: no WHERE at all', { priority: { nin: [] } }, '', []],
    ['isNull true', { ownerId: { isNull: true } }, '"owner_id" IS NULL', []],
    ['isNull false', { meta: { isNull: false } }, '"meta" IS NOT NULL', []],
    ['booleans are 0/1', { isComplete: { eq: true } }, '"is_complete" = ?', [1]],
    ['has on a list', { tags: { has: 'a' } }, 'EXISTS (SELECT 1 FROM json_each("tags") WHERE value = ?)', ['a']],
    ['has on a boolean list binds 0/1', { flags: { has: false } }, 'EXISTS (SELECT 1 FROM json_each("flags") WHERE value = ?)', [0]],
    ['{} is no WHERE', {}, '', []],
  ];
  it.each(cases)('%s', (_what, where, sql, params) => {
    expect(whereOf(where)).toEqual({ sql, params });
  });

  it('text matching binds the client text as a parameter, never in the SQL', () => {
    for (const op of ['contains', 'startsWith', 'endsWith']) {
      const { sql, params } = whereOf({ title: { [op]: "x' OR 1=1 --*" } });
      // instr/substr, never GLOB or LIKE (docs/reference/data.md: cheap whatever the stored text's length).
      expect(sql).toMatch(/^(instr|substr)\("title", .*\?/);
      expect(sql).not.toMatch(/OR 1=1|GLOB|LIKE/);
      expect(params.filter((p) => typeof p === 'string')).toEqual(["x' OR 1=1 --*"]);
      expect(params.every((p) => typeof p === 'string' || Number.isInteger(p))).toBe(true);
    }
  });
});

describe('and, or and not', () => {
  it('composes with parentheses and numbers parameters in order', () => {
    expect(whereOf({ or: [{ priority: { eq: 1 } }, { priority: { eq: 3 } }] })).toEqual({ sql: '("priority" = ? OR "priority" = ?)', params: [1, 3] });
    expect(whereOf({ title: { eq: 'a' }, priority: { gte: 1, lt: 3 } })).toEqual({ sql: '("title" = ? AND ("priority" >= ? AND "priority" < ?))', params: ['a', 1, 3] });
    expect(whereOf({ and: [{ priority: { eq: 1 } }] })).toEqual({ sql: '"priority" = ?', params: [1] });
  });

  it('empty or matches nothing; empty and matches everything', () => {
    expect(whereOf({ or: [] }).sql).toBe('1=0');
    expect(whereOf({ and: [] }).sql).toBe('');
    expect(whereOf({ and: [{ or: [] }, { priority: { eq: 1 } }] }).sql).toBe('(1=0 AND "priority" = ?)');
  });

  it('not wraps its operand in COALESCE(…, false): unknown stays false, as in the live matcher', () => {
    expect(whereOf({ not: { ownerId: { eq: 'o1' } } })).toEqual({ sql: 'NOT COALESCE("owner_id" = ?, 1=0)', params: ['o1'] });
  });
});

describe('SELECT: columns, source, order and paging', () => {
  const TASK_COLUMNS = '"id", "title", "is_complete" AS "isComplete", "priority", "score", "owner_id" AS "ownerId", "tags", "nums", "flags", "due_at" AS "dueAt", "meta", "created_at" AS "createdAt"';

  it('selects every column under its JSON name, ordered with id as the tie-breaker', () => {
    expect(compileSelect(d, plan(TASKS))).toEqual({ sql: `SELECT ${TASK_COLUMNS} FROM "tasks" ORDER BY "id" ASC`, params: [] });
    const desc = compileSelect(d, plan(TASKS, {}, { orderBy: [{ column: 'priority', direction: 'desc' }, { column: 'title' }] }));
    expect(desc.sql).toMatch(/ ORDER BY "priority" DESC, "title" ASC, "id" ASC$/);
    expect(compileSelect(d, plan(TASKS, {}, { orderBy: [{ column: 'id', direction: 'desc' }] })).sql).toMatch(/ ORDER BY "id" DESC$/);
    expect(compileSelect(d, plan(TASKS, {}, { orderBy: [] })).sql).toBe(`SELECT ${TASK_COLUMNS} FROM "tasks"`);
  });

  it('never selects the hidden password column', () => {
    const { sql, params } = compileSelect(d, plan(USERS, { email: { eq: 'A@b.co' } }, { limit: 1 }));
    expect(sql).toBe(
      'SELECT "id", "email", "is_verified" AS "isVerified", "created_at" AS "createdAt", "updated_at" AS "updatedAt", "display_name" AS "displayName" FROM "users" WHERE "email" = ? ORDER BY "id" ASC LIMIT 1',
    );
    expect(params).toEqual(['a@b.co']);
    expect(sql).not.toContain('password');
  });

  it('reads a view through a subquery whose columns carry their own names; no id tie-breaker on views', () => {
    const { sql } = compileSelect(d, plan(BOARD, { ownerEmail: { isNull: false } }, { orderBy: [{ column: 'title' }], limit: 10, offset: 5 }));
    expect(sql).toBe(
      'SELECT "id", "title", "owner_email" AS "ownerEmail" FROM (SELECT "tasks"."id" AS "id", "tasks"."title" AS "title", "users"."email" AS "owner_email" FROM "tasks" LEFT JOIN "users" ON "tasks"."owner_id" = "users"."id") AS "task_board" WHERE "owner_email" IS NOT NULL ORDER BY "title" ASC LIMIT 10 OFFSET 5',
    );
  });

  it('a one-value filter in a frozen order is compiled once per shape: the same text and its own value each time', () => {
    const frozen = (p: ReturnType<typeof plan>) => ({ ...p, orderBy: Object.freeze([...p.orderBy]) });
    const order = frozen(plan(TASKS));
    const shapes: [unknown, number | undefined][] = [
      [{ id: { eq: 'ts_1' } }, 1],
      [{ priority: { ne: 2 } }, 10],
      [{ priority: { gt: 1 } }, undefined],
      [{ score: { lte: 1.5 } }, 1],
      [{ isComplete: { eq: true } }, 5],
      [{ ownerId: { eq: null } }, 1], // IS NULL: no value, compiled as before
      [{ dueAt: { gte: 0 } }, 1],
    ];
    for (const [where, limit] of shapes) {
      const fresh = plan(TASKS, where, { limit }); // an unfrozen order: compiled every time
      const expected = compileSelect(d, fresh);
      const first = compileSelect(d, { ...fresh, orderBy: order.orderBy });
      const again = compileSelect(d, { ...fresh, orderBy: order.orderBy });
      expect(first).toEqual(expected);
      expect(again).toEqual(expected);
      expect(again.params).not.toBe(first.params);
    }
    // Another value, limit, operator or order is another statement, with its own parameter.
    const byId = (id: string, limit = 1) => compileSelect(d, { ...plan(TASKS, { id: { eq: id } }, { limit }), orderBy: order.orderBy });
    expect(byId('ts_2')).toEqual({ sql: byId('ts_1').sql, params: ['ts_2'] });
    expect(byId('ts_3', 2).sql).toMatch(/ LIMIT 2$/);
    expect(byId('ts_3', 1).sql).toMatch(/ LIMIT 1$/);
    const desc = frozen(plan(TASKS, {}, { orderBy: [{ column: 'id', direction: 'desc' }] }));
    expect(compileSelect(d, { ...plan(TASKS, { id: { eq: 'ts_1' } }, { limit: 1 }), orderBy: desc.orderBy }).sql).toMatch(/ORDER BY "id" DESC LIMIT 1$/);
    expect(compileSelect(d, { ...plan(TASKS, { id: { gt: 'ts_1' } }, { limit: 1 }), orderBy: order.orderBy }).sql).toMatch(/"id" > \? ORDER/);
    // Paged, for a write, or with a column list: compiled as before.
    expect(compileSelect(d, { ...plan(TASKS, { id: { eq: 'ts_1' } }, { limit: 1, offset: 3 }), orderBy: order.orderBy }).sql).toMatch(/ LIMIT 1 OFFSET 3$/);
    expect(compileSelect(d, { ...plan(TASKS, { id: { eq: 'ts_1' } }, { limit: 1 }), orderBy: order.orderBy }, '"id"').sql).toMatch(/^SELECT "id" FROM/);
  });

  it('writes LIMIT and OFFSET as literals (offset 0 left out) and refuses anything but a row count', () => {
    expect(compileSelect(d, plan(TASKS, {}, { limit: 100, offset: 0 })).sql).toMatch(/ ORDER BY "id" ASC LIMIT 100$/);
    expect(compileSelect(d, plan(TASKS, {}, { limit: 0 })).sql).toMatch(/ LIMIT 0$/);
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 60]) expect(() => compileSelect(d, plan(TASKS, {}, { limit: bad }))).toThrow(/not a row count/);
    expect(() => compileSelect(d, plan(TASKS, {}, { limit: 1, offset: -5 }))).toThrow(/not a row count/);
  });

  it('takes a column list in place of the select list (the live engine asks for ids)', () => {
    expect(compileSelect(d, plan(TASKS, { priority: { eq: 1 } }), '"id"').sql).toBe('SELECT "id" FROM "tasks" WHERE "priority" = ? ORDER BY "id" ASC');
  });

  it('counts without order or paging', () => {
    expect(compileCount(d, plan(TASKS, { priority: { gt: 1 } }, { limit: 5, offset: 5 }))).toEqual({ sql: `${COUNT} WHERE "priority" > ?`, params: [1] });
  });
});

describe('writes', () => {
  const col = (name: string) => TASKS.columns.get(name)!;

  it('INSERT binds encoded values and answers the stored row', () => {
    const { sql, params } = compileInsert(
      d,
      TASKS,
      new Map<ColumnModel, unknown>([
        [col('title'), 'x'],
        [col('tags'), ['a']],
        [col('isComplete'), true],
        [col('ownerId'), null],
      ]),
    );
    expect(sql).toMatch(/^INSERT INTO "tasks" \("title", "tags", "is_complete", "owner_id"\) VALUES \(\?, \?, \?, \?\) RETURNING "id", "title", "is_complete" AS "isComplete", /);
    expect(params).toEqual(['x', '["a"]', 1, null]);
  });

  it('UPDATE and DELETE act on one id, bound', () => {
    const u = compileUpdateById(d, TASKS, 'tk_1', new Map([[col('priority'), 2]]));
    expect(u.sql).toMatch(/^UPDATE "tasks" SET "priority" = \? WHERE "id" = \? RETURNING "id", /);
    expect(u.params).toEqual([2, 'tk_1']);
    expect(compileDeleteById(d, TASKS, "tk_1' OR 1=1")).toEqual({ sql: 'DELETE FROM "tasks" WHERE "id" = ?', params: ["tk_1' OR 1=1"] });
  });
});

describe('the SQL runs on SQLite with the grammar’s meaning', () => {
  let db: Database.Database;
  const cols = TASKS.columnList;
  beforeAll(() => {
    db = new Database(':memory:');
    db.exec(`CREATE TABLE "tasks" (${cols.map((c) => `${d.quote(c.sql)} ${d.columnType(c.spec)}`).join(', ')})`);
    const rows = [
      { id: 'a', title: 'Alpha 100%', priority: 1, ownerId: 'o1', tags: ['red'], flags: [true], isComplete: false },
      { id: 'b', title: 'beta_x*', priority: 2, ownerId: null, tags: [], flags: [], isComplete: true },
      { id: 'c', title: 'gamma?[1]', priority: 3, ownerId: 'o2', tags: ['red', 'blue'], flags: [false], isComplete: false },
    ];
    for (const r of rows) {
      const named = cols.filter((c) => c.name in r);
      const q = compileInsert(d, TASKS, new Map(named.map((c) => [c, (r as Record<string, unknown>)[c.name]])));
      db.prepare(q.sql).get(...q.params);
    }
  });
  afterAll(() => db.close());

  const ids = (where: unknown) => {
    const q = compileSelect(d, plan(TASKS, where), '"id"');
    return (db.prepare(q.sql).all(...q.params) as { id: string }[]).map((r) => r.id);
  };

  const cases: [string, unknown, string[]][] = [
    ['ne counts null as a value', { ownerId: { ne: 'o1' } }, ['b', 'c']],
    ['nin counts null as a value', { ownerId: { nin: ['o2'] } }, ['a', 'b']],
    ['eq null', { ownerId: { eq: null } }, ['b']],
    ['not over a null comparison keeps the null row', { not: { ownerId: { eq: 'o1' } } }, ['b', 'c']],
    ['in []', { priority: { in: [] } }, []],
    ['nin []', { priority: { nin: [] } }, ['a', 'b', 'c']],
    ['contains takes % literally', { title: { contains: '%' } }, ['a']],
    ['contains takes _ and * literally', { title: { contains: '_x*' } }, ['b']],
    ['contains takes ? and [ literally', { title: { contains: '?[1]' } }, ['c']],
    ['contains is case-sensitive', { title: { contains: 'alpha' } }, []],
    ['startsWith', { title: { startsWith: 'gam' } }, ['c']],
    ['endsWith', { title: { endsWith: '*' } }, ['b']],
    ['has', { tags: { has: 'red' } }, ['a', 'c']],
    ['has false on a boolean list', { flags: { has: false } }, ['c']],
    ['boolean eq', { isComplete: { eq: true } }, ['b']],
    ['or with not', { or: [{ priority: { eq: 1 } }, { not: { priority: { lt: 3 } } }] }, ['a', 'c']],
  ];
  it.each(cases)('%s', (_what, where, expected) => {
    expect(ids(where)).toEqual(expected);
  });
});

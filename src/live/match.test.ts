import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { compileSelect } from '../storage/compiler.js';
import { sqliteDialect } from '../storage/sqlite/dialect.js';
import type { Row } from '../storage/plan.js';
import { compareText, matches } from './match.js';
import { plan, task, TASKS } from './test-fixtures.js';

const w = (where: unknown) => plan(TASKS, where).where;
const m = (where: unknown, row: Partial<Row>) => matches(w(where), task(row));

describe('matches: table-driven semantics (docs/reference/data.md, docs/reference/where.md)', () => {
  const cases: [string, unknown, Partial<Row>, boolean][] = [
    ['{} matches everything', {}, {}, true],
    ['eq text', { title: { eq: 'a' } }, { title: 'a' }, true],
    ['eq text differs', { title: { eq: 'a' } }, { title: 'A' }, false],
    ['eq null is isNull (null row)', { ownerId: { eq: null } }, { ownerId: null }, true],
    ['eq null is isNull (set row)', { ownerId: { eq: null } }, { ownerId: 'u' }, false],
    ['eq value never matches null', { ownerId: { eq: 'u' } }, { ownerId: null }, false],
    ['ne value matches null (docs/reference/where.md)', { ownerId: { ne: 'x' } }, { ownerId: null }, true],
    ['ne value matches other', { ownerId: { ne: 'x' } }, { ownerId: 'y' }, true],
    ['ne value rejects equal', { ownerId: { ne: 'x' } }, { ownerId: 'x' }, false],
    ['ne null is isNotNull (null)', { ownerId: { ne: null } }, { ownerId: null }, false],
    ['ne null is isNotNull (set)', { ownerId: { ne: null } }, { ownerId: 'x' }, true],
    ['eq boolean true', { isComplete: { eq: true } }, { isComplete: true }, true],
    ['eq boolean false', { isComplete: { eq: false } }, { isComplete: true }, false],
    ['ne boolean', { isComplete: { ne: true } }, { isComplete: false }, true],
    ['eq integer', { priority: { eq: 3 } }, { priority: 3 }, true],
    ['eq real equal to integer', { score: { eq: 2 } }, { score: 2.0 }, true],
    ['gt number', { priority: { gt: 2 } }, { priority: 3 }, true],
    ['gt number equal', { priority: { gt: 3 } }, { priority: 3 }, false],
    ['gte number equal', { priority: { gte: 3 } }, { priority: 3 }, true],
    ['lt negative', { score: { lt: 0 } }, { score: -0.5 }, true],
    ['lte', { score: { lte: -0.5 } }, { score: -0.5 }, true],
    ['numbers compare numerically, not as text', { priority: { gt: 9 } }, { priority: 10 }, true],
    ['gt against null row is false', { dueAt: { gt: '2020-01-01T00:00:00.000Z' } }, { dueAt: null }, false],
    ['lt against null row is false', { dueAt: { lt: '2999-01-01T00:00:00.000Z' } }, { dueAt: null }, false],
    ['timestamps compare as ISO strings', { dueAt: { gte: '2026-05-01T00:00:00.000Z' } }, { dueAt: '2026-05-01T00:00:00.001Z' }, true],
    ['timestamp filter as epoch ms is normalized', { dueAt: { eq: Date.parse('2026-05-01T00:00:00.000Z') } }, { dueAt: '2026-05-01T00:00:00.000Z' }, true],
    ['text ordering is code-point order', { title: { gt: 'b' } }, { title: 'ba' }, true],
    ['text ordering uppercase sorts first', { title: { lt: 'a' } }, { title: 'Z' }, true],
    ['in matches', { priority: { in: [1, 2, 3] } }, { priority: 2 }, true],
    ['in misses', { priority: { in: [1, 3] } }, { priority: 2 }, false],
    ['in [] matches nothing', { priority: { in: [] } }, { priority: 2 }, false],
    ['in never matches null', { ownerId: { in: ['a'] } }, { ownerId: null }, false],
    ['nin [] matches everything', { priority: { nin: [] } }, { priority: 2 }, true],
    ['nin [] matches null too', { ownerId: { nin: [] } }, { ownerId: null }, true],
    ['nin matches null (docs/reference/where.md)', { ownerId: { nin: ['a'] } }, { ownerId: null }, true],
    ['nin rejects listed', { ownerId: { nin: ['a', 'b'] } }, { ownerId: 'b' }, false],
    ['nin accepts unlisted', { ownerId: { nin: ['a', 'b'] } }, { ownerId: 'c' }, true],
    ['contains', { title: { contains: 'ell' } }, { title: 'hello' }, true],
    ['contains is case-sensitive', { title: { contains: 'ELL' } }, { title: 'hello' }, false],
    ['contains % is literal', { title: { contains: '%' } }, { title: 'hello' }, false],
    ['contains _ is literal', { title: { contains: 'h_llo' } }, { title: 'hello' }, false],
    ['contains * is literal', { title: { contains: '*' } }, { title: 'hello' }, false],
    ['contains literal %', { title: { contains: '50%' } }, { title: 'up 50% off' }, true],
    ['contains empty string matches non-null', { title: { contains: '' } }, { title: 'x' }, true],
    ['contains never matches null', { ownerId: { contains: '' } }, { ownerId: null }, false],
    ['startsWith', { title: { startsWith: 'he' } }, { title: 'hello' }, true],
    ['startsWith case-sensitive', { title: { startsWith: 'He' } }, { title: 'hello' }, false],
    ['startsWith ? literal', { title: { startsWith: 'h?' } }, { title: 'hello' }, false],
    ['endsWith', { title: { endsWith: 'lo' } }, { title: 'hello' }, true],
    ['endsWith [ literal', { title: { endsWith: '[lo]' } }, { title: 'hello' }, false],
    ['isNull true on null', { ownerId: { isNull: true } }, { ownerId: null }, true],
    ['isNull true on missing key', { ownerId: { isNull: true } }, { ownerId: undefined }, true],
    ['isNull false on value', { ownerId: { isNull: false } }, { ownerId: 'u' }, true],
    ['isNull on json column', { meta: { isNull: false } }, { meta: { a: 1 } }, true],
    ['has text item', { tags: { has: 'red' } }, { tags: ['blue', 'red'] }, true],
    ['has misses', { tags: { has: 'green' } }, { tags: ['blue', 'red'] }, false],
    ['has is case-sensitive', { tags: { has: 'Red' } }, { tags: ['red'] }, false],
    ['has on empty list', { tags: { has: 'red' } }, { tags: [] }, false],
    ['has integer item', { nums: { has: 2 } }, { nums: [1, 2] }, true],
    ['has boolean item', { flags: { has: false } }, { flags: [true, false] }, true],
    ['has boolean misses', { flags: { has: false } }, { flags: [true] }, false],
    ['several operators in one condition all hold', { priority: { gte: 1, lt: 5 } }, { priority: 5 }, false],
    ['several columns AND', { priority: { eq: 1 }, title: { eq: 'a' } }, { priority: 1, title: 'b' }, false],
    ['or', { or: [{ priority: { eq: 1 } }, { title: { eq: 'a' } }] }, { priority: 2, title: 'a' }, true],
    ['or [] matches nothing', { or: [] }, {}, false],
    ['and [] matches everything', { and: [] }, {}, true],
    ['not', { not: { priority: { eq: 1 } } }, { priority: 2 }, true],
    ['not of unknown (null = x) is true, as NOT COALESCE', { not: { ownerId: { eq: 'u' } } }, { ownerId: null }, true],
    ['not of gt on null is true', { not: { dueAt: { gt: '2020-01-01T00:00:00.000Z' } } }, { dueAt: null }, true],
    ['not of in on null is true', { not: { ownerId: { in: ['u'] } } }, { ownerId: null }, true],
    ['double not', { not: { not: { ownerId: { eq: 'u' } } } }, { ownerId: null }, false],
    ['or with unknown branch', { or: [{ ownerId: { eq: 'u' } }, { priority: { eq: 0 } }] }, { ownerId: null, priority: 0 }, true],
  ];
  it.each(cases)('%s', (_name, where, row, expected) => {
    expect(m(where, row)).toBe(expected);
  });

  it('compares text by code point like SQLite BINARY, not by UTF-16 unit', () => {
    const astral = '\u{1F600}'; // a surrogate pair in UTF-16
    const privateUse = '\uE000';
    expect(privateUse < astral).toBe(false); // JavaScript's own order disagrees with code-point order
    expect(compareText(privateUse, astral)).toBeLessThan(0);
    expect(m({ title: { gt: privateUse } }, { title: astral })).toBe(true);
    expect(m({ title: { lt: privateUse } }, { title: astral })).toBe(false);
    expect(compareText('abc', 'abd')).toBeLessThan(0);
    expect(compareText('ab', 'abc')).toBeLessThan(0);
    expect(compareText('abc', 'abc')).toBe(0);
  });
});

/**
 * Differential check: the same filters evaluated by SQLite through the real compiler and by
 * `matches` must select the same rows.
 */
describe('matches agrees with the compiled SQL on SQLite', () => {
  const cols = TASKS.columnList.filter((c) => !c.hidden);
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE "tasks" (${cols.map((c) => `"${c.sql}" ${sqliteDialect.columnType(c.spec)}`).join(', ')})`);
  const rows: Row[] = [
    task({ title: 'hello', priority: 1, score: 1.5, ownerId: 'u1', tags: ['red'], nums: [1], flags: [true], dueAt: '2026-01-01T00:00:00.000Z' }),
    task({ title: 'Hello', priority: 2, score: -1, ownerId: null, tags: [], nums: [], flags: [false], dueAt: null, meta: { a: 1 } }),
    task({ title: '50% off_sale', priority: 10, score: 0, ownerId: 'u2', tags: ['red', 'blue'], nums: [2, 10], isComplete: true }),
    task({ title: '\u{1F600}', priority: -3, ownerId: 'u1', dueAt: '2025-12-31T23:59:59.999Z', isComplete: true }),
    task({ title: '\uE000', priority: 0, ownerId: 'x*', tags: ['*'], dueAt: '2026-06-01T12:00:00.000Z' }),
    task({ title: '', priority: 9, score: 9.25, ownerId: '' }),
    task({ title: 'a[b]c?', priority: 100, ownerId: 'U1', tags: ['Red'] }),
    task({ title: 'multi\nline', priority: 5, ownerId: 'u3', flags: [true, false] }),
  ];
  const insert = db.prepare(`INSERT INTO "tasks" (${cols.map((c) => `"${c.sql}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);
  for (const r of rows) insert.run(...cols.map((c) => sqliteDialect.encode(c, r[c.name])));

  const filters: unknown[] = [
    {},
    { ownerId: { eq: 'u1' } },
    { ownerId: { eq: null } },
    { ownerId: { ne: 'u1' } },
    { ownerId: { ne: null } },
    { ownerId: { in: ['u1', 'u2'] } },
    { ownerId: { nin: ['u1', 'u2'] } },
    { ownerId: { in: [] } },
    { ownerId: { nin: [] } },
    { ownerId: { gt: 'u1' } },
    { ownerId: { lte: 'u' } },
    { ownerId: { contains: '*' } },
    { ownerId: { startsWith: 'u' } },
    { title: { contains: '%' } },
    { title: { contains: '_' } },
    { title: { contains: '[b]' } },
    { title: { endsWith: 'c?' } },
    { title: { startsWith: 'H' } },
    { title: { contains: 'ell' } },
    { title: { contains: '' } },
    { title: { contains: '\n' } },
    { title: { gt: '\uE000' } },
    { title: { lt: '\u{1F600}' } },
    { title: { gte: 'Hello' } },
    { title: { eq: '' } },
    { isComplete: { eq: true } },
    { isComplete: { ne: true } },
    { isComplete: { in: [false] } },
    { priority: { gt: 2 } },
    { priority: { gte: -3, lt: 10 } },
    { priority: { nin: [0, 1, 2] } },
    { score: { lt: 0 } },
    { score: { eq: 9.25 } },
    { score: { gte: 1.5 } },
    { dueAt: { gt: '2026-01-01T00:00:00.000Z' } },
    { dueAt: { lte: '2026-01-01T00:00:00.000Z' } },
    { dueAt: { isNull: true } },
    { dueAt: { ne: '2026-01-01T00:00:00.000Z' } },
    { meta: { isNull: false } },
    { tags: { has: 'red' } },
    { tags: { has: '*' } },
    { tags: { isNull: false } },
    { nums: { has: 10 } },
    { flags: { has: false } },
    { flags: { has: true } },
    { not: { ownerId: { eq: 'u1' } } },
    { not: { dueAt: { gt: '2026-01-01T00:00:00.000Z' } } },
    { not: { ownerId: { in: ['u1'] } } },
    { not: { or: [{ ownerId: { eq: 'u1' } }, { dueAt: { lt: '2026-03-01T00:00:00.000Z' } }] } },
    { not: { and: [{ ownerId: { ne: null } }, { dueAt: { gt: '2000-01-01T00:00:00.000Z' } }] } },
    { or: [{ ownerId: { eq: 'u2' } }, { and: [{ priority: { gt: 0 } }, { not: { dueAt: { isNull: false } } }] }] },
    { not: { not: { ownerId: { eq: 'u1' } } } },
    { or: [] },
    { and: [{ or: [] }] },
    { not: { or: [] } },
  ];

  it.each(filters.map((f) => [JSON.stringify(f), f] as const))('%s', (_name, where) => {
    const p = plan(TASKS, where);
    const { sql, params } = compileSelect(sqliteDialect, p, '"id"');
    const fromSql = (db.prepare(sql).all(...params) as { id: string }[]).map((r) => r.id).sort();
    const fromMemory = rows
      .filter((r) => matches(p.where, r))
      .map((r) => r.id)
      .sort();
    expect(fromMemory).toEqual(fromSql);
  });
});

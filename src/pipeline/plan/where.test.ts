/**
 * The where planner (docs/reference/data.md, docs/reference/where.md): what it accepts becomes a WhereNode with values in their
 * canonical form; what it refuses is a 400 whose detail points (JSON pointer) at the offending
 * part, before any SQL exists.
 */
import { describe, expect, it } from 'vitest';
import type { WhereNode } from '../../storage/plan.js';
import { thrownApiError } from '../../testing/api-errors.js';
import { TASKS, USERS } from '../../testing/model.js';
import { ApiError } from '../../core/errors.js';
import { compileProject } from '../../core/model.js';
import { column, defineProject, table } from '../../define/index.js';
import { MAX_DEPTH, MAX_PATTERN, MAX_VALUES, parseWhere } from './where.js';

/** A tree as plain data: `{cmp: 'title eq "a"'}`-like strings are hard to read, so column names stand in for column models. */
function shape(node: WhereNode): unknown {
  switch (node.kind) {
    case 'and':
    case 'or':
      return { [node.kind]: node.items.map(shape) };
    case 'not':
      return { not: shape(node.item) };
    case 'cmp':
      return [node.column.name, node.op, node.value];
  }
}
const tasks = (where: unknown) => shape(parseWhere(TASKS, where));

/** The refusal of `where` on `c`: its pointer and message. */
function refusal(where: unknown, c = TASKS): { path: string; message: string } {
  const err = thrownApiError(() => parseWhere(c, where));
  expect(err.code).toBe('BAD_REQUEST');
  expect(err.status).toBe(400);
  expect(err.details).toHaveLength(1);
  return err.details![0]! as { path: string; message: string };
}

describe('every operator on the column kinds it applies to', () => {
  const accepted: [string, unknown, unknown][] = [
    ['eq text', { title: { eq: 'a' } }, ['title', 'eq', 'a']],
    ['ne integer', { priority: { ne: 2 } }, ['priority', 'ne', 2]],
    ['gt integer', { priority: { gt: 1 } }, ['priority', 'gt', 1]],
    ['gte real', { score: { gte: 1.5 } }, ['score', 'gte', 1.5]],
    ['lt timestamp (epoch ms → ISO)', { dueAt: { lt: 0 } }, ['dueAt', 'lt', '1970-01-01T00:00:00.000Z']],
    ['lte timestamp (offset → UTC)', { dueAt: { lte: '2026-05-01T02:00:00+02:00' } }, ['dueAt', 'lte', '2026-05-01T00:00:00.000Z']],
    ['gt text (code-point order)', { title: { gt: 'b' } }, ['title', 'gt', 'b']],
    ['in', { priority: { in: [1, 3] } }, ['priority', 'in', [1, 3]]],
    ['nin', { ownerId: { nin: ['o1'] } }, ['ownerId', 'nin', ['o1']]],
    ['contains', { title: { contains: '%_' } }, ['title', 'contains', '%_']],
    ['startsWith', { title: { startsWith: 'a' } }, ['title', 'startsWith', 'a']],
    ['endsWith', { title: { endsWith: '' } }, ['title', 'endsWith', '']],
    ['isNull true', { ownerId: { isNull: true } }, ['ownerId', 'isNull', true]],
    ['isNull false on a json column', { meta: { isNull: false } }, ['meta', 'isNull', false]],
    ['isNull on a list', { tags: { isNull: false } }, ['tags', 'isNull', false]],
    ['has on a text list', { tags: { has: 'red' } }, ['tags', 'has', 'red']],
    ['has on an integer list', { nums: { has: 3 } }, ['nums', 'has', 3]],
    ['has on a boolean list', { flags: { has: false } }, ['flags', 'has', false]],
    ['eq boolean', { isComplete: { eq: true } }, ['isComplete', 'eq', true]],
    ['eq on the id', { id: { eq: 'tk_1' } }, ['id', 'eq', 'tk_1']],
  ];
  it.each(accepted)('%s', (_what, where, expected) => {
    expect(tasks(where)).toEqual(expected);
  });

  it('compares emails in their stored form: trimmed and lower-case', () => {
    expect(shape(parseWhere(USERS, { email: { eq: '  Ann@Example.COM ' } }))).toEqual(['email', 'eq', 'ann@example.com']);
  });

  it('takes several operators on one column as their conjunction, in order', () => {
    expect(tasks({ priority: { gte: 1, lt: 3 } })).toEqual({
      and: [
        ['priority', 'gte', 1],
        ['priority', 'lt', 3],
      ],
    });
  });
});

describe('null (docs/reference/where.md)', () => {
  it('eq null and ne null are kept as null comparisons (the compiler makes them IS [NOT] NULL)', () => {
    expect(tasks({ ownerId: { eq: null } })).toEqual(['ownerId', 'eq', null]);
    expect(tasks({ ownerId: { ne: null } })).toEqual(['ownerId', 'ne', null]);
    // Also on a column that is never null: the answer is simply every row or none.
    expect(tasks({ title: { eq: null } })).toEqual(['title', 'eq', null]);
  });

  it('null is no value for the ordering operators, in, contains or has', () => {
    for (const op of ['gt', 'gte', 'lt', 'lte', 'contains', 'startsWith', 'endsWith']) expect(refusal({ title: { [op]: null } }).path).toBe(`/where/title/${op}`);
    expect(refusal({ priority: { in: [1, null] } }).path).toBe('/where/priority/in/1');
    expect(refusal({ tags: { has: null } }).path).toBe('/where/tags/has');
  });
});

describe('in [] and nin []', () => {
  it('are accepted as empty lists (none and every row)', () => {
    expect(tasks({ priority: { in: [] } })).toEqual(['priority', 'in', []]);
    expect(tasks({ priority: { nin: [] } })).toEqual(['priority', 'nin', []]);
  });

  it('need an array of values of the column kind, of bounded length', () => {
    expect(refusal({ priority: { in: 'x' } })).toEqual({ path: '/where/priority/in', message: 'in takes an array' });
    expect(refusal({ priority: { nin: { a: 1 } } }).path).toBe('/where/priority/nin');
    expect(refusal({ priority: { in: [1, 'two'] } })).toEqual({ path: '/where/priority/in/1', message: 'must be an integer' });
    expect(refusal({ priority: { in: Array.from({ length: 100_000 }, (_, i) => i) } }).path).toBe('/where/priority/in');
  });
});

describe('nesting', () => {
  it('builds and, or and not; one key is itself, several keys are their conjunction', () => {
    expect(tasks({})).toEqual({ and: [] });
    expect(tasks({ or: [] })).toEqual({ or: [] });
    expect(tasks({ and: [{ title: { eq: 'a' } }] })).toEqual({ and: [['title', 'eq', 'a']] });
    expect(tasks({ title: { eq: 'a' }, not: { or: [{ priority: { eq: 1 } }, { and: [] }] } })).toEqual({
      and: [['title', 'eq', 'a'], { not: { or: [['priority', 'eq', 1], { and: [] }] } }],
    });
  });

  it('refuses and/or without an array and a not or filter that is not an object', () => {
    expect(refusal({ and: {} })).toEqual({ path: '/where/and', message: 'and takes an array of filters' });
    expect(refusal({ or: 'x' }).path).toBe('/where/or');
    expect(refusal({ not: [] })).toEqual({ path: '/where/not', message: 'where must be an object' });
    expect(refusal({ or: [{ title: { eq: 'a' } }, 5] }).path).toBe('/where/or/1');
    for (const where of [null, [], 'x', 1]) expect(refusal(where).path).toBe('/where');
  });

  it('bounds depth and size, so a hostile filter costs little', () => {
    let deep: unknown = { priority: { eq: 1 } };
    for (let i = 0; i < 200; i++) deep = { not: deep };
    expect(refusal(deep).message).toMatch(/nests at most 16 levels/);
    const wide = { or: Array.from({ length: 10_000 }, (_, i) => ({ priority: { eq: i } })) };
    expect(refusal(wide).message).toMatch(/at most 1000 values/);
  });
});

describe('unknown and hidden columns, unknown operators', () => {
  it('refuses an unknown column by name, never guessing (snake_case is unknown)', () => {
    expect(refusal({ nope: { eq: 1 } })).toEqual({ path: '/where/nope', message: 'unknown column "nope"' });
    expect(refusal({ is_complete: { eq: true } }).path).toBe('/where/is_complete');
    expect(refusal({ 'title; DROP TABLE tasks; --': { eq: 1 } }).message).toMatch(/^unknown column/);
  });

  it('escapes / and ~ in the pointer (RFC 6901)', () => {
    expect(refusal({ 'a/b~c': { eq: 1 } }).path).toBe('/where/a~1b~0c');
  });

  it('refuses unknown operators, bare values and empty conditions', () => {
    expect(refusal({ title: { like: 'x' } })).toEqual({ path: '/where/title/like', message: 'unknown operator "like"' });
    expect(refusal({ title: 'x' }).path).toBe('/where/title');
    expect(refusal({ title: {} }).message).toMatch(/needs an operator/);
    // A parsed body may carry "__proto__" as an own key: it is one more unknown operator.
    expect(refusal({ title: JSON.parse('{"eq":"a","__proto__":1}') }).path).toBe('/where/title/__proto__');
  });

  it('never filters on a password, whatever the operator', () => {
    for (const cond of [{ eq: 'x' }, { isNull: true }, { startsWith: '$argon2' }])
      expect(refusal({ password: cond }, USERS)).toEqual({ path: '/where/password', message: 'password cannot be filtered' });
    // Nor hidden inside a nested filter.
    expect(refusal({ or: [{ email: { eq: 'a@b.co' } }, { not: { password: { eq: 'x' } } }] }, USERS).path).toBe('/where/or/1/not/password');
  });
});

describe('operators that do not fit the column', () => {
  const refused: [string, unknown, string][] = [
    ['contains on an integer', { priority: { contains: '1' } }, 'contains applies to text columns'],
    ['startsWith on a timestamp', { dueAt: { startsWith: '2026' } }, 'startsWith applies to text columns'],
    ['contains with a number', { title: { contains: 1 } }, 'must be a string'],
    ['gt on a boolean', { isComplete: { gt: false } }, 'gt does not apply to isComplete'],
    ['has on a scalar', { title: { has: 'a' } }, 'has applies to list columns'],
    ['eq on a list', { tags: { eq: ['red'] } }, 'tags is a list: use has or isNull'],
    ['has with the wrong item kind', { nums: { has: 'x' } }, 'must be an integer'],
    ['eq on a json column', { meta: { eq: {} } }, 'meta can only be filtered with isNull'],
    ['isNull with a non-boolean', { ownerId: { isNull: 1 } }, 'isNull takes true or false'],
    ['a fraction for an integer', { priority: { eq: 1.5 } }, 'must be an integer'],
    ['a string for a boolean', { isComplete: { eq: 'true' } }, 'must be true or false'],
    ['text that is no timestamp', { dueAt: { gt: 'yesterday' } }, 'must be an ISO-8601 timestamp or epoch milliseconds'],
    ['an address that is no email', { email: { eq: 'nope' } }, 'must be an email address'],
  ];
  it.each(refused)('%s', (_what, where, message) => {
    const c = JSON.stringify(where).includes('email') ? USERS : TASKS;
    expect(refusal(where, c).message).toBe(message);
  });
});

/** The bounds of docs/reference/data.md counted exactly, on a small project of their own. */
const t = table('things', { prefix: 'th', columns: { title: column.text(), n: column.integer().default(0) }, rules: { canList: () => true } });
const things = compileProject(defineProject({ tables: [t] })).collections.get('things')!;

function boundRefusal(where: unknown): { path: string; message: string } | null {
  try {
    parseWhere(things, where);
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return (err as ApiError).details![0]!;
  }
}
const vals = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
const nestNot = (levels: number): unknown => (levels <= 1 ? { title: { eq: 'x' } } : { not: nestNot(levels - 1) });

describe('where bounds (docs/reference/data.md)', () => {
  it(`nests at most ${MAX_DEPTH} levels`, () => {
    expect(boundRefusal(nestNot(MAX_DEPTH))).toBeNull();
    expect(boundRefusal(nestNot(MAX_DEPTH + 1))?.message).toMatch(/nests at most/);
    expect(boundRefusal({ and: [{ or: [nestNot(MAX_DEPTH - 2)] }] })).toBeNull();
    expect(boundRefusal({ and: [{ or: [nestNot(MAX_DEPTH - 1)] }] })).not.toBeNull();
  });

  it(`holds at most ${MAX_VALUES} values: in/nin entries, operands and and/or items, empty ones too`, () => {
    expect(boundRefusal({ title: { in: vals(MAX_VALUES) } })).toBeNull();
    expect(boundRefusal({ title: { nin: vals(MAX_VALUES + 1) } })).toEqual({ path: '/where/title/nin', message: expect.stringMatching(/at most 1000 values/) });
    expect(boundRefusal({ or: Array.from({ length: MAX_VALUES }, () => ({})) })).toBeNull();
    expect(boundRefusal({ or: Array.from({ length: MAX_VALUES + 1 }, () => ({})) })?.path).toBe('/where/or');
    expect(boundRefusal({ and: [{}, {}], title: { in: vals(MAX_VALUES - 2) } })).toBeNull();
    expect(boundRefusal({ and: [{}, {}], title: { in: vals(MAX_VALUES - 2) }, n: { eq: 1 } })?.path).toBe('/where/n/eq');
    const nums = (k: number) => Array.from({ length: k }, (_, i) => i);
    expect(boundRefusal({ title: { in: [] }, n: { in: nums(MAX_VALUES - 1) } })).toBeNull();
    expect(boundRefusal({ title: { in: [] }, n: { in: nums(MAX_VALUES) } })).not.toBeNull();
  });

  it(`takes text operands of at most ${MAX_PATTERN} characters (code points)`, () => {
    expect(boundRefusal({ title: { contains: 'x'.repeat(MAX_PATTERN) } })).toBeNull();
    expect(boundRefusal({ title: { startsWith: '😀'.repeat(MAX_PATTERN) } })).toBeNull();
    expect(boundRefusal({ title: { endsWith: 'x'.repeat(MAX_PATTERN + 1) } })).toEqual({ path: '/where/title/endsWith', message: expect.stringMatching(/256 characters/) });
    expect(boundRefusal({ title: { contains: '😀'.repeat(MAX_PATTERN + 1) } })).not.toBeNull();
  });

  it('refuses a huge filter at the bound, without walking all of it', () => {
    const huge = { or: Array.from({ length: 20_000 }, () => ({ title: { in: vals(10) } })) };
    const t0 = performance.now();
    expect(boundRefusal(huge)?.path).toBe('/where/or');
    expect(performance.now() - t0).toBeLessThan(1000); // generous: the point is "not O(everything)"
  });
});

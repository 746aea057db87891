import { describe, expect, it } from 'vitest';
import { chooseIndex } from './change-index.js';
import { queryKey, whereKey } from './query-key.js';
import { BOARD, plan, query, TASKS, USERS } from './test-fixtures.js';

const key = (...args: Parameters<typeof query>) => queryKey(query(...args));

describe('queryKey', () => {
  it('is the same for the same query written differently', () => {
    expect(key('list', TASKS, { ownerId: { eq: 'a' }, priority: { gt: 1 } })).toBe(key('list', TASKS, { priority: { gt: 1 }, ownerId: { eq: 'a' } }));
    expect(key('list', TASKS, { and: [{ ownerId: { eq: 'a' } }, { and: [{ priority: { gt: 1 } }] }] })).toBe(key('list', TASKS, { priority: { gt: 1 }, ownerId: { eq: 'a' } }));
    expect(key('count', TASKS, { ownerId: { in: ['b', 'a', 'a'] } })).toBe(key('count', TASKS, { ownerId: { in: ['a', 'b'] } }));
    expect(key('count', TASKS, { or: [{ title: { eq: 'x' } }, { title: { eq: 'y' } }] })).toBe(key('count', TASKS, { or: [{ title: { eq: 'y' } }, { title: { eq: 'x' } }] }));
    expect(key('list', TASKS, {}, { offset: 0 })).toBe(key('list', TASKS, {}, {}));
    expect(key('count', TASKS, { and: [] })).toBe(key('count', TASKS, {}));
  });

  it('count ignores paging and order; list and one do not', () => {
    const a = queryKey({ kind: 'count', plan: plan(TASKS, {}, { limit: 5, orderBy: [{ column: 'title' }] }) });
    const b = queryKey({ kind: 'count', plan: plan(TASKS, {}) });
    expect(a).toBe(b);
    expect(key('list', TASKS, {}, { limit: 5 })).not.toBe(key('list', TASKS, {}, { limit: 6 }));
    expect(key('list', TASKS, {}, { offset: 5 })).not.toBe(key('list', TASKS, {}, {}));
    expect(key('list', TASKS, {}, { orderBy: [{ column: 'title', direction: 'desc' }] })).not.toBe(key('list', TASKS, {}, { orderBy: [{ column: 'title' }] }));
    expect(key('list', TASKS, {}, { orderBy: [] })).not.toBe(key('list', TASKS, {}));
  });

  it('tells apart different collections, kinds, operators, values and value types', () => {
    const keys = [
      key('list', TASKS, {}),
      key('one', TASKS, {}),
      key('count', TASKS, {}),
      key('count', USERS, {}),
      key('count', BOARD, {}),
      key('count', TASKS, { priority: { eq: 1 } }),
      key('count', TASKS, { priority: { ne: 1 } }),
      key('count', TASKS, { priority: { eq: 2 } }),
      key('count', TASKS, { title: { eq: '1' } }),
      key('count', TASKS, { ownerId: { eq: null } }),
      key('count', TASKS, { ownerId: { eq: 'null' } }),
      key('count', TASKS, { not: { ownerId: { eq: 'a' } } }),
      key('count', TASKS, { ownerId: { eq: 'a' } }),
      key('count', TASKS, { or: [{ ownerId: { eq: 'a' } }, { priority: { eq: 1 } }] }),
      key('count', TASKS, { ownerId: { eq: 'a' }, priority: { eq: 1 } }),
      key('count', TASKS, { or: [] }),
      key('count', TASKS, { title: { eq: 'a"],["eq' } }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('whereKey is valid JSON text', () => {
    const w = plan(TASKS, { or: [{ title: { contains: '"\\' } }, { not: { tags: { has: 'x' } } }], priority: { in: [3, 1] } }).where;
    expect(() => JSON.parse(whereKey(w))).not.toThrow();
  });
});

describe('chooseIndex', () => {
  const choose = (where: unknown) => chooseIndex(plan(TASKS, where).where);
  it('prefers id equality, then other equality, then short in lists, then null equality', () => {
    expect(choose({ ownerId: { eq: 'a' }, id: { eq: 'tk_1' } })).toEqual({ column: 'id', keys: ['tk_1'] });
    expect(choose({ ownerId: { in: ['a', 'b'] }, title: { eq: 't' } })).toEqual({ column: 'title', keys: ['t'] });
    expect(choose({ ownerId: { in: ['a', 'b'] }, dueAt: { isNull: true } })).toEqual({ column: 'ownerId', keys: ['a', 'b'] });
    expect(choose({ ownerId: { eq: null } })).toEqual({ column: 'ownerId', keys: [null] });
    expect(choose({ isComplete: { eq: true } })).toEqual({ column: 'isComplete', keys: [1] });
    expect(choose({ and: [{ priority: { gt: 1 } }, { and: [{ title: { eq: 'deep' } }] }] })).toEqual({ column: 'title', keys: ['deep'] });
  });
  it('does not index conditions that do not constrain the value', () => {
    expect(choose({})).toBeNull();
    expect(choose({ or: [{ title: { eq: 'a' } }, { title: { eq: 'b' } }] })).toBeNull();
    expect(choose({ not: { title: { eq: 'a' } } })).toBeNull();
    expect(choose({ title: { ne: 'a' } })).toBeNull();
    expect(choose({ ownerId: { nin: ['a'] } })).toBeNull();
    expect(choose({ ownerId: { in: Array.from({ length: 100 }, (_, i) => `u${i}`) } })).toBeNull();
  });
  it('marks `in: []` as matching nothing', () => {
    expect(choose({ ownerId: { in: [] } })).toEqual({ column: 'ownerId', keys: [] });
  });
});

/**
 * End-to-end: list, count and the where grammar of docs/reference/data.md (and docs/reference/where.md on null) against three
 * rows no other test touches; malformed filters are refused before any SQL exists.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/lifecycle.js';
import { countRows, createRows } from '../helpers/rows.js';
import { scenarios, type Scenario, type ScenarioContext } from '../helpers/scenario.js';

const s = useServer();
const tag = `w${Date.now()}`;
const mine = { title: { startsWith: tag } };

beforeAll(async () => {
  await createRows(s, 'tasks', [
    { title: `${tag} Alpha`, priority: 1, score: 1.5, tags: ['red', 'blue'], ownerId: 'o1' },
    { title: `${tag} beta 100%`, priority: 2, score: 2.5, tags: ['blue'], ownerId: null },
    { title: `${tag} gamma_x`, priority: 3, score: -1, tags: [], ownerId: 'o2', isComplete: true },
  ]);
});

/** The titles (without the tag) of this file's rows matching `where`, in the answer's order. */
const titles = async (where: object, extra: object = {}) => {
  const r = await s.get<{ data: { items: { title: string }[] } }>('/db/list', { table: 'tasks', where: { and: [mine, where] }, ...extra });
  expect(r.status, r.text).toBe(200);
  return r.json.data.items.map((x) => x.title.slice(tag.length + 1));
};

const A = 'Alpha';
const B = 'beta 100%';
const G = 'gamma_x';

describe('every operator (docs/reference/data.md)', () => {
  const cases: [what: string, where: object, titles: string[]][] = [
    ['eq', { priority: { eq: 2 } }, [B]],
    ['ne', { priority: { ne: 2 } }, [A, G]],
    ['gt', { priority: { gt: 1 } }, [B, G]],
    ['gte', { priority: { gte: 2 } }, [B, G]],
    ['lt on a real', { score: { lt: 1.5 } }, [G]],
    ['lte on a real', { score: { lte: 1.5 } }, [A, G]],
    ['in', { priority: { in: [1, 3] } }, [A, G]],
    ['nin', { priority: { nin: [1, 3] } }, [B]],
    ['in [] matches nothing', { priority: { in: [] } }, []],
    ['nin [] matches everything', { priority: { nin: [] } }, [A, B, G]],
    ['contains takes _ literally', { title: { contains: 'a_' } }, [G]],
    ['contains takes % literally', { title: { contains: '%' } }, [B]],
    ['contains is case-sensitive', { title: { contains: 'alpha' } }, []],
    ['endsWith', { title: { endsWith: '_x' } }, [G]],
    ['isNull true', { ownerId: { isNull: true } }, [B]],
    ['isNull false', { ownerId: { isNull: false } }, [A, G]],
    ['eq null', { ownerId: { eq: null } }, [B]],
    ['ne treats null as a value (docs/reference/where.md)', { ownerId: { ne: 'o1' } }, [B, G]],
    ['nin treats null as a value', { ownerId: { nin: ['o1'] } }, [B, G]],
    ['has on a list', { tags: { has: 'blue' } }, [A, B]],
    ['eq on a boolean', { isComplete: { eq: true } }, [G]],
    ['two operators on one column', { priority: { gte: 1, lt: 3 } }, [A, B]],
    ['or', { or: [{ priority: { eq: 1 } }, { priority: { eq: 3 } }] }, [A, G]],
    ['not', { not: { priority: { eq: 1 } } }, [B, G]],
    ['not keeps rows where the column is null', { not: { ownerId: { eq: 'o1' } } }, [B, G]],
    ['or [] matches nothing', { or: [] }, []],
  ];
  it.each(cases)('%s', async (_what, where, expected) => {
    expect(await titles(where)).toEqual(expected);
  });
});

describe('order, pages and totals', () => {
  it('orders, pages and totals', async () => {
    expect(await titles({}, { order_by: [{ column: 'priority', direction: 'desc' }] })).toEqual([G, B, A]);
    expect(await titles({}, { order_by: [{ column: 'score' }] })).toEqual([G, A, B]);
    const r = await s.get('/db/list', { table: 'tasks', where: mine, limit: 1, offset: 1 });
    expect(r.json.data.items).toHaveLength(1);
    expect(r.json.data.total).toBe(3);
    const past = await s.get('/db/list', { table: 'tasks', where: mine, limit: 5, offset: 10 });
    expect(past.json.data).toEqual({ items: [], total: 3 });
    expect(await countRows(s, 'tasks', mine)).toBe(3);
  });

  it('answers at most 100 rows by default', async () => {
    const all = await s.get('/db/list', { table: 'tasks' });
    expect(all.json.data.items.length).toBeLessThanOrEqual(100);
  });
});

const ctx: ScenarioContext = { server: s, who: {}, vars: {} };
/** No SQL text, driver name or source path in any refusal (docs/reference/conventions.md). */
const LEAKS = [/SELECT|sqlite|at .*\.ts/i];
const badWhere = (why: string, where: unknown): Scenario => ({
  name: `400 for ${why}`,
  method: 'GET',
  path: '/db/list',
  body: { table: 'tasks', where },
  status: 400,
  code: 'BAD_REQUEST',
  lacks: LEAKS,
});
const badList = (why: string, body: object): Scenario => ({ name: `400 for ${why}`, method: 'GET', path: '/db/list', body: { table: 'tasks', ...body }, status: 400 });
let deep: unknown = { priority: { eq: 1 } };
for (let i = 0; i < 200; i++) deep = { not: deep };

scenarios('bad filters and paging', ctx, [
  badWhere('an unknown column', { nope: { eq: 1 } }),
  badWhere('an unknown operator', { title: { like: 'x' } }),
  badWhere('a bare value', { title: 'x' }),
  badWhere('a value of the wrong type', { priority: { eq: 'one' } }),
  badWhere('SQL in a column name', { 'title; DROP TABLE tasks; --': { eq: 1 } }),
  badWhere('eq on a list', { tags: { eq: 'red' } }),
  badWhere('in without an array', { priority: { in: 'x' } }),
  badWhere('and without an array', { and: {} }),
  { name: '400 for a filter nested 200 deep', method: 'GET', path: '/db/list', body: { table: 'tasks', where: deep }, bodyInQuery: false, status: 400 },
  {
    name: 'a quote in a value is only a value',
    method: 'GET',
    path: '/db/list',
    body: { table: 'tasks', where: { title: { eq: "x' OR '1'='1" } } },
    status: 200,
    like: { items: [] },
    after: async () => expect(await countRows(s, 'tasks', mine)).toBe(3),
  },
  badList('limit over 1000', { limit: 1001 }),
  badList('a negative limit', { limit: -1 }),
  badList('order_by an unknown column', { order_by: [{ column: 'nope' }] }),
  badList('an unknown direction', { order_by: [{ column: 'title', direction: 'up' }] }),
]);

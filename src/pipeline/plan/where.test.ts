/** The where bounds of SPEC §4, counted exactly: nesting, values in all (empty items too), operand length. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../core/errors.js';
import { compileProject } from '../../core/model.js';
import { column, defineProject, table } from '../../define/index.js';
import { MAX_DEPTH, MAX_PATTERN, MAX_VALUES, parseWhere } from './where.js';

const t = table('things', { prefix: 'th', columns: { title: column.text(), n: column.integer().default(0) }, rules: { canList: () => true } });
const c = compileProject(defineProject({ tables: [t] })).collections.get('things')!;

function refusal(where: unknown): { path: string; message: string } | null {
  try {
    parseWhere(c, where);
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return (err as ApiError).details![0]!;
  }
}
const vals = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
const nest = (levels: number): unknown => (levels <= 1 ? { title: { eq: 'x' } } : { not: nest(levels - 1) });

describe('where bounds (SPEC §4)', () => {
  it(`nests at most ${MAX_DEPTH} levels`, () => {
    expect(refusal(nest(MAX_DEPTH))).toBeNull();
    expect(refusal(nest(MAX_DEPTH + 1))?.message).toMatch(/nests at most/);
    expect(refusal({ and: [{ or: [nest(MAX_DEPTH - 2)] }] })).toBeNull();
    expect(refusal({ and: [{ or: [nest(MAX_DEPTH - 1)] }] })).not.toBeNull();
  });

  it(`holds at most ${MAX_VALUES} values: in/nin entries, operands and and/or items, empty ones too`, () => {
    expect(refusal({ title: { in: vals(MAX_VALUES) } })).toBeNull();
    expect(refusal({ title: { nin: vals(MAX_VALUES + 1) } })).toEqual({ path: '/where/title/nin', message: expect.stringMatching(/at most 1000 values/) });
    expect(refusal({ or: Array.from({ length: MAX_VALUES }, () => ({})) })).toBeNull();
    expect(refusal({ or: Array.from({ length: MAX_VALUES + 1 }, () => ({})) })?.path).toBe('/where/or');
    expect(refusal({ and: [{}, {}], title: { in: vals(MAX_VALUES - 2) } })).toBeNull();
    expect(refusal({ and: [{}, {}], title: { in: vals(MAX_VALUES - 2) }, n: { eq: 1 } })?.path).toBe('/where/n/eq');
    const nums = (k: number) => Array.from({ length: k }, (_, i) => i);
    expect(refusal({ title: { in: [] }, n: { in: nums(MAX_VALUES - 1) } })).toBeNull();
    expect(refusal({ title: { in: [] }, n: { in: nums(MAX_VALUES) } })).not.toBeNull();
  });

  it(`takes text operands of at most ${MAX_PATTERN} characters (code points)`, () => {
    expect(refusal({ title: { contains: 'x'.repeat(MAX_PATTERN) } })).toBeNull();
    expect(refusal({ title: { startsWith: '😀'.repeat(MAX_PATTERN) } })).toBeNull();
    expect(refusal({ title: { endsWith: 'x'.repeat(MAX_PATTERN + 1) } })).toEqual({ path: '/where/title/endsWith', message: expect.stringMatching(/256 characters/) });
    expect(refusal({ title: { contains: '😀'.repeat(MAX_PATTERN + 1) } })).not.toBeNull();
  });

  it('refuses a huge filter at the bound, without walking all of it', () => {
    const huge = { or: Array.from({ length: 20_000 }, () => ({ title: { in: vals(10) } })) };
    const t0 = performance.now();
    expect(refusal(huge)?.path).toBe('/where/or');
    expect(performance.now() - t0).toBeLessThan(1000); // generous: the point is "not O(everything)"
  });
});

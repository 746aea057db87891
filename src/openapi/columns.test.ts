/**
 * The column rules the document and the client advertise must be the rules the server obeys:
 * every (column, operator) pair is run through the server's own where parser, every column
 * through the plan builder's order_by check and the create-object check.
 */
import { describe, expect, it } from 'vitest';
import type { ColumnModel } from '../core/model.js';
import { ApiError } from '../core/errors.js';
import type { Operation } from '../pipeline/operation.js';
import { planOperation } from '../pipeline/plan/index.js';
import { checkCreateObject, checkUpdates } from '../pipeline/plan/objects.js';
import { parseWhere } from '../pipeline/plan/where.js';
import { conditionFamily, isCreatable, isSortable, isUpdatable, operatorsFor, type Operator } from './columns.js';
import { kitchenSinkModel } from './fixtures.js';
import { exampleItem, exampleValue } from './values.js';

const model = kitchenSinkModel();
const things = model.collections.get('things')!;
const members = model.collections.get('members')!;
const ALL_OPS: Operator[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'contains', 'startsWith', 'endsWith', 'isNull', 'has'];

/** A value of the right type for the operator, so only applicability decides the outcome. */
function sample(col: ColumnModel, op: Operator): unknown {
  const value = col.spec.kind === 'updatedWhen' ? '2026-11-22T10:00:00.000Z' : exampleValue(things, col);
  if (op === 'isNull') return true;
  if (op === 'has') return exampleItem(col.spec.of ?? 'text');
  if (op === 'contains' || op === 'startsWith' || op === 'endsWith') return 'x';
  if (op === 'in' || op === 'nin') return [value];
  return value;
}

function accepts(fn: () => unknown): boolean {
  try {
    fn();
    return true;
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'BAD_REQUEST') throw err;
    return false;
  }
}

describe('where operators per column kind (docs/reference/data.md)', () => {
  for (const c of [things, members]) {
    for (const col of c.columnList) {
      it(`${c.name}.${col.name} (${col.spec.kind}) advertises exactly the operators the parser accepts`, () => {
        const advertised = new Set(operatorsFor(col));
        for (const op of ALL_OPS) {
          const ok = accepts(() => parseWhere(c, { [col.name]: { [op]: sample(col, op) } }));
          expect(ok, `${col.name} ${op}`).toBe(advertised.has(op));
        }
      });
    }
  }

  it('gives text-like columns the text operators, lists has/isNull, json isNull only, password nothing', () => {
    const ops = (name: string) => operatorsFor((name === 'password' ? members : things).columns.get(name)!);
    expect(ops('title')).toContain('contains');
    expect(ops('contact')).toContain('startsWith');
    expect(ops('count')).not.toContain('contains');
    expect(ops('labels')).toEqual(['has', 'isNull']);
    expect(ops('meta')).toEqual(['isNull']);
    expect(ops('password')).toEqual([]);
    expect(conditionFamily(members.columns.get('password')!)).toBeUndefined();
    expect(conditionFamily(things.columns.get('scores')!)).toBe('list.integer');
  });
});

describe('sortable, creatable and updatable columns', () => {
  const op = (body: Record<string, unknown>): Operation => ({ op: 'list', collection: things, body: { table: 'things', ...body }, authorization: undefined, jwt: null, ip: '127.0.0.1' });

  it('isSortable matches the plan builder', () => {
    for (const col of [...things.columnList, ...members.columnList]) {
      const c = things.columns.has(col.name) ? things : members;
      const ok = accepts(() => planOperation({ ...op({ order_by: [{ column: col.name }] }), collection: c }));
      expect(ok, col.name).toBe(isSortable(col));
    }
  });

  it('every creatable and updatable column is accepted with its example value; hidden ones are refused', () => {
    for (const col of things.columnList.filter(isCreatable)) {
      expect(
        accepts(() => checkCreateObject(things, { [col.name]: exampleValue(things, col) }, '/object')),
        col.name,
      ).toBe(true);
    }
    for (const col of things.columnList.filter(isUpdatable)) {
      expect(
        accepts(() => checkUpdates(things, [{ column: col.name, value: exampleValue(things, col) }])),
        col.name,
      ).toBe(true);
    }
    expect(isCreatable(members.columns.get('password')!)).toBe(false);
    expect(accepts(() => checkCreateObject(members, { password: 'secret-secret' }, '/object'))).toBe(false);
    expect(isCreatable(things.columns.get('createdAt')!)).toBe(false);
    expect(isCreatable(things.columns.get('id')!)).toBe(false);
  });
});

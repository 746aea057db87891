/**
 * The condition objects of the where grammar (docs/reference/data.md), one component per condition family:
 * `Condition.text`, `Condition.integer`, ..., `Condition.list.text`. Several operators in one
 * condition must all hold; `{"eq": null}` means `{"isNull": true}`.
 */
import type { ScalarKind } from '../define/columns.js';
import { CONDITION_FAMILIES, OPERATORS, type ConditionFamily, type Operator } from './columns.js';
import { orNull, timestampInput, scalarSchema, type JsonSchema } from './values.js';

export const conditionName = (family: ConditionFamily): string => `Condition.${family}`;

const DESCRIPTION: Record<Operator, string> = {
  eq: 'equal (null means isNull: true)',
  ne: 'not equal; null counts as a value (docs/reference/where.md)',
  gt: 'greater than',
  gte: 'greater than or equal',
  lt: 'less than',
  lte: 'less than or equal',
  in: 'one of the values; [] matches nothing',
  nin: 'none of the values; [] matches every row',
  contains: 'contains the text; case-sensitive; % and _ are literal',
  startsWith: 'starts with the text; case-sensitive',
  endsWith: 'ends with the text; case-sensitive',
  isNull: 'true: the column is null; false: it is not',
  has: 'the list holds this item',
};

function valueOf(family: ConditionFamily): JsonSchema {
  if (family === 'text') return { type: 'string' };
  if (family === 'timestamp') return timestampInput();
  if (family === 'json') return {};
  if (family.startsWith('list.')) return scalarSchema(family.slice(5) as ScalarKind);
  return scalarSchema(family as ScalarKind);
}

function operatorSchema(family: ConditionFamily, op: Operator): JsonSchema {
  const value = valueOf(family);
  const description = DESCRIPTION[op];
  switch (op) {
    case 'isNull':
      return { type: 'boolean', description };
    case 'eq':
    case 'ne':
      return { ...orNull(value), description };
    case 'in':
    case 'nin':
      return { type: 'array', items: value, maxItems: 1000, description };
    case 'contains':
    case 'startsWith':
    case 'endsWith':
      return { type: 'string', description };
    default:
      return { ...value, description };
  }
}

function conditionSchema(family: ConditionFamily): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const op of OPERATORS[family]) properties[op] = operatorSchema(family, op);
  return {
    type: 'object',
    description: `A condition on a ${family.replace('.', ' of ')} column: ${OPERATORS[family].join(', ')}. Several operators must all hold.`,
    properties,
    minProperties: 1,
    additionalProperties: false,
  };
}

export function conditionComponents(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const f of CONDITION_FAMILIES) out[conditionName(f)] = conditionSchema(f);
  return out;
}

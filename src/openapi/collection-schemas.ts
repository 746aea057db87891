/**
 * Per table and view: the Row a client reads, the Create object, the Where filter with the
 * operators each column's kind allows, the Update entries with their value forms, and the
 * OrderBy list (docs/reference/columns.md, docs/reference/data.md). `password` appears in none of them.
 */
import type { CollectionModel, ColumnModel } from '../core/model.js';
import { conditionFamily, isCreatable, isNumeric, isRequiredOnCreate, isSortable, isUpdatable, isVisible } from './columns.js';
import { conditionName } from './conditions.js';
import { nameEnum, oneOf, partName, partRef, schemaRef, type JsonSchema } from './context.js';
import { exampleValue, scalarSchema, valueSchema } from './values.js';

function kindLabel(c: CollectionModel): string {
  if (c.kind === 'view') return 'view (read-only)';
  return c.auth ? (c.auth.admin ? 'admin auth table' : 'auth table') : 'table';
}

export function exampleRow(c: CollectionModel): Record<string, unknown> {
  const example: Record<string, unknown> = {};
  for (const col of c.columnList.filter(isVisible)) example[col.name] = exampleValue(c, col);
  return example;
}

function rowSchema(c: CollectionModel): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const visible = c.columnList.filter(isVisible);
  for (const col of visible) properties[col.name] = valueSchema(c, col, false);
  return {
    type: 'object',
    description: `A row of the ${kindLabel(c)} \`${c.name}\`.`,
    required: visible.map((col) => col.name),
    properties,
    additionalProperties: false,
    example: exampleRow(c),
  };
}

function createSchema(c: CollectionModel): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const example: Record<string, unknown> = {};
  const cols = c.columnList.filter(isCreatable);
  for (const col of cols) {
    properties[col.name] = valueSchema(c, col, true);
    if (isRequiredOnCreate(col)) example[col.name] = exampleValue(c, col);
  }
  const required = cols.filter(isRequiredOnCreate).map((col) => col.name);
  return {
    type: 'object',
    description: `The \`object\` of a create on \`${c.name}\`: \`id\` and server-managed columns are set by the server.`,
    ...(required.length ? { required } : {}),
    properties,
    additionalProperties: false,
    example,
  };
}

function whereSchema(c: CollectionModel): JsonSchema {
  const self = partRef(c, 'Where');
  const properties: Record<string, JsonSchema> = {};
  for (const col of c.columnList) {
    const family = conditionFamily(col);
    if (family) properties[col.name] = schemaRef(conditionName(family));
  }
  properties.and = { type: 'array', items: self, description: 'every filter must hold' };
  properties.or = { type: 'array', items: self, description: 'at least one filter must hold' };
  properties.not = { ...self };
  const first = c.columnList.find((col) => col.spec.kind === 'id') ?? c.columnList[0];
  return {
    type: 'object',
    description: `A filter on \`${c.name}\`: every key must hold. \`{}\` means every row.`,
    properties,
    additionalProperties: false,
    ...(first ? { example: { [first.name]: { eq: exampleValue(c, first) } } } : {}),
  };
}

/** The value forms of one column (docs/reference/data.md): a plain value, null, increment/decrement, add/remove. */
function updateValue(c: CollectionModel, col: ColumnModel): JsonSchema {
  const forms: JsonSchema[] = [valueSchema(c, col, true)];
  if (isNumeric(col)) {
    const n = col.spec.kind === 'integer' ? scalarSchema('integer') : scalarSchema('real');
    for (const form of ['increment', 'decrement']) forms.push({ type: 'object', required: [form], properties: { [form]: n }, additionalProperties: false });
  }
  if (col.spec.kind === 'list') {
    const item = scalarSchema(col.spec.of ?? 'text');
    for (const form of ['add', 'remove']) forms.push({ type: 'object', required: [form], properties: { [form]: item }, additionalProperties: false });
  }
  return oneOf(forms);
}

function updateSchema(c: CollectionModel): JsonSchema {
  const entries = c.columnList.filter(isUpdatable).map((col) => ({
    type: 'object',
    required: ['column', 'value'],
    properties: { column: nameEnum([col.name]), value: updateValue(c, col) },
    additionalProperties: false,
  }));
  const described = { description: `One \`{column, value}\` entry of an update on \`${c.name}\`.` };
  // A table whose every column is server-managed accepts no update entry at all.
  if (entries.length === 0) return { ...described, not: {} };
  return { ...described, ...oneOf(entries) };
}

function orderBySchema(c: CollectionModel): JsonSchema {
  const columns = c.columnList.filter(isSortable).map((col) => col.name);
  return {
    type: 'array',
    description: `Sort terms; absent: ${c.defaultOrder.map((o) => `${o.column} ${o.direction}`).join(', ')}; [] means no ordering.`,
    maxItems: 16,
    items: {
      type: 'object',
      required: ['column'],
      properties: {
        column: nameEnum(columns),
        direction: { type: 'string', enum: ['asc', 'desc'], default: 'asc' },
      },
      additionalProperties: false,
    },
  };
}

/** Row, Where and OrderBy for every collection; Create and Update for tables. */
export function collectionSchemas(c: CollectionModel): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {
    [partName(c, 'Row')]: rowSchema(c),
    [partName(c, 'Where')]: whereSchema(c),
    [partName(c, 'OrderBy')]: orderBySchema(c),
  };
  if (c.kind === 'table') {
    out[partName(c, 'Create')] = createSchema(c);
    out[partName(c, 'Update')] = updateSchema(c);
  }
  return out;
}

/**
 * The request bodies of the /db routes (docs/reference/data.md), one schema per
 * collection and operation. Each names its collection as a single-value `table` enum, so the
 * routes can offer `oneOf` them with `table` as the discriminator.
 */
import type { CollectionModel } from '../core/model.js';
import { isRequiredOnCreate, isUpdatable } from './columns.js';
import { nameEnum, partName, partRef, schemaRef, type BodyPart, type JsonSchema } from './context.js';
import { exampleValue } from './values.js';

/** docs/reference/data.md: list `limit` default 100, at most 1000; create many takes 1 to 1000 objects. */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
const MAX_OBJECTS = 1000;

const limitList: JsonSchema = { type: 'integer', minimum: 0, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'page size' };
const offset: JsonSchema = { type: 'integer', minimum: 0, default: 0, description: 'rows skipped' };
const limitMany: JsonSchema = { type: 'integer', minimum: 0, description: 'caps the rows touched (the first ones in the default order)' };

function body(c: CollectionModel, required: string[], properties: Record<string, JsonSchema>, example: Record<string, unknown>): JsonSchema {
  return {
    type: 'object',
    required: ['table', ...required],
    // One of TableName (docs/reference/dashboard.md: the enum of every collection), and this one: the discriminator.
    properties: { table: { allOf: [schemaRef('TableName')], ...nameEnum([c.name]) }, ...properties },
    additionalProperties: false,
    example: { table: c.name, ...example },
  };
}

/** A where example naming the collection's id (or first column). */
function whereExample(c: CollectionModel): Record<string, unknown> {
  const col = c.columns.get('id') ?? c.columnList[0];
  return col ? { [col.name]: { eq: exampleValue(c, col) } } : {};
}

function updatesExample(c: CollectionModel): unknown[] {
  const col = c.columnList.find(isUpdatable);
  return col ? [{ column: col.name, value: exampleValue(c, col) }] : [];
}

/** The required columns of a create, with example values. */
function createExample(c: CollectionModel): Record<string, unknown> {
  const example: Record<string, unknown> = {};
  for (const col of c.columnList) if (isRequiredOnCreate(col)) example[col.name] = exampleValue(c, col);
  return example;
}

export function bodySchemas(c: CollectionModel): Record<string, JsonSchema> {
  const where = partRef(c, 'Where');
  const updates: JsonSchema = { type: 'array', minItems: 1, maxItems: 1000, items: partRef(c, 'Update') };
  const w = whereExample(c);
  const parts: Partial<Record<BodyPart, JsonSchema>> = {
    GetBody: body(c, ['where'], { where, expand: { type: 'array', maxItems: 0, items: { type: 'string' }, description: 'only [] is supported' } }, { where: w }),
    ListBody: body(
      c,
      [],
      { where, limit: limitList, offset, order_by: partRef(c, 'OrderBy') },
      { where: {}, limit: 20, offset: 0, order_by: [{ column: c.defaultOrder[0]?.column ?? 'id', direction: 'desc' }] },
    ),
    CountBody: body(c, [], { where }, { where: {} }),
  };
  if (c.kind === 'table') {
    const object = partRef(c, 'Create');
    const ce = createExample(c);
    parts.CreateBody = body(c, ['object'], { object }, { object: ce });
    parts.CreateManyBody = body(c, ['objects'], { objects: { type: 'array', minItems: 1, maxItems: MAX_OBJECTS, items: object } }, { objects: [ce] });
    parts.UpdateBody = body(c, ['where', 'updates'], { where, updates }, { where: w, updates: updatesExample(c) });
    parts.UpdateManyBody = body(c, ['where', 'updates'], { where, updates, limit: limitMany }, { where: {}, updates: updatesExample(c), limit: 10 });
    parts.DeleteBody = body(c, ['where'], { where }, { where: w });
    parts.DeleteManyBody = body(c, ['where'], { where, limit: limitMany }, { where: {}, limit: 10 });
    if (Object.keys(c.rules?.custom ?? {}).length > 0) {
      // docs/reference/data.md: `updates` is optional and handed to the handler as given.
      parts.CustomBody = body(c, ['where'], { where, updates: { ...updates, minItems: 0 }, limit: limitMany }, { where: w });
    }
  }
  const out: Record<string, JsonSchema> = {};
  for (const [part, schema] of Object.entries(parts)) out[partName(c, part as BodyPart)] = schema;
  return out;
}

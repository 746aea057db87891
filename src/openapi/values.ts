/**
 * JSON schemas of column values (docs/reference/columns.md) as OpenAPI 3.0.3 schema objects, and example values.
 * Output schemas describe what rows hold; input schemas what a request may send (timestamps also
 * as epoch milliseconds, docs/reference/columns.md).
 */
import type { CollectionModel, ColumnModel } from '../core/model.js';
import type { ScalarKind } from '../define/columns.js';
import { isTimestamp } from './columns.js';

export type JsonSchema = { [key: string]: unknown };

export const ID_REMAINDER = '[0-9a-z]{16,32}';
const ISO_EXAMPLE = '2026-11-22T10:00:00.000Z';
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

export function scalarSchema(kind: ScalarKind): JsonSchema {
  switch (kind) {
    case 'text':
      return { type: 'string' };
    case 'integer':
      return { type: 'integer', format: 'int64', minimum: -MAX_SAFE, maximum: MAX_SAFE };
    case 'real':
      return { type: 'number', format: 'double' };
    case 'boolean':
      return { type: 'boolean' };
  }
}

function timestampOutput(): JsonSchema {
  return { type: 'string', format: 'date-time', example: ISO_EXAMPLE };
}

/** An ISO-8601 string or epoch milliseconds (docs/reference/columns.md). */
export function timestampInput(): JsonSchema {
  return {
    oneOf: [
      { type: 'string', format: 'date-time' },
      { type: 'integer', format: 'int64', minimum: 0, description: 'epoch milliseconds' },
    ],
  };
}

/** The one value null, as OpenAPI 3.0 can say it (`nullable` needs a `type`): the `Null` component. */
export const NULL_SCHEMA: JsonSchema = { type: 'object', nullable: true, enum: [null], description: 'null' };

/**
 * `schema`, or null. OpenAPI 3.0.3 lets `nullable` widen only a schema with a `type`; a schema
 * without one (a `oneOf` of alternatives, a `$ref`) gets null through its first typed alternative
 * or through an added `Null` alternative, so linters, example validators and 3.1 converters all
 * read the same thing. An empty schema already admits null.
 */
export function orNull(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') {
    // An enum restricts null too (OpenAPI 3.0.3 clarifies `nullable`): list it.
    const e = schema.enum as unknown[] | undefined;
    return e && !e.includes(null) ? { ...schema, nullable: true, enum: [...e, null] } : { ...schema, nullable: true };
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    const alts = schema[key] as JsonSchema[] | undefined;
    if (!alts) continue;
    const i = alts.findIndex((a) => typeof a.type === 'string');
    // In a oneOf, null must match exactly one alternative: widen one, never two.
    if (i >= 0 && !alts.some((a, j) => j !== i && a.nullable === true)) return { ...schema, [key]: alts.map((a, j) => (j === i ? { ...a, nullable: true } : a)) };
    return { ...schema, [key]: [...alts, NULL_REF] };
  }
  if (Object.keys(schema).every((k) => k === 'description')) return schema;
  return { anyOf: [schema, NULL_REF] };
}

const NULL_REF: JsonSchema = { $ref: '#/components/schemas/Null' };

function idSchema(prefix: string | undefined): JsonSchema {
  const p = prefix ?? '[a-z0-9]{2,8}';
  return { type: 'string', pattern: `^${p}_${ID_REMAINDER}$`, example: exampleId(prefix) };
}

export function exampleId(prefix: string | undefined): string {
  return `${prefix ?? 'id'}_01jf8x7k2m3n4p5q`;
}

function withNull(schema: JsonSchema, nullable: boolean): JsonSchema {
  return nullable ? orNull(schema) : schema;
}

/** The schema of a non-null value of `col` in a request or a row. */
function baseSchema(c: CollectionModel | undefined, col: ColumnModel, input: boolean): JsonSchema {
  const spec = col.spec;
  switch (spec.kind) {
    case 'id':
      return idSchema(c?.kind === 'table' ? c.prefix : undefined);
    case 'text':
      return { type: 'string' };
    case 'email':
      return { type: 'string', format: 'email', maxLength: 254, description: 'trimmed and lowercased on write' };
    case 'integer':
    case 'real':
    case 'boolean':
      return scalarSchema(spec.kind);
    case 'isVerified':
      return { type: 'boolean', description: 'false on sign-up; set by email confirmation' };
    case 'timestamp':
    case 'createdAt':
    case 'updatedAt':
    case 'updatedWhen':
      return input ? timestampInput() : timestampOutput();
    case 'list':
      return { type: 'array', items: scalarSchema(spec.of ?? 'text') };
    case 'json':
      return { description: 'any JSON value' };
    case 'photo':
      return { type: 'string', pattern: `^ph_${ID_REMAINDER}$`, description: 'the id of an uploaded photo (POST /img)' };
    case 'password':
      return { type: 'string', format: 'password' };
  }
}

const NOTE: Partial<Record<string, (col: ColumnModel) => string>> = {
  createdAt: () => 'set on create; never changed',
  updatedAt: () => 'set on create and on every update',
  updatedWhen: (col) => `set whenever an update changes ${col.spec.watches}; null until then`,
};

export function valueSchema(c: CollectionModel | undefined, col: ColumnModel, input: boolean): JsonSchema {
  const base = baseSchema(c, col, input);
  const note = NOTE[col.spec.kind]?.(col);
  const described = note && !input ? { ...base, description: note } : base;
  return withNull(described, col.spec.nullable);
}

/** A value for examples: the column's plain default when it has one, else a plausible value. */
export function exampleValue(c: CollectionModel, col: ColumnModel): unknown {
  const spec = col.spec;
  if (spec.hasDefault && typeof spec.default !== 'function' && spec.default !== undefined) return spec.default;
  if (isTimestamp(col)) return spec.kind === 'updatedWhen' ? null : ISO_EXAMPLE;
  switch (spec.kind) {
    case 'id':
      return exampleId(c.kind === 'table' ? c.prefix : undefined);
    case 'text':
      return `Example ${col.name}`;
    case 'email':
      return 'ann@example.com';
    case 'integer':
      return 1;
    case 'real':
      return 1.5;
    case 'boolean':
    case 'isVerified':
      return false;
    case 'list':
      return [exampleItem(spec.of ?? 'text')];
    case 'json':
      return { any: 'json' };
    case 'photo':
      return exampleId('ph');
    default:
      return spec.nullable ? null : 'value';
  }
}

export function exampleItem(kind: ScalarKind): unknown {
  return kind === 'text' ? 'item' : kind === 'boolean' ? true : kind === 'integer' ? 1 : 1.5;
}

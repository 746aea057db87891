/**
 * What every part of the generator shares: the collections the document lists, reference and
 * naming helpers, and the small schema combinators. Component names use the collection name
 * and a dot (`tasks.Row`): table names hold no dots, so two collections never collide.
 */
import type { CollectionModel, ProjectModel } from '../core/model.js';
import type { JsonSchema } from './values.js';

export type { JsonSchema };

/** An OpenAPI operation object (kept loose: the document is plain JSON). */
export type OperationObject = { [key: string]: unknown };

export type SchemaPart = 'Row' | 'Create' | 'Where' | 'Update' | 'OrderBy';

export type BodyPart = 'GetBody' | 'ListBody' | 'CountBody' | 'CreateBody' | 'CreateManyBody' | 'UpdateBody' | 'UpdateManyBody' | 'DeleteBody' | 'DeleteManyBody' | 'CustomBody' | 'SignUpBody';

export interface DocContext {
  readonly model: ProjectModel;
  /** Every declared table and view; internal `_` tables only when the project gave them rules (docs/reference/dashboard.md). */
  readonly collections: readonly CollectionModel[];
  /** The tables among `collections` (writes apply to tables only; views are read-only). */
  readonly tables: readonly CollectionModel[];
  readonly authTables: readonly CollectionModel[];
  /** Tables that register at least one custom operation (docs/reference/data.md). */
  readonly customTables: readonly CollectionModel[];
}

export function documentedCollections(model: ProjectModel): CollectionModel[] {
  const out: CollectionModel[] = [];
  for (const c of model.collections.values()) if (!c.internal || c.rules !== undefined) out.push(c);
  return out;
}

export function docContext(model: ProjectModel): DocContext {
  const collections = documentedCollections(model);
  const tables = collections.filter((c) => c.kind === 'table');
  return Object.freeze({
    model,
    collections,
    tables,
    authTables: tables.filter((c) => c.auth !== undefined),
    customTables: tables.filter((c) => Object.keys(c.rules?.custom ?? {}).length > 0),
  });
}

export const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const headerRef = (name: string): JsonSchema => ({ $ref: `#/components/headers/${name}` });

export const partName = (c: CollectionModel, part: SchemaPart | BodyPart): string => `${c.name}.${part}`;
export const partRef = (c: CollectionModel, part: SchemaPart | BodyPart): JsonSchema => schemaRef(partName(c, part));

/** `oneOf` the alternatives; a lone alternative stands alone; none gives `fallback`. */
export function oneOf(items: JsonSchema[], fallback: JsonSchema = { type: 'object' }): JsonSchema {
  if (items.length === 0) return fallback;
  return items.length === 1 ? items[0]! : { oneOf: items };
}

/** Like `oneOf`, for answers whose alternatives may overlap (rows of similar tables). */
export function anyOf(items: JsonSchema[], fallback: JsonSchema = { type: 'object' }): JsonSchema {
  if (items.length === 0) return fallback;
  return items.length === 1 ? items[0]! : { anyOf: items };
}

/** A single-value enum naming one collection: the discriminator of per-table request bodies. */
export const nameEnum = (names: readonly string[]): JsonSchema => (names.length ? { type: 'string', enum: [...names] } : { type: 'string' });

/** The `{"data": ...}` envelope of every successful answer (docs/reference/conventions.md). */
export function envelope(data: JsonSchema): JsonSchema {
  return { type: 'object', required: ['data'], properties: { data: data }, additionalProperties: false };
}

/** A per-table request body: `oneOf` the tables' body schemas, discriminated by `table`. */
export function perTableBody(collections: readonly CollectionModel[], part: BodyPart): JsonSchema {
  if (collections.length === 0) return { type: 'object', required: ['table'], properties: { table: { type: 'string' } } };
  if (collections.length === 1) return partRef(collections[0]!, part);
  const mapping: Record<string, string> = {};
  for (const c of collections) mapping[c.name] = `#/components/schemas/${partName(c, part)}`;
  return { oneOf: collections.map((c) => partRef(c, part)), discriminator: { propertyName: 'table', mapping } };
}

/** `/db/custom/:name` → `/db/custom/{name}`; `:name` and a tail wildcard `:name*` are both `{name}` (OpenAPI has no wildcard; the description says it spans segments). */
export const openApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)\*?/g, '{$1}');

export const routeKey = (method: string, path: string): string => `${method.toUpperCase()} ${path}`;

/** The collection examples are drawn from: the first plain table, else the first collection. */
export function exampleCollection(ctx: DocContext): CollectionModel | undefined {
  return ctx.tables.find((c) => !c.auth && c.columnList.length > 1) ?? ctx.collections[0];
}

/** Adds named component headers to a response object. */
export function withHeaders(response: JsonSchema, names: readonly string[]): JsonSchema {
  const existing = (response.headers ?? {}) as Record<string, unknown>;
  return { ...response, headers: { ...existing, ...Object.fromEntries(names.map((n) => [n, headerRef(n)])) } };
}

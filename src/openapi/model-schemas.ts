/**
 * The schemas a declaration names with `modelSchema(name)` (or a `x-tablebase-model` key inside a
 * TypeBox schema): generated from the project model, since the tables are the project's, not the
 * route's (docs/reference/dashboard.md). Each answers a schema and, where the model gives one, an example.
 */
import type { CollectionModel } from '../core/model.js';
import { anyPassword, authTableName, confirmBody, email, firstAuth, rateLimitTable, sessionExample } from './auth-schemas.js';
import { bodySchemas } from './bodies.js';
import { exampleRow } from './collection-schemas.js';
import { exampleId, ID_REMAINDER, orNull } from './values.js';
import { anyOf, envelope, exampleCollection, partName, partRef, perTableBody, schemaRef, type BodyPart, type DocContext, type JsonSchema } from './context.js';

export interface ModelPart {
  readonly schema: JsonSchema;
  readonly example?: unknown;
  /** A whole media-type map, for bodies whose types the project decides (photos). */
  readonly content?: Record<string, JsonSchema>;
}

const DEFAULT_PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'];
const binary: JsonSchema = { type: 'string', format: 'binary' };
const photoTypes = (ctx: DocContext): string[] => ctx.model.project.photos?.allowedMimeTypes ?? DEFAULT_PHOTO_TYPES;

const rows = (cs: readonly CollectionModel[]): JsonSchema => anyOf(cs.map((c) => partRef(c, 'Row')));
/** A row or null; `$ref` siblings are ignored in OpenAPI 3.0, so the refs sit inside `anyOf`. */
const nullableRows = (cs: readonly CollectionModel[]): JsonSchema => orNull({ anyOf: cs.length ? cs.map((c) => partRef(c, 'Row')) : [{ type: 'object' }] });
const page = (cs: readonly CollectionModel[]): JsonSchema => ({
  type: 'object',
  required: ['items', 'total'],
  properties: { items: { type: 'array', items: rows(cs) }, total: { type: 'integer', minimum: 0, description: 'every matching row, ignoring limit and offset' } },
  additionalProperties: false,
});
const count: JsonSchema = { type: 'integer', minimum: 0 };

const sampleRow = (ctx: DocContext): unknown => {
  const c = exampleCollection(ctx);
  return c ? exampleRow(c) : {};
};

function exampleBody(ctx: DocContext, part: BodyPart, among: readonly CollectionModel[]): unknown {
  const preferred = exampleCollection(ctx);
  const c = preferred && among.includes(preferred) ? preferred : among[0];
  return c ? bodySchemas(c)[partName(c, part)]?.example : undefined;
}

const READ_BODIES = new Set<string>(['GetBody', 'ListBody', 'CountBody']);

/** The data of a stream payload, by name (docs/reference/live.md). */
function streamData(name: string, ctx: DocContext): ModelPart | undefined {
  if (name === 'NullableRow') return { schema: nullableRows(ctx.collections), example: sampleRow(ctx) };
  if (name === 'Page') return { schema: page(ctx.collections), example: { items: [sampleRow(ctx)], total: 1 } };
  if (name === 'Count') return { schema: count, example: 3 };
  return undefined;
}

const SSE =
  'The default framing: `id: <n>\\ndata: <json>\\n\\n` per payload (the envelope of the non-streaming route), a `: ping` comment as heartbeat (every 15 s by default), and one `event: error` payload `{"error": {...}}` before the server closes.';
const NDJSON = 'With `Accept: application/x-ndjson`: one JSON document per line; an empty line is the heartbeat; an `{"error": {...}}` line precedes a close.';

export function modelSchemas(name: string, ctx: DocContext): ModelPart {
  if (name.endsWith('Body')) {
    const part = name as BodyPart;
    if (part === 'SignUpBody') {
      const example = { type: 'signUp', table: firstAuth(ctx), email: 'ann@example.com', password: 'correct horse battery' };
      return { schema: perTableBody(ctx.authTables, part), example };
    }
    const among = READ_BODIES.has(name) ? ctx.collections : part === 'CustomBody' ? ctx.customTables : ctx.tables;
    return { schema: perTableBody(among, part), example: exampleBody(ctx, part, among) };
  }
  if (name.startsWith('SseOf') || name.startsWith('NdjsonOf')) {
    const sse = name.startsWith('SseOf');
    const d = streamData(name.slice(sse ? 5 : 8), ctx);
    if (d) {
      const line = JSON.stringify({ data: d.example });
      return sse
        ? { schema: { type: 'string', description: SSE }, example: `id: 1\ndata: ${line}\n\n` }
        : // One line's document; the framing (a newline after each) is in the description.
          { schema: { description: NDJSON, oneOf: [envelope(d.schema), schemaRef('Error')] }, example: { data: d.example } };
    }
  }
  switch (name) {
    case 'AuthSession':
      return { schema: schemaRef('AuthSession'), example: sessionExample(ctx) };
    case 'AuthTableName':
      return { schema: authTableName(ctx), example: firstAuth(ctx) };
    case 'RateLimitAuthTable':
      return { schema: rateLimitTable(ctx) };
    case 'Email':
      return { schema: email };
    case 'AnyPassword':
      return { schema: anyPassword };
    case 'ConfirmRequest':
      return { schema: confirmBody };
    case 'PhotoUpload':
      return {
        schema: binary,
        content: {
          'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: binary } } },
          ...Object.fromEntries(photoTypes(ctx).map((t) => [t, { schema: binary }])),
        },
      };
    case 'PhotoBytes':
      return { schema: binary, content: Object.fromEntries(photoTypes(ctx).map((t) => [t, { schema: binary }])) };
    case 'PhotoId':
      return { schema: { type: 'string', pattern: `^ph_${ID_REMAINDER}$`, example: exampleId('ph') } };
    case 'ThumbSize':
      return { schema: { type: 'string', pattern: '^[1-9][0-9]{0,4}x[1-9][0-9]{0,4}$', description: 'WxH, e.g. 200x200' } };
    case 'Row':
      return { schema: rows(ctx.collections), example: sampleRow(ctx) };
    case 'Page':
    case 'Count':
      return streamData(name, ctx)!;
    case 'TableRow':
      return { schema: rows(ctx.tables), example: sampleRow(ctx) };
    case 'TableRows':
      return { schema: { type: 'array', items: rows(ctx.tables) }, example: [sampleRow(ctx)] };
    case 'CustomResult':
      // An empty schema admits every JSON value, null included; `nullable` without a type is invalid in 3.0.
      return { schema: { description: "the handler's answer: any JSON value, null included" }, example: sampleRow(ctx) };
    case 'CustomName': {
      const names = [...new Set(ctx.customTables.flatMap((c) => Object.keys(c.rules?.custom ?? {})))];
      const byTable = ctx.customTables.map((c) => `\`${c.name}\`: ${Object.keys(c.rules?.custom ?? {}).join(', ')}`).join('; ');
      const description = `A custom operation registered in the table's rules${byTable ? ` (${byTable})` : ''}. Any other name is 404 (docs/reference/data.md).`;
      return { schema: names.length ? { type: 'string', enum: names, description } : { type: 'string', description } };
    }
  }
  throw new Error(`No model schema named "${name}"`);
}

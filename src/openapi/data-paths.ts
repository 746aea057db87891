/**
 * The /db routes (seed "Data operations", SPEC §4) and the three stream routes (SPEC §7). Read
 * routes take the JSON body in the `body` query parameter; every body names its collection in
 * `table`, so each route offers `oneOf` the collections' body schemas.
 */
import type { CollectionModel } from '../core/model.js';
import { bodySchemas } from './bodies.js';
import { exampleRow } from './collection-schemas.js';
import { errors, RATE_LIMIT_HEADERS } from './components.js';
import { orNull } from './values.js';
import {
  anyOf,
  envelope,
  exampleCollection,
  jsonOk,
  partName,
  partRef,
  perTableBody,
  schemaRef,
  withHeaders,
  type BodyPart,
  type DocContext,
  type JsonSchema,
  type OperationObject,
  type RouteDoc,
} from './context.js';

const READ_ERRORS = errors('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'RateLimited', 'Internal');
const WRITE_ERRORS = errors('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'Conflict', 'PayloadTooLarge', 'RateLimited', 'Internal', 'Unavailable');

const rows = (cs: readonly CollectionModel[]): JsonSchema => anyOf(cs.map((c) => partRef(c, 'Row')));
/** A row or null; `$ref` siblings are ignored in OpenAPI 3.0, so the refs sit inside `anyOf`. */
const nullableRows = (cs: readonly CollectionModel[]): JsonSchema => orNull({ anyOf: cs.length ? cs.map((c) => partRef(c, 'Row')) : [{ type: 'object' }] });
const page = (cs: readonly CollectionModel[]): JsonSchema => ({
  type: 'object',
  required: ['items', 'total'],
  properties: { items: { type: 'array', items: rows(cs) }, total: { type: 'integer', minimum: 0, description: 'every matching row, ignoring limit and offset' } },
  additionalProperties: false,
});

function exampleBody(ctx: DocContext, part: BodyPart, among: readonly CollectionModel[]): unknown {
  const preferred = exampleCollection(ctx);
  const c = preferred && among.includes(preferred) ? preferred : among[0];
  return c ? bodySchemas(c)[partName(c, part)]?.example : undefined;
}

const sampleRow = (ctx: DocContext): unknown => {
  const c = exampleCollection(ctx);
  return c ? exampleRow(c) : {};
};

/** GET routes carry their JSON in `?body=` (SPEC §2; up to 64 KiB, §13.18). */
function bodyParam(ctx: DocContext, part: BodyPart): JsonSchema {
  return {
    name: 'body',
    in: 'query',
    required: true,
    description: 'The request body as URL-encoded JSON. A JSON request body is accepted too (for bodies over 64 KiB).',
    content: { 'application/json': { schema: perTableBody(ctx.collections, part), example: exampleBody(ctx, part, ctx.collections) } },
  };
}

function jsonBody(ctx: DocContext, part: BodyPart, among: readonly CollectionModel[]): JsonSchema {
  return { required: true, content: { 'application/json': { schema: perTableBody(among, part), example: exampleBody(ctx, part, among) } } };
}

const ok = (description: string, data: JsonSchema, example: unknown): JsonSchema => withHeaders(jsonOk(description, data, example), RATE_LIMIT_HEADERS);
const noContent = (description: string): JsonSchema => withHeaders({ description }, RATE_LIMIT_HEADERS);

function read(part: BodyPart, answer: (ctx: DocContext) => JsonSchema, description: string) {
  return (ctx: DocContext): OperationObject => ({
    parameters: [bodyParam(ctx, part)],
    responses: { '200': answer(ctx), ...READ_ERRORS },
    description,
  });
}

function write(part: BodyPart, status: '200' | '204', answer: (ctx: DocContext) => JsonSchema, description: string) {
  return (ctx: DocContext): OperationObject => ({
    requestBody: jsonBody(ctx, part, ctx.tables),
    responses: { [status]: answer(ctx), ...WRITE_ERRORS },
    description,
  });
}

/** The two framings of SPEC §7 for one stream route. */
function streamOk(description: string, data: JsonSchema, exampleData: unknown): JsonSchema {
  const line = JSON.stringify({ data: exampleData });
  return withHeaders(
    {
      description,
      headers: {
        'Cache-Control': { schema: { type: 'string', enum: ['no-cache'] } },
        'X-Accel-Buffering': { schema: { type: 'string', enum: ['no'] } },
      },
      content: {
        'text/event-stream': {
          schema: {
            type: 'string',
            description:
              'The default framing: `id: <n>\\ndata: <json>\\n\\n` per payload (the envelope of the non-streaming route), a `: ping` comment as heartbeat (every 15 s by default), and one `event: error` payload `{"error": {...}}` before the server closes.',
          },
          example: `id: 1\ndata: ${line}\n\n`,
        },
        'application/x-ndjson': {
          schema: {
            description: 'With `Accept: application/x-ndjson`: one JSON document per line; an empty line is the heartbeat; an `{"error": {...}}` line precedes a close.',
            oneOf: [envelope(data), schemaRef('Error')],
          },
          // One line's document; the framing (a newline after each) is in the description.
          example: { data: exampleData },
        },
      },
    },
    RATE_LIMIT_HEADERS,
  );
}

const STREAM_NOTE =
  'One payload on connect, then one after each committed change that alters the result; identical results are not pushed twice. Rules, rate limit and the first query run before the response starts, so a denial is an ordinary JSON error.';

export const dataRoutes: readonly RouteDoc[] = [
  {
    method: 'GET',
    path: '/db',
    group: 'data',
    operationId: 'get',
    summary: 'Get the first row matching `where`',
    describe: read('GetBody', (ctx) => ok('The first matching row in the default order', rows(ctx.collections), sampleRow(ctx)), 'No match is 404 (SPEC §4). Rule: canView; policy: get.'),
  },
  {
    method: 'GET',
    path: '/db/list',
    group: 'data',
    operationId: 'list',
    summary: 'List rows with `items` and `total`',
    describe: read('ListBody', (ctx) => ok('One page of rows and the total', page(ctx.collections), { items: [sampleRow(ctx)], total: 1 }), 'Rule: canList; policy: list.'),
  },
  {
    method: 'GET',
    path: '/db/count',
    group: 'data',
    operationId: 'count',
    summary: 'Count matching rows',
    describe: read('CountBody', () => ok('The number of matching rows', { type: 'integer', minimum: 0 }, 3), 'Counts are not row-filtered (SPEC §13.19). Rule: canCount; policy: count.'),
  },
  {
    method: 'POST',
    path: '/db',
    group: 'data',
    operationId: 'create',
    summary: 'Create a row',
    describe: write(
      'CreateBody',
      '200',
      (ctx) => ok('The stored row', rows(ctx.tables), sampleRow(ctx)),
      'Unknown keys and a client `id` are 400; server-managed timestamps are ignored. Views: 403. Rule: canCreate.',
    ),
  },
  {
    method: 'POST',
    path: '/db/many',
    group: 'data',
    operationId: 'createMany',
    summary: 'Create rows in one transaction',
    describe: write('CreateManyBody', '200', (ctx) => ok('The stored rows, in input order', { type: 'array', items: rows(ctx.tables) }, [sampleRow(ctx)]), 'All or nothing. Rule: canCreate.'),
  },
  {
    method: 'PATCH',
    path: '/db',
    group: 'data',
    operationId: 'update',
    summary: 'Update the first matching row',
    describe: write(
      'UpdateBody',
      '200',
      (ctx) => ok('The row after the write', rows(ctx.tables), sampleRow(ctx)),
      'No match is 404. Rule: canUpdate (and the row rule canUpdate inside the transaction).',
    ),
  },
  {
    method: 'PATCH',
    path: '/db/many',
    group: 'data',
    operationId: 'updateMany',
    summary: 'Update matching rows',
    describe: write('UpdateManyBody', '200', (ctx) => ok('The updated rows (possibly none)', { type: 'array', items: rows(ctx.tables) }, [sampleRow(ctx)]), 'Rule: canUpdate.'),
  },
  {
    method: 'DELETE',
    path: '/db',
    group: 'data',
    operationId: 'delete',
    summary: 'Delete the first matching row',
    describe: write('DeleteBody', '204', () => noContent('Deleted; no body'), 'No match is 404. Rule: canDelete.'),
  },
  {
    method: 'DELETE',
    path: '/db/many',
    group: 'data',
    operationId: 'deleteMany',
    summary: 'Delete matching rows',
    describe: write('DeleteManyBody', '204', () => noContent('Deleted (even when nothing matched); no body'), 'Rule: canDelete.'),
  },
  ...(['', '/many'] as const).map((suffix): RouteDoc => ({
    method: 'PATCH',
    path: `/db/custom/:name${suffix}`,
    group: 'data',
    operationId: suffix ? 'customMany' : 'custom',
    summary: suffix ? 'Run a custom operation on many rows' : 'Run a custom operation',
    describe: (ctx) => customOperation(ctx),
  })),
  {
    method: 'GET',
    path: '/db/stream',
    group: 'stream',
    operationId: 'streamOne',
    summary: 'Stream the first matching row',
    describe: (ctx) => ({
      parameters: [bodyParam(ctx, 'GetBody')],
      responses: { '200': streamOk('`{"data": row}`, or `{"data": null}` while no row matches', nullableRows(ctx.collections), sampleRow(ctx)), ...READ_ERRORS },
      description: `${STREAM_NOTE} Rule: canView; policy: get.`,
    }),
  },
  {
    method: 'GET',
    path: '/db/stream/list',
    group: 'stream',
    operationId: 'streamList',
    summary: 'Stream a page of rows',
    describe: (ctx) => ({
      parameters: [bodyParam(ctx, 'ListBody')],
      responses: { '200': streamOk('`{"data": {"items", "total"}}` per payload', page(ctx.collections), { items: [sampleRow(ctx)], total: 1 }), ...READ_ERRORS },
      description: `${STREAM_NOTE} Rule: canList; policy: list.`,
    }),
  },
  {
    method: 'GET',
    path: '/db/stream/count',
    group: 'stream',
    operationId: 'streamCount',
    summary: 'Stream a count',
    describe: (ctx) => ({
      parameters: [bodyParam(ctx, 'CountBody')],
      responses: { '200': streamOk('`{"data": n}` per payload', { type: 'integer', minimum: 0 }, 3), ...READ_ERRORS },
      description: `${STREAM_NOTE} Rule: canCount; policy: count.`,
    }),
  },
];

function customOperation(ctx: DocContext): OperationObject {
  const names = [...new Set(ctx.customTables.flatMap((c) => Object.keys(c.rules?.custom ?? {})))];
  const byTable = ctx.customTables.map((c) => `\`${c.name}\`: ${Object.keys(c.rules?.custom ?? {}).join(', ')}`).join('; ');
  return {
    parameters: [
      {
        name: 'name',
        in: 'path',
        required: true,
        description: `A custom operation registered in the table's rules${byTable ? ` (${byTable})` : ''}. Any other name is 404 (SPEC §13.7).`,
        schema: names.length ? { type: 'string', enum: names } : { type: 'string' },
      },
    ],
    requestBody: jsonBody(ctx, 'CustomBody', ctx.customTables),
    responses: {
      '200': ok('Whatever the operation\'s handler answers, as `{"data": ...}`', { description: "the handler's answer: any JSON value, null included" }, sampleRow(ctx)),
      ...WRITE_ERRORS,
      ...errors('NotImplemented'),
    },
    description: 'Views: 403 before the registry. Rule: the named custom rule; policy: custom:<name>.',
  };
}

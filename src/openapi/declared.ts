/**
 * One route declaration (http/declare.ts) → one OpenAPI 3.0.3 operation. The request and
 * response schemas are the declaration's own TypeBox schemas, converted to OpenAPI's JSON Schema
 * dialect, or per-table schemas of the model it names; error answers follow from what the route
 * declares (a body → 400/413, a JSON one → 415, `access` → 401/403, a rate limit → 429 and the
 * RateLimit-* headers, `capped` → RESPONSE_TOO_LARGE in the 400), plus its extra `errors`.
 */
import { Kind } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from '../core/errors.js';
import { isModelSchema, type DeclaredRoute, type ResponseSpec } from '../http/declare.js';
import { ERROR_RESPONSES, errors, RATE_LIMIT_HEADERS, type ErrorResponseName } from './components.js';
import { envelope, withHeaders, type DocContext, type JsonSchema, type OperationObject } from './context.js';
import { modelSchemas, type ModelPart } from './model-schemas.js';
import { toOpenApiSchema } from './schema-convert.js';

/** Capped reads answer this 400 instead of BadRequest: it names RESPONSE_TOO_LARGE (docs/reference/data.md). */
const CAPPED_400: ErrorResponseName = 'BadRequestOrTooLarge';
const BY_STATUS = new Map<number, ErrorResponseName>(
  Object.entries(ERROR_RESPONSES)
    .filter(([name]) => name !== CAPPED_400)
    .map(([name, r]) => [r.status, name as ErrorResponseName]),
);

/** A TypeBox schema or a model schema's name → schema and example. */
function partOf(s: unknown, ctx: DocContext): ModelPart {
  return isModelSchema(s) ? modelSchemas(s.model, ctx) : { schema: toOpenApiSchema(s, (name) => modelSchemas(name, ctx).schema) };
}

function media(p: ModelPart, wrap: boolean, example: unknown): JsonSchema {
  const ex = example ?? p.example;
  const m: JsonSchema = { schema: wrap ? envelope(p.schema) : p.schema };
  if (ex !== undefined) m.example = wrap ? { data: ex } : ex;
  return m;
}

function response(spec: ResponseSpec, ctx: DocContext, example: unknown): JsonSchema {
  if (typeof spec === 'string') return { description: spec };
  if (isModelSchema(spec) || Kind in spec) return { description: 'OK', content: { 'application/json': media(partOf(spec, ctx), true, example) } };
  const content: JsonSchema = {};
  if (spec.data !== undefined) content['application/json'] = media(partOf(spec.data, ctx), true, example);
  if (isModelSchema(spec.content)) Object.assign(content, modelSchemas(spec.content.model, ctx).content);
  else for (const [type, schema] of Object.entries(spec.content ?? {})) content[type] = media(partOf(schema, ctx), false, undefined);
  const out: JsonSchema = { description: spec.description };
  if (spec.headers) out.headers = Object.fromEntries(Object.entries(spec.headers).map(([h, schema]) => [h, { schema: toOpenApiSchema(schema) }]));
  if (Object.keys(content).length) out.content = content;
  return out;
}

/** The error responses a declaration implies, by component name, in status order. */
function impliedErrors(route: DeclaredRoute): ErrorResponseName[] {
  const d = route.declaration;
  const codes = new Set<ErrorCode>(d.errors ?? []);
  const hasBody = d.body !== undefined && d.body !== 'none';
  if (hasBody || d.query || d.params) codes.add('BAD_REQUEST');
  // docs/reference/conventions.md: bounded bodies, and a JSON body declared as anything else is 415. A GET's JSON may
  // come as a request body too (past the 64 KiB of `?body=`), so both apply to GETs.
  if (hasBody) codes.add('PAYLOAD_TOO_LARGE');
  if (hasBody && d.body !== 'raw') codes.add('UNSUPPORTED_MEDIA_TYPE');
  if (d.capped) codes.add('RESPONSE_TOO_LARGE');
  if (d.access !== 'public') codes.add('INVALID_TOKEN');
  if (d.access !== 'public' || d.rule) codes.add('FORBIDDEN');
  if (d.rateLimit) codes.add('RATE_LIMITED');
  codes.add('INTERNAL');
  const names = new Set<ErrorResponseName>();
  for (const status of [...codes].map((c) => ERROR_STATUS[c]).sort((a, b) => a - b)) names.add(status === 400 && codes.has('RESPONSE_TOO_LARGE') ? CAPPED_400 : BY_STATUS.get(status)!);
  return [...names];
}

/** GET routes carry their JSON in `?body=` (docs/reference/conventions.md; up to 64 KiB). */
function bodyParameter(body: ModelPart, example: unknown): JsonSchema {
  return {
    name: 'body',
    in: 'query',
    required: true,
    description: 'The request body as URL-encoded JSON. A JSON request body is accepted too (for bodies over 64 KiB).',
    content: { 'application/json': media(body, false, example) },
  };
}

/**
 * A declaration's example is written once for every project (`"table": "users"`); the project's
 * own tables decide which names are valid. An example naming a table the body's enum does not
 * list names the enum's first instead, so every example validates against its schema (issue #16).
 */
function fitTable(schema: JsonSchema, example: unknown): unknown {
  const allowed = ((schema.properties as Record<string, JsonSchema> | undefined)?.table?.enum ?? undefined) as unknown[] | undefined;
  if (!allowed?.length || !example || typeof example !== 'object' || !('table' in example)) return example;
  const table = (example as { table: unknown }).table;
  return allowed.includes(table) ? example : { ...example, table: allowed[0] };
}

export function describeDeclared(route: DeclaredRoute, ctx: DocContext): OperationObject {
  const d = route.declaration;
  const op: OperationObject = {};
  if (d.description) op.description = d.description;
  if (d.access === 'public') op.security = [];
  else if (d.access !== 'optional') op.security = [{ bearerAuth: [] }];
  const parameters: JsonSchema[] = [];
  for (const [where, schema] of [
    ['path', d.params],
    ['query', d.query],
    ['header', d.headers],
  ] as const) {
    const s = schema ? partOf(schema, ctx).schema : undefined;
    const required = new Set((s?.required as string[] | undefined) ?? []);
    for (const [name, p] of Object.entries((s?.properties ?? {}) as Record<string, JsonSchema>)) {
      const { description, ...rest } = p;
      parameters.push({ name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest });
    }
  }
  if (d.body === 'raw' && d.rawBody) op.requestBody = { required: true, content: modelSchemas(d.rawBody.model, ctx).content };
  if (d.body !== undefined && d.body !== 'none' && d.body !== 'raw') {
    const body = partOf(d.body, ctx);
    const example = fitTable(body.schema, d.examples?.body);
    if (d.method === 'GET') parameters.unshift(bodyParameter(body, example));
    else op.requestBody = { required: true, content: { 'application/json': media(body, false, example) } };
  }
  if (parameters.length) op.parameters = parameters;
  const responses: Record<string, JsonSchema> = {};
  for (const [status, spec] of Object.entries(d.responses)) {
    const r = response(spec, ctx, status === '200' ? d.examples?.data : undefined);
    responses[status] = d.rateLimit ? withHeaders(r, RATE_LIMIT_HEADERS) : r;
  }
  Object.assign(responses, errors(...impliedErrors(route)));
  op.responses = responses;
  return op;
}

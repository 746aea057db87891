/**
 * One route declaration (http/declare.ts) → one OpenAPI 3.0.3 operation. The request and
 * response schemas are the declaration's own TypeBox schemas, converted to OpenAPI's JSON Schema
 * dialect; error answers follow from what the route declares (a body → 400/413, `access` →
 * 401/403, a rate limit → 429 and the RateLimit-* headers), plus its extra `errors`.
 */
import { Kind } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from '../core/errors.js';
import type { DeclaredRoute, ResponseSpec } from '../http/declare.js';
import { isModelSchema } from '../http/declare.js';
import { ERROR_RESPONSES, errors, RATE_LIMIT_HEADERS, type ErrorResponseName } from './components.js';
import { envelope, withHeaders, type DocContext, type JsonSchema, type OperationObject } from './context.js';
import { toOpenApiSchema } from './schema-convert.js';

/** Resolves a `modelSchema(name)` against the project (per-table schemas). */
export type ModelSchemas = (name: string, ctx: DocContext) => JsonSchema;

const BY_STATUS = new Map<number, ErrorResponseName>(Object.entries(ERROR_RESPONSES).map(([name, r]) => [r.status, name as ErrorResponseName]));

function schemaOf(s: unknown, ctx: DocContext, model: ModelSchemas): JsonSchema {
  return isModelSchema(s) ? model(s.model, ctx) : toOpenApiSchema(s);
}

function response(spec: ResponseSpec, ctx: DocContext, model: ModelSchemas, example: unknown): JsonSchema {
  if (typeof spec === 'string') return { description: spec };
  if (isModelSchema(spec) || Kind in spec) {
    const media: JsonSchema = { schema: envelope(schemaOf(spec, ctx, model)) };
    if (example !== undefined) media.example = { data: example };
    return { description: 'OK', content: { 'application/json': media } };
  }
  const r = spec as { description: string; data?: unknown; content?: Record<string, unknown> };
  const content: JsonSchema = {};
  if (r.data !== undefined) content['application/json'] = { schema: envelope(schemaOf(r.data, ctx, model)), ...(example !== undefined ? { example: { data: example } } : {}) };
  for (const [type, schema] of Object.entries(r.content ?? {})) content[type] = { schema: toOpenApiSchema(schema) };
  return Object.keys(content).length ? { description: r.description, content } : { description: r.description };
}

/** The error responses a declaration implies, by component name, in status order. */
export function impliedErrors(route: DeclaredRoute): ErrorResponseName[] {
  const d = route.declaration;
  const codes = new Set<ErrorCode>(d.errors ?? []);
  const hasBody = d.body !== undefined && d.body !== 'none';
  if (hasBody || d.query || d.params) codes.add('BAD_REQUEST');
  if (hasBody) codes.add('PAYLOAD_TOO_LARGE');
  if (d.access !== 'public') codes.add('INVALID_TOKEN');
  if (d.access === 'admin' || d.rule) codes.add('FORBIDDEN');
  if (d.rateLimit) codes.add('RATE_LIMITED');
  codes.add('INTERNAL');
  const names = new Set<ErrorResponseName>();
  for (const status of [...codes].map((c) => ERROR_STATUS[c]).sort((a, b) => a - b)) names.add(BY_STATUS.get(status)!);
  return [...names];
}

export function describeDeclared(route: DeclaredRoute, ctx: DocContext, model: ModelSchemas): OperationObject {
  const d = route.declaration;
  const op: OperationObject = {};
  if (d.description) op.description = d.description;
  if (d.access === 'public') op.security = [];
  else if (d.access !== 'optional') op.security = [{ bearerAuth: [] }];
  const parameters: JsonSchema[] = [];
  for (const [where, schema] of [
    ['path', d.params],
    ['query', d.query],
  ] as const) {
    const s = schema ? toOpenApiSchema(schema) : undefined;
    const required = new Set((s?.required as string[] | undefined) ?? []);
    for (const [name, p] of Object.entries((s?.properties ?? {}) as Record<string, JsonSchema>)) {
      const { description, ...rest } = p;
      parameters.push({ name, in: where, required: where === 'path' || required.has(name), schema: rest, ...(description ? { description } : {}) });
    }
  }
  if (parameters.length) op.parameters = parameters;
  if (d.body !== undefined && d.body !== 'none' && d.body !== 'raw') {
    const media: JsonSchema = { schema: schemaOf(d.body, ctx, model) };
    if (d.examples?.body !== undefined) media.example = d.examples.body;
    op.requestBody = { required: true, content: { 'application/json': media } };
  }
  const responses: Record<string, JsonSchema> = {};
  for (const [status, spec] of Object.entries(d.responses)) {
    const r = response(spec, ctx, model, status === '200' ? d.examples?.data : undefined);
    responses[status] = d.rateLimit ? withHeaders(r, RATE_LIMIT_HEADERS) : r;
  }
  Object.assign(responses, errors(...impliedErrors(route)));
  op.responses = responses;
  return op;
}

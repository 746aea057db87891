/**
 * The OpenAPI 3.0.3 document, generated only from the route declarations and the project model
 * (docs/reference/dashboard.md): each operation from its declaration (openapi/declared.ts),
 * info, servers, the bearer scheme, every route, per table and view the Row, Create, Where,
 * Update and OrderBy schemas, per-table request bodies discriminated by `table`, the error
 * envelope, and examples. The result is plain JSON data.
 *
 * @example
 * const doc = buildOpenApi(compileProject(project), routeTable(), { serverUrl: 'http://localhost:8080' });
 * process.stdout.write(toYaml(doc));
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { ProjectModel } from '../core/model.js';
import { authSchemas } from './auth-schemas.js';
import { bodySchemas } from './bodies.js';
import { collectionSchemas } from './collection-schemas.js';
import { errorResponses, errorSchema, headers, securitySchemes } from './components.js';
import { conditionComponents } from './conditions.js';
import type { DeclaredRoute } from '../http/declare.js';
import { docContext, headerRef, nameEnum, openApiPath, routeKey, type JsonSchema } from './context.js';
import { describeDeclared } from './declared.js';
import { ensureClientError, pruneUnused } from './tidy.js';
import { NULL_SCHEMA } from './values.js';

export { operatorsFor, conditionFamily, OPERATORS } from './columns.js';

export interface OpenApiOptions {
  /** Default `http://localhost:8080` (docs/reference/configuration.md defaults). A relative `/` means "where this document is served". */
  serverUrl?: string;
  /** Default: `<project name> API`. */
  title?: string;
  /** The document's version (default `1.0.0`). */
  version?: string;
}

export type OpenApiDocument = { openapi: '3.0.3'; paths: Record<string, Record<string, JsonSchema>>; components: Record<string, Record<string, JsonSchema>> } & JsonSchema;

/** Written for the API's users: nothing here may point at files they do not have (issue #27 item 7). */
const TAGS: Record<string, string> = {
  data: 'Create, read, update, delete, list and count the rows of tables and views; every body names its table in `table`',
  stream: 'Live queries: the answer of a list, count or get, sent again after every change (server-sent events or NDJSON)',
  auth: 'Accounts: sign-up, sign-in, tokens, email verification and password reset',
  photos: 'Photo upload and serving',
  system: 'Health and this description',
  dashboard: "The admin dashboard's API (an admin token only)",
  email: 'Email sending',
};

/** The dashboard's own HTML pages (`/_`, `/_/…`): part of the server, not of the API it describes. */
export const isDashboardPage = (path: string): boolean => path === '/_' || path.startsWith('/_/');

/**
 * Descriptions are declared beside the code, where they cite the repository's reference page the
 * code follows. The published document drops those citations: "(docs/reference/live.md)" names a
 * file of the repository, not a page the API's readers have at hand.
 */
export function userFacing(text: string): string {
  return text.replace(/\s*\([^()]*(?:\bseed\b|docs\/reference\/)[^()]*\)/g, '').replace(/\s+([.,;:])/g, '$1');
}

function cleanDescriptions(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(cleanDescriptions);
  if (!node || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  for (const [k, v] of Object.entries(o)) {
    if ((k === 'description' || k === 'summary') && typeof v === 'string') o[k] = userFacing(v);
    else cleanDescriptions(v);
  }
}

const DESCRIPTION = `Generated from the project by Tablebase.

Every /db body names its table or view in \`table\`. Filters use the where grammar: \`{column: {op: value}}\` (all must hold), \`{"and": [...]}\`, \`{"or": [...]}\`, \`{"not": {...}}\`; operators per column kind are in the \`Condition.*\` schemas. GET routes take their JSON in the URL-encoded \`body\` query parameter.

Successful answers are \`{"data": ...}\`; deletes answer 204; errors are \`{"error": {"code", "message", "details"?}}\`. A bearer token is optional on /db routes: the project's rules decide.`;

export function buildOpenApi(model: ProjectModel, routes: readonly DeclaredRoute[], options: OpenApiOptions = {}): OpenApiDocument {
  const ctx = docContext(model);
  const schemas: Record<string, JsonSchema> = {
    Error: errorSchema(),
    Null: NULL_SCHEMA,
    TableName: { ...nameEnum(ctx.collections.map((c) => c.name)), description: 'Every declared table and view, closed ones included (docs/reference/dashboard.md)' },
    ...conditionComponents(),
  };
  for (const c of ctx.collections) Object.assign(schemas, collectionSchemas(c), bodySchemas(c));
  Object.assign(schemas, authSchemas(ctx));

  const paths: Record<string, Record<string, JsonSchema>> = {};
  const seen = new Set<string>();
  const operationIds = new Set<string>();
  const groups = new Set<string>();
  for (const route of routes) {
    if (isDashboardPage(route.path)) continue;
    const key = routeKey(route.method, route.path);
    if (seen.has(key)) continue;
    seen.add(key);
    groups.add(route.family);
    const operationId = uniqueId(operationIds, route.declaration.operationId ?? idFrom(route));
    const p = (paths[openApiPath(route.path)] ??= {});
    p[route.method.toLowerCase()] = { tags: [route.family], summary: route.summary, operationId, ...describeDeclared(route, ctx) };
  }

  const document: OpenApiDocument = {
    openapi: '3.0.3',
    info: {
      title: options.title ?? `${model.project.name ?? 'Tablebase'} API`,
      version: options.version ?? '1.0.0',
      description: DESCRIPTION,
      // The API's license is the project's to declare (`openapi.license`); without one, no rights are granted.
      license: model.project.openapi?.license ?? { name: 'Proprietary' },
    },
    servers: [{ url: options.serverUrl ?? 'http://localhost:8080' }],
    // `{}` first: a token is optional unless an operation says otherwise (docs/reference/auth.md, rules see null).
    security: [{}, { bearerAuth: [] }],
    tags: Object.keys(TAGS)
      .filter((t) => groups.has(t))
      .map((name) => ({ name, description: TAGS[name] }))
      .concat([...groups].filter((g) => !TAGS[g]).map((name) => ({ name, description: name }))),
    paths,
    components: { schemas, responses: errorResponses(), headers: headers(), securitySchemes: securitySchemes() },
  };
  ensureClientError(document);
  addRequestIdHeaders(document);
  pruneUnused(document);
  cleanDescriptions(document);
  return document;
}

/** Every response carries X-Request-Id (docs/reference/conventions.md). */
function addRequestIdHeaders(doc: OpenApiDocument): void {
  const add = (response: JsonSchema) => {
    if ('$ref' in response) return;
    response.headers = { 'X-Request-Id': headerRef('X-Request-Id'), ...((response.headers as object | undefined) ?? {}) };
  };
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) for (const r of Object.values((op.responses ?? {}) as Record<string, JsonSchema>)) add(r);
  }
  for (const r of Object.values(doc.components.responses!)) add(r);
}

function idFrom(route: DeclaredRoute): string {
  const words = `${route.method.toLowerCase()} ${route.path}`.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
}

function uniqueId(used: Set<string>, id: string): string {
  let out = id;
  for (let i = 2; used.has(out); i++) out = `${id}${i}`;
  used.add(out);
  return out;
}

/** Routes the document does not list (a test keeps this empty for the served route table). */
export function undocumentedRoutes<R extends { method: string; path: string }>(doc: { paths?: Record<string, Record<string, unknown>> }, routes: readonly R[]): R[] {
  return routes.filter((r) => !isDashboardPage(r.path) && !doc.paths?.[openApiPath(r.path)]?.[r.method.toLowerCase()]);
}

/** The same document as YAML. Shared subtrees are written out, never as anchors and aliases. */
export function toYaml(doc: object): string {
  // yaml loads when the YAML document is first asked for, not at start (issue #25).
  const { stringify } = createRequire(import.meta.url)('yaml') as typeof Yaml;
  return stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 });
}

/**
 * Route declarations: a route states everything about itself in one place, and the lifecycle
 * (http/lifecycle.ts, docs/lifecycle.md), request validation and the OpenAPI document are all
 * generated from that one value, so they cannot disagree.
 *
 * ## Declaring a route family
 * One file per family under `src/http/routes/` (`email.ts`, `system.ts`, later `push.ts`, …)
 * exports an array of `defineRoute(...)` values; `routeTable()` in `src/http/routes.ts` (THE
 * route table) spreads that array in (`...pushRoutes,`). Nothing else registers a route. A
 * family's business logic stays in its feature folder as a service that takes and returns values
 * (no node:http); the route only adapts. The service a handler calls is a field of `Services`
 * (src/http/services.ts), filled in by the composition root with one line.
 *
 * ```ts
 * // src/http/routes/push.ts
 * import { Type } from '@sinclair/typebox';
 * import { defineRoute, noContent } from '../declare.js';
 *
 * const Device = Type.Object({ token: Type.String({ minLength: 1, maxLength: 4096 }), platform: Type.Union([Type.Literal('apns'), Type.Literal('webpush')]) }, { additionalProperties: false });
 *
 * export const pushRoutes = [
 *   defineRoute({
 *     method: 'POST', path: '/push/devices', family: 'push', summary: 'Register a device',
 *     access: 'bearer',                                   // 401 without a token
 *     rateLimit: { table: '_push_devices', op: 'create' }, // step 1: fixed key
 *     body: Device,                                       // validated → 400 with details paths
 *     responses: { 200: Type.Object({ id: Type.String() }) },
 *     errors: ['NOT_FOUND'],                              // extra error answers for the document
 *     handler: async ({ body, jwt }, s) => s.push.register(jwt, body), // body is typed from Device; jwt is never null on a bearer route
 *   }),
 * ];
 * ```
 *
 * ## What a handler receives
 * `handler(input, services)`: `input` holds the validated, typed `body` / `query` / `params`
 * (`Static<typeof Schema>`), the verified token `jwt` (null for `public`, or `optional` without
 * one), the client `ip` (docs/reference/rate-limits.md), the `requestId`, the `method`, the request `headers`
 * (read-only) and, for `body: 'raw'` routes, the unread body `source` (core/sink.ts
 * `RequestStream`). `services` is the narrow `Services` interface (http/services.ts): the
 * Runtime (`s.rt`: model, driver, writer, tokens, logger), auth, email, photos, live engine…
 * never the whole app, never the node:http objects. Handlers stay a few lines: parse nothing,
 * check nothing the schema checked, call the service, return its value.
 *
 * ## What a handler returns
 * - any value → 200 `{"data": value}` (docs/reference/conventions.md);
 * - `noContent()` → 204; `empty()` → 200 with an empty body (the auth routes' "200, empty body");
 * - `redirect(url)` → 302 with Location;
 * - `raw(status, headers, body)` → a non-JSON answer (Prometheus text, YAML);
 * - `stream((sink) => …)` → the handler writes to a `Sink` (core/sink.ts) that http/ implements:
 *   live streams, photo bytes, static files.
 *
 * ## Who may call: `access`
 * - `public`: no token is read at all (health, the OpenAPI document);
 * - `optional`: a sent token is verified (401 INVALID_TOKEN when bad), the handler's rules decide
 *   (/db, /img: the table's rules see `null` without a token, docs/reference/rules-and-hooks.md, docs/reference/auth.md);
 * - `bearer`: a valid token is required (401 UNAUTHENTICATED without one);
 * - `admin`: a valid admin token (401 without a token, 403 for a non-admin; docs/reference/dashboard.md).
 * An optional `rule(jwt, services, early)` adds a project rule (403 when it answers anything but
 * true), e.g. `email.canSend`, `auth.canSignUp`; it runs after the token and before the body's
 * shape is checked (`early.body` is the parsed body when the rate-limit key needed it).
 *
 * ## Rate limit: `rateLimit`
 * Step 1 (docs/reference/rate-limits.md) keys by client IP × table × operation. Either a fixed key
 * `{ table: '_push_devices', op: 'create' }`, or a function of the parsed JSON body (and the
 * path params) when the table is named in the body, as on the auth routes:
 * `rateLimit: (early, s) => ({ table: authTableOf(s.rt.model, early.body?.table).name, op: 'signIn' })`. A function
 * may throw (404 for an unknown table) or answer null (unlimited). Omit it for unlimited routes.
 * 429 always comes before the token, the rules and body-shape errors (docs/reference/rules-and-hooks.md).
 *
 * ## Schemas: `body`, `query`, `params`, `responses`
 * TypeBox schemas (JSON Schema plus a static TypeScript type, compiled once to a fast validator).
 * A failed check is 400 BAD_REQUEST with `details: [{path, message}]`, paths as JSON pointers
 * into the body (docs/reference/conventions.md). GET routes take their JSON body in `?body=` (docs/reference/conventions.md).
 * `body: 'none'` (nothing is read) and `body: 'raw'` (the handler reads `source`, e.g. a
 * multipart upload) are explicit choices; `body: modelSchema('CreateBody')` names a per-table
 * schema the project model generates (validated by the pipeline's plan stage, docs/reference/data.md); inside a
 * TypeBox schema, `{ 'x-tablebase-model': 'AuthTableName' }` documents one node from the model
 * (openapi/model-schemas.ts) while TypeBox still validates it. `headers` documents request
 * headers a route reads; `rawBody` documents a raw body's media types.
 * `responses` maps a status to a TypeBox schema (the `data` of a 200), a string (a body-less
 * answer: 204, 302, an empty 200) or `{ description, data?, content?, headers? }` for other
 * media types and response headers.
 * Error answers are derived (400/413 when there is a body, 415 when it is JSON, 401/403 from
 * `access`, 429 with a rate limit, 400 RESPONSE_TOO_LARGE when `capped`, 500) plus the codes
 * listed in `errors`.
 *
 * `defineRoute` refuses (throws at start) a route without responses, a POST/PATCH without a
 * `body` declaration, or a `:param` path without a `params` schema naming it: every route is
 * validated and documented, or it does not exist.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../core/errors.js';
import type { RequestHeaders, RequestStream, Sink } from '../core/sink.js';
import type { Jwt } from '../define/types.js';
import type { Access, RateLimitKey } from '../pipeline/index.js';
import type { Services } from './services.js';
import { compileValidator, type Validator } from './validate.js';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
export type Family = 'data' | 'stream' | 'auth' | 'photos' | 'system' | 'dashboard' | 'email' | 'push';
export type { Access, RateLimitKey };

/** A per-table schema generated from the project model (openapi/ resolves the name). */
export interface ModelSchema {
  readonly model: string;
}
export const modelSchema = (model: string): ModelSchema => Object.freeze({ model });
const isModelSchema = (s: unknown): s is ModelSchema => typeof s === 'object' && s !== null && typeof (s as ModelSchema).model === 'string' && !(Symbol.for('TypeBox.Kind') in s);

export type BodySpec = TSchema | ModelSchema | 'none' | 'raw';

/** A TypeBox schema → the `data` of a 200; a string → a body-less answer; else other media types. */
export type ResponseSpec =
  | TSchema
  | ModelSchema
  | string
  | {
      readonly description: string;
      readonly data?: TSchema | ModelSchema;
      /** Media type → schema; or a model schema naming the whole map (photo types are the project's). */
      readonly content?: Readonly<Record<string, TSchema | ModelSchema>> | ModelSchema;
      readonly headers?: Readonly<Record<string, TSchema>>;
    };

type In<S> = S extends TSchema ? Static<S> : Readonly<Record<string, string>>;
type BodyOf<B> = B extends TSchema ? Static<B> : B extends ModelSchema ? Record<string, unknown> : undefined;

/** The token a handler sees: never null where `access` requires one (the lifecycle refused the request otherwise). */
export type JwtFor<A extends Access> = A extends 'bearer' | 'admin' ? Jwt : Jwt | null;
/** The unread body: present exactly on `body: 'raw'` routes. */
export type SourceFor<B> = B extends 'raw' ? RequestStream : undefined;

export interface RouteInput<B, Q, P, J extends Jwt | null = Jwt | null, S extends RequestStream | undefined = RequestStream | undefined> {
  readonly body: B;
  readonly query: Q;
  readonly params: P;
  /** The verified token; null on `public` routes and on `optional` ones without a token. */
  readonly jwt: J;
  readonly ip: string;
  readonly requestId: string;
  readonly method: string;
  readonly headers: RequestHeaders;
  /** The unread body, only on `body: 'raw'` routes (a multipart upload, raw image bytes). */
  readonly source: S;
}

/** What step 1's key function and the rule see: the parsed, not yet validated JSON body. */
export interface EarlyRequest {
  readonly body: Record<string, unknown> | undefined;
  readonly params: Readonly<Record<string, string>>;
  /** The query string's parameters (first value of each), e.g. `table` on GET /auth/oauth/{provider}/start. */
  readonly query: Readonly<Record<string, string>>;
}

export interface RouteDeclaration<B extends BodySpec = BodySpec, Q extends TSchema | undefined = TSchema | undefined, P extends TSchema | undefined = TSchema | undefined, A extends Access = Access> {
  readonly method: Method;
  /** With `:param` segments; the document spells them `{param}`. */
  readonly path: string;
  readonly family: Family;
  readonly summary: string;
  readonly description?: string;
  readonly operationId?: string;
  readonly access: A;
  readonly rule?: (jwt: JwtFor<A>, s: Services, early: EarlyRequest) => boolean | Promise<boolean>;
  readonly rateLimit?: RateLimitKey | ((early: EarlyRequest, s: Services) => RateLimitKey | null);
  readonly body?: B;
  /** For `body: 'raw'`: the media types accepted, for the document. */
  readonly rawBody?: ModelSchema;
  readonly query?: Q;
  readonly params?: P;
  /** Request headers the route reads, for the document (not validated). */
  readonly headers?: TSchema;
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  /**
   * The 200's data is a read bounded by `maxResponseBytes` (docs/reference/data.md): past it the answer is 400
   * RESPONSE_TOO_LARGE instead. `'list'` refuses on a cheap lower bound before serializing;
   * `'one'` checks the serialized row. Documented as RESPONSE_TOO_LARGE in the 400 answer.
   */
  readonly capped?: 'list' | 'one';
  /** Error codes beyond the derived ones (e.g. NOT_FOUND, CONFLICT, UNAVAILABLE). */
  readonly errors?: readonly ErrorCode[];
  /** Examples for the document; checked against the schemas by a test. */
  readonly examples?: { readonly body?: unknown; readonly data?: unknown };
  /**
   * Whether the route may write (default: every method but GET). With `serve --workers` on
   * SQLite, such requests run in the one process that owns the writer (docs/reference/scaling.md).
   */
  readonly writes?: boolean;
  /**
   * The answer reads figures of the whole server (metrics, request log, history, cron): with
   * workers it runs in the primary, after every worker handed over what it recorded.
   */
  readonly serverWide?: boolean;
  /** Headers every answer of this route may carry, e.g. RateLimit-* (documented). */
  readonly handler: (input: RouteInput<BodyOf<B>, In<Q>, In<P>, JwtFor<A>, SourceFor<B>>, s: Services) => unknown;
}

/** A declaration plus its compiled validators: what the router holds. */
export interface DeclaredRoute {
  readonly method: Method;
  readonly path: string;
  readonly family: Family;
  readonly summary: string;
  /** `GET /db/list`: how metrics, logs and the dashboard name the route (built once, not per request). */
  readonly label: string;
  /** May write (declaration `writes`, default: not a GET). */
  readonly writes: boolean;
  /** Reads server-wide figures (declaration `serverWide`). */
  readonly serverWide: boolean;
  readonly declaration: RouteDeclaration;
  readonly validate: { readonly body?: Validator; readonly query?: Validator; readonly params?: Validator };
}

/** `:name`, or `:name*` (a tail wildcard, the last segment only). */
const PARAM = /:([A-Za-z0-9_]+)\*?/g;

/** Checks and compiles one declaration; throws (at start, never per request) when a schema is missing. */
export function defineRoute<B extends BodySpec = 'none', Q extends TSchema | undefined = undefined, P extends TSchema | undefined = undefined, A extends Access = Access>(
  d: RouteDeclaration<B, Q, P, A>,
): DeclaredRoute {
  const where = `${d.method} ${d.path}`;
  if (!d.responses || Object.keys(d.responses).length === 0) throw new Error(`${where}: declare its responses (a schema per status)`);
  if ((d.method === 'POST' || d.method === 'PATCH') && d.body === undefined) throw new Error(`${where}: declare its body (a schema, modelSchema(...), 'raw' or 'none')`);
  const names = [...d.path.matchAll(PARAM)].map((m) => m[1]!);
  if (names.length > 0) {
    const props = (d.params as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
    const missing = names.filter((n) => !(n in props));
    if (missing.length) throw new Error(`${where}: declare a params schema naming ${missing.map((n) => `:${n}`).join(', ')}`);
  }
  const body = d.body;
  const validate = {
    body: body !== undefined && body !== 'none' && body !== 'raw' && !isModelSchema(body) ? compileValidator(body, '') : undefined,
    query: d.query ? compileValidator(d.query, 'query:') : undefined,
    params: d.params ? compileValidator(d.params, 'path:') : undefined,
  };
  return Object.freeze({
    method: d.method,
    path: d.path,
    family: d.family,
    summary: d.summary,
    label: `${d.method} ${d.path}`,
    writes: d.writes ?? d.method !== 'GET',
    serverWide: d.serverWide ?? false,
    declaration: d as unknown as RouteDeclaration,
    validate: Object.freeze(validate),
  });
}

export { isModelSchema };

// ---- Replies other than `{"data": value}` ----

const REPLY = Symbol('tablebase.reply');

export type Reply =
  | { readonly [REPLY]: 'noContent' }
  | { readonly [REPLY]: 'empty' }
  | { readonly [REPLY]: 'redirect'; readonly location: string }
  | { readonly [REPLY]: 'raw'; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: string | Buffer }
  | { readonly [REPLY]: 'stream'; readonly start: (sink: Sink) => void | Promise<void> };

/** 204 No Content. */
export const noContent = (): Reply => ({ [REPLY]: 'noContent' });
/** 200 with an empty body. */
export const empty = (): Reply => ({ [REPLY]: 'empty' });
/** 302 Found with Location. */
export const redirect = (location: string): Reply => ({ [REPLY]: 'redirect', location });
/** A non-JSON answer written as is. */
export const raw = (status: number, headers: Record<string, string>, body: string | Buffer): Reply => ({ [REPLY]: 'raw', status, headers, body });
/** The handler writes the answer itself, to a sink. */
export const stream = (start: (sink: Sink) => void | Promise<void>): Reply => ({ [REPLY]: 'stream', start });

export function replyKind(value: unknown): Reply[typeof REPLY] | undefined {
  return typeof value === 'object' && value !== null && REPLY in value ? (value as Reply)[REPLY] : undefined;
}

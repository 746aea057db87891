/**
 * The admin dashboard's API under /dashboard/ and its page under /_ (SPEC §11, §11a). Every
 * /dashboard/ route: admin token only, 401 without a token, 403 for a non-admin.
 */
import { errors } from './components.js';
import { jsonOk, schemaRef, type JsonSchema, type OperationObject, type RouteDoc } from './context.js';

const str = { type: 'string' };
const int = { type: 'integer', minimum: 0 };
const num = { type: 'number', minimum: 0 };
const time = { type: 'string', format: 'date-time' };
const nullable = (s: JsonSchema): JsonSchema => ({ ...s, nullable: true });
const obj = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({ type: 'object', ...(required.length ? { required } : {}), properties });
const arr = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
const row = { type: 'object', additionalProperties: true, description: 'A row in the JSON form of its table (SPEC §3)' };
const userRef = obj({ table: str, id: str });

export function dashboardSchemas(): Record<string, JsonSchema> {
  return {
    'Dashboard.Column': obj({
      name: str,
      kind: { type: 'string', enum: ['id', 'text', 'email', 'integer', 'real', 'boolean', 'timestamp', 'list', 'json', 'createdAt', 'updatedAt', 'updatedWhen', 'password', 'isVerified', 'photo'] },
      nullable: { type: 'boolean' },
      default: { nullable: true, description: 'The JSON default, when hasDefault' },
      hasDefault: { type: 'boolean' },
      required: { type: 'boolean' },
      managed: { type: 'boolean' },
      unique: { type: 'boolean' },
      references: nullable(str),
      of: nullable(str),
      watches: nullable(str),
      sortable: { type: 'boolean' },
    }),
    'Dashboard.Collection': obj({
      name: str,
      kind: { type: 'string', enum: ['table', 'view'] },
      internal: { type: 'boolean' },
      auth: nullable(obj({ admin: { type: 'boolean' } })),
      prefix: nullable(str),
      columns: arr(schemaRef('Dashboard.Column')),
      indexes: arr(obj({ columns: arr(str), unique: { type: 'boolean' } })),
      reads: arr(str),
    }),
    'Dashboard.CronRun': obj({
      job: str,
      trigger: { type: 'string', enum: ['schedule', 'manual'] },
      startedAt: time,
      finishedAt: nullable(time),
      status: { type: 'string', enum: ['running', 'ok', 'error'] },
      error: nullable(str),
      durationMs: nullable(num),
    }),
  };
}

const admin = (description: string, extra: OperationObject): OperationObject => ({
  security: [{ bearerAuth: [] }],
  description: `${description} Admin token only: 401 without a token, 403 for a non-admin.`,
  ...extra,
  responses: { ...(extra.responses as object), ...errors('Unauthorized', 'Forbidden', 'Internal') },
});

const queryBody = (schema: JsonSchema, example: unknown, required = false): JsonSchema => ({
  name: 'body',
  in: 'query',
  required,
  description: 'URL-encoded JSON (a JSON request body is accepted too)',
  content: { 'application/json': { schema, example } },
});

const jsonBody = (schema: JsonSchema, example: unknown): JsonSchema => ({ required: true, content: { 'application/json': { schema, example } } });
const noContent = { '204': { description: 'Done' } };
const pathParam = (name: string) => ({ name, in: 'path', required: true, schema: str });

const doc = (method: RouteDoc['method'], path: string, operationId: string, summary: string, describe: () => OperationObject): RouteDoc => ({
  method,
  path,
  group: 'dashboard',
  operationId,
  summary,
  describe,
});

const listBody = obj(
  {
    table: str,
    where: { type: 'object' },
    limit: { type: 'integer', minimum: 0, maximum: 1000 },
    offset: int,
    order_by: arr(obj({ column: str, direction: { type: 'string', enum: ['asc', 'desc'] } }, ['column'])),
  },
  ['table'],
);

const page = (description: string): OperationObject => ({
  security: [],
  description: `${description} Served with a strict Content-Security-Policy, X-Frame-Options: DENY and frame-ancestors 'none'.`,
  responses: { '200': { description: 'The dashboard page or asset', content: { 'text/html': { schema: str } } }, ...errors('NotFound') },
});

export const dashboardRouteDocs: readonly RouteDoc[] = [
  doc('GET', '/dashboard/history', 'dashboardHistory', 'Per-minute metrics for the last hour', () =>
    admin('Oldest first; the current minute last, as it stands.', {
      responses: { '200': jsonOk('Samples', arr(obj({ at: int, requests: int, clientErrors: int, serverErrors: int, p95Ms: num, streams: int, writeQueue: int }))) },
    }),
  ),
  doc('GET', '/dashboard/schema', 'dashboardSchema', 'Every table and view with its columns', () =>
    admin('Tables (internal ones included) then views; password columns are never listed.', { responses: { '200': jsonOk('The schema', arr(schemaRef('Dashboard.Collection'))) } }),
  ),
  doc('GET', '/dashboard/rows', 'dashboardRows', 'List rows of any table or view', () =>
    admin('The body of /db/list (the where grammar, paging, order_by and their bounds); table rules and row rules do not apply.', {
      parameters: [queryBody(listBody, { table: 'tasks', where: { isComplete: { eq: false } }, limit: 50, offset: 0, order_by: [{ column: 'title' }] }, true)],
      responses: { '200': jsonOk('A page', obj({ items: arr(row), total: int })), ...errors('BadRequest', 'NotFound') },
    }),
  ),
  doc('POST', '/dashboard/rows', 'dashboardCreateRow', 'Create a row', () =>
    admin("Validated like /db create; the table's hooks fire with the admin's token. Views: 403.", {
      requestBody: jsonBody(obj({ table: str, object: { type: 'object' } }), { table: 'tasks', object: { title: 'Write the report' } }),
      responses: { '200': jsonOk('The stored row', row), ...errors('BadRequest', 'NotFound', 'Conflict', 'Unavailable') },
    }),
  ),
  doc('PATCH', '/dashboard/rows', 'dashboardUpdateRow', 'Update a row by id', () =>
    admin('`values` maps columns to new values (validation errors point at `/values/<column>`); hooks fire. Views: 403.', {
      requestBody: jsonBody(obj({ table: str, id: str, values: { type: 'object' } }), { table: 'tasks', id: 'tk_01jf8x7k2m3n4p5q6r7s8t9v0w', values: { isComplete: true } }),
      responses: { '200': jsonOk('The row after the write', row), ...errors('BadRequest', 'NotFound', 'Conflict', 'Unavailable') },
    }),
  ),
  doc('DELETE', '/dashboard/rows', 'dashboardDeleteRow', 'Delete a row by id', () =>
    admin('Hooks fire. Views: 403.', {
      requestBody: jsonBody(obj({ table: str, id: str }), { table: 'tasks', id: 'tk_01jf8x7k2m3n4p5q6r7s8t9v0w' }),
      responses: { ...noContent, ...errors('BadRequest', 'NotFound', 'Unavailable') },
    }),
  ),
  doc('POST', '/dashboard/users/verify', 'dashboardVerifyUser', 'Mark a user verified', () =>
    admin('', { requestBody: jsonBody(userRef, { table: 'users', id: 'us_01jf8x7k2m3n4p5q6r7s8t9v0w' }), responses: { '200': jsonOk('The user row', row), ...errors('BadRequest', 'NotFound') } }),
  ),
  doc('POST', '/dashboard/users/reset', 'dashboardResetUser', 'Send a password-reset email', () =>
    admin("Sends the reset template with a fresh token; the project's canPasswordReset is not asked.", {
      requestBody: jsonBody(userRef, { table: 'users', id: 'us_01jf8x7k2m3n4p5q6r7s8t9v0w' }),
      responses: { ...noContent, ...errors('BadRequest', 'NotFound', 'Unavailable') },
    }),
  ),
  doc('POST', '/dashboard/users/revoke', 'dashboardRevokeUser', 'Revoke every session of a user', () =>
    admin('Refresh tokens and the access tokens of those sessions stop working.', {
      requestBody: jsonBody(userRef, { table: 'users', id: 'us_01jf8x7k2m3n4p5q6r7s8t9v0w' }),
      responses: { '200': jsonOk('Sessions revoked', obj({ revoked: int })), ...errors('BadRequest', 'NotFound') },
    }),
  ),
  doc('GET', '/dashboard/photos', 'dashboardPhotos', 'List photos, newest first', () =>
    admin('', {
      parameters: [queryBody(obj({ limit: { type: 'integer', minimum: 1, maximum: 200 }, offset: int }, []), { limit: 48, offset: 0 })],
      responses: { '200': jsonOk('A page', obj({ items: arr(schemaRef('Photo')), total: int })), ...errors('BadRequest') },
    }),
  ),
  doc('DELETE', '/dashboard/photos/:id', 'dashboardDeletePhoto', 'Delete a photo', () =>
    admin("The project's canDelete is not asked.", { parameters: [pathParam('id')], responses: { ...noContent, ...errors('NotFound') } }),
  ),
  doc('GET', '/dashboard/cron', 'dashboardCron', 'Cron jobs with their recent runs', () =>
    admin('', {
      responses: {
        '200': jsonOk(
          'Jobs',
          arr(
            obj({
              name: str,
              schedule: str,
              lastRunAt: nullable(time),
              lastStatus: nullable(str),
              lastError: nullable(str),
              nextRunAt: nullable(time),
              running: { type: 'boolean' },
              runs: arr(schemaRef('Dashboard.CronRun')),
            }),
          ),
        ),
      },
    }),
  ),
  doc('POST', '/dashboard/cron/:name/run', 'dashboardRunCron', 'Run a cron job now', () =>
    admin('Answers when the run ends. A run already in progress is joined, never doubled.', {
      parameters: [pathParam('name')],
      responses: { '200': jsonOk('The run', schemaRef('Dashboard.CronRun')), ...errors('NotFound') },
    }),
  ),
  doc('GET', '/dashboard/logs', 'dashboardLogs', 'Recent requests, newest first', () =>
    admin('A bounded in-memory ring: time, method, route, status, latency, request id and client IP; never bodies or tokens.', {
      parameters: [
        queryBody(obj({ statusClass: { type: 'string', enum: ['1xx', '2xx', '3xx', '4xx', '5xx'] }, route: str, requestId: str, limit: { type: 'integer', minimum: 1, maximum: 2000 } }, []), {
          statusClass: '5xx',
        }),
      ],
      responses: { '200': jsonOk('Entries', arr(obj({ at: int, method: str, route: str, status: int, latencyMs: num, requestId: str, ip: str }))), ...errors('BadRequest') },
    }),
  ),
  doc('GET', '/dashboard/live', 'dashboardLive', 'Open streams and live queries', () =>
    admin('', { responses: { '200': jsonOk('Live state', obj({ open: int, queries: int, streams: arr(obj({ route: str, table: str, open: int })) })) } }),
  ),
  ...(['/_/', '/_/:screen', '/_/:screen/:item', '/_/:screen/:item/:sub'] as const).map((path, i) =>
    doc('GET', path, `dashboardPage${i + 1}`, 'The admin dashboard (HTML and assets)', () => ({
      ...page('Any screen URL answers the single-page app; /_/assets/app.js and /_/assets/app.css are its bundle.'),
      ...(i > 0 ? { parameters: ['screen', 'item', 'sub'].slice(0, i).map(pathParam) } : {}),
    })),
  ),
];

/**
 * The admin API (SPEC §11, §11a, §13.9): admin token only (401 without a token, 403 for a
 * non-admin, whatever table rules say), then the dashboard services (src/dashboard/). GET
 * /dashboard/metrics answers JSON, or Prometheus text with `Accept: text/plain`. The page itself
 * is in dashboard-page.ts.
 */
import { Type } from '@sinclair/typebox';
import { collectMetrics, prometheusText } from '../../dashboard/metrics.js';
import { defineRoute, noContent, raw, stream } from '../declare.js';
import { dashboardPageRoutes } from './dashboard-page.js';
import * as S from './dashboard-schemas.js';

const int = Type.Integer({ minimum: 0 });
const num = Type.Number({ minimum: 0 });
const counts = (example: Record<string, number>) => Type.Record(Type.String(), int, { example });
const nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const Metrics = Type.Object({
  uptimeSeconds: num,
  requests: Type.Object({ total: int, byStatus: counts({ '200': 10, '404': 1 }), byRoute: counts({ 'GET /db/list': 4 }) }),
  latencyMs: Type.Object({ p50: num, p95: num, p99: num }),
  streams: Type.Object({ open: int }),
  writeQueue: Type.Object({ pending: int, rejected: int }),
  rateLimited: int,
  tables: Type.Record(Type.String(), int, { description: 'rows per table' }),
  dbSizeBytes: int,
  cron: Type.Array(
    Type.Object({
      name: Type.String(),
      schedule: Type.String(),
      lastRunAt: nullable(Type.String({ format: 'date-time' })),
      lastStatus: nullable(Type.String({ example: 'ok' })),
      lastError: nullable(Type.String()),
      nextRunAt: nullable(Type.String({ format: 'date-time' })),
    }),
  ),
  memory: Type.Object({ rssBytes: int, heapUsedBytes: int }),
  push: Type.Object({ sent: int, failed: int, retried: int, removedDevices: int, pending: int }, { description: 'push deliveries since start (SPEC §11b); pending from the queue' }),
  backup: Type.Optional(
    Type.Object(
      { lastSyncAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]), lagMs: num, failures: int },
      { description: 'continuous backup (docs/reference/backups.md); absent without a destination' },
    ),
  ),
});

const admin = { family: 'dashboard', access: 'admin' } as const;
const numberOr = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number(v));

export const dashboardRoutes = [
  defineRoute({
    method: 'GET',
    path: '/dashboard/metrics',
    family: 'dashboard',
    summary: 'Server metrics (admin); Prometheus text with Accept: text/plain',
    description: 'Admin token only: 401 without a token, 403 for a non-admin. With `Accept: text/plain` the same in the Prometheus text format.',
    operationId: 'dashboardMetrics',
    access: 'admin',
    responses: { 200: { description: 'Metrics', data: Metrics, content: { 'text/plain': Type.String({ description: 'Prometheus text exposition format' }) } } },
    handler: async ({ headers }, s) => {
      const data = await collectMetrics(s);
      if (/\btext\/plain\b/.test(String(headers.accept ?? ''))) return raw(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }, prometheusText(data));
      return data;
    },
  }),
  defineRoute({
    ...admin,
    method: 'GET',
    path: '/dashboard/history',
    summary: 'Per-minute metrics for the last hour (admin)',
    description: 'Oldest first; the current minute last, as it stands. Kept in memory.',
    operationId: 'dashboardHistory',
    responses: { 200: Type.Array(S.Sample) },
    handler: (_i, s) => s.dashboard.history.samples(),
  }),
  defineRoute({
    ...admin,
    method: 'GET',
    path: '/dashboard/schema',
    summary: 'Every table and view with its columns (admin)',
    description: 'Tables (internal ones included) then views; password columns are never listed.',
    operationId: 'dashboardSchema',
    responses: { 200: Type.Array(S.Collection) },
    handler: (_i, s) => s.dashboard.schema(),
  }),
  defineRoute({
    ...admin,
    method: 'GET',
    path: '/dashboard/rows',
    summary: 'List rows of any table or view, rules bypassed (admin)',
    description: 'The body of /db/list in `?body=`: the where grammar, paging and order_by with their bounds (SPEC §4). Table rules and row rules do not apply.',
    operationId: 'dashboardRows',
    body: S.ListBody,
    responses: { 200: S.RowPage },
    errors: ['NOT_FOUND'],
    examples: { body: { table: 'tasks', where: { isComplete: { eq: false } }, limit: 25, offset: 0, order_by: [{ column: 'priority', direction: 'desc' }] } },
    handler: ({ body }, s) => s.dashboard.rows.list(body),
  }),
  defineRoute({
    ...admin,
    method: 'POST',
    path: '/dashboard/rows',
    summary: 'Create a row; hooks fire (admin)',
    description: "Validated like /db create (errors point at /object/<column>); the table's hooks fire with the admin's token. Views: 403.",
    operationId: 'dashboardCreateRow',
    body: S.CreateBody,
    responses: { 200: S.Row },
    errors: ['NOT_FOUND', 'CONFLICT', 'HOOK_REJECTED', 'WRITE_QUEUE_FULL'],
    examples: { body: { table: 'tasks', object: { title: 'Write the report' } } },
    handler: ({ body, jwt }, s) => s.dashboard.rows.create(jwt!, body.table, body.object),
  }),
  defineRoute({
    ...admin,
    method: 'PATCH',
    path: '/dashboard/rows',
    summary: 'Update a row by id; hooks fire (admin)',
    description: "`values` maps columns to new values; validation errors point at /values/<column>. The table's hooks fire. Views: 403.",
    operationId: 'dashboardUpdateRow',
    body: S.UpdateBody,
    responses: { 200: S.Row },
    errors: ['NOT_FOUND', 'CONFLICT', 'HOOK_REJECTED', 'WRITE_QUEUE_FULL'],
    examples: { body: { table: 'tasks', id: 'tk_01jf8x7k2m3n4p5q6r7s8t9v0w', values: { isComplete: true } } },
    handler: ({ body, jwt }, s) => s.dashboard.rows.update(jwt!, body.table, body.id, body.values),
  }),
  defineRoute({
    ...admin,
    method: 'DELETE',
    path: '/dashboard/rows',
    summary: 'Delete a row by id; hooks fire (admin)',
    operationId: 'dashboardDeleteRow',
    body: S.RowRef,
    responses: { 204: 'Deleted' },
    errors: ['NOT_FOUND', 'HOOK_REJECTED', 'WRITE_QUEUE_FULL'],
    handler: async ({ body, jwt }, s) => (await s.dashboard.rows.delete(jwt!, body.table, body.id), noContent()),
  }),
  defineRoute({
    ...admin,
    method: 'POST',
    path: '/dashboard/users/verify',
    summary: 'Mark a user verified (admin)',
    operationId: 'dashboardVerifyUser',
    body: S.RowRef,
    responses: { 200: S.Row },
    errors: ['NOT_FOUND'],
    handler: ({ body, jwt }, s) => s.dashboard.users.markVerified(jwt!, body.table, body.id),
  }),
  defineRoute({
    ...admin,
    method: 'POST',
    path: '/dashboard/users/reset',
    summary: 'Send a user a password-reset email (admin)',
    description: "A fresh single-use reset token, by the project's reset template; canPasswordReset is not asked (an admin decided).",
    operationId: 'dashboardResetUser',
    body: S.RowRef,
    responses: { 204: 'Sent' },
    errors: ['NOT_FOUND', 'UNAVAILABLE'],
    handler: async ({ body, jwt }, s) => (await s.dashboard.users.sendReset(jwt!, body.table, body.id), noContent()),
  }),
  defineRoute({
    ...admin,
    method: 'POST',
    path: '/dashboard/users/revoke',
    summary: 'Revoke every session of a user (admin)',
    description: 'Refresh tokens and the access tokens of those sessions stop working at once (SPEC §8).',
    operationId: 'dashboardRevokeUser',
    body: S.RowRef,
    responses: { 200: Type.Object({ revoked: Type.Integer({ minimum: 0 }) }) },
    errors: ['NOT_FOUND'],
    handler: async ({ body, jwt }, s) => ({ revoked: await s.dashboard.users.revokeSessions(jwt!, body.table, body.id) }),
  }),
  defineRoute({
    ...admin,
    method: 'GET',
    path: '/dashboard/photos',
    summary: 'List photos, newest first (admin)',
    operationId: 'dashboardPhotos',
    query: S.PhotoQuery,
    responses: { 200: Type.Object({ items: Type.Array(S.Photo), total: Type.Integer({ minimum: 0 }) }) },
    handler: ({ query }, s) => s.dashboard.photos.list(Math.min(200, Math.max(1, numberOr(query.limit, 48))), numberOr(query.offset, 0)),
  }),
  defineRoute({
    ...admin,
    method: 'GET',
    path: '/dashboard/photos/:id',
    summary: 'A photo or its thumbnail (admin)',
    description: "Like GET /img/{id}, without the project's canView and the photo rate limit, for the dashboard's grid.",
    operationId: 'dashboardPhoto',
    params: Type.Object({ id: S.RowId }),
    query: Type.Object({ thumb: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}x[1-9][0-9]{0,4}$', description: 'WxH, e.g. 240x240' })) }, { additionalProperties: false }),
    responses: { 200: { description: 'The bytes', content: { 'image/*': Type.String({ format: 'binary' }) } }, 304: 'Not modified' },
    errors: ['NOT_FOUND'],
    handler: ({ method, headers, params, query }, s) => stream((sink) => s.dashboard.photos.serve({ method, headers }, sink, params.id, query.thumb)),
  }),
  defineRoute({
    ...admin,
    method: 'DELETE',
    path: '/dashboard/photos/:id',
    summary: 'Delete a photo (admin)',
    description: "The project's photo canDelete is not asked (an admin decided).",
    operationId: 'dashboardDeletePhoto',
    body: 'none',
    params: Type.Object({ id: S.RowId }),
    responses: { 204: 'Deleted' },
    errors: ['NOT_FOUND'],
    handler: async ({ params, jwt }, s) => (await s.dashboard.photos.delete(jwt!, params.id), noContent()),
  }),
  defineRoute({
    ...admin,
    method: 'GET',
    path: '/dashboard/cron',
    summary: 'Cron jobs with their recent runs (admin)',
    operationId: 'dashboardCron',
    responses: { 200: Type.Array(S.CronJob) },
    handler: (_i, s) => s.dashboard.cron.jobs(),
  }),
  defineRoute({
    ...admin,
    method: 'POST',
    path: '/dashboard/cron/:name/run',
    summary: 'Run a cron job now (admin)',
    description: 'Answers when the run ends. A run already in progress is joined, never doubled (SPEC §11).',
    operationId: 'dashboardRunCron',
    body: 'none',
    params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) }),
    responses: { 200: S.CronRun },
    errors: ['NOT_FOUND'],
    handler: ({ params, jwt }, s) => s.dashboard.cron.runNow(jwt!, params.name),
  }),
  defineRoute({
    ...admin,
    method: 'GET',
    path: '/dashboard/logs',
    summary: 'Recent requests, newest first (admin)',
    description: 'A bounded in-memory ring of time, method, route, status, latency, request id and client IP; never bodies, query strings or tokens.',
    operationId: 'dashboardLogs',
    query: S.LogQuery,
    responses: { 200: Type.Array(S.LogEntry) },
    handler: ({ query }, s) => s.dashboard.requestLog.query({ ...query, limit: query.limit === undefined ? undefined : Number(query.limit) }),
  }),
  defineRoute({
    ...admin,
    method: 'GET',
    path: '/dashboard/live',
    summary: 'Open streams by route and table, and the live-query count (admin)',
    operationId: 'dashboardLive',
    responses: { 200: S.LiveState },
    handler: (_i, s) => s.dashboard.live(),
  }),
  ...dashboardPageRoutes,
];

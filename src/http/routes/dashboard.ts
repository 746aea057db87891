/**
 * The admin API (SPEC §11, §13.9): admin token only (401 without a token, 403 for a non-admin).
 * GET /dashboard/metrics answers JSON, or Prometheus text with `Accept: text/plain`.
 */
import { Type } from '@sinclair/typebox';
import { collectMetrics, prometheusText } from '../../dashboard/metrics.js';
import { defineRoute, raw } from '../declare.js';

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
});

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
];

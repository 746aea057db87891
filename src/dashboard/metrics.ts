/**
 * GET /dashboard/metrics (SPEC §11, §13.9): admin token only (401 without a token, 403 for a
 * non-admin). JSON by default; Prometheus text with `Accept: text/plain`.
 */
import { ApiError } from '../core/errors.js';
import type { App } from '../core/app.js';
import type { RequestContext } from '../http/context.js';
import { sendData } from '../http/respond.js';
import { countRows } from '../storage/rows.js';
import { readPlan } from '../storage/plan.js';

export async function requireAdmin(ctx: RequestContext) {
  const jwt = await ctx.app.rt.tokens.verify(ctx.req.headers.authorization);
  if (!jwt) throw new ApiError('UNAUTHENTICATED');
  if (jwt.admin?.isAdmin !== true) throw new ApiError('FORBIDDEN');
  return jwt;
}

export async function collectMetrics(app: App) {
  const rt = app.rt;
  const tables: Record<string, number> = {};
  for (const t of rt.model.tables) {
    tables[t.name] = await countRows(rt.driver, rt.driver.dialect, readPlan(t));
  }
  const m = app.metrics;
  const mem = process.memoryUsage();
  return {
    uptimeSeconds: Math.round((Date.now() - m.startedAt) / 1000),
    requests: { total: m.total, byStatus: Object.fromEntries(m.byStatus), byRoute: Object.fromEntries(m.byRoute) },
    latencyMs: m.latency(),
    streams: { open: app.live.stats().open },
    writeQueue: { pending: rt.writer.pending, rejected: rt.writer.rejected },
    rateLimited: m.rateLimited,
    tables,
    dbSizeBytes: await rt.driver.sizeBytes(),
    cron: app.cron?.status() ?? [],
    memory: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed },
  };
}

function prometheus(data: Awaited<ReturnType<typeof collectMetrics>>): string {
  const lines: string[] = [];
  const metric = (name: string, help: string, type: 'gauge' | 'counter', samples: [string, number][]) => {
    lines.push(`# HELP tablebase_${name} ${help}`, `# TYPE tablebase_${name} ${type}`);
    for (const [labels, v] of samples) lines.push(`tablebase_${name}${labels} ${v}`);
  };
  const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  metric('uptime_seconds', 'Seconds since start', 'gauge', [['', data.uptimeSeconds]]);
  metric(
    'requests_total',
    'Requests by status',
    'counter',
    Object.entries(data.requests.byStatus).map(([s, n]) => [`{status="${s}"}`, n]),
  );
  metric(
    'route_requests_total',
    'Requests by route',
    'counter',
    Object.entries(data.requests.byRoute).map(([r, n]) => [`{route="${esc(r)}"}`, n]),
  );
  metric(
    'latency_ms',
    'Recent request latency percentiles',
    'gauge',
    Object.entries(data.latencyMs).map(([q, v]) => [`{quantile="${q.slice(1) === '50' ? '0.5' : `0.${q.slice(1)}`}"}`, v]),
  );
  metric('streams_open', 'Open live streams', 'gauge', [['', data.streams.open]]);
  metric('write_queue_pending', 'Writes waiting for a transaction', 'gauge', [['', data.writeQueue.pending]]);
  metric('write_queue_rejected_total', 'Writes refused with 503', 'counter', [['', data.writeQueue.rejected]]);
  metric('rate_limited_total', 'Requests refused with 429', 'counter', [['', data.rateLimited]]);
  metric(
    'table_rows',
    'Rows per table',
    'gauge',
    Object.entries(data.tables).map(([t, n]) => [`{table="${esc(t)}"}`, n]),
  );
  metric('db_size_bytes', 'Database size', 'gauge', [['', data.dbSizeBytes]]);
  metric('memory_rss_bytes', 'Resident set size', 'gauge', [['', data.memory.rssBytes]]);
  metric('memory_heap_used_bytes', 'Heap in use', 'gauge', [['', data.memory.heapUsedBytes]]);
  return `${lines.join('\n')}\n`;
}

export async function metricsRoute(ctx: RequestContext): Promise<void> {
  await requireAdmin(ctx);
  const data = await collectMetrics(ctx.app);
  if (/\btext\/plain\b/.test(ctx.req.headers.accept ?? '')) {
    const text = prometheus(data);
    ctx.res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    ctx.res.end(text);
    return;
  }
  sendData(ctx.res, data);
}

/**
 * Server metrics for GET /dashboard/metrics (docs/reference/dashboard.md; route in http/routes/dashboard.ts):
 * request counters, latency, streams, write queue, rows per table, cron, memory; as a value or
 * as Prometheus text.
 */
import type { Metrics } from '../core/metrics.js';
import type { Runtime } from '../core/runtime.js';
import type { CronStatus } from '../cron/scheduler.js';
import type { PushMetrics } from '../push/index.js';
import { countRows } from '../storage/rows.js';
import { readPlan } from '../storage/plan.js';
import type { ProcessFigures } from './process-figures.js';

/** What the metrics read: the runtime, the request counters, open streams and cron. */
export interface MetricsSources {
  readonly rt: Runtime;
  readonly metrics: Metrics;
  readonly live: { stats(): { open: number } };
  readonly cron: CronStatus | undefined;
  readonly push: { metrics(): Promise<PushMetrics> };
  readonly backup?: { status(): { lastSyncAt: string | null; lagMs: number; failures: number } } | undefined;
  readonly processes?: () => readonly ProcessFigures[];
}

export async function collectMetrics(app: MetricsSources) {
  const rt = app.rt;
  const tables: Record<string, number> = {};
  for (const t of rt.model.tables) {
    tables[t.name] = await countRows(rt.driver, rt.driver.dialect, readPlan(t));
  }
  const m = app.metrics;
  const mem = process.memoryUsage();
  return {
    uptimeSeconds: Math.round((Date.now() - m.startedAt) / 1000),
    requests: { total: m.total, aborted: m.aborted, byStatus: Object.fromEntries(m.byStatus), byRoute: Object.fromEntries(m.byRoute) },
    latencyMs: m.latency(),
    streams: { open: app.live.stats().open },
    writeQueue: { pending: rt.writer.pending, rejected: rt.writer.rejected },
    rateLimited: m.rateLimited,
    tables,
    dbSizeBytes: await rt.driver.sizeBytes(),
    cron: app.cron?.status() ?? [],
    memory: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed },
    push: await app.push.metrics(),
    // With workers: the primary and each worker (src/dashboard/process-figures.ts); one row otherwise.
    processes: [...(app.processes?.() ?? [])],
    ...(app.backup ? { backup: backupMetrics(app.backup.status()) } : {}),
  };
}

/** `primary`, `worker 2`, or `server` for a single process: the label the dashboard shows. */
export function processName(p: Pick<ProcessFigures, 'role' | 'id'>): string {
  return p.role === 'worker' ? `worker ${p.id}` : p.role === 'primary' ? 'primary' : 'server';
}

function backupMetrics(s: { lastSyncAt: string | null; lagMs: number; failures: number }) {
  return { lastSyncAt: s.lastSyncAt, lagMs: s.lagMs, failures: s.failures };
}

export function prometheusText(data: Awaited<ReturnType<typeof collectMetrics>>): string {
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
  const per = (f: (p: ProcessFigures) => number) => data.processes.map((p): [string, number] => [`{process="${processName(p)}"}`, f(p)]);
  if (data.processes.length > 0) {
    metric(
      'process_requests_per_second',
      'Requests answered or forwarded per second by each process (last 10 s)',
      'gauge',
      per((p) => p.requestsPerSecond),
    );
    metric(
      'process_streams_open',
      'Live streams open in each process',
      'gauge',
      per((p) => p.streams),
    );
    metric(
      'process_resident_memory_bytes',
      'Resident memory of each process',
      'gauge',
      per((p) => p.memory.rssBytes),
    );
    metric(
      'process_heap_used_bytes',
      'V8 heap used by each process',
      'gauge',
      per((p) => p.memory.heapUsedBytes),
    );
    metric(
      'process_event_loop_delay_p99_ms',
      'Event-loop delay p99 of each process since the previous reading',
      'gauge',
      per((p) => p.eventLoopDelayMs.p99),
    );
  }
  metric('write_queue_pending', 'Writes waiting for a transaction', 'gauge', [['', data.writeQueue.pending]]);
  metric('write_queue_rejected_total', 'Writes refused with 503', 'counter', [['', data.writeQueue.rejected]]);
  metric('rate_limited_total', 'Requests refused with 429', 'counter', [['', data.rateLimited]]);
  metric('requests_aborted_total', 'Requests abandoned by their client (mid-body or before the answer)', 'counter', [['', data.requests.aborted]]);
  metric(
    'table_rows',
    'Rows per table',
    'gauge',
    Object.entries(data.tables).map(([t, n]) => [`{table="${esc(t)}"}`, n]),
  );
  metric('db_size_bytes', 'Database size', 'gauge', [['', data.dbSizeBytes]]);
  metric('memory_rss_bytes', 'Resident set size', 'gauge', [['', data.memory.rssBytes]]);
  metric('memory_heap_used_bytes', 'Heap in use', 'gauge', [['', data.memory.heapUsedBytes]]);
  metric('push_deliveries_total', 'Push deliveries by outcome since start', 'counter', [
    ['{outcome="sent"}', data.push.sent],
    ['{outcome="failed"}', data.push.failed],
    ['{outcome="retried"}', data.push.retried],
  ]);
  metric('push_pending', 'Push deliveries waiting in the queue', 'gauge', [['', data.push.pending]]);
  metric('push_devices_removed_total', 'Devices removed because a provider reported them dead', 'counter', [['', data.push.removedDevices]]);
  if (data.backup) {
    metric('backup_lag_ms', 'Age of the oldest committed write not yet at the backup destination', 'gauge', [['', data.backup.lagMs]]);
    metric('backup_failures_total', 'Failed backup syncs', 'counter', [['', data.backup.failures]]);
    if (data.backup.lastSyncAt) metric('backup_last_sync_seconds', 'When the backup last synced (unix seconds)', 'gauge', [['', Math.floor(Date.parse(data.backup.lastSyncAt) / 1000)]]);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Overview (docs/reference/dashboard.md): tiles for requests per minute, error rate, p95 latency, open streams,
 * write-queue depth and database size, charts of requests and latency over the last hour, and
 * with `serve --workers` one row per process (requests/s, streams, memory, event-loop delay),
 * refreshing by themselves every 5 seconds.
 */
import { api } from '../api';
import { Chart } from '../chart';
import { ErrorBox, formatBytes, Tile, useLoad } from '../components';

interface Sample {
  at: number;
  requests: number;
  clientErrors: number;
  serverErrors: number;
  p95Ms: number;
  streams: number;
  writeQueue: number;
}

interface Metrics {
  uptimeSeconds: number;
  requests: { total: number };
  latencyMs: { p50: number; p95: number; p99: number };
  streams: { open: number };
  writeQueue: { pending: number; rejected: number };
  dbSizeBytes: number;
  tables: Record<string, number>;
  processes: ProcessRow[];
}

interface ProcessRow {
  role: 'single' | 'primary' | 'worker';
  id: number;
  pid: number;
  requestsPerSecond: number;
  streams: number;
  memory: { rssBytes: number; heapUsedBytes: number };
  eventLoopDelayMs: { p50: number; p99: number; max: number };
}

/** Where the server's time goes when it runs several processes; nothing to show for one. */
function Processes({ rows }: { rows: readonly ProcessRow[] }) {
  if (rows.length < 2) return null;
  return (
    <table class="rows">
      <caption>Processes</caption>
      <thead>
        <tr>
          <th scope="col">process</th>
          <th scope="col">requests/s</th>
          <th scope="col">streams</th>
          <th scope="col">memory (RSS)</th>
          <th scope="col">heap used</th>
          <th scope="col">event-loop delay p99</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((p) => (
          <tr key={`${p.role} ${p.id}`}>
            <th scope="row">{p.role === 'worker' ? `worker ${p.id}` : p.role === 'primary' ? 'primary (writer)' : 'server'}</th>
            <td>{p.requestsPerSecond}</td>
            <td>{p.streams}</td>
            <td>{formatBytes(p.memory.rssBytes)}</td>
            <td>{formatBytes(p.memory.heapUsedBytes)}</td>
            <td>{p.eventLoopDelayMs.p99} ms</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const MINUTE = 60_000;

/** The whole last hour, one slot per minute; minutes the server has no sample for stay empty (null). */
function lastHour(history: readonly Sample[]) {
  const end = history.length ? history[history.length - 1]!.at : Date.now() - (Date.now() % MINUTE);
  const byAt = new Map(history.map((s) => [s.at, s]));
  const slots = Array.from({ length: 60 }, (_, i) => end - (59 - i) * MINUTE);
  const pick = (f: (s: Sample) => number) => slots.map((at) => (byAt.has(at) ? f(byAt.get(at)!) : null));
  return { times: slots, requests: pick((s) => s.requests), client: pick((s) => s.clientErrors), server: pick((s) => s.serverErrors), p95: pick((s) => s.p95Ms) };
}

export function Overview() {
  const { data, error } = useLoad(
    async () => {
      const [metrics, history] = await Promise.all([api<Metrics>('GET', '/dashboard/metrics'), api<Sample[]>('GET', '/dashboard/history')]);
      return { metrics, history };
    },
    [],
    5000,
  );
  const history = data?.history ?? [];
  const m = data?.metrics;
  const hour = lastHour(history);
  // The last complete minute when there is one; otherwise the current minute so far.
  const last = history.length > 1 ? history[history.length - 2]! : history[history.length - 1];
  const errors = last ? last.serverErrors : 0;
  const rate = last && last.requests > 0 ? (100 * errors) / last.requests : 0;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <ErrorBox message={error} />
      <div class="tiles">
        <Tile label="Requests per minute" value={last ? String(last.requests) : '—'} />
        <Tile label="Error rate" value={last ? `${rate.toFixed(1)} %` : '—'} hint="5xx answers, last minute" />
        <Tile label="p95 latency" value={m ? `${m.latencyMs.p95} ms` : '—'} />
        <Tile label="Open streams" value={m ? String(m.streams.open) : '—'} />
        <Tile label="Write-queue depth" value={m ? String(m.writeQueue.pending) : '—'} hint={m ? `${m.writeQueue.rejected} rejected` : undefined} />
        <Tile label="Database size" value={m ? formatBytes(m.dbSizeBytes) : '—'} />
      </div>
      <div class="charts">
        <Chart
          title="Requests per minute"
          unit="requests"
          times={hour.times}
          series={[
            { label: 'Requests', values: hour.requests, color: '#2563eb' },
            { label: '4xx', values: hour.client, color: '#d97706' },
            { label: '5xx', values: hour.server, color: '#dc2626' },
          ]}
        />
        <Chart title="Latency (p95)" unit="ms" times={hour.times} series={[{ label: 'p95 ms', values: hour.p95, color: '#7c3aed' }]} />
      </div>
      {m ? <Processes rows={m.processes ?? []} /> : null}
      {m ? (
        <p class="muted">
          Up {Math.round(m.uptimeSeconds / 60)} min · {m.requests.total} requests since start · {Object.keys(m.tables).length} tables
        </p>
      ) : null}
    </section>
  );
}

/** Logs (docs/reference/dashboard.md): recent requests, newest first, filterable by status class, route and request id. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, useLoad } from '../components';

interface Entry {
  at: number;
  method: string;
  route: string;
  status: number;
  latencyMs: number;
  requestId: string;
  ip: string;
}

/** The log records the route as `GET /db/list`; the method has its own column, so show the path only. */
const routePath = (method: string, route: string) => (route.startsWith(`${method} `) ? route.slice(method.length + 1) : route);

export function Logs() {
  const [statusClass, setStatusClass] = useState('');
  const [route, setRoute] = useState('');
  const [requestId, setRequestId] = useState('');
  const [auto, setAuto] = useState(true);
  const entries = useLoad(
    () => {
      const q = new URLSearchParams({ limit: '200' });
      if (statusClass) q.set('statusClass', statusClass);
      if (route) q.set('route', route);
      if (requestId.trim()) q.set('requestId', requestId.trim());
      return api<Entry[]>('GET', `/dashboard/logs?${q}`);
    },
    [statusClass, route, requestId],
    auto ? 5000 : undefined,
  );
  return (
    <section aria-labelledby="logs-title">
      <h1 id="logs-title">Logs</h1>
      <form class="filter" aria-label="Log filter" onSubmit={(e) => (e.preventDefault(), entries.reload())}>
        <label>
          Status class
          <select value={statusClass} onChange={(e) => setStatusClass(e.currentTarget.value)}>
            <option value="">All</option>
            {['2xx', '3xx', '4xx', '5xx'].map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label>
          Route
          <input value={route} placeholder="/db/list" onInput={(e) => setRoute(e.currentTarget.value)} />
        </label>
        <label>
          Request id
          <input value={requestId} onInput={(e) => setRequestId(e.currentTarget.value)} />
        </label>
        <label class="inline">
          <input type="checkbox" checked={auto} onChange={(e) => setAuto(e.currentTarget.checked)} /> Auto-refresh
        </label>
        <button type="submit">Refresh</button>
      </form>
      <ErrorBox message={entries.error} />
      <div class="scroll">
        <table class="rows">
          <caption class="sr-only">Recent requests, newest first</caption>
          <thead>
            <tr>
              <th scope="col">time</th>
              <th scope="col">method</th>
              <th scope="col">route</th>
              <th scope="col">status</th>
              <th scope="col">latency</th>
              <th scope="col">request id</th>
              <th scope="col">client IP</th>
            </tr>
          </thead>
          <tbody>
            {(entries.data ?? []).map((e, i) => (
              <tr key={`${e.requestId}-${i}`} class={e.status >= 500 ? 'bad' : e.status >= 400 ? 'warn' : undefined}>
                <td>{new Date(e.at).toLocaleTimeString()}</td>
                <td>{e.method}</td>
                <td class="mono">{routePath(e.method, e.route)}</td>
                <td>{e.status}</td>
                <td>{e.latencyMs} ms</td>
                <td class="mono">{e.requestId}</td>
                <td class="mono">{e.ip}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {entries.data && entries.data.length === 0 ? <p class="muted">No matching requests.</p> : null}
    </section>
  );
}

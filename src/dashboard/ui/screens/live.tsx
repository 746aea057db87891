/** Live (docs/reference/dashboard.md): open streams and /db/live subscriptions by route and table, and the live-query count. */
import { api } from '../api';
import { ErrorBox, Tile, useLoad } from '../components';

interface LiveState {
  open: number;
  sockets: number;
  queries: number;
  streams: { route: string; table: string; open: number }[];
}

export function Live() {
  const live = useLoad(() => api<LiveState>('GET', '/dashboard/live'), [], 3000);
  const d = live.data;
  return (
    <section aria-labelledby="live-title">
      <h1 id="live-title">Live</h1>
      <ErrorBox message={live.error} />
      <div class="tiles">
        <Tile label="Open streams" value={d ? String(d.open - d.sockets) : '—'} hint="stream routes, one HTTP response each" />
        <Tile label="WebSocket subscriptions" value={d ? String(d.sockets) : '—'} hint="subscriptions on /db/live connections" />
        <Tile label="Live queries" value={d ? String(d.queries) : '—'} hint="distinct queries shared by the streams" />
      </div>
      <div class="scroll">
        <table class="rows">
          <caption class="sr-only">Open streams by route and table</caption>
          <thead>
            <tr>
              <th scope="col">route</th>
              <th scope="col">table</th>
              <th scope="col">open</th>
            </tr>
          </thead>
          <tbody>
            {(d?.streams ?? []).map((s) => (
              <tr key={`${s.route} ${s.table}`}>
                <td class="mono">{s.route}</td>
                <td>{s.table}</td>
                <td>{s.open}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {d && d.streams.length === 0 ? <p class="muted">No open streams or subscriptions.</p> : null}
    </section>
  );
}

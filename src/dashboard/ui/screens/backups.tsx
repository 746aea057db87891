/**
 * Backups (docs/reference/dashboard.md, docs/reference/backups.md): the destination (never its
 * credentials), last sync and lag, the restorable window, the snapshots in a table, and
 * `Back up now`.
 */
import { useState } from 'preact/hooks';
import { api, ApiFailure } from '../api';
import { ErrorBox, formatTime, useLoad } from '../components';

interface Snapshot {
  id: string;
  takenAt: string;
  bytes: number;
}

interface Backups {
  destination: string;
  lastSyncAt: string | null;
  lagMs: number;
  earliest: string | null;
  latest: string | null;
  snapshots: Snapshot[];
}

const size = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`);

export function Backups() {
  const state = useLoad(() => api<Backups>('GET', '/dashboard/backups'), [], 5000);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const backUp = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const s = await api<Snapshot>('POST', '/dashboard/backups');
      setResult(`Snapshot ${s.id} taken (${size(s.bytes)}).`);
      state.reload();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const b = state.data;
  return (
    <section aria-labelledby="backups-title">
      <h1 id="backups-title">Backups</h1>
      <ErrorBox message={state.error ?? error} />
      {b ? (
        <dl class="facts">
          <dt>Destination</dt>
          <dd class="mono">{b.destination}</dd>
          <dt>Last sync</dt>
          <dd>{formatTime(b.lastSyncAt)}</dd>
          <dt>Lag</dt>
          <dd>{`${b.lagMs} ms`}</dd>
          <dt>Restorable window</dt>
          <dd>{b.earliest ? `${formatTime(b.earliest)} – ${formatTime(b.latest)}` : 'no snapshot yet'}</dd>
        </dl>
      ) : null}
      <p>
        <button type="button" disabled={busy || !b} onClick={backUp}>
          Back up now
        </button>
      </p>
      <p role="status" class="muted">
        {result ?? (busy ? 'Taking a snapshot…' : '')}
      </p>
      <div class="scroll">
        <table class="rows">
          <caption>Snapshots</caption>
          <thead>
            <tr>
              <th scope="col">id</th>
              <th scope="col">taken at</th>
              <th scope="col">size</th>
            </tr>
          </thead>
          <tbody>
            {[...(b?.snapshots ?? [])].reverse().map((s) => (
              <tr key={s.id}>
                <td class="mono">{s.id}</td>
                <td>{formatTime(s.takenAt)}</td>
                <td>{size(s.bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

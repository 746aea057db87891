/** Cron (docs/reference/dashboard.md): one row per job with its schedule, last and next run, status and error; `Run now`; recent runs. */
import { useState } from 'preact/hooks';
import { api, ApiFailure } from '../api';
import { ErrorBox, formatTime, useLoad } from '../components';

interface Run {
  job: string;
  trigger: string;
  startedAt: string;
  finishedAt: string | null;
  status: string;
  error: string | null;
  durationMs: number | null;
}

interface Job {
  name: string;
  schedule: string;
  lastRunAt: string | null;
  lastStatus: string | null;
  lastError: string | null;
  nextRunAt: string | null;
  running: boolean;
  runs: Run[];
}

export function Cron() {
  const jobs = useLoad(() => api<Job[]>('GET', '/dashboard/cron'), [], 5000);
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const runNow = async (name: string) => {
    setBusy(name);
    setError(null);
    setResult(null);
    try {
      const run = await api<Run>('POST', `/dashboard/cron/${encodeURIComponent(name)}/run`);
      setResult(`${name}: ${run.status}${run.error ? ` (${run.error})` : ''} in ${run.durationMs ?? 0} ms`);
      jobs.reload();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  };
  const list = jobs.data ?? [];
  return (
    <section aria-labelledby="cron-title">
      <h1 id="cron-title">Cron</h1>
      <ErrorBox message={jobs.error ?? error} />
      <p role="status" class="muted">
        {result ?? ''}
      </p>
      {jobs.data && list.length === 0 ? <p class="muted">This project declares no cron jobs.</p> : null}
      <div class="scroll">
        <table class="rows">
          <thead>
            <tr>
              <th scope="col">name</th>
              <th scope="col">action</th>
              <th scope="col">schedule</th>
              <th scope="col">last run</th>
              <th scope="col">status</th>
              <th scope="col">last error</th>
              <th scope="col">next run</th>
            </tr>
          </thead>
          <tbody>
            {list.map((j) => (
              <tr key={j.name}>
                <td>{j.name}</td>
                <td>
                  <button type="button" disabled={busy === j.name} onClick={() => runNow(j.name)}>
                    Run now
                  </button>
                </td>
                <td class="mono">{j.schedule}</td>
                <td>{formatTime(j.lastRunAt)}</td>
                <td>{j.lastStatus ?? 'never run'}</td>
                <td>{j.lastError ?? '—'}</td>
                <td>{formatTime(j.nextRunAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.map((j) => (
        <section key={j.name} aria-label={`Recent runs of ${j.name}`} class="runs">
          <h2>Recent runs of {j.name}</h2>
          {j.runs.length === 0 ? (
            <p class="muted">No runs yet.</p>
          ) : (
            <ol>
              {j.runs.map((r, i) => (
                <li key={i}>
                  {formatTime(r.startedAt)} · {r.trigger} · {r.status}
                  {r.durationMs !== null ? ` · ${r.durationMs} ms` : ''}
                  {r.error ? ` · ${r.error}` : ''}
                </li>
              ))}
            </ol>
          )}
        </section>
      ))}
    </section>
  );
}

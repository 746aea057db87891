/** Sign-in (docs/reference/dashboard.md): Email, Password, a Table select when there are several admin tables, `Sign in`; failures in a role=alert. */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiFailure, signIn } from '../api';

function adminTables(): string[] {
  const meta = document.querySelector('meta[name="tablebase-admin-tables"]');
  return (meta?.getAttribute('content') ?? '').split(' ').filter(Boolean);
}

const meta = (name: string) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';

export function SignIn() {
  const tables = adminTables();
  const [table, setTable] = useState(tables[0] ?? '');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: JSX.TargetedEvent<HTMLFormElement>) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(table, email, password);
    } catch (err) {
      const f = err instanceof ApiFailure ? err : null;
      setError(f?.code === 'INVALID_CREDENTIALS' ? 'Wrong email or password.' : f?.code === 'FORBIDDEN' ? 'This account cannot sign in to the dashboard.' : (f?.message ?? 'Sign-in failed.'));
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <form onSubmit={submit} class="card">
        <h1>Tablebase</h1>
        <p class="muted">Sign in with an admin account.</p>
        {tables.length === 0 ? (
          <div role="alert" class="error">
            <p>This project declares no admin auth table, so nobody can sign in here. Add one to tablebase.config.ts and list it in the project's tables:</p>
            <pre>
              <code>{meta('tablebase-admin-table-snippet')}</code>
            </pre>
            <p>then create the first admin with the command the server prints when it starts.</p>
          </div>
        ) : null}
        {tables.length > 1 ? (
          <label>
            Table
            <select value={table} onChange={(e) => setTable(e.currentTarget.value)}>
              {tables.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <label>
          Email
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input type="password" name="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        {error ? (
          <p role="alert" class="error">
            {error}
          </p>
        ) : null}
        <button type="submit" class="primary" disabled={busy || tables.length === 0}>
          Sign in
        </button>
        {meta('tablebase-admin-command') ? (
          <details class="muted" open={error !== null}>
            <summary>No admin yet?</summary>
            <p>Create one in a terminal, from the folder the server was started in:</p>
            <pre>
              <code>{meta('tablebase-admin-command')}</code>
            </pre>
          </details>
        ) : null}
      </form>
    </main>
  );
}

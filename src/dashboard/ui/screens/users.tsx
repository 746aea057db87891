/** Users (docs/reference/dashboard.md): auth-table rows with their verification state; `Mark verified`, `Send password reset`, `Revoke sessions`. */
import { useState } from 'preact/hooks';
import { api, ApiFailure } from '../api';
import { ErrorBox, formatTime, Link, Pager, useLoad } from '../components';
import { href } from '../router';
import { loadSchema } from '../schema';

type User = { id: string; email?: string; isVerified?: boolean; createdAt?: string };
const PAGE = 50;

export function Users(props: { table: string | undefined }) {
  const schema = useLoad(loadSchema, []);
  const authTables = (schema.data ?? []).filter((c) => c.auth);
  const table = props.table ?? authTables.find((c) => !c.auth!.admin)?.name ?? authTables[0]?.name;
  const [offset, setOffset] = useState(0);
  const users = useLoad(async () => (table ? api<{ items: User[]; total: number }>('GET', '/dashboard/rows', { table, limit: PAGE, offset }) : { items: [], total: 0 }), [table, offset]);
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const act = async (what: string, path: string, user: User, done: (answer: unknown) => string) => {
    setError(null);
    setStatus(`${what}…`);
    try {
      const answer = await api('POST', path, { table, id: user.id });
      setStatus(done(answer));
      users.reload();
    } catch (err) {
      setStatus(null);
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <ErrorBox message={schema.error ?? users.error ?? error} />
      {authTables.length > 1 ? (
        <ul class="chips" aria-label="Auth tables">
          {authTables.map((c) => (
            <li key={c.name}>
              <Link href={href(['users', c.name])} current={c.name === table}>
                {c.name}
              </Link>
            </li>
          ))}
        </ul>
      ) : null}
      <p role="status" class="muted">
        {status ?? ''}
      </p>
      <div class="scroll">
        <table class="rows">
          <caption class="sr-only">{table} users</caption>
          <thead>
            <tr>
              <th scope="col">email</th>
              <th scope="col">verified</th>
              <th scope="col">created</th>
              <th scope="col">id</th>
              <th scope="col">actions</th>
            </tr>
          </thead>
          <tbody>
            {(users.data?.items ?? []).map((u) => (
              <tr key={u.id}>
                <td>{u.email ?? '—'}</td>
                <td>{u.isVerified ? 'Verified' : 'Not verified'}</td>
                <td>{formatTime(u.createdAt)}</td>
                <td class="mono">{u.id}</td>
                <td class="row-actions">
                  <div>
                    <button type="button" disabled={u.isVerified === true} onClick={() => act('Marking verified', '/dashboard/users/verify', u, () => `${u.email ?? u.id} is verified.`)}>
                      Mark verified
                    </button>
                    <button type="button" onClick={() => act('Sending', '/dashboard/users/reset', u, () => `A password-reset email was sent to ${u.email ?? u.id}.`)}>
                      Send password reset
                    </button>
                    <button type="button" onClick={() => act('Revoking', '/dashboard/users/revoke', u, (a) => `${(a as { revoked: number }).revoked} session(s) of ${u.email ?? u.id} revoked.`)}>
                      Revoke sessions
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager offset={offset} limit={PAGE} total={users.data?.total} summary={users.data ? `${users.data.total} ${users.data.total === 1 ? 'user' : 'users'}` : ''} onOffset={setOffset} />
    </section>
  );
}

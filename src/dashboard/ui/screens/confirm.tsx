/**
 * Where the example projects' email links land (issue #27 item 6): `/_/confirm/<kind>?token=…`
 * on the server's public URL. Anyone holding the link may use it: no admin session. A button
 * confirms (a mail scanner that fetches the link does not spend the single-use token); a reset
 * asks for the new password. A real app points `email.links` at its own pages instead
 * (docs/reference/auth.md).
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiFailure, confirmToken } from '../api';

const KINDS: Record<string, { type: string; title: string; button: string; done: string }> = {
  verify: { type: 'confirmVerifyEmail', title: 'Verify your email', button: 'Verify my email', done: 'Your email address is verified.' },
  reset: { type: 'confirmResetPassword', title: 'Choose a new password', button: 'Set the new password', done: 'Your password is changed. Sign in with the new one.' },
  'change-email': { type: 'confirmEmailChange', title: 'Confirm your new email', button: 'Use this email address', done: 'Your email address is changed.' },
  magic: { type: 'confirmMagicLink', title: 'Sign in', button: 'Sign in', done: 'The link is confirmed. Your app receives the session when it handles this link itself.' },
};

export function Confirm(props: { kind: string | undefined; token: string }) {
  const kind = KINDS[props.kind ?? ''];
  const [password, setPassword] = useState('');
  const [state, setState] = useState<'ready' | 'busy' | 'done'>('ready');
  const [error, setError] = useState<string | null>(null);
  if (!kind || !props.token) {
    return (
      <main class="signin">
        <div class="card">
          <h1>Link not recognised</h1>
          <p role="alert" class="error">
            This link is incomplete. Open the link from the email again.
          </p>
        </div>
      </main>
    );
  }
  const submit = async (e: JSX.TargetedEvent<HTMLFormElement>) => {
    e.preventDefault();
    setState('busy');
    setError(null);
    try {
      await confirmToken(kind.type, props.token, kind.type === 'confirmResetPassword' ? password : undefined);
      setState('done');
    } catch (err) {
      const f = err instanceof ApiFailure ? err : null;
      setError(f?.code === 'INVALID_CONFIRMATION_TOKEN' ? 'This link has expired or was used already.' : (f?.message ?? 'Something went wrong.'));
      setState('ready');
    }
  };
  return (
    <main class="signin">
      <form onSubmit={submit} class="card">
        <h1>{kind.title}</h1>
        {state === 'done' ? (
          <p role="status">{kind.done}</p>
        ) : (
          <>
            {kind.type === 'confirmResetPassword' ? (
              <label>
                New password
                <input type="password" name="new-password" autoComplete="new-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
              </label>
            ) : null}
            {error ? (
              <p role="alert" class="error">
                {error}
              </p>
            ) : null}
            <button type="submit" class="primary" disabled={state === 'busy'}>
              {kind.button}
            </button>
          </>
        )}
      </form>
    </main>
  );
}

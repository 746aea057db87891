/**
 * The admin dashboard (docs/reference/dashboard.md): sign-in, then a frame with a navigation landmark and one screen
 * per URL. Every name a person (or a screen reader, or a browser test) looks for is the
 * contract's exact text.
 */
import './styles.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { signOut } from './api';
import { Link } from './components';
import { href, navigate, useLocation } from './router';
import { ApiDocs } from './screens/api-docs';
import { Backups } from './screens/backups';
import { Confirm } from './screens/confirm';
import { Cron } from './screens/cron';
import { Live } from './screens/live';
import { Logs } from './screens/logs';
import { Overview } from './screens/overview';
import { Photos } from './screens/photos';
import { SignIn } from './screens/sign-in';
import { TableList, TableScreen } from './screens/tables';
import { Users } from './screens/users';
import { getSession, onSessionChange } from './session';

const SCREENS = [
  ['overview', 'Overview'],
  ['tables', 'Tables'],
  ['users', 'Users'],
  ['photos', 'Photos'],
  ['cron', 'Cron'],
  ['backups', 'Backups'],
  ['logs', 'Logs'],
  ['live', 'Live'],
  ['api', 'API'],
] as const;

function useSession() {
  const [session, setSession] = useState(getSession);
  useEffect(() => onSessionChange(() => setSession(getSession())), []);
  return session;
}

function Screen() {
  const { parts, query, malformed } = useLocation();
  const [screen = 'overview', item] = parts;
  if (malformed) return <NotFound />;
  switch (screen) {
    case 'tables':
      return item ? <TableScreen name={item} query={query} /> : <TableList />;
    case 'users':
      return <Users table={item} />;
    case 'photos':
      return <Photos />;
    case 'cron':
      return <Cron />;
    case 'backups':
      return <Backups />;
    case 'logs':
      return <Logs />;
    case 'live':
      return <Live />;
    case 'api':
      return <ApiDocs />;
    case 'overview':
      return <Overview />;
    default:
      return <NotFound />;
  }
}

/** An address the dashboard has no screen for, or cannot read. */
function NotFound() {
  return (
    <section class="not-found" data-testid="not-found">
      <h1>Not found</h1>
      <p>There is no dashboard screen at this address.</p>
      <p>
        <a
          href={href([])}
          onClick={(e) => {
            e.preventDefault();
            navigate(href([]));
          }}
        >
          Back to the overview
        </a>
      </p>
    </section>
  );
}

function Frame() {
  const { parts } = useLocation();
  const current = parts[0] ?? 'overview';
  const [busy, setBusy] = useState(false);
  const session = getSession();
  const out = async () => {
    setBusy(true);
    await signOut();
    navigate(href([]), true);
  };
  const title = SCREENS.find(([k]) => k === current)?.[1] ?? 'Overview';
  const mounted = useRef(false);
  useEffect(() => {
    document.title = `${title} · Tablebase`;
    // A screen change moves focus to its heading, so keyboard and screen-reader users start there.
    if (mounted.current) {
      const h1 = document.querySelector<HTMLElement>('#main h1');
      if (h1) {
        h1.tabIndex = -1;
        h1.focus({ preventScroll: true });
      }
    }
    mounted.current = true;
  }, [title]);
  return (
    <div class="frame">
      <header class="top">
        <span class="brand">Tablebase</span>
        <nav aria-label="Dashboard">
          <ul>
            {SCREENS.map(([key, label]) => (
              <li key={key}>
                <Link href={href([key])} current={current === key}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="email" title={session?.email}>
            {session?.email}
          </span>
          <button type="button" onClick={out} disabled={busy}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        <Screen />
      </main>
    </div>
  );
}

function App() {
  const session = useSession();
  const { parts, query } = useLocation();
  // An email link's page is for whoever holds the link, signed in to the dashboard or not.
  if (parts[0] === 'confirm') return <Confirm kind={parts[1]} token={query.get('token') ?? ''} />;
  return session ? <Frame /> : <SignIn />;
}

render(<App />, document.getElementById('app')!);

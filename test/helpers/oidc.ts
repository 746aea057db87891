/**
 * A real OpenID Provider (`oidc-provider`) on loopback for end-to-end sign-in tests, plus a
 * minimal "browser" that follows the authorization-code flow over HTTP with a cookie jar.
 *
 * Interactions (login, consent) finish without forms: the test says which account signs in next
 * (`op.nextAccount = 'ann'`), and the interaction URL completes login and consent for it.
 */
import { createServer, type Server } from 'node:http';
import Provider from 'oidc-provider';

export interface TestAccount {
  email: string;
  emailVerified: boolean;
}

export interface TestOp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, TestAccount>;
  /** The account id the next interaction signs in as. */
  nextAccount: string;
  close(): Promise<void>;
}

export interface OpOptions {
  /** From `freePort()`, chosen before the Tablebase server starts (it needs OIDC_ISSUER). */
  port: number;
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  accounts: Record<string, TestAccount>;
  /** The client's registered method (oidc-provider's default: client_secret_basic). */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post';
}

export async function startOidcProvider(o: OpOptions): Promise<TestOp> {
  const { port, clientId, clientSecret, redirectUris, accounts } = o;
  const issuer = `http://127.0.0.1:${port}`;
  const table = new Map(Object.entries(accounts));
  const op: TestOp = { issuer, clientId, clientSecret, accounts: table, nextAccount: Object.keys(accounts)[0]!, close: async () => {} };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: o.tokenEndpointAuthMethod ?? 'client_secret_basic',
      },
    ],
    cookies: { keys: ['test-cookie-key-' + port] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: unknown, sub: string) => {
      const a = table.get(sub);
      if (!a) return undefined;
      return { accountId: sub, claims: async () => ({ sub, email: a.email, email_verified: a.emailVerified, name: sub }) };
    },
  } as never);
  const callback = provider.callback();
  const server: Server = createServer(async (req, res) => {
    const m = /^\/interaction\/([^/?]+)/.exec(req.url ?? '');
    if (!m) return callback(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      const accountId = op.nextAccount;
      let result: Record<string, unknown>;
      if (details.prompt.name === 'login') result = { login: { accountId } };
      else {
        const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
        grant.addOIDCScope(String(details.params.scope));
        result = { consent: { grantId: await grant.save() } };
      }
      await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  op.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return op;
}

/**
 * Follows redirects from `url` like a browser would, keeping cookies per origin, and stops at the
 * first Location outside `stopOrigins`' complement: answers that URL (typically the app's
 * `redirectTo` with the token fragment, or the Tablebase callback when `stopAt` says so).
 */
export async function browse(url: string, stop: (url: string) => boolean, maxHops = 20): Promise<string> {
  const jar = new Map<string, Map<string, string>>();
  let current = url;
  for (let i = 0; i < maxHops; i++) {
    if (stop(current)) return current;
    const origin = new URL(current).origin;
    const cookies = jar.get(origin) ?? new Map<string, string>();
    jar.set(origin, cookies);
    const res = await fetch(current, { redirect: 'manual', headers: cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {} });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`no redirect from ${current}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer().catch(() => undefined);
    current = new URL(location, current).href;
  }
  throw new Error('too many redirects');
}

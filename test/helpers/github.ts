/**
 * A loopback stand-in for GitHub's OAuth endpoints and user APIs (the `github` preset, docs/reference/auth.md):
 * authorize → code (remembering the PKCE challenge), access_token (checks the client secret and
 * the PKCE verifier), /user and /user/emails for the account the test picks next.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { freePort } from './server.js';

export interface GitHubUser {
  id: number;
  login: string;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export interface FakeGitHub {
  base: string;
  next: GitHubUser;
  /** Token requests seen, for assertions. */
  tokenRequests: URLSearchParams[];
  close(): Promise<void>;
}

export async function startFakeGitHub(clientId: string, clientSecret: string): Promise<FakeGitHub> {
  const port = await freePort();
  const codes = new Map<string, { challenge: string; user: GitHubUser; redirectUri: string }>();
  const tokens = new Map<string, GitHubUser>();
  const gh: FakeGitHub = { base: `http://127.0.0.1:${port}`, next: { id: 1, login: 'x', emails: [] }, tokenRequests: [], close: async () => {} };
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', gh.base);
    if (url.pathname === '/login/oauth/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== clientId || q.get('code_challenge_method') !== 'S256') return json(res, 400, { error: 'bad_request' });
      const code = randomBytes(10).toString('hex');
      codes.set(code, { challenge: q.get('code_challenge')!, user: gh.next, redirectUri: q.get('redirect_uri')! });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      let raw = '';
      req.on('data', (d) => (raw += d));
      req.on('end', () => {
        const form = new URLSearchParams(raw);
        gh.tokenRequests.push(form);
        const basic = req.headers.authorization?.startsWith('Basic ') ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString() : null;
        const [id, secret] = basic ? basic.split(':').map(decodeURIComponent) : [form.get('client_id'), form.get('client_secret')];
        const entry = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const ok =
          id === clientId && secret === clientSecret && entry && createHash('sha256').update(verifier).digest('base64url') === entry.challenge && form.get('redirect_uri') === entry.redirectUri;
        if (!ok) return json(res, 200, { error: 'bad_verification_code' }); // GitHub answers errors with 200
        const token = randomBytes(16).toString('hex');
        tokens.set(token, entry.user);
        json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      });
      return;
    }
    const user = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (!user) return json(res, 401, { message: 'Bad credentials' });
    if (url.pathname === '/user') return json(res, 200, { id: user.id, login: user.login });
    if (url.pathname === '/user/emails') return json(res, 200, user.emails);
    json(res, 404, { message: 'Not Found' });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  gh.close = () => new Promise<void>((r) => server.close(() => r()));
  return gh;
}

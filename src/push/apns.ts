/**
 * APNs over HTTP/2 (`node:http2`). One long-lived session per endpoint carries every request as a
 * multiplexed stream; when the server sends GOAWAY (or the session closes or fails) the next send
 * opens a new one, and streams already running on the old one finish there. The ES256 provider
 * token (`kid` = key id, `iss` = team id; via `jose`) is reused and renewed after 50 minutes,
 * since Apple refuses tokens older than 60 minutes and asks for renewals no more than every 20.
 * TLS is verified with Node's default CAs plus NODE_EXTRA_CA_CERTS.
 */
import http2, { type ClientHttp2Session } from 'node:http2';
import { SignJWT, type CryptoKey } from 'jose';
import { describe, isTransient, retryAfterMs, SEND_TIMEOUT_MS, type Outcome, type PushPayload, type PushProvider } from './provider.js';

export const APNS_PRODUCTION = 'https://api.push.apple.com';
export const APNS_SANDBOX = 'https://api.sandbox.push.apple.com';
const TOKEN_RENEW_MS = 50 * 60 * 1000;
/** Apple's limit for alert payloads. */
const MAX_PAYLOAD = 4096;
const DEAD_REASONS = new Set(['BadDeviceToken', 'Unregistered', 'DeviceTokenNotForTopic']);
const STALE_TOKEN = new Set(['ExpiredProviderToken', 'InvalidProviderToken']);

export interface ApnsConfig {
  key: CryptoKey;
  keyId: string;
  teamId: string;
  topic: string;
  endpoint: string;
  concurrency?: number;
}

export function apnsPayload(p: PushPayload): string {
  const { aps: _ignored, ...data } = p.data ?? {};
  const aps = { alert: { title: p.title, body: p.body }, ...(p.badge !== undefined ? { badge: p.badge } : {}), ...(p.sound ? { sound: p.sound } : {}) };
  return JSON.stringify({ ...data, aps });
}

export function apnsProvider(c: ApnsConfig): PushProvider {
  let session: ClientHttp2Session | undefined;
  let token: { jwt: string; at: number } | undefined;
  let signing: Promise<string> | undefined;

  const providerToken = (): Promise<string> => {
    if (token && Date.now() - token.at < TOKEN_RENEW_MS) return Promise.resolve(token.jwt);
    return (signing ??= new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: c.keyId })
      .setIssuer(c.teamId)
      .setIssuedAt()
      .sign(c.key)
      .then((jwt) => ((token = { jwt, at: Date.now() }), jwt))
      .finally(() => (signing = undefined)));
  };

  const connect = (): ClientHttp2Session => {
    if (session && !session.closed && !session.destroyed) return session;
    const s = http2.connect(c.endpoint);
    const drop = () => {
      if (session === s) session = undefined;
    };
    // GOAWAY: the server will take no new streams here; running ones finish, new ones reconnect.
    s.on('goaway', drop);
    s.on('close', drop);
    s.on('error', drop);
    s.unref();
    session = s;
    return s;
  };

  function request(path: string, headers: Record<string, string>, body: string): Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string }> {
    return new Promise((resolve, reject) => {
      let req: http2.ClientHttp2Stream;
      try {
        req = connect().request({ ':method': 'POST', ':path': path, ...headers });
      } catch (err) {
        session = undefined;
        reject(err);
        return;
      }
      let status = 0;
      let resHeaders: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      req.setTimeout(SEND_TIMEOUT_MS, () => req.close(http2.constants.NGHTTP2_CANCEL));
      req.on('response', (h) => {
        status = Number(h[':status']);
        resHeaders = h;
      });
      req.on('data', (d: Buffer) => chunks.length < 16 && chunks.push(d));
      req.on('end', () => (status ? resolve({ status, headers: resHeaders, body: Buffer.concat(chunks).toString('utf8') }) : reject(new Error('APNs stream ended without a response'))));
      req.on('close', () => !status && reject(new Error('APNs stream closed')));
      req.on('error', reject);
      req.end(body);
    });
  }

  return {
    platform: 'apns',
    concurrency: c.concurrency ?? 200,
    async send(target: string, payload: PushPayload, expiresAtMs: number): Promise<Outcome> {
      const body = apnsPayload(payload);
      if (Buffer.byteLength(body) > MAX_PAYLOAD) return { kind: 'failed', reason: 'APNs payload over 4096 bytes' };
      if (!/^[0-9a-fA-F]{1,200}$/.test(target)) return { kind: 'dead', reason: 'BadDeviceToken' };
      let res: Awaited<ReturnType<typeof request>>;
      try {
        const jwt = await providerToken();
        res = await request(
          `/3/device/${target}`,
          {
            authorization: `bearer ${jwt}`,
            'apns-topic': c.topic,
            'apns-push-type': 'alert',
            'apns-priority': '10',
            'apns-expiration': String(Math.floor(expiresAtMs / 1000)),
            'content-type': 'application/json',
          },
          body,
        );
      } catch (err) {
        return { kind: 'retry', reason: describe(err) };
      }
      if (res.status === 200) return { kind: 'sent' };
      let reason = '';
      try {
        reason = String((JSON.parse(res.body) as { reason?: unknown }).reason ?? '');
      } catch {
        // no JSON body: the status alone decides
      }
      if (res.status === 410 || DEAD_REASONS.has(reason)) return { kind: 'dead', reason: `APNs ${res.status} ${reason}`.trim() };
      if (res.status === 403 && STALE_TOKEN.has(reason)) {
        token = undefined;
        return { kind: 'retry', reason: `APNs 403 ${reason}` };
      }
      const ra = res.headers['retry-after'];
      if (isTransient(res.status)) return { kind: 'retry', reason: `APNs ${res.status} ${reason}`.trim(), retryAfterMs: retryAfterMs(Array.isArray(ra) ? ra[0] : ra) };
      return { kind: 'failed', reason: `APNs ${res.status} ${reason}`.trim() };
    },
    close: async () => {
      const s = session;
      session = undefined;
      if (s && !s.closed) await new Promise<void>((r) => s.close(() => r()));
    },
  };
}

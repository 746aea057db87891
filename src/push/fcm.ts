/**
 * FCM HTTP v1. The service account's key signs an RS256 assertion (RFC 7523, via `jose`) that the
 * token URL exchanges for an OAuth2 access token; the token is cached until a minute before it
 * expires and shared by every concurrent send (one exchange in flight at a time). Messages go to
 * `POST {endpoint}/v1/projects/{projectId}/messages:send` with the bearer token, over https.ts
 * (TLS verified; NODE_EXTRA_CA_CERTS honoured).
 */
import { SignJWT, type CryptoKey } from 'jose';
import { header, httpsPost, keepAliveAgent, type HttpsAnswer } from './https.js';
import { describe, isTransient, retryAfterMs, secondsLeft, SEND_TIMEOUT_MS, type Outcome, type PushPayload, type PushProvider } from './provider.js';

export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
export const FCM_ENDPOINT = 'https://fcm.googleapis.com';
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const EARLY_MS = 60_000;

export interface FcmConfig {
  projectId: string;
  clientEmail: string;
  privateKey: CryptoKey;
  endpoint: string;
  tokenUrl: string;
  concurrency?: number;
}

/** FCM `data` values must be strings; others travel JSON-encoded. */
function stringData(data: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (!data) return undefined;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

export function fcmMessage(token: string, p: PushPayload, expiresAtMs: number) {
  const ttl = secondsLeft(expiresAtMs);
  return {
    message: {
      token,
      notification: { title: p.title, body: p.body },
      data: stringData(p.data),
      android: { ttl: `${ttl}s`, ...(p.sound ? { notification: { sound: p.sound } } : {}) },
      ...(p.badge !== undefined || p.sound ? { apns: { payload: { aps: { ...(p.badge !== undefined ? { badge: p.badge } : {}), ...(p.sound ? { sound: p.sound } : {}) } } } } : {}),
    },
  };
}

interface FcmError {
  error?: { status?: string; message?: string; details?: { '@type'?: string; errorCode?: string }[] };
}

/** docs/reference/push.md: UNREGISTERED, or a 400/404 about the token, means the device is gone. */
function isDeadToken(status: number, body: FcmError): boolean {
  const codes = (body.error?.details ?? []).map((d) => d.errorCode);
  if (codes.includes('UNREGISTERED') || status === 404) return true;
  return status === 400 && codes.includes('INVALID_ARGUMENT') && /registration token|token/i.test(body.error?.message ?? '');
}

export function fcmProvider(c: FcmConfig): PushProvider {
  const concurrency = c.concurrency ?? 50;
  const agent = keepAliveAgent(concurrency);
  let cached: { token: string; until: number } | undefined;
  let inflight: Promise<string> | undefined;

  async function exchange(): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ scope: FCM_SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(c.clientEmail)
      .setSubject(c.clientEmail)
      .setAudience(c.tokenUrl)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(c.privateKey);
    const res = await httpsPost(
      agent,
      c.tokenUrl,
      { 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
      SEND_TIMEOUT_MS,
    );
    let body: { access_token?: string; expires_in?: number } = {};
    try {
      body = JSON.parse(res.body) as typeof body;
    } catch {
      // not JSON: refused below
    }
    if (res.status !== 200 || typeof body.access_token !== 'string') throw new Error(`FCM token exchange answered ${res.status}`);
    const lifetime = Math.max(0, Number(body.expires_in ?? 3600) * 1000 - EARLY_MS);
    cached = { token: body.access_token, until: Date.now() + lifetime };
    return body.access_token;
  }

  const accessToken = (): Promise<string> => {
    if (cached && cached.until > Date.now()) return Promise.resolve(cached.token);
    return (inflight ??= exchange().finally(() => (inflight = undefined)));
  };

  const url = `${c.endpoint.replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(c.projectId)}/messages:send`;
  return {
    platform: 'fcm',
    concurrency,
    async send(target: string, payload: PushPayload, expiresAtMs: number): Promise<Outcome> {
      let res: HttpsAnswer;
      let bearer: string;
      try {
        bearer = await accessToken();
        res = await httpsPost(agent, url, { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, JSON.stringify(fcmMessage(target, payload, expiresAtMs)), SEND_TIMEOUT_MS);
      } catch (err) {
        return { kind: 'retry', reason: describe(err) };
      }
      if (res.status >= 200 && res.status < 300) return { kind: 'sent' };
      let body: FcmError = {};
      try {
        body = JSON.parse(res.body) as FcmError;
      } catch {
        // the status alone decides
      }
      if (res.status === 401) {
        // The access token was refused (revoked or rotated): exchange a new one on the next try.
        if (cached?.token === bearer) cached = undefined;
        return { kind: 'retry', reason: 'FCM 401' };
      }
      if (isDeadToken(res.status, body)) return { kind: 'dead', reason: `FCM ${res.status} ${body.error?.details?.[0]?.errorCode ?? body.error?.status ?? ''}`.trim() };
      if (isTransient(res.status)) return { kind: 'retry', reason: `FCM ${res.status}`, retryAfterMs: retryAfterMs(header(res.headers, 'retry-after')) };
      return { kind: 'failed', reason: `FCM ${res.status} ${body.error?.status ?? ''}`.trim() };
    },
    close: async () => agent.destroy(),
  };
}

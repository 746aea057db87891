/**
 * Loopback stand-ins for the three push services, over TLS with a throw-away CA (push-ca.ts), on
 * one HTTP/2 server that also speaks HTTP/1.1 (fetch uses 1.1; APNs requires HTTP/2). Each checks
 * what the real service checks and refuses otherwise:
 * - Web Push (RFC 8030): the VAPID JWT (RFC 8292: ES256 under the `k` key, `aud` = our origin,
 *   `exp` within 24 h) and the aes128gcm body (RFC 8291), decrypted with the subscription's keys;
 * - FCM: the service-account assertion (RS256, iss, aud = token URL, scope) at the token URL, then
 *   the bearer token it issued on `/v1/projects/{id}/messages:send`;
 * - APNs: HTTP/2, the ES256 provider token (kid, iss = team), `apns-topic`, `apns-push-type`, the
 *   `/3/device/{token}` path.
 * Per-token behaviour: `ok`, `dead`, `fail-once` (503 then success), `hang` (never answers).
 */
import { createECDH, createPublicKey, hkdfSync, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto';
import http2 from 'node:http2';
import { jwtVerify, importJWK, decodeProtectedHeader, type JWTPayload } from 'jose';

export type Behaviour = 'ok' | 'dead' | 'fail-once' | 'hang';

export interface Received {
  platform: 'web' | 'fcm' | 'apns';
  /** The device token, or the web subscription id. */
  token: string;
  /** The decrypted / parsed notification. */
  payload: unknown;
  headers: Record<string, string | string[] | undefined>;
  at: number;
}

export interface StandInKeys {
  vapidPublicKey: string;
  fcm: { projectId: string; clientEmail: string; publicKey: KeyObject };
  apns: { publicKey: KeyObject; keyId: string; teamId: string; topic: string };
}

export interface WebSubscriptionKeys {
  id: string;
  subscription: { endpoint: string; keys: { p256dh: string; auth: string } };
}

const b64u = (b: Buffer) => b.toString('base64url');

/** RFC 8291 §3.4 / RFC 8188: decrypts a single-record aes128gcm body with the user agent's keys. */
export function decryptAes128gcm(body: Buffer, uaPrivate: Buffer, uaPublic: Buffer, authSecret: Buffer): Buffer {
  const salt = body.subarray(0, 16);
  const idlen = body[20]!;
  const asPublic = body.subarray(21, 21 + idlen);
  const ciphertext = body.subarray(21 + idlen);
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(uaPrivate);
  const shared = ecdh.computeSecret(asPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', shared, authSecret, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const d = createDecipheriv('aes-128-gcm', cek, nonce);
  d.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const plain = Buffer.concat([d.update(ciphertext.subarray(0, ciphertext.length - 16)), d.final()]);
  // The last record ends with the delimiter 0x02 followed by optional zero padding.
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end--;
  if (plain[end] !== 2) throw new Error('bad padding delimiter');
  return plain.subarray(0, end);
}

export class PushStandIns {
  readonly received: Received[] = [];
  /** Requests that reached a stand-in, answered or not (a `hang` shows up here only). */
  readonly seen: { platform: string; token: string; at: number }[] = [];
  readonly errors: string[] = [];
  readonly behaviour = new Map<string, Behaviour>();
  readonly attempts = new Map<string, number[]>();
  tokenExchanges = 0;
  apnsSessions = 0;
  #server: http2.Http2SecureServer;
  #sessions = new Set<http2.ServerHttp2Session>();
  #sockets = new Set<import('node:net').Socket>();
  #issued = new Set<string>();
  #web = new Map<string, { priv: Buffer; pub: Buffer; auth: Buffer }>();
  #hanging: (() => void)[] = [];
  /** Provider JWTs already verified: real services cache them too, and it keeps the bench honest about the server's cost. */
  #verified = new Set<string>();
  origin = '';

  constructor(
    tls: { key: string; cert: string },
    readonly keys: StandInKeys,
  ) {
    this.#server = http2.createSecureServer({ ...tls, allowHTTP1: true }, (req, res) => void this.#handle(req, res));
    this.#server.on('connection', (socket: import('node:net').Socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    this.#server.on('session', (session: http2.ServerHttp2Session) => {
      this.apnsSessions++;
      this.#sessions.add(session);
      session.on('close', () => this.#sessions.delete(session));
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.origin = `https://127.0.0.1:${(this.#server.address() as { port: number }).port}`;
    return this.origin;
  }

  async close(): Promise<void> {
    for (const release of this.#hanging.splice(0)) release();
    const closed = new Promise<void>((r) => this.#server.close(() => r()));
    for (const s of this.#sessions) s.destroy();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  /** Sends GOAWAY on every open HTTP/2 session, as APNs does before it closes a connection. */
  goaway(): void {
    for (const s of this.#sessions) if (!s.closed) s.goaway(http2.constants.NGHTTP2_NO_ERROR);
  }

  /** Answers the requests held by `hang` (with 503) so the server can retry them. */
  releaseHanging(): void {
    for (const release of this.#hanging.splice(0)) release();
  }

  /** A browser-side subscription whose keys this stand-in holds, to decrypt what it receives. */
  webSubscription(): WebSubscriptionKeys {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const id = b64u(randomBytes(9));
    const auth = randomBytes(16);
    this.#web.set(id, { priv: ecdh.getPrivateKey(), pub: ecdh.getPublicKey(), auth });
    return { id, subscription: { endpoint: `${this.origin}/wp/${id}`, keys: { p256dh: b64u(ecdh.getPublicKey()), auth: b64u(auth) } } };
  }

  forToken(token: string): Received[] {
    return this.received.filter((r) => r.token === token);
  }

  async #handle(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const path = req.url;
    try {
      if (req.method === 'POST' && path.startsWith('/wp/')) return await this.#webPush(req, res, path.slice(4), body);
      if (req.method === 'POST' && path === '/token') return await this.#fcmToken(res, body);
      if (req.method === 'POST' && /^\/v1\/projects\/[^/]+\/messages:send$/.test(path)) return await this.#fcmSend(req, res, path, body);
      if (req.method === 'POST' && path.startsWith('/3/device/')) return await this.#apns(req, res, path.slice('/3/device/'.length), body);
      res.writeHead(404).end();
    } catch (err) {
      this.errors.push(`${path}: ${(err as Error).message}`);
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ reason: 'StandInRefused' }));
    }
  }

  /** Common per-token behaviour; answers true when the caller should proceed to accept. */
  async #behave(platform: Received['platform'], token: string, res: http2.Http2ServerResponse, dead: () => void): Promise<boolean> {
    this.seen.push({ platform, token, at: Date.now() });
    const tries = this.attempts.get(token) ?? [];
    tries.push(Date.now());
    this.attempts.set(token, tries);
    const b = this.behaviour.get(token) ?? 'ok';
    if (b === 'hang') {
      await new Promise<void>((r) => this.#hanging.push(r));
      res.writeHead(503).end();
      return false;
    }
    if (b === 'dead') {
      dead();
      return false;
    }
    if (b === 'fail-once' && tries.length === 1) {
      res.writeHead(503, { 'retry-after': '0' }).end();
      return false;
    }
    return true;
  }

  async #webPush(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, id: string, body: Buffer): Promise<void> {
    const auth = String(req.headers.authorization ?? '');
    const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(auth);
    if (!m) throw new Error('no VAPID authorization');
    if (m[2] !== this.keys.vapidPublicKey) throw new Error('VAPID k is not the configured key');
    if (!this.#verified.has(m[1]!)) {
      const pub = Buffer.from(m[2]!, 'base64url');
      const key = await importJWK({ kty: 'EC', crv: 'P-256', x: b64u(pub.subarray(1, 33)), y: b64u(pub.subarray(33, 65)) }, 'ES256');
      const { payload } = await jwtVerify(m[1]!, key, { audience: this.origin, algorithms: ['ES256'] });
      if (!payload.exp || payload.exp > Date.now() / 1000 + 24 * 3600) throw new Error('VAPID exp over 24 h');
      if (!String(payload.sub).startsWith('mailto:')) throw new Error('VAPID sub');
      this.#verified.add(m[1]!);
    }
    if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error('not aes128gcm');
    if (!req.headers.ttl) throw new Error('no TTL');
    const sub = this.#web.get(id);
    if (!sub) throw new Error('unknown subscription');
    const plain = decryptAes128gcm(body, sub.priv, sub.pub, sub.auth);
    if (!(await this.#behave('web', id, res, () => res.writeHead(410).end()))) return;
    this.received.push({ platform: 'web', token: id, payload: JSON.parse(plain.toString('utf8')), headers: req.headers, at: Date.now() });
    res.writeHead(201).end();
  }

  async #fcmToken(res: http2.Http2ServerResponse, body: Buffer): Promise<void> {
    const form = new URLSearchParams(body.toString('utf8'));
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') throw new Error('grant_type');
    const { payload } = await jwtVerify(form.get('assertion') ?? '', this.keys.fcm.publicKey, { audience: `${this.origin}/token`, issuer: this.keys.fcm.clientEmail, algorithms: ['RS256'] });
    if (!String((payload as JWTPayload & { scope?: string }).scope).includes('https://www.googleapis.com/auth/firebase.messaging')) throw new Error('scope');
    this.tokenExchanges++;
    const token = b64u(randomBytes(24));
    this.#issued.add(token);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, expires_in: 3599, token_type: 'Bearer' }));
  }

  async #fcmSend(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, path: string, body: Buffer): Promise<void> {
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (!bearer || !this.#issued.has(bearer)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 401, status: 'UNAUTHENTICATED' } }));
      this.errors.push('FCM bearer not issued');
      return;
    }
    if (path !== `/v1/projects/${this.keys.fcm.projectId}/messages:send`) throw new Error('wrong project');
    const { message } = JSON.parse(body.toString('utf8')) as { message: { token: string } };
    const dead = () =>
      res.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: {
            code: 404,
            status: 'NOT_FOUND',
            message: 'Requested entity was not found.',
            details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }],
          },
        }),
      );
    if (!(await this.#behave('fcm', message.token, res, dead))) return;
    this.received.push({ platform: 'fcm', token: message.token, payload: message, headers: req.headers, at: Date.now() });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: `projects/${this.keys.fcm.projectId}/messages/1` }));
  }

  async #apns(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, token: string, body: Buffer): Promise<void> {
    if (req.httpVersion !== '2.0') throw new Error('APNs needs HTTP/2');
    const jwt = /^bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1] ?? '';
    if (!this.#verified.has(jwt)) {
      const header = decodeProtectedHeader(jwt);
      if (header.kid !== this.keys.apns.keyId) throw new Error('kid');
      const { payload } = await jwtVerify(jwt, this.keys.apns.publicKey, { issuer: this.keys.apns.teamId, algorithms: ['ES256'] });
      if (!payload.iat || payload.iat < Date.now() / 1000 - 3600) throw new Error('provider token older than an hour');
      this.#verified.add(jwt);
    }
    if (req.headers['apns-topic'] !== this.keys.apns.topic) throw new Error('apns-topic');
    if (req.headers['apns-push-type'] !== 'alert') throw new Error('apns-push-type');
    if (!/^[0-9a-f]+$/i.test(token)) throw new Error('path');
    const dead = () => res.writeHead(410, { 'content-type': 'application/json' }).end(JSON.stringify({ reason: 'Unregistered', timestamp: Date.now() }));
    if (!(await this.#behave('apns', token, res, dead))) return;
    this.received.push({ platform: 'apns', token, payload: JSON.parse(body.toString('utf8')), headers: req.headers, at: Date.now() });
    res.writeHead(200, { 'apns-id': b64u(randomBytes(16)) }).end();
  }
}

export { createPublicKey };

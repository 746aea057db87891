/**
 * The push service (docs/reference/push.md): devices (register, list, unregister), `send` (the runtime's
 * PushSender behind `ctx.push.send`), and the delivery worker. Takes and returns values; the HTTP
 * routes and the composition root call it.
 */
import { ApiError, badRequest } from '../core/errors.js';
import type { Jwt, Logger, PushMessage, PushQueued } from '../define/types.js';
import type { SqlRunner, Tx } from '../storage/driver.js';
import type { PushSetup } from './config.js';
import { DEFAULT_TTL_SECONDS, PLATFORMS, type Platform, type PushPayload } from './provider.js';
import { privateEndpointReason } from './endpoint-check.js';
import { pushStore, type Device } from './store.js';
import { DeliveryWorker, type PushCounts, type PushFailure } from './worker.js';

/** Most target users in one send, and most bytes of one message's JSON (APNs allows 4096 in all). */
export const MAX_TARGET_USERS = 1000;
export const MAX_PAYLOAD_BYTES = 3584;
/** Most devices one list answers. */
export const MAX_LIST = 500;
const MAX_TOKEN = 4096;

export interface PushServiceOptions {
  setup: PushSetup;
  dialect: import('../storage/dialect.js').Dialect;
  reader: SqlRunner;
  write: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;
  newId: (prefix: string) => string;
  log: Logger;
  releaseAtStart: boolean;
}

export interface PushMetrics extends PushCounts {
  pending: number;
}

export type RegisterBody = { platform: 'web'; subscription: { endpoint: string; keys: { p256dh: string; auth: string } } } | { platform: 'fcm' | 'apns'; token: string };

const isString = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

function checkMessage(m: PushMessage): { userIds: string[]; payload: PushPayload } {
  if (typeof m !== 'object' || m === null) throw new TypeError('push.send: a message object is required');
  const userIds = m.userIds ?? (m.userId === undefined ? [] : [m.userId]);
  if (!Array.isArray(userIds) || userIds.length === 0 || !userIds.every((u) => isString(u, 256))) throw new TypeError('push.send: userId or userIds (non-empty strings) is required');
  if (userIds.length > MAX_TARGET_USERS) throw new TypeError(`push.send: at most ${MAX_TARGET_USERS} userIds per send`);
  if (typeof m.title !== 'string' || typeof m.body !== 'string') throw new TypeError('push.send: title and body must be strings');
  if (m.badge !== undefined && (!Number.isInteger(m.badge) || m.badge < 0)) throw new TypeError('push.send: badge must be a whole number');
  if (m.sound !== undefined && typeof m.sound !== 'string') throw new TypeError('push.send: sound must be a string');
  if (m.ttlSeconds !== undefined && (!Number.isInteger(m.ttlSeconds) || m.ttlSeconds < 0 || m.ttlSeconds > DEFAULT_TTL_SECONDS)) throw new TypeError('push.send: ttlSeconds must be 0 to 2419200');
  if (m.data !== undefined && (typeof m.data !== 'object' || m.data === null || Array.isArray(m.data))) throw new TypeError('push.send: data must be an object');
  const payload: PushPayload = { title: m.title, body: m.body, data: m.data, badge: m.badge, sound: m.sound, ttlSeconds: m.ttlSeconds };
  return { userIds, payload };
}

export function createPushService(o: PushServiceOptions) {
  const store = pushStore(o.dialect);
  const { providers } = o.setup;
  const worker = new DeliveryWorker({
    store,
    providers,
    write: o.write,
    reader: o.reader,
    log: o.log,
    maxAttempts: o.setup.maxAttempts,
    retryBaseMs: o.setup.retryBaseMs,
    releaseAtStart: o.releaseAtStart,
  });
  const caller = (jwt: Jwt | null): string => {
    if (!jwt) throw new ApiError('UNAUTHENTICATED');
    return jwt.userId;
  };

  return {
    configured: (): Platform[] => PLATFORMS.filter((p) => providers.has(p)),
    vapidPublicKey(): string {
      if (!o.setup.vapidPublicKey) throw new ApiError('NOT_FOUND', 'Web Push is not configured');
      return o.setup.vapidPublicKey;
    },

    /** `ctx.push.send`: durably queues one delivery per device of the target users before it resolves. */
    async send(message: PushMessage, tx?: Tx): Promise<PushQueued> {
      const { userIds, payload } = checkMessage(message);
      const json = JSON.stringify(payload);
      if (Buffer.byteLength(json) > MAX_PAYLOAD_BYTES) throw new TypeError(`push.send: the message is over ${MAX_PAYLOAD_BYTES} bytes as JSON`);
      const now = Date.now();
      const v = { payload: json, now, expiresAt: now + (payload.ttlSeconds ?? DEFAULT_TTL_SECONDS) * 1000, newId: () => o.newId('pq') };
      // Inside a write job (a before-hook): queue in that transaction, so it commits or rolls back with it.
      const caps = { perUser: o.setup.maxPendingPerUser, total: o.setup.maxPending };
      const queued = tx ? await store.enqueue(tx, userIds, v, caps) : await o.write((t) => store.enqueue(t, userIds, v, caps));
      if (queued > 0) setTimeout(() => worker.wake(), tx ? 5 : 0).unref();
      return { queued };
    },

    async register(jwt: Jwt | null, body: RegisterBody): Promise<Device> {
      const userId = caller(jwt);
      const platform = body?.platform;
      if (!PLATFORMS.includes(platform)) throw badRequest('/platform', 'platform must be web, fcm or apns');
      if (!providers.has(platform)) throw badRequest('/platform', `${platform} push is not configured on this server`);
      let token: string;
      let subscription: string | null = null;
      if (body.platform === 'web') {
        const s = body.subscription;
        if (!s || !isString(s.endpoint, 2048)) throw badRequest('/subscription/endpoint', 'subscription.endpoint is required');
        let url: URL;
        try {
          url = new URL(s.endpoint);
        } catch {
          throw badRequest('/subscription/endpoint', 'subscription.endpoint must be a URL');
        }
        if (url.protocol !== 'https:') throw badRequest('/subscription/endpoint', 'subscription.endpoint must be an https:// URL');
        const hosts = o.setup.webEndpointHosts;
        const listed = hosts?.some((h) => url.hostname === h || url.hostname.endsWith(`.${h}`)) ?? false;
        if (hosts && !listed) throw badRequest('/subscription/endpoint', 'subscription.endpoint is not a push service this server sends to');
        // Not an allowed host by name: it must be public (no SSRF into the server's own network).
        const reason = listed ? undefined : await privateEndpointReason(url.hostname);
        if (reason) throw badRequest('/subscription/endpoint', `subscription.endpoint is not a public push service: ${reason}`);
        if (!isString(s.keys?.p256dh, 256) || !/^[A-Za-z0-9_-]+=*$/.test(s.keys.p256dh)) throw badRequest('/subscription/keys/p256dh', 'subscription.keys.p256dh must be base64url');
        if (!isString(s.keys?.auth, 64) || !/^[A-Za-z0-9_-]+=*$/.test(s.keys.auth)) throw badRequest('/subscription/keys/auth', 'subscription.keys.auth must be base64url');
        token = url.href;
        subscription = JSON.stringify({ endpoint: url.href, keys: { p256dh: s.keys.p256dh, auth: s.keys.auth } });
      } else {
        if (!isString(body.token, MAX_TOKEN)) throw badRequest('/token', 'token must be a non-empty string');
        if (body.platform === 'apns' && !/^[0-9a-fA-F]{16,200}$/.test(body.token)) throw badRequest('/token', 'an APNs token is hexadecimal');
        token = body.token;
      }
      const now = new Date().toISOString();
      return o.write((tx) => store.register(tx, { id: o.newId('pd'), platform, token, subscription, userId, now, maxPerUser: o.setup.maxDevicesPerUser }));
    },

    async list(jwt: Jwt | null): Promise<Device[]> {
      return store.list(o.reader, caller(jwt), MAX_LIST);
    },

    /** Another user's device answers 404 like an unknown one (docs/reference/push.md). */
    async unregister(jwt: Jwt | null, id: unknown): Promise<void> {
      const userId = caller(jwt);
      if (!isString(id, 64)) throw badRequest('/id', 'id is required');
      if (!(await o.write((tx) => store.unregister(tx, id, userId)))) throw new ApiError('NOT_FOUND', 'No such device');
    },

    start: () => worker.start(),
    stop: () => worker.stop(),
    async metrics(): Promise<PushMetrics> {
      return { ...worker.counts, pending: await worker.pending() };
    },
    failures: (): readonly PushFailure[] => worker.failures,
  };
}

export type PushService = ReturnType<typeof createPushService>;

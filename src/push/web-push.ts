/**
 * Web Push (RFC 8030) with aes128gcm payload encryption (RFC 8291) and VAPID (RFC 8292), through the
 * `web-push` package; the request goes out over https.ts (TLS verified; NODE_EXTRA_CA_CERTS honoured).
 * The VAPID JWT is signed once per push-service origin and reused until an hour before it expires,
 * so a fan-out to thousands of subscriptions does not sign thousands of JWTs.
 */
import { createRequire } from 'node:module';
import type WebPush from 'web-push';
import type { WebPushOptions } from '../define/push.js';
import { header, httpsPost, keepAliveAgent, type HttpsAnswer } from './https.js';
import { describe, isTransient, retryAfterMs, secondsLeft, SEND_TIMEOUT_MS, type Outcome, type PushPayload, type PushProvider } from './provider.js';

// Loaded on first use, not at start (issue #25: a start loads only what the first request needs).
let webpushModule: typeof WebPush | undefined;
const lib = (): typeof WebPush => (webpushModule ??= createRequire(import.meta.url)('web-push') as typeof WebPush);

/** RFC 8292 §2: `exp` at most 24 h ahead; we sign for 12 h and renew after 11. */
const VAPID_LIFETIME_S = 12 * 3600;
const VAPID_RENEW_MS = 11 * 3600 * 1000;

export interface WebSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** Throws a one-line message when the key pair is unusable (checked at start). */
export function checkVapidKeys(o: WebPushOptions): void {
  // Signing once validates both keys and the subject with web-push's own checks.
  lib().getVapidHeaders('https://push.example', o.subject, o.publicKey, o.privateKey, 'aes128gcm');
}

export function webPushProvider(o: WebPushOptions): PushProvider {
  const concurrency = o.concurrency ?? 50;
  const agent = keepAliveAgent(concurrency);
  const vapid = new Map<string, { authorization: string; until: number }>();
  const authorization = (endpoint: string): string => {
    const origin = new URL(endpoint).origin;
    const hit = vapid.get(origin);
    if (hit && hit.until > Date.now()) return hit.authorization;
    const exp = Math.floor(Date.now() / 1000) + VAPID_LIFETIME_S;
    const headers = lib().getVapidHeaders(origin, o.subject, o.publicKey, o.privateKey, 'aes128gcm', exp) as { Authorization: string };
    if (vapid.size > 1000) vapid.clear(); // bounded: push-service origins are few in practice
    vapid.set(origin, { authorization: headers.Authorization, until: Date.now() + VAPID_RENEW_MS });
    return headers.Authorization;
  };
  return {
    platform: 'web',
    concurrency,
    async send(target: string, payload: PushPayload, expiresAtMs: number): Promise<Outcome> {
      // No vapidDetails here: the cached Authorization header below carries the VAPID JWT.
      let details: { endpoint: string; headers: Record<string, string | number>; body: Buffer | null };
      try {
        const sub = JSON.parse(target) as WebSubscription;
        details = lib().generateRequestDetails(sub, JSON.stringify(payload), {
          TTL: secondsLeft(expiresAtMs),
          contentEncoding: 'aes128gcm',
          headers: { Authorization: authorization(sub.endpoint) },
        }) as unknown as typeof details;
      } catch (err) {
        return { kind: 'failed', reason: `bad subscription: ${describe(err)}` };
      }
      let res: HttpsAnswer;
      try {
        res = await httpsPost(agent, details.endpoint, details.headers, details.body, SEND_TIMEOUT_MS);
      } catch (err) {
        return { kind: 'retry', reason: describe(err) };
      }
      if (res.status >= 200 && res.status < 300) return { kind: 'sent' };
      // RFC 8030 §7.3 / §8.4: 404 and 410 mean the subscription is gone for good.
      if (res.status === 404 || res.status === 410) return { kind: 'dead', reason: `web push ${res.status}` };
      if (isTransient(res.status)) return { kind: 'retry', reason: `web push ${res.status}`, retryAfterMs: retryAfterMs(header(res.headers, 'retry-after')) };
      return { kind: 'failed', reason: `web push ${res.status}` };
    },
    close: async () => agent.destroy(),
  };
}

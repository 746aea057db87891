/**
 * The one small interface every push provider implements (web-push.ts, fcm.ts, apns.ts), and the
 * outcome vocabulary the delivery worker acts on (docs/reference/push.md).
 */
import type { PushMessage } from '../define/types.js';

export type Platform = 'web' | 'fcm' | 'apns';
export const PLATFORMS: readonly Platform[] = ['web', 'fcm', 'apns'];

/** What a queued delivery carries: the message as `ctx.push.send` gave it, minus the targets. */
export type PushPayload = Pick<PushMessage, 'title' | 'body' | 'data' | 'badge' | 'sound' | 'ttlSeconds'>;

/**
 * `sent`: done. `dead`: the provider says the token/subscription is gone; the device is removed.
 * `retry`: network error, 429 or 5xx; try again later (after `retryAfterMs` when the provider said).
 * `failed`: refused for good (a 4xx that is not about the device); dropped without retry.
 */
export type Outcome = { kind: 'sent' } | { kind: 'dead'; reason: string } | { kind: 'retry'; reason: string; retryAfterMs?: number } | { kind: 'failed'; reason: string };

export interface PushProvider {
  readonly platform: Platform;
  /** Most deliveries in flight at once for this provider. */
  readonly concurrency: number;
  /** `target` is the device token (FCM, APNs) or the subscription JSON (Web Push). Never throws. */
  send(target: string, payload: PushPayload, expiresAtMs: number): Promise<Outcome>;
  close(): Promise<void>;
}

/** Default time to live: 4 weeks, the longest Web Push services and FCM keep a message. */
export const DEFAULT_TTL_SECONDS = 28 * 24 * 3600;

/** How long one provider request may take before it counts as a network error. */
export const SEND_TIMEOUT_MS = 10_000;

/**
 * `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3), in milliseconds; undefined
 * when absent or unreadable. Capped at an hour so a hostile value cannot park the queue.
 */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), 3_600_000);
}

/** The classic transient statuses: retry on 429 and every 5xx. */
export const isTransient = (status: number): boolean => status === 429 || status >= 500;

/** A short, safe description of an error for logs and the failure list. */
export const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).slice(0, 200);

/** Seconds left until `expiresAtMs`, at least 0. */
export const secondsLeft = (expiresAtMs: number, now = Date.now()): number => Math.max(0, Math.floor((expiresAtMs - now) / 1000));

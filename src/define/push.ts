/**
 * Push options of a project (docs/reference/push.md): `push: {webPush, fcm, apns}`, each optional. Keys are read
 * and checked when the server starts (src/push/config.ts), so a malformed key stops `serve` at once.
 * `sources` names where each option came from (an environment variable), so that start-up message
 * can name it; `pushFromEnv` fills it.
 */
import type { PolicySetting } from './types.js';

export interface WebPushOptions {
  /** VAPID key pair (RFC 8292), base64url as `web-push generate-vapid-keys` prints them. */
  publicKey: string;
  privateKey: string;
  /** `mailto:` or `https:` contact sent in the VAPID JWT. */
  subject: string;
  /**
   * Hosts a subscription endpoint may name (a host or a parent domain, e.g. `push.apple.com`).
   * Unset: any https host, as browsers pick the push service. Set it in production so a client
   * cannot make the server POST to an internal address.
   */
  endpointHosts?: string[];
  concurrency?: number;
}

export interface FcmOptions {
  /** Path of a service-account JSON file, or its parsed contents. */
  serviceAccount: string | { project_id?: string; client_email?: string; private_key?: string; token_uri?: string };
  /** Base URL in place of `https://fcm.googleapis.com`. */
  endpoint?: string;
  /** Token URL in place of the service account's `token_uri`. */
  tokenUrl?: string;
  concurrency?: number;
}

export interface ApnsOptions {
  /** Path of the `.p8` key, or its PEM text. */
  key: string;
  keyId: string;
  teamId: string;
  /** The app's bundle id (`apns-topic`). */
  topic: string;
  /** Sandbox (`api.sandbox.push.apple.com`) instead of production. */
  sandbox?: boolean;
  /** Base URL in place of the production or sandbox host. */
  endpoint?: string;
  concurrency?: number;
}

export interface PushOptions {
  webPush?: WebPushOptions;
  fcm?: FcmOptions;
  apns?: ApnsOptions;
  /** Tries per message before it is dropped as failed (default 5). */
  maxAttempts?: number;
  /** First retry delay in milliseconds; doubles per try, with jitter (default 1000). */
  retryBaseMs?: number;
  /** Devices one user may hold (default 100); registering more drops that user's least recently registered one. */
  maxDevicesPerUser?: number;
  /** Deliveries that may wait for one user (default 1,000): past it `ctx.push.send` throws (429 uncaught). */
  maxPendingPerUser?: number;
  /** Deliveries that may wait in all (default 100,000). */
  maxPending?: number;
  /** Rate limits of the device routes (docs/reference/rate-limits.md; operations `push:register`, `push:list`, `push:unregister`). */
  policies?: { register?: PolicySetting; list?: PolicySetting; unregister?: PolicySetting };
  /** Where options came from, for start-up errors: `{'apns.key': 'PUSH_APNS_KEY_FILE'}`. */
  sources?: Record<string, string>;
}

/**
 * Push options from the `PUSH_*` variables of docs/reference/conformance.md; each provider only when its variables are set.
 * @example push: pushFromEnv(process.env)
 */
export function pushFromEnv(env: Record<string, string | undefined>): PushOptions {
  const sources: Record<string, string> = {};
  const out: PushOptions = { sources };
  const from = (key: string, name: string) => {
    sources[key] = name;
    return env[name] ?? '';
  };
  if (env.PUSH_VAPID_PUBLIC_KEY || env.PUSH_VAPID_PRIVATE_KEY) {
    out.webPush = { publicKey: from('webPush.publicKey', 'PUSH_VAPID_PUBLIC_KEY'), privateKey: from('webPush.privateKey', 'PUSH_VAPID_PRIVATE_KEY'), subject: 'mailto:admin@example.com' };
    const hosts = env.PUSH_WEB_ENDPOINT_HOSTS?.split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
    if (hosts?.length) out.webPush.endpointHosts = hosts;
  }
  if (env.PUSH_FCM_SERVICE_ACCOUNT) {
    out.fcm = { serviceAccount: from('fcm.serviceAccount', 'PUSH_FCM_SERVICE_ACCOUNT') };
    if (env.PUSH_FCM_ENDPOINT) out.fcm.endpoint = from('fcm.endpoint', 'PUSH_FCM_ENDPOINT');
    if (env.PUSH_FCM_TOKEN_URL) out.fcm.tokenUrl = from('fcm.tokenUrl', 'PUSH_FCM_TOKEN_URL');
  }
  if (env.PUSH_APNS_KEY_FILE) {
    out.apns = {
      key: from('apns.key', 'PUSH_APNS_KEY_FILE'),
      keyId: from('apns.keyId', 'PUSH_APNS_KEY_ID'),
      teamId: from('apns.teamId', 'PUSH_APNS_TEAM_ID'),
      topic: from('apns.topic', 'PUSH_APNS_TOPIC'),
      sandbox: env.PUSH_APNS_SANDBOX === '1' || env.PUSH_APNS_SANDBOX === 'true',
    };
    if (env.PUSH_APNS_ENDPOINT) out.apns.endpoint = from('apns.endpoint', 'PUSH_APNS_ENDPOINT');
  }
  if (env.PUSH_RETRY_BASE_MS) out.retryBaseMs = Number(from('retryBaseMs', 'PUSH_RETRY_BASE_MS'));
  if (env.PUSH_MAX_PENDING_PER_USER) out.maxPendingPerUser = Number(from('maxPendingPerUser', 'PUSH_MAX_PENDING_PER_USER'));
  if (env.PUSH_MAX_ATTEMPTS) out.maxAttempts = Number(from('maxAttempts', 'PUSH_MAX_ATTEMPTS'));
  return out;
}

/**
 * Turns the project's `push` options into providers when the server starts (docs/reference/push.md). Every key
 * is read and imported here, so a malformed `.p8` or a service account without `private_key` stops
 * `serve` with one line naming the variable (or option) instead of failing at the first send.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { importPKCS8 } from 'jose';
import type { PushOptions } from '../define/push.js';
import type { Platform, PushProvider } from './provider.js';

export interface PushSetup {
  providers: Map<Platform, PushProvider>;
  vapidPublicKey: string | undefined;
  /** Hosts (or parent domains) Web Push endpoints may name; undefined: any. */
  webEndpointHosts?: readonly string[];
  maxAttempts: number;
  retryBaseMs: number;
  maxDevicesPerUser: number;
  /** Deliveries that may wait for one user (default 1,000) and in all (default 100,000). */
  maxPendingPerUser: number;
  maxPending: number;
}

/** A start-up configuration error; its message is one line and names the setting. */
export class PushConfigError extends Error {
  override name = 'PushConfigError';
}

export async function setupPush(o: PushOptions | undefined, projectDir: string): Promise<PushSetup> {
  const providers = new Map<Platform, PushProvider>();
  const name = (key: string) => o?.sources?.[key] ?? `push.${key}`;
  const fail = (key: string, what: string): never => {
    throw new PushConfigError(`${name(key)}: ${what}`);
  };
  const need = (key: string, v: unknown): string => (typeof v === 'string' && v.trim() ? v.trim() : fail(key, 'is required'));
  const url = (key: string, v: string): string => {
    try {
      const u = new URL(v);
      if (u.protocol !== 'https:') fail(key, 'must be an https:// URL');
      return u.href.replace(/\/+$/, '');
    } catch (err) {
      if (err instanceof PushConfigError) throw err;
      return fail(key, 'is not a URL');
    }
  };
  const readText = (key: string, path: string): string => {
    try {
      return readFileSync(resolve(projectDir, path), 'utf8');
    } catch {
      return fail(key, 'cannot be read');
    }
  };

  // Each provider's module (web-push, node:https, node:http2) is loaded only when it is configured:
  // a server without push starts without them.
  if (o?.webPush) {
    const { checkVapidKeys, webPushProvider } = await import('./web-push.js');
    const w = o.webPush;
    need('webPush.publicKey', w.publicKey);
    need('webPush.privateKey', w.privateKey);
    try {
      checkVapidKeys(w);
    } catch (err) {
      fail(/private/i.test(String(err)) ? 'webPush.privateKey' : /subject/i.test(String(err)) ? 'webPush.subject' : 'webPush.publicKey', 'is not a valid VAPID key (RFC 8292)');
    }
    providers.set('web', webPushProvider(w));
  }

  if (o?.fcm) {
    const { FCM_ENDPOINT, fcmProvider, GOOGLE_TOKEN_URL } = await import('./fcm.js');
    const f = o.fcm;
    let sa = f.serviceAccount;
    if (typeof sa === 'string') {
      const text = readText('fcm.serviceAccount', need('fcm.serviceAccount', sa));
      try {
        sa = JSON.parse(text) as typeof sa & object;
      } catch {
        fail('fcm.serviceAccount', 'is not a JSON service-account file');
      }
    }
    const acct = sa as Exclude<typeof sa, string>;
    if (!acct?.private_key) fail('fcm.serviceAccount', 'the service account has no private_key');
    if (!acct.client_email) fail('fcm.serviceAccount', 'the service account has no client_email');
    if (!acct.project_id) fail('fcm.serviceAccount', 'the service account has no project_id');
    const privateKey = await importPKCS8(acct.private_key!, 'RS256').catch(() => fail('fcm.serviceAccount', 'private_key is not an RSA PKCS#8 PEM key'));
    providers.set(
      'fcm',
      fcmProvider({
        projectId: acct.project_id!,
        clientEmail: acct.client_email!,
        privateKey,
        endpoint: url('fcm.endpoint', f.endpoint ?? FCM_ENDPOINT),
        tokenUrl: url('fcm.tokenUrl', f.tokenUrl ?? acct.token_uri ?? GOOGLE_TOKEN_URL),
        concurrency: f.concurrency,
      }),
    );
  }

  if (o?.apns) {
    const { APNS_PRODUCTION, APNS_SANDBOX, apnsProvider } = await import('./apns.js');
    const a = o.apns;
    const raw = need('apns.key', a.key);
    const pem = raw.includes('-----BEGIN') ? raw : readText('apns.key', raw);
    const key = await importPKCS8(pem, 'ES256').catch(() => fail('apns.key', 'is not a valid .p8 key (an EC P-256 PKCS#8 PEM)'));
    providers.set(
      'apns',
      apnsProvider({
        key,
        keyId: need('apns.keyId', a.keyId),
        teamId: need('apns.teamId', a.teamId),
        topic: need('apns.topic', a.topic),
        endpoint: url('apns.endpoint', a.endpoint ?? (a.sandbox ? APNS_SANDBOX : APNS_PRODUCTION)),
        concurrency: a.concurrency,
      }),
    );
  }

  const maxAttempts = o?.maxAttempts ?? 5;
  const retryBaseMs = o?.retryBaseMs ?? 1000;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 100) fail('maxAttempts', 'must be an integer from 1 to 100');
  if (!Number.isFinite(retryBaseMs) || retryBaseMs < 0 || retryBaseMs > 3_600_000) fail('retryBaseMs', 'must be a number of milliseconds from 0 to 3600000');
  const maxDevicesPerUser = o?.maxDevicesPerUser ?? 100;
  if (!Number.isInteger(maxDevicesPerUser) || maxDevicesPerUser < 1 || maxDevicesPerUser > 100_000) fail('maxDevicesPerUser', 'must be an integer from 1 to 100000');
  const hosts = o?.webPush?.endpointHosts?.map((h) => h.trim().toLowerCase().replace(/^\./, '')).filter(Boolean);
  const maxPendingPerUser = o?.maxPendingPerUser ?? 1000;
  const maxPending = o?.maxPending ?? 100_000;
  if (!Number.isInteger(maxPendingPerUser) || maxPendingPerUser < 1) fail('maxPendingPerUser', 'must be a positive integer');
  if (!Number.isInteger(maxPending) || maxPending < 1) fail('maxPending', 'must be a positive integer');
  return { providers, vapidPublicKey: o?.webPush?.publicKey.trim(), webEndpointHosts: hosts?.length ? hosts : undefined, maxAttempts, retryBaseMs, maxDevicesPerUser, maxPendingPerUser, maxPending };
}

import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import webpush from 'web-push';
import { describe, expect, it } from 'vitest';
import { pushFromEnv } from '../define/push.js';
import { setupPush } from './config.js';
import { retryAfterMs } from './provider.js';

const dir = mkdtempSync(join(tmpdir(), 'tb-push-config-'));
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const apnsEnv = (keyFile: string) => ({ PUSH_APNS_KEY_FILE: keyFile, PUSH_APNS_KEY_ID: 'KEY123', PUSH_APNS_TEAM_ID: 'TEAM123', PUSH_APNS_TOPIC: 'com.example.app' });

describe('push configuration (checked at start)', () => {
  it('builds only the providers whose variables are set', async () => {
    const vapid = webpush.generateVAPIDKeys();
    const sa = file('sa.json', JSON.stringify({ project_id: 'p1', client_email: 'x@p1.iam', private_key: rsa }));
    const setup = await setupPush(pushFromEnv({ PUSH_VAPID_PUBLIC_KEY: vapid.publicKey, PUSH_VAPID_PRIVATE_KEY: vapid.privateKey, PUSH_FCM_SERVICE_ACCOUNT: sa, ...apnsEnv(file('k.p8', ec)) }), dir);
    expect([...setup.providers.keys()].sort()).toEqual(['apns', 'fcm', 'web']);
    expect(setup.vapidPublicKey).toBe(vapid.publicKey);
    expect((await setupPush(pushFromEnv({}), dir)).providers.size).toBe(0);
  });

  it('a malformed .p8 names PUSH_APNS_KEY_FILE in one line', async () => {
    await expect(setupPush(pushFromEnv(apnsEnv(file('bad.p8', '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n'))), dir)).rejects.toThrow(
      /^PUSH_APNS_KEY_FILE: is not a valid \.p8 key[^\n]*$/,
    );
    await expect(setupPush(pushFromEnv(apnsEnv(file('rsa.p8', rsa))), dir)).rejects.toThrow(/^PUSH_APNS_KEY_FILE/);
  });

  it('a service account without private_key names PUSH_FCM_SERVICE_ACCOUNT', async () => {
    const sa = file('nokey.json', JSON.stringify({ project_id: 'p1', client_email: 'x@p1.iam' }));
    await expect(setupPush(pushFromEnv({ PUSH_FCM_SERVICE_ACCOUNT: sa }), dir)).rejects.toThrow('PUSH_FCM_SERVICE_ACCOUNT: the service account has no private_key');
  });

  it('a bad VAPID key or endpoint names its variable', async () => {
    await expect(setupPush(pushFromEnv({ PUSH_VAPID_PUBLIC_KEY: 'short', PUSH_VAPID_PRIVATE_KEY: 'short' }), dir)).rejects.toThrow(/^PUSH_VAPID_P(UBLIC|RIVATE)_KEY: /);
    await expect(setupPush(pushFromEnv({ ...apnsEnv(file('k2.p8', ec)), PUSH_APNS_ENDPOINT: 'http://plain' }), dir)).rejects.toThrow('PUSH_APNS_ENDPOINT: must be an https:// URL');
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates, caps at an hour, ignores junk', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThan(8000);
    expect(retryAfterMs('999999')).toBe(3_600_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});

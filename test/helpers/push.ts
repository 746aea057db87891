/**
 * The push world of the end-to-end tests (docs/reference/push.md, docs/reference/conformance.md): a throw-away CA, the TLS stand-ins for
 * Web Push, FCM and APNs (push-standins.ts), fresh provider keys, and the PUSH_* environment that
 * points the conformance project at them, plus small clients for the device routes.
 */
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import webpush from 'web-push';
import { makeTestCa, type TestCa } from './push-ca.js';
import { PushStandIns } from './push-standins.js';
import type { TestServer } from './server.js';

export interface PushWorld {
  ca: TestCa;
  standIns: PushStandIns;
  /** PUSH_* for all three providers, NODE_EXTRA_CA_CERTS, and a fast first retry (200 ms). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startPushWorld(): Promise<PushWorld> {
  const ca = makeTestCa();
  const vapid = webpush.generateVAPIDKeys();
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const account = { type: 'service_account', project_id: 'tb-test', client_email: 'push@tb-test.iam.example', private_key: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) };
  const saFile = join(ca.dir, 'service-account.json');
  writeFileSync(saFile, JSON.stringify(account));
  const p8 = join(ca.dir, 'AuthKey_KEY123.p8');
  writeFileSync(p8, ec.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const standIns = new PushStandIns(
    { key: ca.key, cert: ca.cert },
    {
      vapidPublicKey: vapid.publicKey,
      fcm: { projectId: account.project_id, clientEmail: account.client_email, publicKey: createPublicKey(rsa.privateKey) },
      apns: { publicKey: createPublicKey(ec.privateKey), keyId: 'KEY123', teamId: 'TEAM123', topic: 'com.example.app' },
    },
  );
  const origin = await standIns.start();
  const env = {
    NODE_EXTRA_CA_CERTS: ca.caFile,
    PUSH_VAPID_PUBLIC_KEY: vapid.publicKey,
    PUSH_VAPID_PRIVATE_KEY: vapid.privateKey,
    PUSH_FCM_SERVICE_ACCOUNT: saFile,
    PUSH_FCM_ENDPOINT: origin,
    PUSH_FCM_TOKEN_URL: `${origin}/token`,
    PUSH_APNS_KEY_FILE: p8,
    PUSH_APNS_KEY_ID: 'KEY123',
    PUSH_APNS_TEAM_ID: 'TEAM123',
    PUSH_APNS_TOPIC: 'com.example.app',
    PUSH_APNS_ENDPOINT: origin,
    PUSH_RETRY_BASE_MS: '200',
    // The stand-ins listen on loopback, which Web Push registration refuses unless allowed by name.
    PUSH_WEB_ENDPOINT_HOSTS: '127.0.0.1',
  };
  return {
    ca,
    standIns,
    env,
    close: async () => {
      await standIns.close();
      rmSync(ca.dir, { recursive: true, force: true });
    },
  };
}

let seq = 0;
/** A hex APNs device token no other test uses. */
export const apnsToken = () => Buffer.from(`${Date.now()}-${++seq}-apns-device`).toString('hex');
/** An FCM token no other test uses. */
export const fcmToken = (tag: string) => `fcm-${tag}-${Date.now().toString(36)}-${++seq}`;

type Caller = { auth: Record<string, string> };
export const registerDevice = (s: TestServer, who: Caller, body: unknown) => s.call('POST', '/push/devices', body, who.auth);
export const listDevices = async (s: TestServer, who: Caller): Promise<{ id: string; platform: string; userId: string }[]> =>
  (await s.call<{ data: { id: string; platform: string; userId: string }[] }>('GET', '/push/devices', undefined, who.auth)).json.data;
/** A conformance `messages` row: its afterCreateSuccess hook sends `text` to `to`'s devices. */
export const sendMessage = (s: TestServer, from: Caller, to: string, text: string) => s.call('POST', '/db', { table: 'messages', object: { toUserId: to, text } }, from.auth);

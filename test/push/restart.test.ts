/**
 * Push across restarts and configurations (docs/reference/push.md, docs/reference/conformance.md): a queued message survives kill -9,
 * outgoing TLS is verified, an unconfigured platform is refused, and a malformed key stops `serve`
 * with one line naming its variable. Each case starts its own server against the stand-ins.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectError } from '../helpers/expect.js';
import { pause, until } from '../helpers/poll.js';
import { apnsToken, fcmToken, registerDevice, sendMessage, startPushWorld, type PushWorld } from '../helpers/push.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { signUp, uniqueEmail } from '../helpers/users.js';

let world: PushWorld;
beforeAll(async () => {
  world = await startPushWorld();
}, 180_000);
afterAll(() => world?.close());

const user = (s: TestServer) => signUp(s, uniqueEmail('push'));

it('a message queued before kill -9 is delivered after the restart', async () => {
  const { standIns } = world;
  const s = await startServer({ env: world.env });
  try {
    const u = await user(s);
    const sender = await user(s);
    const token = fcmToken('restart');
    standIns.behaviour.set(token, 'hang');
    await registerDevice(s, u, { platform: 'fcm', token });
    expect((await sendMessage(s, sender, u.id, 'survive this')).status).toBe(200);
    await until(async () => standIns.seen.some((x) => x.token === token), Boolean, 'the claimed delivery', 10_000, 20);
    await s.stop('SIGKILL');
    standIns.behaviour.set(token, 'ok');
    standIns.releaseHanging();
    const again = await startServer({ env: s.env, dataDir: s.dataDir });
    try {
      await until(
        async () => standIns.forToken(token).length,
        (c) => c >= 1,
        'delivery after restart',
        15_000,
        50,
      );
      expect((standIns.forToken(token)[0]!.payload as { notification: { body: string } }).notification.body).toBe('survive this');
    } finally {
      await again.stop('SIGKILL');
    }
  } finally {
    await s.dispose();
  }
}, 180_000);

it('outgoing TLS is verified: without the test CA in NODE_EXTRA_CA_CERTS nothing is delivered', async () => {
  const { NODE_EXTRA_CA_CERTS: _ca, ...untrusting } = world.env;
  const s = await startServer({ env: untrusting });
  try {
    const u = await user(s);
    const sender = await user(s);
    const token = fcmToken('untrusted');
    await registerDevice(s, u, { platform: 'fcm', token });
    await sendMessage(s, sender, u.id, 'should not arrive');
    await pause(1500);
    expect(world.standIns.seen.some((x) => x.token === token)).toBe(false);
  } finally {
    await s.dispose();
  }
}, 120_000);

it('an unconfigured platform is refused at registration; a bad key stops serve with one line naming it', async () => {
  const { env } = world;
  const only = await startServer({
    env: {
      NODE_EXTRA_CA_CERTS: env.NODE_EXTRA_CA_CERTS!,
      PUSH_FCM_SERVICE_ACCOUNT: env.PUSH_FCM_SERVICE_ACCOUNT!,
      PUSH_FCM_ENDPOINT: env.PUSH_FCM_ENDPOINT!,
      PUSH_FCM_TOKEN_URL: env.PUSH_FCM_TOKEN_URL!,
    },
  });
  try {
    const u = await user(only);
    expectError(await registerDevice(only, u, { platform: 'apns', token: apnsToken() }), 400, 'BAD_REQUEST');
    expectError(await registerDevice(only, u, { platform: 'web', subscription: world.standIns.webSubscription().subscription }), 400, 'BAD_REQUEST');
    expect((await registerDevice(only, u, { platform: 'fcm', token: 'fine' })).status).toBe(200);
    expectError(await only.call('GET', '/push/vapid-public-key'), 404, 'NOT_FOUND');
  } finally {
    await only.dispose();
  }
  const badKey = join(world.ca.dir, 'bad.p8');
  writeFileSync(badKey, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');
  await expect(startServer({ env: { ...env, PUSH_APNS_KEY_FILE: badKey } })).rejects.toThrow(/tablebase: PUSH_APNS_KEY_FILE: is not a valid \.p8 key[^\n]*\n/);
}, 180_000);

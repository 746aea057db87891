/**
 * Push end to end (docs/reference/push.md, docs/reference/conformance.md): devices, and delivery from the conformance `messages` hook to
 * loopback TLS stand-ins for Web Push, FCM and APNs that verify what the real services verify
 * (helpers/push-standins.ts); then the counts in /dashboard/metrics and /dashboard/push.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect.js';
import { pause, until } from '../helpers/poll.js';
import { apnsToken, fcmToken, listDevices, registerDevice, sendMessage, startPushWorld, type PushWorld } from '../helpers/push.js';
import { scenarios, type ScenarioContext } from '../helpers/scenario.js';
import type { TestServer } from '../helpers/server.js';
import { signIn, signUp, startServerWithAdmin, uniqueEmail } from '../helpers/users.js';

const ADMIN = { email: 'push-admin@example.com', password: 'admin password 1' };
let world: PushWorld;
let server: TestServer;
let dataDir: string;
let adminAuth: Record<string, string>;
const ctx: ScenarioContext = { server: null as unknown as TestServer, who: {}, vars: {} };

const user = () => signUp(server, uniqueEmail('push'));
const delivered = (token: string, count: number, what: string) =>
  until(
    async () => world.standIns.forToken(token).length,
    (c) => c >= count,
    what,
    15_000,
    50,
  );

beforeAll(async () => {
  world = await startPushWorld();
  ({ server, dataDir } = await startServerWithAdmin(ADMIN, { env: world.env }));
  adminAuth = (await signIn(server, 'admins', ADMIN.email, ADMIN.password)).auth;
  ctx.server = server;
  ctx.who = { user: (await user()).auth, admin: adminAuth };
}, 180_000);

afterAll(async () => {
  await server?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
  await world?.close();
});

describe('push devices', () => {
  it('registers, lists the caller’s devices only, moves a token to its last registrant, and removes', async () => {
    const a = await user();
    const b = await user();
    const token = fcmToken('move');
    const reg = await registerDevice(server, a, { platform: 'fcm', token });
    expect(reg.status).toBe(200);
    expect(reg.json.data).toMatchObject({ platform: 'fcm', userId: a.id });
    expect(reg.json.data.id).toMatch(/^pd_/);
    expect(await listDevices(server, a)).toHaveLength(1);
    const moved = await registerDevice(server, b, { platform: 'fcm', token });
    expect(moved.json.data).toMatchObject({ id: reg.json.data.id, userId: b.id });
    expect(await listDevices(server, a)).toEqual([]);
    expectError(await server.call('DELETE', '/push/devices', { id: reg.json.data.id }, a.auth), 404, 'NOT_FOUND');
    expect((await server.call('DELETE', '/push/devices', { id: reg.json.data.id }, b.auth)).status).toBe(204);
    expect(await listDevices(server, b)).toEqual([]);
  });
});

scenarios('push registration refusals and the public key', ctx, [
  { name: 'registering needs a token', method: 'POST', path: '/push/devices', body: { platform: 'fcm', token: 'x' }, status: 401, code: 'UNAUTHENTICATED' },
  {
    name: 'a web subscription without its keys',
    method: 'POST',
    path: '/push/devices',
    as: 'user',
    body: { platform: 'web', subscription: { endpoint: 'https://x.example/1' } },
    status: 400,
    code: 'BAD_REQUEST',
  },
  { name: 'an unknown platform', method: 'POST', path: '/push/devices', as: 'user', body: { platform: 'carrier-pigeon', token: 'x' }, status: 400, code: 'BAD_REQUEST' },
  { name: 'an APNs token that is not hex', method: 'POST', path: '/push/devices', as: 'user', body: { platform: 'apns', token: 'not hex' }, status: 400, code: 'BAD_REQUEST' },
  { name: 'a user may not read the push dashboard', method: 'GET', path: '/dashboard/push', as: 'user', status: 403, code: 'FORBIDDEN' },
  { name: 'the VAPID public key is served to anyone', method: 'GET', path: '/push/vapid-public-key', status: 200, like: () => ({ publicKey: world.env.PUSH_VAPID_PUBLIC_KEY }) },
]);

describe('push delivery through the stand-ins', () => {
  it('a message reaches every device of the target user over each provider, and no one else’s', async () => {
    const { standIns } = world;
    const alice = await user();
    const bob = await user();
    const web = standIns.webSubscription();
    const fcm = fcmToken('alice');
    const apns = apnsToken();
    const bobFcm = fcmToken('bob');
    for (const body of [
      { platform: 'web', subscription: web.subscription },
      { platform: 'fcm', token: fcm },
      { platform: 'apns', token: apns },
    ])
      expect((await registerDevice(server, alice, body)).status).toBe(200);
    expect((await registerDevice(server, bob, { platform: 'fcm', token: bobFcm })).status).toBe(200);
    const created = await sendMessage(server, bob, alice.id, 'hello alice');
    expect(created.status).toBe(200);
    const id = created.json.data.id;
    await until(async () => [web.id, fcm, apns].every((t) => standIns.forToken(t).length > 0), Boolean, 'all three deliveries', 15_000, 50);
    expect(standIns.errors).toEqual([]);
    // Web Push: decrypted with the subscription's keys (RFC 8291).
    expect(standIns.forToken(web.id)[0]!.payload).toMatchObject({ title: 'New message', body: 'hello alice', data: { messageId: id } });
    // FCM HTTP v1 message.
    expect(standIns.forToken(fcm)[0]!.payload).toMatchObject({ token: fcm, notification: { title: 'New message', body: 'hello alice' }, data: { messageId: id } });
    // APNs payload, topic and path.
    const a = standIns.forToken(apns)[0]!;
    expect(a.payload).toMatchObject({ aps: { alert: { title: 'New message', body: 'hello alice' } }, messageId: id });
    expect(a.headers['apns-topic']).toBe('com.example.app');
    await pause(300);
    expect(standIns.forToken(bobFcm)).toEqual([]);
    expect(standIns.forToken(fcm)).toHaveLength(1);
  });

  it('a dead token removes the device, for each provider', async () => {
    const { standIns } = world;
    const u = await user();
    const sender = await user();
    const web = standIns.webSubscription();
    const fcm = fcmToken('dead');
    const apns = apnsToken();
    for (const t of [web.id, fcm, apns]) standIns.behaviour.set(t, 'dead');
    await registerDevice(server, u, { platform: 'web', subscription: web.subscription });
    await registerDevice(server, u, { platform: 'fcm', token: fcm });
    await registerDevice(server, u, { platform: 'apns', token: apns });
    expect(await listDevices(server, u)).toHaveLength(3);
    expect((await sendMessage(server, sender, u.id, 'anyone there?')).status).toBe(200);
    await until(
      async () => (await listDevices(server, u)).length,
      (len) => len === 0,
      'dead devices removed',
      15_000,
      50,
    );
  });

  it('503 then success is retried with backoff and delivered once', async () => {
    const u = await user();
    const sender = await user();
    const token = fcmToken('flaky');
    world.standIns.behaviour.set(token, 'fail-once');
    await registerDevice(server, u, { platform: 'fcm', token });
    await sendMessage(server, sender, u.id, 'second time lucky');
    await delivered(token, 1, 'the retried delivery');
    const [first, second] = world.standIns.attempts.get(token)!;
    // PUSH_RETRY_BASE_MS=200: the first retry waits 100–200 ms (equal jitter).
    expect(second! - first!).toBeGreaterThanOrEqual(90);
    await pause(300);
    expect(world.standIns.forToken(token)).toHaveLength(1);
  });

  it('APNs keeps one HTTP/2 session and opens a new one after GOAWAY', async () => {
    const { standIns } = world;
    const u = await user();
    const sender = await user();
    const token = apnsToken();
    await registerDevice(server, u, { platform: 'apns', token });
    await sendMessage(server, sender, u.id, 'one');
    await delivered(token, 1, 'first delivery');
    const sessions = standIns.apnsSessions;
    await sendMessage(server, sender, u.id, 'two');
    await delivered(token, 2, 'second delivery');
    expect(standIns.apnsSessions).toBe(sessions); // the same session carried it
    standIns.goaway();
    await pause(100);
    await sendMessage(server, sender, u.id, 'three');
    await delivered(token, 3, 'delivery after GOAWAY');
    expect(standIns.apnsSessions).toBeGreaterThan(sessions);
  });

  it('a hanging provider never delays the request that queued the message', async () => {
    const { standIns } = world;
    const u = await user();
    const sender = await user();
    const token = apnsToken();
    standIns.behaviour.set(token, 'hang');
    await registerDevice(server, u, { platform: 'apns', token });
    const started = Date.now();
    expect((await sendMessage(server, sender, u.id, 'into the void')).status).toBe(200);
    await until(async () => standIns.seen.some((s) => s.token === token), Boolean, 'the held request', 10_000, 20);
    // Unrelated requests go on while the provider holds the stream open.
    expect((await server.call('GET', '/push/devices', undefined, sender.auth)).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5_000); // generous: only "does not wait for the provider"
    standIns.behaviour.set(token, 'ok');
    standIns.releaseHanging();
    await delivered(token, 1, 'delivery after the hang');
  });
});

describe('push metrics', () => {
  it('/dashboard/metrics (JSON and Prometheus) and /dashboard/push count what the tests above delivered', async () => {
    // Outcomes are written in batches a few milliseconds after the provider answers.
    const m = await until(
      () => server.call<{ data: { push: Record<'pending' | 'sent' | 'retried' | 'failed' | 'removedDevices', number> } }>('GET', '/dashboard/metrics', undefined, adminAuth),
      (r) => r.json?.data?.push?.pending === 0,
      'an empty queue',
      10_000,
      50,
    );
    const push = m.json.data.push;
    expect(push.sent).toBeGreaterThanOrEqual(8);
    expect(push.retried).toBeGreaterThanOrEqual(1);
    expect(push.failed).toBeGreaterThanOrEqual(3); // the three dead tokens
    expect(push.removedDevices).toBeGreaterThanOrEqual(3);
    const text = await server.call('GET', '/dashboard/metrics', undefined, { ...adminAuth, accept: 'text/plain' });
    expect(text.text).toMatch(new RegExp(`^tablebase_push_deliveries_total\\{outcome="sent"\\} ${push.sent}$`, 'm'));
    expect(text.text).toMatch(/^tablebase_push_pending 0$/m);
    const d = await server.call<{ data: { failures: { reason: string }[] } }>('GET', '/dashboard/push', undefined, adminAuth);
    expect(d.json.data.failures.some((f) => /UNREGISTERED|410/.test(f.reason))).toBe(true);
  });
});

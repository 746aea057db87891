/**
 * Push notifications end to end (SPEC §11b, §12): the conformance server delivers to loopback
 * stand-ins for Web Push, FCM and APNs over TLS (a throw-away CA trusted via NODE_EXTRA_CA_CERTS),
 * which verify what the real services verify (helpers/push-standins.ts).
 */
import { generateKeyPairSync, createPublicKey } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import webpush from 'web-push';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestCa, type TestCa } from './helpers/push-ca.js';
import { PushStandIns } from './helpers/push-standins.js';
import { pause, until } from './helpers/poll.js';
import { bearer, ROOT, secret, startServer, type TestServer } from './helpers/server.js';

let ca: TestCa;
let standIns: PushStandIns;
let env: Record<string, string>;
let server: TestServer;
let dataDir: string;
let adminAuth: Record<string, string>;
let n = 0;

function pushEnv(dir: string, origin: string) {
  const vapid = webpush.generateVAPIDKeys();
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const saFile = join(dir, 'service-account.json');
  writeFileSync(
    saFile,
    JSON.stringify({ type: 'service_account', project_id: 'tb-test', client_email: 'push@tb-test.iam.example', private_key: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) }),
  );
  const p8 = join(dir, 'AuthKey_KEY123.p8');
  writeFileSync(p8, ec.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  return {
    keys: {
      vapidPublicKey: vapid.publicKey,
      fcm: { projectId: 'tb-test', clientEmail: 'push@tb-test.iam.example', publicKey: createPublicKey(rsa.privateKey) },
      apns: { publicKey: createPublicKey(ec.privateKey), keyId: 'KEY123', teamId: 'TEAM123', topic: 'com.example.app' },
    },
    env: {
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
    },
  };
}

async function user(s: TestServer = server) {
  const email = `push${++n}-${Date.now()}@example.com`;
  const r = await s.call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email, password: 'correct-horse-battery' });
  expect(r.status).toBe(200);
  return { id: r.json.data.user.id as string, auth: bearer(r.json.data.accessToken) };
}

const apnsToken = () => Buffer.from(`${Date.now()}-${++n}-apns-device`).toString('hex');
const register = (u: { auth: Record<string, string> }, body: unknown, s: TestServer = server) => s.call('POST', '/push/devices', body, u.auth);
const message = (from: { auth: Record<string, string> }, to: string, text: string, s: TestServer = server) => s.call('POST', '/db', { table: 'messages', object: { toUserId: to, text } }, from.auth);

beforeAll(async () => {
  ca = makeTestCa();
  // The keys must exist before the stand-ins, the origin before the env: build in two steps.
  const placeholder = new PushStandIns({ key: ca.key, cert: ca.cert }, undefined as never);
  const origin = await placeholder.start();
  const made = pushEnv(ca.dir, origin);
  Object.assign(placeholder, { keys: made.keys });
  standIns = placeholder;
  env = { ...made.env, JWT_SECRET: secret(), PASSWORD_SECRET: secret() };
  // An admin row for /dashboard/*, created before the server opens the database.
  dataDir = mkdtempSync(join(tmpdir(), 'tb-push-'));
  const args = ['bin/tablebase.mjs', 'admin', 'create', '--project', 'examples/conformance', '--data', dataDir, '--table', 'admins', '--email', 'root@example.com', '--password', 'admin password 1'];
  await promisify(execFile)(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 });
  server = await startServer({ env, dataDir });
  const admin = await server.call('POST', '/auth/sign-in', { type: 'signIn', table: 'admins', email: 'root@example.com', password: 'admin password 1' });
  adminAuth = bearer(admin.json.data.accessToken);
}, 60_000);

afterAll(async () => {
  await server?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
  await standIns?.close();
});

describe('push devices', () => {
  it('registers, lists the caller’s devices only, moves a token to its last registrant, and removes', async () => {
    const a = await user();
    const b = await user();
    const token = `fcm-${++n}`;
    const reg = await register(a, { platform: 'fcm', token });
    expect(reg.status).toBe(200);
    expect(reg.json.data).toMatchObject({ platform: 'fcm', userId: a.id });
    expect(reg.json.data.id).toMatch(/^pd_/);
    expect((await server.call('GET', '/push/devices', undefined, a.auth)).json.data).toHaveLength(1);
    const moved = await register(b, { platform: 'fcm', token });
    expect(moved.json.data).toMatchObject({ id: reg.json.data.id, userId: b.id });
    expect((await server.call('GET', '/push/devices', undefined, a.auth)).json.data).toEqual([]);
    expect((await server.call('DELETE', '/push/devices', { id: reg.json.data.id }, a.auth)).status).toBe(404);
    expect((await server.call('DELETE', '/push/devices', { id: reg.json.data.id }, b.auth)).status).toBe(204);
    expect((await server.call('GET', '/push/devices', undefined, b.auth)).json.data).toEqual([]);
  });

  it('needs a token, validates the body, and serves the VAPID public key publicly', async () => {
    expect((await server.call('POST', '/push/devices', { platform: 'fcm', token: 'x' })).status).toBe(401);
    const a = await user();
    const bad = await register(a, { platform: 'web', subscription: { endpoint: 'https://x.example/1' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('BAD_REQUEST');
    expect((await register(a, { platform: 'carrier-pigeon', token: 'x' })).status).toBe(400);
    const key = await server.call('GET', '/push/vapid-public-key');
    expect(key.json.data.publicKey).toBe(env.PUSH_VAPID_PUBLIC_KEY);
  });
});

describe('push delivery through the stand-ins', () => {
  it('a message reaches every device of the target user over each provider, and no one else’s', async () => {
    const alice = await user();
    const bob = await user();
    const web = standIns.webSubscription();
    const fcm = `fcm-alice-${++n}`;
    const apns = apnsToken();
    const bobFcm = `fcm-bob-${++n}`;
    expect((await register(alice, { platform: 'web', subscription: web.subscription })).status).toBe(200);
    expect((await register(alice, { platform: 'fcm', token: fcm })).status).toBe(200);
    expect((await register(alice, { platform: 'apns', token: apns })).status).toBe(200);
    expect((await register(bob, { platform: 'fcm', token: bobFcm })).status).toBe(200);
    const created = await message(bob, alice.id, 'hello alice');
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
    const u = await user();
    const sender = await user();
    const web = standIns.webSubscription();
    const fcm = `fcm-dead-${++n}`;
    const apns = apnsToken();
    for (const t of [web.id, fcm, apns]) standIns.behaviour.set(t, 'dead');
    await register(u, { platform: 'web', subscription: web.subscription });
    await register(u, { platform: 'fcm', token: fcm });
    await register(u, { platform: 'apns', token: apns });
    expect((await server.call('GET', '/push/devices', undefined, u.auth)).json.data).toHaveLength(3);
    expect((await message(sender, u.id, 'anyone there?')).status).toBe(200);
    await until(
      () => server.call('GET', '/push/devices', undefined, u.auth).then((r) => r.json.data.length),
      (len) => len === 0,
      'dead devices removed',
      15_000,
      50,
    );
  });

  it('503 then success is retried with backoff and delivered once', async () => {
    const u = await user();
    const sender = await user();
    const token = `fcm-flaky-${++n}`;
    standIns.behaviour.set(token, 'fail-once');
    await register(u, { platform: 'fcm', token });
    await message(sender, u.id, 'second time lucky');
    await until(
      async () => standIns.forToken(token).length,
      (c) => c === 1,
      'the retried delivery',
      15_000,
      50,
    );
    const [first, second] = standIns.attempts.get(token)!;
    // PUSH_RETRY_BASE_MS=200: the first retry waits 100–200 ms (equal jitter).
    expect(second! - first!).toBeGreaterThanOrEqual(90);
    await pause(300);
    expect(standIns.forToken(token)).toHaveLength(1);
  });

  it('APNs keeps one HTTP/2 session and opens a new one after GOAWAY', async () => {
    const u = await user();
    const sender = await user();
    const token = apnsToken();
    await register(u, { platform: 'apns', token });
    await message(sender, u.id, 'one');
    await until(
      async () => standIns.forToken(token).length,
      (c) => c === 1,
      'first delivery',
      15_000,
      50,
    );
    const sessions = standIns.apnsSessions;
    await message(sender, u.id, 'two');
    await until(
      async () => standIns.forToken(token).length,
      (c) => c === 2,
      'second delivery',
      15_000,
      50,
    );
    expect(standIns.apnsSessions).toBe(sessions); // the same session carried it
    standIns.goaway();
    await pause(100);
    await message(sender, u.id, 'three');
    await until(
      async () => standIns.forToken(token).length,
      (c) => c === 3,
      'delivery after GOAWAY',
      15_000,
      50,
    );
    expect(standIns.apnsSessions).toBeGreaterThan(sessions);
  });

  it('a hanging provider never delays the request that queued the message', async () => {
    const u = await user();
    const sender = await user();
    const token = apnsToken();
    standIns.behaviour.set(token, 'hang');
    await register(u, { platform: 'apns', token });
    const started = Date.now();
    const r = await message(sender, u.id, 'into the void');
    expect(r.status).toBe(200);
    await until(async () => standIns.seen.some((s) => s.token === token), Boolean, 'the held request', 10_000, 20);
    // Unrelated requests go on while the provider holds the stream open.
    expect((await server.call('GET', '/db/count', undefined, sender.auth)).status).toBeLessThan(500);
    expect(Date.now() - started).toBeLessThan(5_000); // generous: only "does not wait for the provider"
    standIns.behaviour.set(token, 'ok');
    standIns.releaseHanging();
    await until(
      async () => standIns.forToken(token).length,
      (c) => c === 1,
      'delivery after the hang',
      15_000,
      50,
    );
  });
});

describe('push metrics', () => {
  it('/dashboard/metrics (JSON and Prometheus) and /dashboard/push count what the tests above delivered', async () => {
    // Outcomes are written in batches a few milliseconds after the provider answers.
    const m = await until(
      () => server.call('GET', '/dashboard/metrics', undefined, adminAuth),
      (r) => r.json?.data?.push?.pending === 0,
      'an empty queue',
      10_000,
      50,
    );
    expect(m.status).toBe(200);
    const push = m.json.data.push;
    expect(push.sent).toBeGreaterThanOrEqual(8);
    expect(push.retried).toBeGreaterThanOrEqual(1);
    expect(push.failed).toBeGreaterThanOrEqual(3); // the three dead tokens
    expect(push.removedDevices).toBeGreaterThanOrEqual(3);
    expect(push.pending).toBe(0);
    const text = await server.call('GET', '/dashboard/metrics', undefined, { ...adminAuth, accept: 'text/plain' });
    expect(text.text).toMatch(new RegExp(`^tablebase_push_deliveries_total\\{outcome="sent"\\} ${push.sent}$`, 'm'));
    expect(text.text).toMatch(/^tablebase_push_pending 0$/m);
    const d = await server.call('GET', '/dashboard/push', undefined, adminAuth);
    expect(d.json.data.failures.some((f: { reason: string }) => /UNREGISTERED|410/.test(f.reason))).toBe(true);
    expect((await server.call('GET', '/dashboard/push', undefined, (await user()).auth)).status).toBe(403);
  });
});

describe('push across restarts and configuration', () => {
  it('a message queued before kill -9 is delivered after the restart', async () => {
    const s = await startServer({ env });
    try {
      const u = await user(s);
      const sender = await user(s);
      const token = `fcm-restart-${++n}`;
      standIns.behaviour.set(token, 'hang');
      await register(u, { platform: 'fcm', token }, s);
      expect((await message(sender, u.id, 'survive this', s)).status).toBe(200);
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
        expect(standIns.forToken(token)[0]!.payload.notification.body).toBe('survive this');
      } finally {
        await again.stop('SIGKILL');
      }
    } finally {
      await s.dispose();
    }
  }, 60_000);

  it('outgoing TLS is verified: without the test CA in NODE_EXTRA_CA_CERTS nothing is delivered', async () => {
    const { NODE_EXTRA_CA_CERTS: _ca, ...untrusting } = env;
    const s = await startServer({ env: untrusting });
    try {
      const u = await user(s);
      const sender = await user(s);
      const token = `fcm-untrusted-${++n}`;
      await register(u, { platform: 'fcm', token }, s);
      await message(sender, u.id, 'should not arrive', s);
      await pause(1500);
      expect(standIns.seen.some((x) => x.token === token)).toBe(false);
      expect(standIns.forToken(token)).toEqual([]);
    } finally {
      await s.dispose();
    }
  }, 30_000);

  it('an unconfigured platform is refused at registration; a bad key stops serve with one line naming it', async () => {
    const only = await startServer({
      env: { NODE_EXTRA_CA_CERTS: ca.caFile, PUSH_FCM_SERVICE_ACCOUNT: env.PUSH_FCM_SERVICE_ACCOUNT!, PUSH_FCM_ENDPOINT: env.PUSH_FCM_ENDPOINT!, PUSH_FCM_TOKEN_URL: env.PUSH_FCM_TOKEN_URL! },
    });
    try {
      const u = await user(only);
      const apns = await register(u, { platform: 'apns', token: apnsToken() }, only);
      expect(apns.status).toBe(400);
      expect(apns.json.error.code).toBe('BAD_REQUEST');
      expect((await register(u, { platform: 'web', subscription: standIns.webSubscription().subscription }, only)).status).toBe(400);
      expect((await register(u, { platform: 'fcm', token: 'fine' }, only)).status).toBe(200);
      expect((await only.call('GET', '/push/vapid-public-key')).status).toBe(404);
    } finally {
      await only.dispose();
    }
    const badKey = join(ca.dir, 'bad.p8');
    writeFileSync(badKey, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');
    await expect(startServer({ env: { ...env, PUSH_APNS_KEY_FILE: badKey } })).rejects.toThrow(/tablebase: PUSH_APNS_KEY_FILE: is not a valid \.p8 key/);
  }, 60_000);
});

/**
 * `node --import tsx bench/push.ts`: one `ctx.push.send` to a user with 10,000 devices (a third
 * each Web Push, FCM, APNs) against the loopback TLS stand-ins of test/helpers/push-standins.ts,
 * which verify every request as the real services do (provider JWTs once per token, like them;
 * every Web Push body decrypted).
 *
 * Prints: time from the create that triggers the send until every device has its message; sends/s
 * per provider (first to last delivery of that provider); the triggering create's own latency
 * (the fan-out into the queue); server RSS idle and at its peak during the fan-out; and p99 of
 * unrelated creates (c=4 on another table) during the fan-out against the same load on the idle
 * server just before (target: within 2×). Then an APNs-only send to BENCH_APNS_DEVICES devices
 * (default 5,000) for the single-HTTP/2-session rate (target ≥ 2,000/s).
 *
 * BENCH_DEVICES (default 10000) sets the mixed count. Loopback only; a watchdog ends the run after
 * 5 minutes. The stand-ins share this process (and the machine's cores) with the load generator.
 */
import { fork } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import webpush from 'web-push';
import { makeTestCa } from '../test/helpers/push-ca.js';
import { PushStandIns, type Received } from '../test/helpers/push-standins.js';
import { startProcess, type Started } from './lib.js';

/**
 * The child (`--pings <base>`): creates on `pings`, 4 at a time, until the parent says `stop`;
 * then sends back the latencies (ms). A separate process, so the stand-ins' work in this one
 * never shows up as server latency.
 */
if (process.argv[2] === '--pings') {
  const base = process.argv[3]!;
  const latencies: number[] = [];
  let running = true;
  let n = 0;
  process.on('message', () => (running = false));
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (running) {
        const t = performance.now();
        const r = await fetch(`${base}/db`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'pings', object: { n: n++ } }) });
        await r.arrayBuffer();
        latencies.push(performance.now() - t);
      }
    }),
  );
  process.send!(latencies, () => process.exit(0));
  await new Promise(() => {});
}

const DEVICES = Number(process.env.BENCH_DEVICES ?? 10_000);
const APNS_DEVICES = Number(process.env.BENCH_APNS_DEVICES ?? 5_000);
const IDLE_MS = 3_000;
setTimeout(() => {
  console.error('watchdog: push bench took over 5 minutes');
  process.exit(2);
}, 300_000).unref();

/**
 * The stand-ins play services on other machines: during the measured mixed fan-out (and its idle
 * baseline) they (this process) run below the server and the ping child, so on a shared machine
 * their CPU is not what the latency measure sees. Registration and the APNs-only rate run at
 * normal priority.
 */
const STANDIN_NICE = Number(process.env.BENCH_STANDIN_NICE ?? 10);
const ca = makeTestCa();
const data = mkdtempSync(join(tmpdir(), 'tb-bench-push-'));
const vapid = webpush.generateVAPIDKeys();
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const standIns = new PushStandIns(
  { key: ca.key, cert: ca.cert },
  {
    vapidPublicKey: vapid.publicKey,
    fcm: { projectId: 'bench', clientEmail: 'push@bench.iam.example', publicKey: createPublicKey(rsa.privateKey) },
    apns: { publicKey: createPublicKey(ec.privateKey), keyId: 'KEY123', teamId: 'TEAM123', topic: 'com.example.bench' },
  },
);
const origin = await standIns.start();
writeFileSync(join(ca.dir, 'sa.json'), JSON.stringify({ project_id: 'bench', client_email: 'push@bench.iam.example', private_key: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) }));
writeFileSync(join(ca.dir, 'key.p8'), ec.privateKey.export({ type: 'pkcs8', format: 'pem' }));
const server: Started = await startProcess(
  [
    ...(process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : []),
    'bin/tablebase.mjs',
    'serve',
    '--project',
    'bench/projects/push',
    '--data',
    data,
    '--host',
    '127.0.0.1',
    '--port',
    '{port}',
  ],
  {
    NODE_EXTRA_CA_CERTS: ca.caFile,
    PUSH_VAPID_PUBLIC_KEY: vapid.publicKey,
    PUSH_VAPID_PRIVATE_KEY: vapid.privateKey,
    PUSH_WEB_ENDPOINT_HOSTS: '127.0.0.1', // the stand-ins are on loopback, refused unless allowed by name
    PUSH_FCM_SERVICE_ACCOUNT: join(ca.dir, 'sa.json'),
    PUSH_FCM_ENDPOINT: origin,
    PUSH_FCM_TOKEN_URL: `${origin}/token`,
    PUSH_APNS_KEY_FILE: join(ca.dir, 'key.p8'),
    PUSH_APNS_KEY_ID: 'KEY123',
    PUSH_APNS_TEAM_ID: 'TEAM123',
    PUSH_APNS_TOPIC: 'com.example.bench',
    PUSH_APNS_ENDPOINT: origin,
  },
);

const json = async <T = unknown>(method: string, path: string, body: unknown, token?: string) => {
  const r = await fetch(server.base + path, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
  const j = (await r.json().catch(() => ({}))) as { data?: T };
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(j)}`);
  return j.data;
};
const rssBytes = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.proc.pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;
/** CPU seconds the server process has used (utime + stime from /proc, in USER_HZ = 100 ticks). */
const cpuSeconds = () => {
  const fields = readFileSync(`/proc/${server.proc.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const signUp = async (name: string) =>
  (await json<{ accessToken: string; user: { id: string } }>('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email: `${name}@bench.example`, password: 'bench password 1' }))!;

/** Registers `bodies` for the user, 16 at a time. */
async function registerAll(token: string, bodies: unknown[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < bodies.length) await json('POST', '/push/devices', bodies[next++], token);
    }),
  );
}

function pingLoop() {
  const child = fork(fileURLToPath(import.meta.url), ['--pings', server.base], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  os.setPriority(child.pid!, 0);
  const result = new Promise<number[]>((r) => child.once('message', (m) => r(m as number[])));
  return {
    stop: async () => {
      child.send('stop');
      return result;
    },
  };
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;
const until = async (check: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out: ${standIns.received.length} received, errors: ${standIns.errors.slice(0, 3).join('; ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

async function fanOut(userId: string, expected: number, sender: string) {
  const before = standIns.received.length;
  let peak = rssBytes();
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes())), 50);
  const pings = pingLoop();
  await new Promise((r) => setTimeout(r, 300)); // the ping child is up and loading the server
  const cpu0 = cpuSeconds();
  const standInCpu0 = process.cpuUsage();
  const t0 = performance.now();
  const started = Date.now();
  await json('POST', '/db', { table: 'messages', object: { toUserId: userId, text: 'bench' } }, sender);
  const createMs = performance.now() - t0;
  await until(() => standIns.received.length - before >= expected, 240_000);
  const totalMs = performance.now() - t0;
  const cpu = cpuSeconds() - cpu0;
  const su = process.cpuUsage(standInCpu0);
  const standInCpu = (su.user + su.system) / 1e6;
  const busy = await pings.stop();
  clearInterval(sampler);
  const got = standIns.received.slice(before).filter((r) => r.at >= started);
  const rate = (platform: Received['platform']) => {
    const xs = got.filter((r) => r.platform === platform).map((r) => r.at);
    if (xs.length < 2) return { n: xs.length, perSecond: NaN };
    return { n: xs.length, perSecond: xs.length / Math.max(1, (Math.max(...xs) - started) / 1000) };
  };
  return { createMs, totalMs, cpu, standInCpu, peak, busy, web: rate('web'), fcm: rate('fcm'), apns: rate('apns') };
}

try {
  const target = await signUp('target');
  const sender = await signUp('sender');
  const bodies: unknown[] = [];
  for (let i = 0; i < DEVICES; i++) {
    if (i % 3 === 0) bodies.push({ platform: 'web', subscription: standIns.webSubscription().subscription });
    else if (i % 3 === 1) bodies.push({ platform: 'fcm', token: `fcm-${i}` });
    else bodies.push({ platform: 'apns', token: Buffer.from(`apns-device-${i}`).toString('hex') });
  }
  let t = performance.now();
  await registerAll(target.accessToken, bodies);
  console.log(`registered ${DEVICES} devices in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  os.setPriority(STANDIN_NICE);
  const idleRss = rssBytes();
  const idle = pingLoop();
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const idleLat = await idle.stop();

  const mixed = await fanOut(target.user.id, DEVICES, sender.accessToken);
  os.setPriority(0);
  const p99Idle = pct(idleLat, 0.99);
  const p99Busy = pct(mixed.busy, 0.99);
  const mb = (b: number) => (b / 1048576).toFixed(0);
  console.log(`\n## One send to ${DEVICES} devices (mixed)\n`);
  console.log('| measure | value |\n|---|---|');
  console.log(`| all delivered after | ${(mixed.totalMs / 1000).toFixed(2)} s (${(DEVICES / (mixed.totalMs / 1000)).toFixed(0)} sends/s overall) |`);
  for (const p of ['web', 'fcm', 'apns'] as const) console.log(`| ${p} | ${mixed[p].n} sent, ${mixed[p].perSecond.toFixed(0)} sends/s |`);
  console.log(
    `| server CPU during the fan-out (pings included) | ${mixed.cpu.toFixed(2)} s, ${((mixed.cpu / DEVICES) * 1e6).toFixed(0)} µs per send → ${(DEVICES / mixed.cpu).toFixed(0)} sends per CPU-second |`,
  );
  console.log(`| stand-ins' CPU (this process, niced) | ${mixed.standInCpu.toFixed(2)} s |`);
  console.log(`| the triggering create (fan-out into the queue) | ${mixed.createMs.toFixed(0)} ms |`);
  console.log(`| server RSS idle → peak during fan-out | ${mb(idleRss)} MB → ${mb(mixed.peak)} MB |`);
  console.log(
    `| unrelated create p99 idle → during fan-out | ${p99Idle.toFixed(1)} ms → ${p99Busy.toFixed(1)} ms (**${(p99Busy / p99Idle).toFixed(2)}×**, target ≤ 2×; ${idleLat.length} / ${mixed.busy.length} creates) |`,
  );
  console.log(`| stand-in verification errors | ${standIns.errors.length} |`);

  if (APNS_DEVICES > 0) {
    const apnsUser = await signUp('apns-only');
    const apnsBodies = Array.from({ length: APNS_DEVICES }, (_, i) => ({ platform: 'apns', token: Buffer.from(`apns-only-${i}`).toString('hex') }));
    t = performance.now();
    await registerAll(apnsUser.accessToken, apnsBodies);
    const sessions = standIns.apnsSessions;
    const only = await fanOut(apnsUser.user.id, APNS_DEVICES, sender.accessToken);
    console.log(`\n## One send to ${APNS_DEVICES} APNs devices\n`);
    console.log('| measure | value |\n|---|---|');
    console.log(`| APNs sends/s | **${only.apns.perSecond.toFixed(0)}** (target ≥ 2,000) |`);
    console.log(`| server CPU | ${only.cpu.toFixed(2)} s → **${(APNS_DEVICES / only.cpu).toFixed(0)} APNs sends per CPU-second** (pings included) |`);
    console.log(`| stand-ins' CPU (this process) | ${only.standInCpu.toFixed(2)} s in ${(only.totalMs / 1000).toFixed(2)} s |`);
    console.log(`| new HTTP/2 sessions opened during the send | ${standIns.apnsSessions - sessions} |`);
    console.log(`| all delivered after | ${(only.totalMs / 1000).toFixed(2)} s |`);
  }
} finally {
  if (process.env.BENCH_PROF) {
    // A graceful stop writes the CPU profile.
    const exited = new Promise((r) => server.proc.once('exit', r));
    server.proc.kill('SIGTERM');
    await exited;
  } else server.stop();
  await standIns.close();
  rmSync(data, { recursive: true, force: true });
  rmSync(ca.dir, { recursive: true, force: true });
}
process.exit(0);

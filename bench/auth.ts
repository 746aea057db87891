/**
 * `node --import tsx bench/auth.ts`: the cost of password auth, measured against its own floor in
 * the same run so the shared machine's noise cancels out in the ratios (issue "Password
 * authentication" targets):
 *
 * 1. Sign-in throughput ≥ 85% of raw Argon2 verify throughput. Raw = `@node-rs/argon2` `verify`
 *    with the server's parameters (ARGON2_PARAMS) and a pepper through its `secret` option, run by
 *    a separate process (this file with `--raw-argon2`) at the same concurrency. Sign-in is
 *    autocannon against `POST /auth/sign-in` of one real user.
 * 2. Token verification on a get < 10%: `GET /db` by id on a table anyone may read, with and
 *    without `Authorization: Bearer`. Same rules, same SQL; only the token check differs.
 *
 * Two ratios per comparison: req/s (wall clock), and operations per CPU-second of the process
 * doing the work (the server; the raw child), read from /proc. Both sides are CPU-bound, so the
 * second approximates a dedicated machine's throughput ratio and is moved less by other processes
 * on a shared one; both verdicts are printed. Explanatory rows: a same-size header nobody reads
 * (the cost of the bytes alone), the bearer get again after the sign-ins have filled the server's
 * verified-token cache, and a never-seen token on every request; then in-process timings of the
 * token check with a small and a nearly full cache.
 * 3. Passwordless (issue #13): OTP verify and magic-link confirm throughput against password
 *    sign-in at the same concurrency, each request spending one pre-issued code or link (read
 *    from the outbox folder). `BENCH_PASSWORDLESS_ONLY=1` runs only this part (about 1 minute).
 * Each comparison runs BENCH_ROUNDS rounds (default 5) alternating which side goes first; ratios
 * are medians of per-round ratios. Loopback only; each load lasts BENCH_SECONDS (default 3); a
 * watchdog ends the run after 10 minutes regardless (a full run takes about 4 minutes).
 */
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { decodeJwt, SignJWT } from 'jose';
import { AccessTokens } from '../src/auth/jwt.js';
import { ARGON2_PARAMS } from '../src/auth/passwords.js';
import { RevocationList } from '../src/auth/revocation.js';
import { cpuSeconds, load, ROOT, startProcess, type Load } from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PASSWORD = 'bench password 1';

/** A measured load: req/s over wall time, operations done, and their CPU seconds (NaN where unknown). */
interface Run extends Omit<Load, 'total'> {
  ops: number;
  cpu: number;
  /** CPU seconds of the JavaScript thread alone (the rest is the thread pool, GC and I/O threads). */
  mainCpu: number;
}

/** The child: `concurrency` loops of raw verify for `seconds`; prints {rps, p99 (ms), cpu (s)}. */
async function rawArgon2(concurrency: number, seconds: number, pepper: string): Promise<void> {
  const secret = Buffer.from(pepper, 'utf8');
  // 2 is Argon2id (`Algorithm` is an ambient const enum; see src/auth/passwords.ts).
  const stored = await hash(PASSWORD, { ...ARGON2_PARAMS, algorithm: 2 as Algorithm, secret });
  if (!(await verify(stored, PASSWORD, { secret }))) throw new Error('raw verify failed');
  const cpu0 = process.cpuUsage(); // process-wide: the thread pool's work included
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        if (!(await verify(stored, PASSWORD, { secret }))) throw new Error('raw verify failed');
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  const p99 = Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN);
  console.log(JSON.stringify({ rps: latencies.length / elapsed, p99, ops: latencies.length, cpu: (cpu.user + cpu.system) / 1e6 }));
}

if (process.argv[2] === '--raw-argon2') {
  await rawArgon2(Number(process.argv[3]), Number(process.argv[4]), process.env.PASSWORD_SECRET!);
  process.exit(0);
}

const watchdog = setTimeout(() => {
  console.error('bench/auth: watchdog fired after 10 minutes; stopping');
  process.exit(2);
}, 600_000);
const env = { JWT_SECRET: randomBytes(32).toString('hex'), PASSWORD_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' };
const data = mkdtempSync(join(tmpdir(), 'tb-bench-auth-'));
const server = await startProcess(['bin/tablebase.mjs', 'serve', '--project', 'bench/projects/auth', '--data', data, '--host', '127.0.0.1', '--port', '{port}'], env);

/** autocannon against the server, with the server's CPU seconds over the same window. */
async function serverLoad(opts: Parameters<typeof load>[0]): Promise<Run> {
  const pid = server.proc.pid!;
  const [before, mainBefore] = [cpuSeconds(pid), cpuSeconds(pid, pid)];
  const l = await load({ ...opts, duration: SECONDS });
  return { ...l, ops: l.rps * SECONDS, cpu: cpuSeconds(pid) - before, mainCpu: cpuSeconds(pid, pid) - mainBefore };
}

async function post<T = unknown>(path: string, body: unknown): Promise<T> {
  const r = await fetch(`${server.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  const text = await r.text(); // the auth routes' "200, empty body" has none
  return text ? (JSON.parse(text) as { data: T }).data : (undefined as T);
}

async function raw(concurrency: number): Promise<Run> {
  const args = ['--import', 'tsx', 'bench/auth.ts', '--raw-argon2', String(concurrency), String(SECONDS)];
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: (SECONDS + 60) * 1000 });
  const r = JSON.parse(stdout.trim().split('\n').at(-1)!) as { rps: number; p99: number; ops: number; cpu: number };
  return { rps: r.rps, p99: r.p99, non2xx: 0, ops: r.ops, cpu: r.cpu, mainCpu: NaN };
}

interface Pair {
  base: Run;
  ours: Run;
  /** Median over rounds of ours/base req/s, each round's two loads run back to back. */
  wall: number;
  /** Median over rounds of ours/base operations per CPU-second. */
  perCpu: number;
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

/**
 * ROUNDS rounds of base and ours back to back, alternating which goes first. Each round gives one
 * ratio from two neighbouring loads, so a burst from elsewhere on the machine spoils one round
 * rather than the whole comparison; medians are reported.
 */
async function pair(base: () => Promise<Run>, ours: () => Promise<Run>): Promise<Pair> {
  const bs: Run[] = [];
  const os: Run[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2 === 0) {
      bs.push(await base());
      os.push(await ours());
    } else {
      os.push(await ours());
      bs.push(await base());
    }
  }
  const mean = (ls: Run[]): Run => ({
    rps: ls.reduce((n, l) => n + l.rps, 0) / ls.length,
    p99: Math.max(...ls.map((l) => l.p99)),
    non2xx: ls.reduce((n, l) => n + l.non2xx, 0),
    ops: ls.reduce((n, l) => n + l.ops, 0),
    cpu: ls.reduce((n, l) => n + l.cpu, 0),
    mainCpu: ls.reduce((n, l) => n + l.mainCpu, 0),
  });
  return { base: mean(bs), ours: mean(os), wall: median(bs.map((b, i) => os[i]!.rps / b.rps)), perCpu: median(bs.map((b, i) => perCpu(os[i]!) / perCpu(b))) };
}

/** Mean wall-clock microseconds per call of `fn`, awaited one at a time. */
async function timeEach(n: number, fn: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < Math.min(n, 1000); i++) await fn(i); // warm-up
  const t = performance.now();
  for (let i = 0; i < n; i++) await fn(i);
  return ((performance.now() - t) * 1000) / n;
}

const perCpu = (l: Run) => l.ops / l.cpu;
const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : 'n/a');
const fmt = (l: Run) => `${l.rps.toFixed(1)} | ${l.p99} | ${Number.isFinite(perCpu(l)) ? perCpu(l).toFixed(0) : 'n/a'}`;
const lines: string[] = [];
const notes: string[] = [];
const report = (line: string) => {
  lines.push(line);
  console.log(line);
};

/** Runs `fn` over `items` with `c` in flight. */
async function each<T>(items: T[], c: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (i < items.length) await fn(items[i++]!);
    }),
  );
}

/** The outbox's messages (to, text), newest last. */
function outbox(): { to: string[]; text: string }[] {
  const dir = join(data, 'outbox');
  if (!existsSync(dir)) return [];
  const out: { to: string[]; text: string }[] = [];
  for (const f of readdirSync(dir).sort()) {
    try {
      out.push(JSON.parse(readFileSync(join(dir, f), 'utf8')));
    } catch {
      // still being written: the caller polls again
    }
  }
  return out;
}

/** `amount` requests at concurrency `c`, each body from `bodies` in turn; req/s over the run's wall time. */
async function spend(path: string, bodies: string[], c: number): Promise<Run> {
  const pid = server.proc.pid!;
  const [before, mainBefore] = [cpuSeconds(pid), cpuSeconds(pid, pid)];
  let n = 0;
  const r = await autocannon({
    url: `${server.base}${path}`,
    connections: c,
    amount: bodies.length,
    requests: [{ method: 'POST', headers: { 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: bodies[n++ % bodies.length] }) }],
  });
  const ops = r.requests.total;
  return { rps: ops / (r.duration || 1), p99: r.latency.p99, non2xx: r.non2xx + r.errors, ops, cpu: cpuSeconds(pid) - before, mainCpu: cpuSeconds(pid, pid) - mainBefore };
}

/** Section 3: OTP verify and magic-link confirm against password sign-in, c=4. */
async function passwordless(pool: number): Promise<void> {
  const emails = Array.from({ length: pool }, (_, i) => `pl${i}@bench.example`);
  // First codes create the rows (otp.signUp), so the measured verifies sign in existing users.
  const codes = async () => {
    const start = outbox().length;
    await each(emails, 8, (email) => post('/auth/otp/send', { type: 'sendOtp', table: 'users', email }));
    while (outbox().length < start + pool) await new Promise((r) => setTimeout(r, 100));
    const byEmail = new Map(
      outbox()
        .slice(start)
        .map((m) => [m.to[0]!, /\b(\d{6})\b/.exec(m.text)![1]!]),
    );
    return emails.map((email) => JSON.stringify({ type: 'verifyOtp', table: 'users', email, code: byEmail.get(email) }));
  };
  await each(await codes(), 8, (b) => post('/auth/otp/verify', JSON.parse(b)));
  const otpBodies = await codes();
  const start = outbox().length;
  await each(emails, 8, (email) => post('/auth/magic-link', { type: 'sendMagicLink', table: 'users', email }));
  while (outbox().length < start + pool) await new Promise((r) => setTimeout(r, 100));
  const magicBodies = outbox()
    .slice(start)
    .map((m) => JSON.stringify({ type: 'confirmMagicLink', token: /magic\?token=([A-Za-z0-9_-]+)/.exec(m.text)![1] }));
  const c = 4;
  const signInBody = JSON.stringify({ type: 'signIn', table: 'users', email: 'bench@example.com', password: PASSWORD });
  const signIn = await spend(
    '/auth/sign-in',
    Array.from({ length: 400 }, () => signInBody),
    c,
  );
  const otp = await spend('/auth/otp/verify', otpBodies, c);
  const magic = await spend('/auth/confirm', magicBodies, c);
  report('');
  report('| passwordless, c=4 | req/s | p99 ms | server CPU ms per op | vs sign-in req/s | non-2xx |');
  report('|---|---|---|---|---|---|');
  for (const [name, r] of [
    ['password sign-in', signIn],
    ['OTP verify', otp],
    ['magic-link confirm', magic],
  ] as const) {
    report(`| ${name} | ${r.rps.toFixed(0)} | ${r.p99} | ${((r.cpu / r.ops) * 1000).toFixed(2)} | ${pct(r.rps / signIn.rps)} | ${r.non2xx} |`);
  }
}

try {
  const email = 'bench@example.com';
  const { accessToken } = await post<{ accessToken: string }>('/auth/sign-up', { type: 'signUp', table: 'users', email, password: PASSWORD });
  if (process.env.BENCH_PASSWORDLESS_ONLY === '1') {
    await passwordless(Number(process.env.BENCH_POOL ?? 2000));
    console.log(`\n${lines.join('\n')}`);
    server.stop();
    rmSync(data, { recursive: true, force: true });
    process.exit(0);
  }
  const ids: string[] = [];
  for (let i = 0; i < 1000; i += 500) {
    const rows = await post<{ id: string }[]>('/db/many', { table: 'items', objects: Array.from({ length: 500 }, (_, j) => ({ title: `item ${i + j}`, n: i + j })) });
    ids.push(...rows.map((r) => r.id));
  }
  report('| scenario | baseline req/s | p99 ms | per CPU-s | tablebase req/s | p99 ms | per CPU-s | ratio req/s | ratio per CPU-s | target (req/s, per CPU-s) | non-2xx |');
  report('|---|---|---|---|---|---|---|---|---|---|---|');
  const verdict = (ok: (x: number) => boolean, r: Pair) => `${ok(r.wall) ? 'met' : 'MISSED'}, ${ok(r.perCpu) ? 'met' : 'MISSED'}`;
  const cheap = (x: number) => x > 0.9;

  const q = (o: unknown) => encodeURIComponent(JSON.stringify(o));
  const randomGet = () => `/db?body=${q({ table: 'items', where: { id: { eq: ids[Math.floor(Math.random() * ids.length)] } } })}`;
  /** `header()` is called once per request: a name and value to add, or undefined for none. */
  const get = (c: number, header: () => [string, string] | undefined) => () =>
    serverLoad({
      url: server.base,
      connections: c,
      requests: [
        {
          setupRequest: (req) => {
            const h = header();
            return { ...req, headers: { ...req.headers, ...(h ? { [h[0]]: h[1] } : {}) }, path: randomGet() };
          },
        },
      ],
    });
  const anonymous = () => undefined;
  const bearer = (): [string, string] => ['authorization', `Bearer ${accessToken}`];
  const anonymousRuns: Run[] = [];
  for (const c of [10, 50]) {
    const r = await pair(get(c, anonymous), get(c, bearer));
    if (c === 10) anonymousRuns.push(r.base);
    report(
      `| get by id, bearer vs anonymous, c=${c} | ${fmt(r.base)} | ${fmt(r.ours)} | **${pct(r.wall)}** | **${pct(r.perCpu)}** | cost < 10%: ${verdict(cheap, r)} | ${r.base.non2xx + r.ours.non2xx} |`,
    );
  }
  // Control: a header as long as the bearer one that nothing reads, to separate the cost of
  // carrying the bytes from the cost of checking the token.
  const padded = await pair(
    get(10, anonymous),
    get(10, () => ['x-padding', `Bearer ${'x'.repeat(accessToken.length)}`]),
  );
  report(
    `| get by id, a same-size unread header vs anonymous, c=10 (control) | ${fmt(padded.base)} | ${fmt(padded.ours)} | ${pct(padded.wall)} | ${pct(padded.perCpu)} | — | ${padded.base.non2xx + padded.ours.non2xx} |`,
  );

  const signInBody = JSON.stringify({ type: 'signIn', table: 'users', email, password: PASSWORD });
  let signIns = 0;
  for (const c of [4, 16]) {
    const signIn = () => serverLoad({ url: `${server.base}/auth/sign-in`, method: 'POST', headers: { 'content-type': 'application/json' }, body: signInBody, connections: c });
    const r = await pair(() => raw(c), signIn);
    signIns += r.ours.ops;
    report(`| sign-in vs raw Argon2id verify, c=${c} | ${fmt(r.base)} | ${fmt(r.ours)} | **${pct(r.wall)}** | **${pct(r.perCpu)}** | ≥ 85%: ${verdict((x) => x >= 0.85, r)} | ${r.ours.non2xx} |`);
    const ms = (cpu: number, ops: number) => ((cpu / ops) * 1000).toFixed(2);
    notes.push(`sign-in c=${c}: server CPU per sign-in ${ms(r.ours.cpu, r.ours.ops)} ms (JavaScript thread ${ms(r.ours.mainCpu, r.ours.ops)} ms); raw CPU per verify ${ms(r.base.cpu, r.base.ops)} ms`);
  }
  // Every sign-in's token went through the verified-token cache, so the same get now runs against
  // a cache holding thousands of entries: what a server with many signed-in users sees.
  const later = await pair(get(10, anonymous), get(10, bearer));
  report(
    `| get by id, bearer vs anonymous, c=10, after ${Math.round(signIns)} sign-ins | ${fmt(later.base)} | ${fmt(later.ours)} | **${pct(later.wall)}** | **${pct(later.perCpu)}** | cost < 10%: ${verdict(cheap, later)} | ${later.base.non2xx + later.ours.non2xx} |`,
  );

  // Worst case, no target: 20,000 distinct valid tokens of one session (twice the verified-token
  // cache), cycled in order so every request misses the LRU and runs the HMAC.
  const claims = decodeJwt(accessToken);
  const session = String(claims.jti).split('.')[0];
  const key = new TextEncoder().encode(env.JWT_SECRET);
  const many = await Promise.all(Array.from({ length: 20_000 }, (_, i) => new SignJWT({ ...claims, jti: `${session}.b${i}` }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key)));
  let next = 0;
  const cold = await pair(
    get(10, anonymous),
    get(10, () => ['authorization', `Bearer ${many[next++ % many.length]}`]),
  );
  report(
    `| get by id, a never-seen token per request vs anonymous, c=10 (no target) | ${fmt(cold.base)} | ${fmt(cold.ours)} | ${pct(cold.wall)} | ${pct(cold.perCpu)} | — | ${cold.base.non2xx + cold.ours.non2xx} |`,
  );

  // The token check itself, in this process with the server's own classes.
  const revocations = new RevocationList(3600);
  const warm = new AccessTokens({ secret: env.JWT_SECRET, ttlSeconds: 3600, revocations });
  const uncached = new AccessTokens({ secret: env.JWT_SECRET, ttlSeconds: 3600, revocations, cacheSize: 0 });
  const header = `Bearer ${accessToken}`;
  const cachedUs = await timeEach(200_000, () => warm.verify(header));
  for (let i = 0; i < 9_000; i++) await warm.verify(`Bearer ${many[i]}`);
  const fullUs = await timeEach(20_000, () => warm.verify(header));
  const uncachedUs = await timeEach(20_000, (i) => uncached.verify(`Bearer ${many[i % many.length]}`));
  const getUs = (1e6 * anonymousRuns.reduce((n, l) => n + l.cpu, 0)) / anonymousRuns.reduce((n, l) => n + l.ops, 0);
  notes.push(
    `token check (AccessTokens.verify, in-process): cached ${cachedUs.toFixed(2)} µs with 1 token cached, ${fullUs.toFixed(2)} µs with 9,001 cached; uncached ${uncachedUs.toFixed(1)} µs.` +
      ` An anonymous get costs the server ${getUs.toFixed(0)} µs of CPU (c=10 runs), so a cached check is ${((cachedUs / getUs) * 100).toFixed(1)}% of a get (${((fullUs / getUs) * 100).toFixed(0)}% with a full cache)`,
  );
  await passwordless(Number(process.env.BENCH_POOL ?? 2000));
  console.log(`\nBENCH_SECONDS=${SECONDS}, BENCH_ROUNDS=${ROUNDS}; req/s are means, ratios medians of per-round ratios\n${lines.join('\n')}\n\n${notes.map((n) => `- ${n}`).join('\n')}`);
} finally {
  server.stop();
  rmSync(data, { recursive: true, force: true });
  clearTimeout(watchdog);
}

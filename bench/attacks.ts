/**
 * Re-runs the attacks of issue #11 against `examples/conformance` on loopback and prints numbers
 * (docs/reference/conventions.md, docs/reference/data.md Bounds, rules-and-hooks.md, rate-limits.md). Bounded: every attack has a fixed count and a time cap, and the
 * server is killed at the end. Memory is the server's RSS read from /proc (Linux).
 *
 *   node --import tsx bench/attacks.ts            (about 1–2 minutes)
 *   node --import tsx bench/attacks.ts stream-memory [--before <dir>]
 *
 * `stream-memory` runs only the live-memory attack of issue #26 (8 rows of 1 MB, 280 non-reading
 * list streams with distinct `where`s from 3 addresses), printing RSS and `/health` latency over
 * time. `--before <dir>`: also run it against another checkout (e.g. `git archive main` unpacked
 * with this node_modules linked), for a before/after table in one run. A run stops early when the
 * server's RSS passes 2 GB (the unbounded server would otherwise take the machine down).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type Started } from './lib.js';

const results: string[] = [];
const note = (name: string, value: string) => {
  results.push(`| ${name} | ${value} |`);
  console.log(`${name}: ${value}`);
};

/** RSS of the server and its child processes (workers fork one per core), from /proc. */
function rssMb(s: Started): number {
  const kb = (pid: number): number => {
    let total = 0;
    try {
      total = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean)) total += kb(Number(child));
    } catch {
      // exited meanwhile
    }
    return total;
  };
  return Math.round(kb(s.proc.pid!) / 1024);
}

interface Reply {
  status: number;
  text: string;
  ms: number;
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const t = performance.now();
  const init: RequestInit = { method, headers: { 'content-type': 'application/json', ...headers }, signal: AbortSignal.timeout(60_000) };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  try {
    const r = await fetch(base + path, init);
    const text = await r.text();
    return { status: r.status, text, ms: Math.round(performance.now() - t) };
  } catch (err) {
    return { status: 0, text: String((err as Error).cause ?? err), ms: Math.round(performance.now() - t) };
  }
}

/** A GET with its JSON in the request body (docs/reference/conventions.md), through node:http (fetch refuses it). */
function getWithBody(base: string, path: string, body: unknown): Promise<Reply> {
  const payload = JSON.stringify(body);
  const t = performance.now();
  return new Promise((resolve) => {
    const req = request(base + path, { method: 'GET', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, ms: Math.round(performance.now() - t) }));
    });
    req.on('error', (err) => resolve({ status: 0, text: String(err), ms: Math.round(performance.now() - t) }));
    req.end(payload);
  });
}

const leaks = (text: string) => /SQLITE|SELECT |sqlite|\/work\/|node_modules|at .*\.(ts|js):\d+/.test(text);

async function signUp(base: string, email: string) {
  const r = await call(base, 'POST', '/auth/sign-up', { type: 'signUp', table: 'users', email, password: 'a long password' });
  const d = JSON.parse(r.text).data;
  return { id: d.user.id as string, auth: { authorization: `Bearer ${d.accessToken}` } };
}

async function textMatching(base: string) {
  const payload = 'a'.repeat(500_000);
  // The 40,000-character pattern against one row (issue #11: 14–19 s), then 256 characters over 40 rows.
  for (const [len, rows] of [
    [40_000, 1],
    [256, 40],
  ] as const) {
    const have = JSON.parse((await call(base, 'GET', `/db/count?body=${encodeURIComponent(JSON.stringify({ table: 'big' }))}`)).text).data as number;
    for (let i = have; i < rows; i++) await call(base, 'POST', '/db', { table: 'big', object: { payload } });
    const pattern = `${'a'.repeat(len - 1)}b`;
    const counting = getWithBody(base, '/db/count', { table: 'big', where: { payload: { contains: pattern } } });
    await new Promise((r) => setTimeout(r, 20));
    const health = await call(base, 'GET', '/health');
    const c = await counting;
    note(`contains ${len} chars, count over ${rows} × 500 KB`, `status ${c.status}, ${c.ms} ms; /health meanwhile ${health.ms} ms`);
  }
  await call(base, 'DELETE', '/db/many', { table: 'big', where: {} });
}

async function statementCache(s: Started) {
  const before = rssMb(s);
  let statuses = new Map<number, number>();
  const t = performance.now();
  for (let q = 0; q < 300; q++) {
    // 2 or-items + 998 in-values = the 1,000-value maximum of docs/reference/data.md, different every time.
    const vals = (k: number) => Array.from({ length: 499 }, (_, i) => `q${q}-${k}-${i}-${'x'.repeat(20)}`);
    const r = await getWithBody(s.base, '/db/count', { table: 'tasks', where: { or: [{ title: { in: vals(0) } }, { ownerId: { in: vals(1) } }] } });
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  }
  note(
    '300 maximal in-queries (1,000 values): RSS growth',
    `${rssMb(s) - before} MB (${before} → ${rssMb(s)}), statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${Math.round(performance.now() - t)} ms`,
  );
  statuses = new Map();
  const before2 = rssMb(s);
  for (let q = 0; q < 40; q++) {
    // The pre-bounds maximum: 40 × 1,000 values.
    const where = { or: Array.from({ length: 40 }, (_, k) => ({ title: { in: Array.from({ length: 1000 }, (_, i) => `b${q}-${k}-${i}`) } })) };
    const r = await getWithBody(s.base, '/db/count', { table: 'tasks', where });
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  }
  note('40 queries of 40,000 values: RSS growth', `${rssMb(s) - before2} MB, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
}

function rawGet(base: string, path: string): Socket {
  const url = new URL(base);
  const sock = connect(Number(url.port), url.hostname);
  sock.setNoDelay(true);
  sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  sock.pause(); // never read
  sock.on('error', () => undefined);
  return sock;
}

async function slowReaders(s: Started) {
  const r = await call(s.base, 'POST', '/db', { table: 'big', object: { payload: 'p'.repeat(1_000_000) } });
  const id = JSON.parse(r.text).data.id as string;
  const before = rssMb(s);
  const q = encodeURIComponent(JSON.stringify({ table: 'big', where: { id: { eq: id } } }));
  const socks = Array.from({ length: 20 }, () => rawGet(s.base, `/db/stream/list?body=${q}`));
  await new Promise((res) => setTimeout(res, 500));
  for (let i = 0; i < 6; i++) {
    await call(s.base, 'PATCH', '/db', { table: 'big', where: { id: { eq: id } }, updates: [{ column: 'payload', value: String(i).repeat(1_000_000) }] });
    await new Promise((res) => setTimeout(res, 300));
  }
  note('20 non-reading streams, 6 changes of a 1 MB row: RSS growth', `${rssMb(s) - before} MB (${before} → ${rssMb(s)})`);
  for (const sk of socks) sk.destroy();
  // Plain list: 8 rows of 1 MB per answer, clients that never read.
  for (let i = 0; i < 7; i++) await call(s.base, 'POST', '/db', { table: 'big', object: { payload: 'z'.repeat(1_000_000) } });
  const before2 = rssMb(s);
  const lq = encodeURIComponent(JSON.stringify({ table: 'big', limit: 100 }));
  const socks2 = Array.from({ length: 20 }, () => rawGet(s.base, `/db/list?body=${lq}`));
  await new Promise((res) => setTimeout(res, 3000));
  const status = await call(s.base, 'GET', `/db/list?body=${lq}`);
  note('20 non-reading /db/list of 8 MB: RSS growth after 3 s', `${rssMb(s) - before2} MB; one reading client got ${status.status} (${status.text.length} chars)`);
  await new Promise((res) => setTimeout(res, 19_000));
  const later = await call(s.base, 'GET', `/db/list?body=${lq}`);
  note('… and after 22 s (past the 10–20 s stall cut-off)', `${rssMb(s) - before2} MB; a reading client now gets ${later.status}`);
  for (const sk of socks2) sk.destroy();
  await call(s.base, 'DELETE', '/db/many', { table: 'big', where: {} });
}

async function takeover(base: string) {
  const a = await signUp(base, `owner${Date.now()}@example.com`);
  const b = await signUp(base, `thief${Date.now()}@example.com`);
  const n1 = JSON.parse((await call(base, 'POST', '/db', { table: 'notes', object: { body: 'secret 1' } }, a.auth)).text).data;
  const n2 = JSON.parse((await call(base, 'POST', '/db', { table: 'notes', object: { body: 'secret 2' } }, a.auth)).text).data;
  const up = await call(base, 'PATCH', '/db', { table: 'notes', where: { id: { eq: n1.id } }, updates: [{ column: 'ownerId', value: b.id }] }, b.auth);
  const del = await call(base, 'DELETE', '/db', { table: 'notes', where: { id: { eq: n2.id } } }, b.auth);
  const delMany = await call(base, 'DELETE', '/db/many', { table: 'notes', where: {} }, b.auth);
  const left = JSON.parse((await call(base, 'GET', `/db/list?body=${encodeURIComponent(JSON.stringify({ table: 'notes' }))}`, undefined, a.auth)).text);
  note('notes takeover (PATCH ownerId)', `status ${up.status}${up.text.includes('secret') ? ' (body leaked)' : ''}`);
  note('notes delete / delete many of another user', `status ${del.status} / ${delMany.status}; owner still sees ${left.data?.items?.length ?? '?'} of 2 notes`);
  const email = await call(base, 'PATCH', '/db', { table: 'users', where: { id: { eq: b.id } }, updates: [{ column: 'email', value: 'changed@example.com' }] }, b.auth);
  note('PATCH /db users.email', `status ${email.status}`);
}

async function malformed(base: string) {
  const bodies: [string, unknown][] = [
    ['or of 5,000 {}', { table: 'tasks', where: { or: Array.from({ length: 5000 }, () => ({})) } }],
    ['40,000 bound values', { table: 'tasks', where: { or: Array.from({ length: 40 }, (_, k) => ({ title: { in: Array.from({ length: 1000 }, (_, i) => `${k}-${i}`) } })) } }],
    ['60,000-character pattern', { table: 'tasks', where: { title: { contains: 'x'.repeat(60_000) } } }],
    ['nesting 40 deep', { table: 'tasks', where: Array.from({ length: 40 }).reduce((w) => ({ not: w }), { title: { eq: 'x' } }) }],
  ];
  for (const [name, body] of bodies) {
    const r = await getWithBody(base, '/db/count', body);
    note(name, `status ${r.status}, ${r.ms} ms${leaks(r.text) ? ', LEAKS internals' : ''}`);
  }
}

async function contentTypes(base: string) {
  const before = JSON.parse((await call(base, 'GET', `/db/count?body=${encodeURIComponent(JSON.stringify({ table: 'tasks' }))}`)).text).data;
  const r = await call(base, 'POST', '/db', JSON.stringify({ table: 'tasks', object: { title: 'csrf' } }), { 'content-type': 'text/plain' });
  const after = JSON.parse((await call(base, 'GET', `/db/count?body=${encodeURIComponent(JSON.stringify({ table: 'tasks' }))}`)).text).data;
  note('POST /db as text/plain', `status ${r.status}, rows written ${after - before}`);
}

/** A chunked JSON body of 4 MiB (limit 1 MiB): does the client get the 413? */
function chunkedOverLimit(base: string): Promise<void> {
  return new Promise((resolve) => {
    const req = request(base + '/db', { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
      res.resume();
      res.on('end', () => {
        note('chunked 4 MiB body', `status ${res.statusCode}`);
        resolve();
      });
    });
    req.on('error', (err) => {
      note('chunked 4 MiB body', `client error ${(err as NodeJS.ErrnoException).code}`);
      resolve();
    });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < 64) {
        sent++;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    req.write('{"table":"tasks","object":{"title":"');
    pump();
  });
}

async function confirmFlood(base: string) {
  await call(base, 'POST', '/auth/sign-up', { type: 'signUp', table: 'users', email: 'flood@example.com', password: 'a long password' });
  const signIn = () => call(base, 'POST', '/auth/sign-in', { type: 'signIn', table: 'users', email: 'flood@example.com', password: 'a long password' });
  const quiet = (await signIn()).ms;
  const flood = Array.from({ length: 64 }, () => call(base, 'POST', '/auth/confirm', { type: 'confirmResetPassword', token: 'bogus', newPassword: 'x'.repeat(1024) }));
  const loaded = await signIn();
  const statuses = new Set((await Promise.all(flood)).map((r) => r.status));
  note('sign-in during 64 bogus confirms (1,024-char password)', `${quiet} ms quiet → ${loaded.ms} ms; confirm statuses ${[...statuses].join(',')}`);
}

/** Issue #26: anonymous streams over large rows. RSS and /health latency over time. */
async function streamMemory(label: string, cwd: string): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tb-streammem-'));
  const s = await startProcess(
    ['bin/tablebase.mjs', 'serve', '--project', 'examples/conformance', '--data', dataDir, '--host', '127.0.0.1', '--port', '{port}'],
    { TRUSTED_PROXIES: '127.0.0.1' },
    cwd,
  );
  const rows: string[] = [];
  const socks: Socket[] = [];
  try {
    for (let i = 0; i < 8; i++) {
      const r = await call(s.base, 'POST', '/db', { table: 'big', object: { payload: String(i).repeat(1_000_000) } });
      if (r.status !== 200) throw new Error(`${label}: inserting a 1 MB row answered ${r.status} ${r.text.slice(0, 200)}`);
    }
    const start = performance.now();
    const url = new URL(s.base);
    let opened = 0;
    let peak = rssMb(s);
    let worstHealth = 0;
    let healthFailures = 0;
    let stopped = '';
    const sample = async () => {
      const h = await call(s.base, 'GET', '/health');
      const rss = rssMb(s);
      peak = Math.max(peak, rss);
      worstHealth = Math.max(worstHealth, h.ms);
      if (h.status !== 200) healthFailures++;
      rows.push(`| ${label} | ${((performance.now() - start) / 1000).toFixed(1)} s | ${opened} | ${rss} MB | ${h.status} in ${h.ms} ms |`);
      return rss;
    };
    await sample();
    for (let i = 0; i < 280; i++) {
      const body = encodeURIComponent(JSON.stringify({ table: 'big', where: { payload: { ne: `w${i}` } }, limit: 100 }));
      const sock = connect(Number(url.port), url.hostname);
      sock.on('error', () => undefined);
      sock.write(`GET /db/stream/list?body=${body} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.${1 + (i % 3)}\r\n\r\n`);
      sock.pause(); // never read
      socks.push(sock);
      opened++;
      if (i % 20 === 19) {
        await new Promise((r) => setTimeout(r, 200));
        if ((await sample()) > 2048) {
          stopped = ` (stopped: RSS passed 2 GB after ${opened} streams)`;
          break;
        }
      }
    }
    // One change re-runs every admitted query.
    if (!stopped) {
      await call(s.base, 'POST', '/db', { table: 'big', object: { payload: 'n'.repeat(1_000_000) } });
      for (let k = 0; k < 4; k++) {
        await new Promise((r) => setTimeout(r, 500));
        await sample();
      }
    }
    note(
      `stream-memory attack, ${label}`,
      `peak RSS ${peak} MB, worst /health ${worstHealth} ms, /health non-200 ${healthFailures}${stopped}; process ${s.proc.exitCode === null ? 'alive' : `died (${s.proc.exitCode})`}`,
    );
  } finally {
    for (const sk of socks) sk.destroy();
    s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

async function streamMemoryOnly(): Promise<void> {
  const at = process.argv.indexOf('--before');
  const table: string[] = [];
  if (at > 0) table.push(...(await streamMemory('before', process.argv[at + 1]!)));
  table.push(...(await streamMemory('after', process.cwd())));
  console.log(`\n| server | time | streams opened | RSS | /health |\n|---|---|---|---|---|\n${table.join('\n')}`);
  console.log(`\n| attack | result |\n|---|---|\n${results.join('\n')}`);
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tb-attacks-'));
  const env = { TABLEBASE_MAX_STREAMS_PER_IP: '1000' };
  const s = await startProcess(['bin/tablebase.mjs', 'serve', '--project', 'examples/conformance', '--data', dataDir, '--host', '127.0.0.1', '--port', '{port}'], env);
  const deadline = setTimeout(() => {
    console.error('attacks bench: time cap reached');
    s.stop();
    process.exit(1);
  }, 240_000);
  try {
    note('RSS at start', `${rssMb(s)} MB`);
    await textMatching(s.base);
    await statementCache(s);
    await slowReaders(s);
    await takeover(s.base);
    await malformed(s.base);
    await contentTypes(s.base);
    await chunkedOverLimit(s.base);
    await confirmFlood(s.base);
  } finally {
    clearTimeout(deadline);
    s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const memory = await streamMemory('this checkout', process.cwd());
  console.log(`\n| server | time | streams opened | RSS | /health |\n|---|---|---|---|---|\n${memory.join('\n')}`);
  console.log(`\n| attack | result |\n|---|---|\n${results.join('\n')}`);
}

if (process.argv[2] === 'stream-memory') await streamMemoryOnly();
else await main();

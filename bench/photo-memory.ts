/**
 * Server memory while 50 MB uploads are cut off at the photo limit (docs/reference/photos.md: "the upload is cut
 * off as soon as it passes the limit"; the conformance project's maxBytes is 262144).
 *
 *   node --import tsx bench/photo-memory.ts [--runs 5] [--parallel 4]
 *
 * Starts `tablebase serve --project examples/conformance` on loopback, then streams 50 MB
 * chunked bodies (no Content-Length, so only counting can stop them) to POST /img: raw
 * `image/png` and multipart, one at a time, then several at once. The server's VmRSS is read
 * from /proc/<pid>/status every few milliseconds before, during and after; VmHWM (the kernel's
 * peak RSS) catches any spike between samples, and /proc/<pid>/io `rchar` shows how many bytes
 * the server actually read. Exits 1 when the peak grew by half the body size or more.
 *
 * Then (bench/photo-transfer.ts; `--transfer-only` skips the part above) a 50 MB photo that is
 * accepted, up and down, through the local folder and through S3 in the same run: throughput
 * against the local store, and RSS growth under 64 MB on S3.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { startProcess } from './lib.js';
import { transferBench } from './photo-transfer.js';

const BODY = 50 * 1024 * 1024;
const CHUNK = 64 * 1024;
const MB = 1024 * 1024;
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('runs', 5);
const PARALLEL = arg('parallel', 4);

if (process.platform !== 'linux') {
  console.error('photo-memory reads /proc/<pid>/status: Linux only');
  process.exit(2);
}

/** Bytes from a `/proc/<pid>/status` line such as `VmRSS:   81234 kB`. */
function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}
const rchar = (pid: number) => Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);

/** Samples the server's RSS every `everyMs` until stopped; answers the samples. */
function sampler(pid: number, everyMs = 5) {
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(statusKb(pid, 'VmRSS')), everyMs);
  samples.push(statusKb(pid, 'VmRSS'));
  return () => {
    clearInterval(timer);
    samples.push(statusKb(pid, 'VmRSS'));
    return samples;
  };
}

interface Outcome {
  /** HTTP status, or `reset` when the connection failed before the answer could be read. */
  status: number | 'reset';
  /** Body bytes handed to the socket before the answer (the rest were never sent). */
  sent: number;
  ms: number;
}

/** Streams `prefix` then zeros, chunked, up to `BODY` bytes, stopping once the server answers. */
function streamUpload(base: string, contentType: string, prefix: Buffer, token: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let sent = 0;
    let answered = false;
    const finish = (status: Outcome['status']) => resolve({ status, sent, ms: Math.round(performance.now() - started) });
    const req = request(`${base}/img`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': contentType, 'transfer-encoding': 'chunked', authorization: `Bearer ${token}` },
    });
    req.on('response', (res) => {
      answered = true;
      res.resume();
      res.on('end', () => {
        req.destroy();
        finish(res.statusCode ?? 0);
      });
    });
    req.on('error', () => {
      if (!answered) finish('reset');
    });
    const filler = Buffer.alloc(CHUNK);
    void (async () => {
      let piece: Buffer = prefix;
      while (!answered && !req.destroyed && sent < BODY) {
        sent += piece.length;
        // One write at a time, then let the loop poll, so an early answer is read before the next.
        await new Promise<void>((r) => {
          const done = () => {
            req.off('close', done);
            r();
          };
          req.once('close', done);
          req.write(piece, done);
        });
        await tick();
        piece = filler;
      }
      if (!answered && !req.destroyed) req.end();
    })();
  });
}

const mb = (n: number) => (n / MB).toFixed(1);

if (process.argv.includes('--transfer-only')) {
  process.exitCode = (await transferBench()) ? 0 : 1;
  process.exit();
}

const data = mkdtempSync(join(tmpdir(), 'tb-photo-mem-'));
const server = await startProcess(['bin/tablebase.mjs', 'serve', '--project', 'examples/conformance', '--data', data, '--host', '127.0.0.1', '--port', '{port}']);
const pid = server.proc.pid!;
try {
  const signUp = await fetch(`${server.base}/auth/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'signUp', table: 'users', email: 'bench@example.com', password: 'bench-password-1' }),
  });
  const token = ((await signUp.json()) as { data: { accessToken: string } }).data.accessToken;

  // A 64×48 RGB PNG's signature and IHDR chunk: type and dimension checks pass, only size is left.
  const pngHead = Buffer.from('89504e470d0a1a0a0000000d4948445200000040000000300802000000', 'hex');
  const boundary = 'benchboundary7MA4YWxkTrZu0gW';
  const multipartHead = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.png"\r\nContent-Type: image/png\r\n\r\n`), pngHead]);
  const kinds = [
    { name: 'raw image/png', type: 'image/png', prefix: pngHead },
    { name: 'multipart', type: `multipart/form-data; boundary=${boundary}`, prefix: multipartHead },
  ];

  // Warm up the code paths (busboy, the inspector, error answers) so their one-off cost is not counted.
  for (const k of kinds) await streamUpload(server.base, k.type, k.prefix, token);
  await sleep(1000);

  let stop = sampler(pid);
  await sleep(1000);
  const before = stop();
  const baseline = Math.max(...before);
  const hwmBefore = statusKb(pid, 'VmHWM');

  const rows: string[] = [];
  const outcomes: Outcome[] = [];
  stop = sampler(pid);
  for (let i = 0; i < RUNS; i++) {
    for (const k of kinds) {
      const read0 = rchar(pid);
      const o = await streamUpload(server.base, k.type, k.prefix, token);
      const read = rchar(pid) - read0;
      outcomes.push(o);
      rows.push(`| ${k.name} | ${o.status} | ${mb(o.sent)} | ${mb(read)} | ${o.ms} | ${mb(statusKb(pid, 'VmRSS'))} |`);
    }
  }
  const concurrent = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => streamUpload(server.base, kinds[i % 2]!.type, kinds[i % 2]!.prefix, token)));
  outcomes.push(...concurrent);
  rows.push(
    `| ${PARALLEL} at once | ${concurrent.map((o) => o.status).join(' ')} | ${mb(concurrent.reduce((n, o) => n + o.sent, 0))} | | ${Math.max(...concurrent.map((o) => o.ms))} | ${mb(statusKb(pid, 'VmRSS'))} |`,
  );
  const during = stop();

  await sleep(1000);
  stop = sampler(pid);
  await sleep(1000);
  const after = stop();
  const hwmAfter = statusKb(pid, 'VmHWM');
  const healthy = (await fetch(`${server.base}/health`)).status === 200;

  console.log(`Server pid ${pid}; each upload streams up to ${mb(BODY)} MB chunked; the limit is 0.25 MB.\n`);
  console.log('| upload | status | client sent MB | server read MB (rchar) | ms | server RSS after, MB |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  const peak = Math.max(...during);
  console.log(`\nRSS before: ${mb(baseline)} MB (max of ${before.length} samples)`);
  console.log(`RSS during: peak ${mb(peak)} MB over ${during.length} samples (+${mb(peak - baseline)} MB)`);
  console.log(`RSS after:  ${mb(Math.max(...after))} MB`);
  console.log(`VmHWM (kernel peak): ${mb(hwmBefore)} MB before, ${mb(hwmAfter)} MB after`);
  const counts = new Map<string, number>();
  for (const o of outcomes) counts.set(String(o.status), (counts.get(String(o.status)) ?? 0) + 1);
  console.log(`Answers: ${[...counts].map(([k, n]) => `${k} ×${n}`).join(', ')}; /health after: ${healthy ? 200 : 'FAILED'}`);

  const grew = Math.max(peak, hwmAfter > hwmBefore ? hwmAfter : 0) - baseline;
  const flat = grew < BODY / 2 && healthy;
  console.log(flat ? `\nflat: the peak stayed ${mb(grew)} MB above the baseline` : `\nNOT flat: +${mb(grew)} MB`);
  const transferred = await transferBench();
  process.exitCode = flat && transferred ? 0 : 1;
} finally {
  server.stop();
  rmSync(data, { recursive: true, force: true });
}

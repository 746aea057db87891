/**
 * Accepted 50 MB photos through each store (docs/reference/object-storage.md, "Measured costs"):
 * one upload and one download of a real 50 MB PNG against a server on the local folder and
 * against one on S3 (a real s3rver on loopback, in this process), in the same run. Reports
 * throughput of each against the local store and the server's RSS growth, from
 * /proc/<pid>/status VmRSS sampled every 5 ms and VmHWM (the kernel's peak). Used by
 * bench/photo-memory.ts; fails when S3 grows RSS by 64 MB or more, or a download differs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { startTestS3 } from '../src/s3/test-server.js';
import { startProcess } from './lib.js';

const MB = 1024 * 1024;
const LIMIT = 64 * MB;

const kb = (pid: number, field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;

function sampler(pid: number) {
  const samples = [kb(pid, 'VmRSS')];
  const timer = setInterval(() => samples.push(kb(pid, 'VmRSS')), 5);
  return () => {
    clearInterval(timer);
    samples.push(kb(pid, 'VmRSS'));
    return Math.max(...samples);
  };
}

function upload(base: string, file: string, token: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/img`, { method: 'POST', headers: { 'content-type': 'image/png', 'content-length': statSync(file).size, authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    createReadStream(file).pipe(req);
  });
}

async function download(url: string): Promise<{ status: number; sha: string; bytes: number }> {
  const res = await fetch(url);
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of res.body!) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { status: res.status, sha: hash.digest('hex'), bytes };
}

interface Row {
  store: string;
  upMs: number;
  downMs: number;
  base: number;
  peak: number;
  ok: boolean;
}

async function measure(store: string, file: string, sha: string, args: string[], env: Record<string, string>): Promise<Row> {
  const data = mkdtempSync(join(tmpdir(), 'tb-photo-xfer-'));
  const server = await startProcess(['bin/tablebase.mjs', 'serve', '--project', 'bench/projects/photos', '--data', data, '--host', '127.0.0.1', '--port', '{port}', ...args], env);
  const pid = server.proc.pid!;
  try {
    const up = await fetch(`${server.base}/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'signUp', table: 'users', email: 'bench@example.com', password: 'bench-password-1' }),
    });
    const token = ((await up.json()) as { data: { accessToken: string } }).data.accessToken;
    await sleep(500);
    const base = kb(pid, 'VmRSS');
    const stop = sampler(pid);
    let t = performance.now();
    const posted = await upload(server.base, file, token);
    const upMs = performance.now() - t;
    if (posted.status !== 200) throw new Error(`${store}: upload answered ${posted.status} ${posted.text}`);
    const id = (JSON.parse(posted.text) as { data: { id: string } }).data.id;
    t = performance.now();
    const got = await download(`${server.base}/img/${id}`);
    const downMs = performance.now() - t;
    const peak = Math.max(stop(), kb(pid, 'VmHWM') > base ? kb(pid, 'VmHWM') : 0);
    return { store, upMs, downMs, base, peak, ok: got.status === 200 && got.sha === sha };
  } finally {
    server.stop();
    rmSync(data, { recursive: true, force: true });
  }
}

/** Prints the table; resolves false when a check failed. */
export async function transferBench(): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'tb-photo-src-'));
  const file = join(dir, 'big.png');
  // Noise does not compress: 4096×4096 RGB at compression level 0 is a valid PNG of ~50 MB.
  const side = 4096;
  writeFileSync(
    file,
    await sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer(),
  );
  const size = statSync(file).size;
  const sha = createHash('sha256').update(readFileSync(file)).digest('hex');
  const s3 = await startTestS3('tablebase-bench');
  try {
    const local = await measure('local folder', file, sha, [], {});
    const onS3 = await measure('S3 (s3rver)', file, sha, ['--storage', `s3://${s3.bucket}/bench`], s3.env);
    const rate = (ms: number) => size / MB / (ms / 1000);
    console.log(`\nAccepted uploads: one ${(size / 1e6).toFixed(1)} MB PNG up and down through each store (bench/projects/photos).\n`);
    console.log('| store | upload MB/s | vs local | download MB/s | vs local | RSS before MB | peak MB | growth MB | bytes back intact |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of [local, onS3]) {
      console.log(
        `| ${r.store} | ${rate(r.upMs).toFixed(0)} | ${(local.upMs / r.upMs).toFixed(2)}× | ${rate(r.downMs).toFixed(0)} | ${(local.downMs / r.downMs).toFixed(2)}× | ${(r.base / MB).toFixed(1)} | ${(r.peak / MB).toFixed(1)} | ${((r.peak - r.base) / MB).toFixed(1)} | ${r.ok ? 'yes' : 'NO'} |`,
      );
    }
    const pass = local.ok && onS3.ok && onS3.peak - onS3.base < LIMIT;
    console.log(pass ? `\nS3 RSS growth ${((onS3.peak - onS3.base) / MB).toFixed(1)} MB < 64 MB` : '\nFAILED: S3 RSS grew by 64 MB or more, or a download differed');
    return pass;
  } finally {
    await s3.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

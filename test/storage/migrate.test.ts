/**
 * `tablebase storage migrate` (docs/reference/object-storage.md): every photo and thumbnail of a
 * server's local store copied to a bucket, verified by checksum; a re-run copies nothing; a run
 * after damage (an object lost, one corrupted) copies exactly those again; the server started on
 * the bucket then serves the same bytes; and back from the bucket to a folder.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openS3, type S3Bucket } from '../../src/s3/index.js';
import { startTestS3, TEST_S3_SECRET, type TestS3 } from '../../src/s3/test-server.js';
import { image, sendBinary, storedObjects } from '../helpers/photos.js';
import { bearer, ROOT, secret, startServer, type TestServer } from '../helpers/server.js';
import { marker } from '../helpers/processes.js';
import { signUp } from '../helpers/users.js';

let s3: TestS3;
let bucket: S3Bucket;
let dataDir: string;
let copyDir: string;
const servers: TestServer[] = [];
const env = () => ({ JWT_SECRET: 'j'.repeat(64), PASSWORD_SECRET: 'p'.repeat(64), ...s3.env });

function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, [join(ROOT, 'bin/tablebase.mjs'), ...args], { cwd: ROOT, env: { ...process.env, ...env(), ...marker() }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  return new Promise((r) => proc.once('exit', (code) => r({ code, out })));
}
const migrate = (to: string, extra: string[] = []) => cli(['storage', 'migrate', '--project', join(ROOT, 'examples/conformance'), '--data', dataDir, '--to', to, ...extra]);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  s3 = await startTestS3('tablebase-migrate');
  bucket = openS3(`s3://${s3.bucket}/moved`, s3.env);
  dataDir = mkdtempSync(join(tmpdir(), 'tb-migrate-'));
  copyDir = mkdtempSync(join(tmpdir(), 'tb-migrate-back-'));
}, 60_000);
afterAll(async () => {
  for (const s of servers) await s.dispose();
  bucket?.destroy();
  await s3?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(copyDir, { recursive: true, force: true });
});

// The CLI is pointed at the data folder's SQLite database; the PostgreSQL run skips this file.
describe.skipIf(process.env.TABLEBASE_TEST_DB === 'postgres')('storage migrate', () => {
  const ids: string[] = [];
  const originals = new Map<string, Buffer>();

  it('copies every photo and thumbnail to the bucket, verified; a re-run copies nothing', async () => {
    const s = await startServer({ dataDir, env: env() });
    servers.push(s);
    const token = (await signUp(s, 'mover@example.com')).accessToken;
    for (const [w, h] of [
      [64, 48],
      [40, 30],
      [20, 20],
    ] as const) {
      const png = await image(w, h).png().toBuffer();
      const r = await sendBinary(s.base, 'POST', '/img', { body: png, type: 'image/png', headers: bearer(token) });
      expect(r.status, r.text).toBe(200);
      const id = (r.json as { data: { id: string } }).data.id;
      ids.push(id);
      originals.set(id, png);
      expect((await sendBinary(s.base, 'GET', `/img/${id}?thumb=10x10`)).status).toBe(200);
    }
    const local = (await storedObjects(s)).sort();
    expect(local).toHaveLength(6);
    await s.stop();

    const first = await migrate(`s3://${s3.bucket}/moved`);
    expect(first.code, first.out).toBe(0);
    expect(first.out).toContain('done: 6 copied, 0 already there');
    const names: string[] = [];
    for await (const o of bucket.list()) names.push(o.name);
    expect(names.sort()).toEqual(local);
    for (const name of local) {
      const got = await bucket.get(name);
      const chunks: Buffer[] = [];
      for await (const c of got!.body) chunks.push(c as Buffer);
      expect(sha(Buffer.concat(chunks))).toBe(sha(readFileSync(join(dataDir, 'photos', name))));
    }

    const again = await migrate(`s3://${s3.bucket}/moved`);
    expect(again.code, again.out).toBe(0);
    expect(again.out).toContain('done: 0 copied, 6 already there and verified');
    expect(first.out + again.out).not.toContain(TEST_S3_SECRET);
  }, 120_000);

  it('after an interruption (one object lost, one corrupted) a re-run copies exactly those', async () => {
    await bucket.delete([ids[0]!]);
    await bucket.put(`thumbs/${ids[1]}/10x10`, Buffer.from('torn'));
    const r = await migrate(`s3://${s3.bucket}/moved`);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('done: 2 copied, 4 already there');
  }, 60_000);

  it('a server started on the bucket serves the same bytes; migrating back to a folder works too', async () => {
    const s = await startServer({ dataDir, env: env(), args: ['--storage', `s3://${s3.bucket}/moved`] });
    servers.push(s);
    for (const id of ids) {
      const r = await sendBinary(s.base, 'GET', `/img/${id}`);
      expect(r.status).toBe(200);
      expect(r.bytes.equals(originals.get(id)!)).toBe(true);
    }
    await s.stop();
    const back = await cli(['storage', 'migrate', '--project', join(ROOT, 'examples/conformance'), '--data', dataDir, '--storage', `s3://${s3.bucket}/moved`, '--to', pathToFileURL(copyDir).href]);
    expect(back.code, back.out).toBe(0);
    expect(back.out).toContain('done: 6 copied');
    for (const id of ids) expect(readFileSync(join(copyDir, id)).equals(originals.get(id)!)).toBe(true);
  }, 120_000);
});

it('refuses a --to that is not a storage URL', async () => {
  const r = await cli(['storage', 'migrate', '--to', 'ftp://x', '--project', join(ROOT, 'examples/conformance'), '--data', join(tmpdir(), 'none-' + secret().slice(0, 6))]);
  expect(r.code).toBe(2);
  expect(r.out).toMatch(/--to must be a file:\/\/\/absolute\/path or s3:\/\/bucket\/prefix URL/);
}, 30_000);

/**
 * Photos in an S3-compatible bucket, end to end (docs/reference/object-storage.md): a real
 * s3rver on loopback, servers started with `--storage s3://…` and the `S3_*` variables. What the
 * same-suite run (vitest.s3.config.ts) cannot show: the bucket failing under a running server,
 * a start against an unreachable bucket, secrets kept out of logs and answers, and two
 * PostgreSQL nodes serving each other's photos from the bucket.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openS3 } from '../../src/s3/index.js';
import { startTestS3, TEST_S3_SECRET, type TestS3 } from '../../src/s3/test-server.js';
import { createTestDatabase, type TestDatabase } from '../../src/storage/postgres/test-database.js';
import { image, sendBinary, storedObjects } from '../helpers/photos.js';
import { bearer, freePort, ROOT, secret, startServer, type TestServer } from '../helpers/server.js';
import { marker } from '../helpers/processes.js';
import { signUp } from '../helpers/users.js';

let s3: TestS3;
const answers: string[] = [];
const servers: TestServer[] = [];
let png: Buffer;

/** Every answer's headers and body are kept, to search them for the secret at the end. */
async function send(s: TestServer, method: string, path: string, opts: Parameters<typeof sendBinary>[3] = {}) {
  const r = await sendBinary(s.base, method, path, opts);
  answers.push(JSON.stringify([...r.headers.entries()]), r.text);
  return r;
}

async function serverOn(prefix: string, extra: { env?: Record<string, string>; args?: string[] } = {}): Promise<TestServer> {
  const s = await startServer({ env: { ...s3.env, ...extra.env }, args: ['--storage', `s3://${s3.bucket}/${prefix}`, ...(extra.args ?? [])] });
  servers.push(s);
  return s;
}

const photoRows = (s: TestServer): string[] => {
  const db = new Database(join(s.dataDir, 'db.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT id FROM _photos').all() as { id: string }[]).map((r) => r.id);
  } finally {
    db.close();
  }
};

beforeAll(async () => {
  s3 = await startTestS3('tablebase-photos');
  png = await image(64, 48).png().toBuffer();
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.dispose().catch(() => {});
  // No log line and no answer of any server in this file carried the secret key.
  for (const s of servers) expect(s.log()).not.toContain(TEST_S3_SECRET);
  for (const a of answers) expect(a).not.toContain(TEST_S3_SECRET);
  await s3?.close();
}, 60_000);

// Rows are read from the SQLite file; the PostgreSQL run skips this part (the last part runs PostgreSQL itself).
const onPostgresRun = process.env.TABLEBASE_TEST_DB === 'postgres';

describe.skipIf(onPostgresRun)('one node on S3', () => {
  let s: TestServer;
  let token: string;
  beforeAll(async () => {
    s = await serverOn('one');
    token = (await signUp(s, 'owner@example.com')).accessToken;
  }, 60_000);

  it('stores the original and its thumbnails in the bucket, and removes them on delete', async () => {
    const up = await send(s, 'POST', '/img', { body: png, type: 'image/png', headers: bearer(token) });
    expect(up.status, up.text).toBe(200);
    const id = (up.json as { data: { id: string } }).data.id;
    expect((await send(s, 'GET', `/img/${id}?thumb=16x16`)).status).toBe(200);
    expect((await storedObjects(s)).sort()).toEqual([id, `thumbs/${id}/16x16`]);
    const got = await send(s, 'GET', `/img/${id}`, { headers: { range: 'bytes=-16' } });
    expect(got.status).toBe(206);
    expect(got.bytes.equals(png.subarray(png.length - 16))).toBe(true);
    expect((await send(s, 'DELETE', `/img/${id}`, { headers: bearer(token) })).status).toBe(204);
    expect(await storedObjects(s)).toEqual([]);
  });

  it('with the bucket down: photo routes 503 and no orphan row, /health degraded, the rest serves; then it recovers', async () => {
    const kept = await send(s, 'POST', '/img', { body: png, type: 'image/png', headers: bearer(token) });
    const keptId = (kept.json as { data: { id: string } }).data.id;
    const rowsBefore = photoRows(s);
    await s3.stop();
    try {
      const up = await send(s, 'POST', '/img', { body: png, type: 'image/png', headers: bearer(token) });
      expect(up.status, up.text).toBe(503);
      expect((up.json as { error: { code: string } }).error.code).toBe('UNAVAILABLE');
      expect(up.headers.get('retry-after')).toBeTruthy();
      expect(photoRows(s)).toEqual(rowsBefore);
      const get = await send(s, 'GET', `/img/${keptId}`);
      expect(get.status).toBe(503);
      const health = await send(s, 'GET', '/health');
      expect(health.status).toBe(200);
      expect(health.json).toEqual({ data: { status: 'degraded', storage: 'down' } });
      expect((await s.call('GET', '/swagger.json')).status).toBe(200);
      expect((await signUp(s, 'during@example.com')).accessToken).toBeTruthy();
    } finally {
      await s3.start();
    }
    let health = await send(s, 'GET', '/health');
    for (let i = 0; i < 50 && (health.json as unknown as { data: { status: string } }).data.status !== 'ok'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      health = await send(s, 'GET', '/health');
    }
    expect(health.json).toEqual({ data: { status: 'ok' } });
    const back = await send(s, 'GET', `/img/${keptId}`);
    expect(back.status).toBe(200);
    expect(back.bytes.equals(png)).toBe(true);
    // The failed upload left nothing behind in the bucket either.
    expect(await storedObjects(s)).toEqual([keptId]);
  }, 60_000);
});

describe('start', () => {
  it('an unreachable bucket stops `serve` with one line naming the endpoint, never the secret', async () => {
    const port = await freePort();
    const env = { ...process.env, ...s3.env, S3_ENDPOINT: `http://127.0.0.1:${port}`, JWT_SECRET: secret(), PASSWORD_SECRET: secret() };
    const data = mkdtempSync(join(tmpdir(), 'tb-s3-start-'));
    const proc = spawn(
      process.execPath,
      [join(ROOT, 'bin/tablebase.mjs'), 'serve', '--project', join(ROOT, 'examples/conformance'), '--data', data, '--port', '0', '--storage', `s3://${s3.bucket}/x`],
      {
        cwd: ROOT,
        env: { ...env, ...marker() },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => proc.once('exit', r));
    rmSync(data, { recursive: true, force: true });
    expect(code).toBe(1);
    const lines = out.trim().split('\n');
    expect(lines, out).toHaveLength(1);
    expect(lines[0]).toContain(`http://127.0.0.1:${port}`);
    expect(lines[0]).toContain(`s3://${s3.bucket}/x`);
    expect(out).not.toContain(TEST_S3_SECRET);
  }, 60_000);
});

describe('two PostgreSQL nodes, one bucket', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  it("each node serves, thumbnails and deletes the other's photos from the bucket (no _blobs rows)", async () => {
    const shared = { JWT_SECRET: secret(), PASSWORD_SECRET: secret(), REDIS_PREFIX: `tb-s3:${randomBytes(6).toString('hex')}:` };
    const args = ['--database', db.url, '--redis', 'redis://127.0.0.1:6379'];
    const a = await serverOn('pg', { env: shared, args });
    const b = await serverOn('pg', { env: shared, args });
    const token = (await signUp(a, 'pg-owner@example.com')).accessToken;
    const up = await send(a, 'POST', '/img', { body: png, type: 'image/png', headers: bearer(token) });
    expect(up.status, up.text).toBe(200);
    const id = (up.json as { data: { id: string } }).data.id;
    const onB = await send(b, 'GET', `/img/${id}`);
    expect(onB.status).toBe(200);
    expect(onB.bytes.equals(png)).toBe(true);
    const thumbB = await send(b, 'GET', `/img/${id}?thumb=8x8`);
    expect(thumbB.status).toBe(200);
    const thumbA = await send(a, 'GET', `/img/${id}?thumb=8x8`);
    expect(thumbA.bytes.equals(thumbB.bytes)).toBe(true);
    const bucket = openS3(`s3://${s3.bucket}/pg`, s3.env);
    try {
      const names: string[] = [];
      for await (const o of bucket.list()) names.push(o.name);
      expect(names.sort()).toEqual([id, `thumbs/${id}/8x8`]);
    } finally {
      bucket.destroy();
    }
    const pg = await import('pg');
    const c = new pg.default.Client({ connectionString: db.url });
    await c.connect();
    try {
      const blobs = await c.query(`SELECT to_regclass('_blobs') AS t`);
      if (blobs.rows[0].t) expect((await c.query('SELECT count(*)::int AS n FROM _blobs')).rows[0].n).toBe(0);
    } finally {
      await c.end();
    }
    expect((await send(b, 'DELETE', `/img/${id}`, { headers: bearer(token) })).status).toBe(204);
    expect((await send(a, 'GET', `/img/${id}`)).status).toBe(404);
    expect(await storedObjects(a)).toEqual([]);
  }, 120_000);
});

/**
 * The photo service over S3BlobStore: the consistency rules of docs/reference/object-storage.md
 * at the service's level, where a row commit can be made to fail.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PhotoRow } from '../define/index.js';
import type { Jwt } from '../define/types.js';
import { toApiError } from '../core/errors.js';
import { openS3, type S3Bucket } from '../s3/index.js';
import { startTestS3, type TestS3 } from '../s3/test-server.js';
import { createIdGenerator } from '../storage/ids.js';
import { S3BlobStore } from './s3-blob-store.js';
import { createPhotoService, type PhotoRepo, type PhotoService } from './service.js';
import { makeImage, send, startServer, type TestServer } from './test-support.js';

const newId = createIdGenerator();
const jwt: Jwt = { sub: 'us_1', userId: 'us_1', table: 'users', admin: { isAdmin: false }, iat: 0, exp: 0, jti: 'j' };

describe('photo service on S3', () => {
  let s3: TestS3;
  let bucket: S3Bucket;
  let dir: string;
  let server: TestServer;
  let service: PhotoService;
  const rows = new Map<string, PhotoRow>();
  let failInsert = false;
  const repo: PhotoRepo = {
    insert: async (row) => {
      if (failInsert) throw new Error('commit failed');
      rows.set(row.id, row);
    },
    get: async (id) => rows.get(id) ?? null,
    delete: async (id) => void rows.delete(id),
  };
  const objects = async () => {
    const names: string[] = [];
    for await (const o of bucket.list()) names.push(o.name);
    return names;
  };

  beforeAll(async () => {
    s3 = await startTestS3('tablebase-service');
    bucket = openS3(`s3://${s3.bucket}/svc`, s3.env);
    dir = mkdtempSync(join(tmpdir(), 'tb-s3svc-'));
    service = createPhotoService({
      options: { rules: { canUpload: () => true } },
      dataDir: dir,
      store: new S3BlobStore(join(dir, 'photos'), bucket),
      repo,
      newId: () => newId('ph'),
      now: () => '2024-05-01T12:00:00.000Z',
    });
    server = await startServer(async (req, res) => {
      try {
        const row = await service.upload(req, jwt);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: row }));
      } catch (err) {
        const e = toApiError(err);
        res.writeHead(e.status, { 'content-type': 'application/json' }).end(JSON.stringify(e.toJSON()));
      }
    });
  }, 30_000);
  afterAll(async () => {
    await server?.close();
    bucket?.destroy();
    await s3?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const upload = async () => send(server.port, { method: 'POST', path: '/img', headers: { 'content-type': 'image/png' }, body: await makeImage('png', 8, 8) });

  it('a failed row commit removes the stored object and leaves no mark or temp file', async () => {
    failInsert = true;
    const r = await upload();
    failInsert = false;
    expect(r.status).toBe(500);
    expect(await objects()).toEqual([]);
    expect(rows.size).toBe(0);
    expect(readdirSync(join(dir, 'photos', 'tmp'))).toEqual([]);
  });

  it('a failed store answers 503 and writes no row; the next upload succeeds', async () => {
    await s3.stop();
    try {
      const r = await upload();
      expect(r.status).toBe(503);
      expect(rows.size).toBe(0);
    } finally {
      await s3.start();
    }
    const ok = await upload();
    expect(ok.status).toBe(200);
    expect(await objects()).toEqual([...rows.keys()]);
  }, 30_000);
});

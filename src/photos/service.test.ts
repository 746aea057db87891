import { responseSink } from '../http/sink.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileProject } from '../core/model.js';
import { defineProject, type PhotoOptions, type PhotoRow } from '../define/index.js';
import type { Jwt } from '../define/types.js';
import { createIdGenerator } from '../storage/ids.js';
import { createPhotoService, photosTable, photosTableFor, type PhotoRepo, type PhotoService } from './service.js';
import { errorCode, makeImage, multipart, send, startServer, type TestServer } from './test-support.js';

const newId = createIdGenerator();

function jwtFor(userId: string, isAdmin = false): Jwt {
  return { sub: userId, userId, table: 'users', admin: { isAdmin }, iat: 0, exp: 0, jti: 'j' };
}

class MemoryRepo implements PhotoRepo {
  rows = new Map<string, PhotoRow>();
  failInsert = false;
  async insert(row: PhotoRow) {
    if (this.failInsert) throw new Error('disk full');
    this.rows.set(row.id, row);
  }
  async get(id: string) {
    return this.rows.get(id) ?? null;
  }
  async delete(id: string) {
    this.rows.delete(id);
  }
}

let dataDir: string;
let repo: MemoryRepo;
let service: PhotoService;
let server: TestServer | undefined;
const port = (): number => server!.port;

/** A server routing /img like the lead's will; `x-user` / `x-admin` stand in for a verified token. */
async function start(options: PhotoOptions | undefined): Promise<void> {
  service = createPhotoService({ options, dataDir, repo, newId: () => newId('ph'), now: () => '2024-05-01T12:00:00.000Z' });
  server = await startServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const user = req.headers['x-user'] as string | undefined;
    const jwt = user ? jwtFor(user, req.headers['x-admin'] === '1') : null;
    const id = url.pathname.slice('/img/'.length);
    if (req.method === 'POST') {
      const row = await service.upload(req, jwt);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: row }));
    } else if (req.method === 'DELETE') {
      await service.delete(id, jwt);
      res.writeHead(204).end();
    } else {
      await service.serve(req, responseSink(req, res), id, jwt, url.searchParams.get('thumb'));
    }
  });
}

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'tb-photos-'));
  repo = new MemoryRepo();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  // No upload, whatever its fate, leaves a temp file behind.
  const temp = join(dataDir, 'photos', 'tmp');
  if (existsSync(temp)) expect(readdirSync(temp)).toEqual([]);
  rmSync(dataDir, { recursive: true, force: true });
});

const blobs = () => readdirSync(join(dataDir, 'photos')).filter((n) => n.startsWith('ph_'));
const conformance: PhotoOptions = {
  maxBytes: 262144,
  allowedMimeTypes: ['image/png', 'image/jpeg'],
  rules: {
    canUpload: (jwt) => jwt !== null,
    canDelete: (jwt, photo) => jwt !== null && (jwt.admin.isAdmin || photo.ownerId === jwt.userId),
  },
};

async function upload(body: Buffer, headers: Record<string, string> = {}) {
  const form = multipart([{ name: 'file', filename: 'a.png', contentType: 'image/png', data: body }]);
  return send(port(), { method: 'POST', path: '/img', headers: { 'content-type': form.contentType, ...headers }, body: form.body });
}

describe('photo service: upload', () => {
  it('denies uploads by default, after the limits, and stores nothing', async () => {
    await start(undefined);
    const png = await makeImage('png', 10, 10);
    const r = await upload(png, { 'x-user': 'us_1' });
    expect([r.status, errorCode(r)]).toEqual([403, 'FORBIDDEN']);
    expect(blobs()).toEqual([]);
    expect(repo.rows.size).toBe(0);
  });

  it('checks size and type before rules: 413 and 415 even for a caller the rule would deny', async () => {
    await start({ ...conformance, maxBytes: 100 });
    const png = await makeImage('png', 30, 30);
    expect((await upload(png)).status).toBe(413);
    const text = multipart([{ name: 'file', filename: 'a.png', contentType: 'image/png', data: 'not an image' }]);
    const r = await send(port(), { method: 'POST', headers: { 'content-type': text.contentType }, body: text.body });
    expect(r.status).toBe(415);
  });

  it('answers the row and stores the exact bytes under its id', async () => {
    await start(conformance);
    const png = await makeImage('png', 48, 32);
    const r = await upload(png, { 'x-user': 'us_owner' });
    expect(r.status).toBe(200);
    const row = (JSON.parse(r.body.toString()) as { data: PhotoRow }).data;
    expect(row).toEqual({ id: expect.stringMatching(/^ph_[0-9a-z]{20}$/), mimeType: 'image/png', size: png.length, ownerId: 'us_owner', width: 48, height: 32, createdAt: '2024-05-01T12:00:00.000Z' });
    expect(repo.rows.get(row.id)).toEqual(row);
    expect(readFileSync(service.store.path(row.id)).equals(png)).toBe(true);
  });

  it('accepts rules that answer promises, and records a null owner without a token', async () => {
    await start({ rules: { canUpload: async () => true } });
    const r = await upload(await makeImage('png', 4, 4));
    expect(r.status).toBe(200);
    expect((JSON.parse(r.body.toString()) as { data: PhotoRow }).data.ownerId).toBeNull();
  });

  it('treats a rule answering anything but true as a denial', async () => {
    await start({ rules: { canUpload: (() => 'yes') as unknown as () => boolean } });
    expect((await upload(await makeImage('png', 4, 4))).status).toBe(403);
  });

  it('removes the blob when the row insert fails', async () => {
    await start(conformance);
    repo.failInsert = true;
    const r = await upload(await makeImage('png', 4, 4), { 'x-user': 'us_1' });
    expect(r.status).toBe(500);
    expect(blobs()).toEqual([]);
  });
});

describe('photo service: get and delete', () => {
  async function uploaded(user = 'us_owner'): Promise<PhotoRow> {
    const r = await upload(await makeImage('png', 80, 40), { 'x-user': user });
    return (JSON.parse(r.body.toString()) as { data: PhotoRow }).data;
  }

  it('serves to anyone by default; 404 for unknown and impossible ids', async () => {
    await start(conformance);
    const row = await uploaded();
    const r = await send(port(), { path: `/img/${row.id}` });
    expect([r.status, r.headers['content-type'], r.body.length]).toEqual([200, 'image/png', row.size]);
    expect((await send(port(), { path: '/img/ph_0000000000nothere0001' })).status).toBe(404);
    expect((await send(port(), { path: '/img/..%2F..%2Fetc%2Fpasswd' })).status).toBe(404);
  });

  it('applies canView, and denies before looking at a malformed thumb', async () => {
    await start({ ...conformance, rules: { ...conformance.rules, canView: async (jwt, photo) => jwt?.userId === photo.ownerId } });
    const row = await uploaded();
    expect((await send(port(), { path: `/img/${row.id}` })).status).toBe(403);
    expect((await send(port(), { path: `/img/${row.id}?thumb=oops` })).status).toBe(403);
    expect((await send(port(), { path: `/img/${row.id}?thumb=oops`, headers: { 'x-user': 'us_owner' } })).status).toBe(400);
    const thumb = await send(port(), { path: `/img/${row.id}?thumb=20x20`, headers: { 'x-user': 'us_owner' } });
    expect([thumb.status, thumb.headers['content-type']]).toEqual([200, 'image/png']);
    expect(thumb.body.length).toBeLessThan(row.size);
  });

  it('denies deletes by default', async () => {
    await start({ rules: { canUpload: () => true } });
    const row = await uploaded();
    expect((await send(port(), { method: 'DELETE', path: `/img/${row.id}`, headers: { 'x-user': 'us_owner' } })).status).toBe(403);
    expect(existsSync(service.store.path(row.id))).toBe(true);
  });

  it('deletes for the owner or an admin: row, file and thumbnails gone', async () => {
    await start(conformance);
    const row = await uploaded();
    await send(port(), { path: `/img/${row.id}?thumb=10x10` });
    expect(existsSync(service.store.thumbDir(row.id))).toBe(true);
    expect((await send(port(), { method: 'DELETE', path: `/img/${row.id}`, headers: { 'x-user': 'us_other' } })).status).toBe(403);
    expect((await send(port(), { method: 'DELETE', path: `/img/${row.id}`, headers: { 'x-user': 'us_owner' } })).status).toBe(204);
    expect(repo.rows.has(row.id)).toBe(false);
    expect(existsSync(service.store.path(row.id))).toBe(false);
    expect(existsSync(service.store.thumbDir(row.id))).toBe(false);
    expect((await send(port(), { path: `/img/${row.id}` })).status).toBe(404);
    const second = await uploaded('us_someone');
    expect((await send(port(), { method: 'DELETE', path: `/img/${second.id}`, headers: { 'x-user': 'ad_1', 'x-admin': '1' } })).status).toBe(204);
    expect(blobs()).toEqual([]);
  });
});

describe('_photos table', () => {
  it('compiles as an internal table with the photo columns, closed unless given rules', async () => {
    const model = compileProject(defineProject({ tables: [] }), [photosTable]);
    const photos = model.collections.get('_photos')!;
    expect(photos.internal).toBe(true);
    expect(photos.prefix).toBe('ph');
    expect([...photos.columns.keys()].sort()).toEqual(['createdAt', 'height', 'id', 'mimeType', 'ownerId', 'size', 'width']);
    expect(photos.rules).toBeUndefined();
    const open = photosTableFor({ tableRules: { canList: () => true } });
    expect(open.options.rules?.canList?.(null, { op: 'list', table: '_photos', where: undefined })).toBe(true);
    expect(open.options.rules?.canCreate).toBeUndefined();
    expect(photosTableFor(undefined)).toBe(photosTable);
  });
});

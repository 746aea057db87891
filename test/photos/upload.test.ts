/**
 * End-to-end: uploading and deleting photos (docs/reference/photos.md, docs/reference/conformance.md photos row): raw and multipart bodies,
 * the metadata answered, who may delete (the owner or an admin), and the `_photos` table kept
 * out of /db.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorCode, photoRequests, usePhotoWorld, type Caller, type Photo } from '../helpers/photos.js';
import { scenarios, type Scenario, type ScenarioContext } from '../helpers/scenario.js';
import { bearer, type TestServer } from '../helpers/server.js';

const PHOTO_ID = /^ph_[0-9a-z]{16,32}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const w = usePhotoWorld();
const { send, uploadForm, uploaded, storedNames, storedThumbs } = photoRequests(w);
let s: TestServer, dataDir: string, owner: Caller, stranger: Caller, admin: Caller, png: Buffer, jpeg: Buffer;
const ctx: ScenarioContext = { server: null as unknown as TestServer, who: {}, vars: {} };
beforeAll(() => {
  ({ s, dataDir, owner, stranger, admin, png, jpeg } = w);
  ctx.server = s;
  ctx.who = { owner: bearer(owner.token), admin: bearer(admin.token) };
});

describe('upload', () => {
  it('multipart (field "file") answers the metadata with the uploader as owner', async () => {
    const r = await uploadForm<{ data: Photo }>(png, 'image/png', owner.token, 'holiday.png');
    expect(r.status, r.text).toBe(200);
    const photo = r.json.data;
    expect(Object.keys(photo).sort()).toEqual(['createdAt', 'height', 'id', 'mimeType', 'ownerId', 'size', 'width']);
    expect(photo.id).toMatch(PHOTO_ID);
    expect(photo).toMatchObject({ mimeType: 'image/png', size: png.length, ownerId: owner.id, width: 64, height: 48 });
    expect(photo.createdAt).toMatch(ISO);
    expect(Math.abs(Date.parse(photo.createdAt) - Date.now())).toBeLessThan(10 * 60_000);
  });

  it('a raw image/png body answers the same metadata', async () => {
    const photo = await uploaded(png, 'image/png', stranger.token);
    expect(photo.id).toMatch(PHOTO_ID);
    expect(photo).toMatchObject({ mimeType: 'image/png', size: png.length, ownerId: stranger.id, width: 64, height: 48 });
    expect(photo.createdAt).toMatch(ISO);
  });

  it('JPEG is accepted, multipart and raw, with its dimensions', async () => {
    const form = await uploadForm(jpeg, 'image/jpeg', owner.token, 'x.jpg');
    expect(form.status, form.text).toBe(200);
    expect(form.json.data).toMatchObject({ mimeType: 'image/jpeg', size: jpeg.length, width: 90, height: 60, ownerId: owner.id });
    const raw = await uploaded(jpeg, 'image/jpeg');
    expect(raw).toMatchObject({ mimeType: 'image/jpeg', width: 90, height: 60 });
    expect(raw.id).not.toBe(form.json.data.id);
  });

  it('a multipart file part with a generic type is typed from its bytes', async () => {
    const r = await uploadForm(png, 'application/octet-stream', owner.token, 'noext');
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.mimeType).toBe('image/png');
  });

  scenarios('a body that is not an image', ctx, [
    { name: 'neither multipart nor image/*', method: 'POST', path: '/img', as: 'owner', body: '{"a":1}', headers: { 'content-type': 'application/json' }, status: 400, code: 'BAD_REQUEST' },
  ]);

  it('400 for a multipart part not named "file"', async () => {
    const wrongName = await uploadForm(png, 'image/png', owner.token, 'a.png', 'photo');
    expect(wrongName.status, wrongName.text).toBe(400);
    expect(errorCode(wrongName)).toBe('BAD_REQUEST');
  });
});

describe('delete', () => {
  it('403 for a stranger and for no token; 204 for the owner; 404 after, files gone', async () => {
    const photo = await uploaded(png);
    await send('GET', `/img/${photo.id}?thumb=16x16`); // a cached thumbnail must go too
    for (const headers of [bearer(stranger.token), {}]) {
      const r = await send('DELETE', `/img/${photo.id}`, { headers });
      expect(r.status, r.text).toBe(403);
      expect(errorCode(r)).toBe('FORBIDDEN');
    }
    expect((await send('GET', `/img/${photo.id}`)).status).toBe(200);
    expect((await send('GET', `/img/${photo.id}?thumb=16x16`)).status).toBe(200);
    expect(await storedNames()).toContain(photo.id);
    expect(await storedThumbs(photo.id)).toEqual(['16x16']);

    const del = await send('DELETE', `/img/${photo.id}`, { headers: bearer(owner.token) });
    expect(del.status, del.text).toBe(204);
    expect(del.bytes.length).toBe(0);
    const gone = await send('GET', `/img/${photo.id}`);
    expect(gone.status).toBe(404);
    expect(errorCode(gone)).toBe('NOT_FOUND');
    expect((await send('GET', `/img/${photo.id}?thumb=16x16`)).status).toBe(404);
    expect((await send('DELETE', `/img/${photo.id}`, { headers: bearer(owner.token) })).status).toBe(404);
    expect(await storedNames()).not.toContain(photo.id);
    expect(await storedThumbs(photo.id)).toEqual([]);
    expect(readdirSync(join(dataDir, 'photos', 'thumbs'))).not.toContain(photo.id);
  });

  it("an admin may delete anyone's photo", async () => {
    const photo = await uploaded(jpeg, 'image/jpeg', stranger.token);
    const r = await send('DELETE', `/img/${photo.id}`, { headers: bearer(admin.token) });
    expect(r.status, r.text).toBe(204);
    expect((await send('GET', `/img/${photo.id}`)).status).toBe(404);
  });
});

describe('the _photos table', () => {
  // One photo stored, then every /db route refuses the table to every caller: the project gives it no rules.
  beforeAll(async () => {
    ctx.vars.photo = (await uploaded(png)).id;
  });
  const routes: Pick<Scenario, 'name' | 'method' | 'path' | 'body'>[] = [
    { name: 'read', method: 'GET', path: '/db', body: (c) => ({ table: '_photos', where: { id: { eq: c.vars.photo } } }) },
    { name: 'list', method: 'GET', path: '/db/list', body: { table: '_photos' } },
    { name: 'count', method: 'GET', path: '/db/count', body: { table: '_photos' } },
    { name: 'create', method: 'POST', path: '/db', body: { table: '_photos', object: { mimeType: 'image/png', size: 1 } } },
    { name: 'delete', method: 'DELETE', path: '/db', body: (c) => ({ table: '_photos', where: { id: { eq: c.vars.photo } } }) },
  ];
  for (const as of [undefined, 'owner', 'admin'])
    scenarios(
      `_photos is not reachable through /db by ${as ?? 'an anonymous caller'}`,
      ctx,
      routes.map((r) => ({ ...r, name: `${r.name} is 404`, as, status: 404, code: 'NOT_FOUND' })),
    );

  it('the photo itself is still served', async () => {
    expect((await send('GET', `/img/${ctx.vars.photo}`)).status).toBe(200);
  });
});

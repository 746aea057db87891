/**
 * End-to-end: the limits of /img (docs/reference/rate-limits.md, docs/reference/photos.md): rate-limit headers on every answer, size
 * and type refused before the rules look at the token, and a 50 MB upload cut off near the
 * limit. The conformance project allows PNG and JPEG up to 262144 bytes; `canUpload` needs a token.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { errorCode, image, MAX_BYTES, multipart, photoRequests, streamUpload, usePhotoWorld, type Caller } from '../helpers/photos.js';
import { scenarios, type Scenario, type ScenarioContext } from '../helpers/scenario.js';
import { bearer, type TestServer } from '../helpers/server.js';

const w = usePhotoWorld();
const { send, uploadRaw, uploadForm, uploaded, postEarly, storedNames, tempNames } = photoRequests(w);
let s: TestServer, owner: Caller, png: Buffer, jpeg: Buffer, bigPng: Buffer;
const ctx: ScenarioContext = { server: null as unknown as TestServer, who: {}, vars: {} };
/** Bodies the refusal rows send, made once the photo world is up. */
const bodies: Record<'text' | 'gif' | 'webp' | 'png', Buffer> = { text: Buffer.alloc(0), gif: Buffer.alloc(0), webp: Buffer.alloc(0), png: Buffer.alloc(0) };
beforeAll(async () => {
  ({ s, owner, png, jpeg, bigPng } = w);
  ctx.server = s;
  ctx.who = { owner: bearer(owner.token), forged: bearer('not-a-token') };
  bodies.text = Buffer.from('just some text pretending to be a picture\n'.repeat(10));
  bodies.gif = await image(20, 20).gif().toBuffer();
  bodies.webp = await image(20, 20).webp().toBuffer();
  bodies.png = png;
});

/** One upload to /img as a row: the raw bytes with their declared type, or a multipart form with one file part. */
const upload = (name: string, what: keyof typeof bodies, type: string, as: string | undefined, status: number, code: string | undefined, form = false): Scenario => {
  // A multipart body is built once, when its row runs (the boundary goes into the content type).
  let built: { body: Buffer; contentType: string } | undefined;
  const part = () => (built ??= multipart(bodies[what], type, `${what}.png`));
  return {
    name,
    method: 'POST',
    path: '/img',
    ...(as === undefined ? {} : { as }),
    body: () => (form ? part().body : bodies[what]),
    get headers() {
      return { 'content-type': form ? part().contentType : type };
    },
    status,
    ...(code === undefined ? {} : { code }),
  };
};

// First, so the limiter's windows hold nothing but this test's requests.
describe('rate limits', () => {
  it('every /img answer carries the rate-limit headers, the remaining count going down', async () => {
    const text = Buffer.from('not an image at all');
    const answers: { status: number; headers: Headers }[] = [];
    const up = await uploadRaw(png, 'image/png', owner.token);
    answers.push(up);
    answers.push(await uploadRaw(png, 'image/png')); // 403
    answers.push(await uploadRaw(text, 'image/png')); // 415
    answers.push(await send('GET', `/img/${up.json.data.id}`));
    answers.push(await send('GET', '/img/ph_0000000000000000')); // 404
    answers.push(await send('DELETE', `/img/${up.json.data.id}`, { headers: bearer(owner.token) }));
    answers.push(await postEarly(bigPng, 'image/png')); // 413
    expect(answers.map((a) => a.status)).toEqual([200, 403, 415, 200, 404, 204, 413]);
    // The project sets no photo policies: the default 100 a minute per IP and operation (docs/reference/rate-limits.md).
    expect(answers.map((a) => a.headers.get('ratelimit-limit'))).toEqual(Array(answers.length).fill('100'));
    for (const a of answers) expect(a.headers.get('ratelimit-reset'), String(a.status)).toMatch(/^\d+$/);
    // These are the first /img requests of the file, and upload, view and delete count apart.
    expect(answers.slice(0, 6).map((a) => a.headers.get('ratelimit-remaining'))).toEqual(['99', '98', '97', '99', '98', '99']);
  });
});

describe('limits before rules', () => {
  it('413 for an oversized photo without a token: announced, in multipart, and chunked', async () => {
    const form = multipart(bigPng, 'image/png', 'big.png');
    const answers = [
      await postEarly(bigPng, 'image/png'), // refused on its Content-Length, before reading
      await postEarly(form.body, form.contentType), // within the multipart slack: counted while parsed
      await streamUpload(s.base, { total: bigPng.length, contentType: 'image/png', prefix: bigPng }), // no length: counted
    ];
    for (const r of answers) {
      expect(r.status, r.text).toBe(413);
      expect(errorCode(r)).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it('a photo of exactly maxBytes is within the limit', async () => {
    // A valid PNG padded with bytes after IEND (decoders ignore trailing data) to the exact limit.
    const exact = Buffer.concat([png, Buffer.alloc(MAX_BYTES - png.length)]);
    const r = await uploadRaw(exact, 'image/png', owner.token);
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.size).toBe(MAX_BYTES);
    const over = await postEarly(Buffer.concat([exact, Buffer.alloc(1)]), 'image/png', bearer(owner.token));
    expect(over.status).toBe(413);
  });

  const UNSUPPORTED = 'UNSUPPORTED_MEDIA_TYPE';
  scenarios('415 for what is not an allowed image, whoever sends it', ctx, [
    upload('text declared image/png, raw, without a token', 'text', 'image/png', undefined, 415, UNSUPPORTED),
    upload('text declared image/png, multipart, without a token', 'text', 'image/png', undefined, 415, UNSUPPORTED, true),
    upload('text declared image/png, raw, with a token', 'text', 'image/png', 'owner', 415, UNSUPPORTED),
    upload('text declared image/png, multipart, with a token', 'text', 'image/png', 'owner', 415, UNSUPPORTED, true),
    // A real GIF or WebP, which this project does not allow; lying about the type does not help: it is decided from the bytes.
    upload('a real GIF', 'gif', 'image/gif', 'owner', 415, UNSUPPORTED),
    upload('a GIF disguised as image/png in a form', 'gif', 'image/png', 'owner', 415, undefined, true),
    upload('a real WebP', 'webp', 'image/webp', 'owner', 415, UNSUPPORTED),
    upload('a WebP disguised as image/png in a form', 'webp', 'image/png', 'owner', 415, undefined, true),
    upload('a PNG declared image/jpeg', 'png', 'image/jpeg', 'owner', 415, UNSUPPORTED),
  ]);

  it('403 for a valid small PNG without a token, and nothing is stored', async () => {
    const before = (await storedNames()).length;
    for (const r of [await uploadRaw(png, 'image/png'), await uploadForm(png, 'image/png', undefined, 'a.png')]) {
      expect(r.status, r.text).toBe(403);
      expect(errorCode(r)).toBe('FORBIDDEN');
    }
    expect((await storedNames()).length).toBe(before);
    expect(tempNames()).toEqual([]);
  });

  scenarios('the token is checked before the photo is looked at', ctx, [upload('401 for a bad token', 'png', 'image/png', 'forged', 401, 'INVALID_TOKEN')]);
});

describe('a 50 MB upload', () => {
  const FIFTY_MB = 50 * 1024 * 1024;
  // The PNG signature and IHDR chunk, so the type and dimension checks pass and only size is left.
  const pngHead = () => png.subarray(0, 33);

  it('is cut off with 413 as a raw chunked body, and the server stays healthy', async () => {
    const r = await streamUpload(s.base, { total: FIFTY_MB, contentType: 'image/png', prefix: pngHead(), headers: bearer(owner.token) });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('PAYLOAD_TOO_LARGE');
    // Cut off near the limit, not after reading the 50 MB.
    expect(r.sent).toBeLessThan(FIFTY_MB / 2);
    expect((await s.call('GET', '/health')).status).toBe(200);
    const after = await uploaded(png);
    expect((await send('GET', `/img/${after.id}`)).bytes.equals(png)).toBe(true);
  });

  it('is cut off with 413 as a chunked multipart body, and no temp file is left', async () => {
    const form = multipart(Buffer.alloc(0), 'image/png', 'huge.png');
    const head = form.body.subarray(0, form.body.indexOf('\r\n\r\n') + 4);
    const r = await streamUpload(s.base, {
      total: FIFTY_MB,
      contentType: form.contentType,
      prefix: Buffer.concat([head, pngHead()]),
      headers: bearer(owner.token),
    });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(r.sent).toBeLessThan(FIFTY_MB / 2);
    expect((await s.call('GET', '/health')).status).toBe(200);
    expect(tempNames()).toEqual([]);
    expect((await uploaded(jpeg, 'image/jpeg')).mimeType).toBe('image/jpeg');
  });
});

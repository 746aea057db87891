import { Readable } from 'node:stream';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointLabel, openS3, parseS3Url, s3Settings, isUnavailable, describeS3Error } from './index.js';
import { startTestS3, TEST_S3_SECRET, type TestS3 } from './test-server.js';
import type { S3Bucket } from './client.js';

async function collect(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('s3 URLs and settings', () => {
  it('parses bucket and prefix', () => {
    expect(parseS3Url('s3://my-bucket')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(parseS3Url('s3://my-bucket/a/b/')).toEqual({ bucket: 'my-bucket', prefix: 'a/b' });
    expect(() => parseS3Url('http://x/y')).toThrow(/s3:\/\//);
    expect(() => parseS3Url('s3://UPPER/x')).toThrow(/bucket/);
    expect(() => parseS3Url('s3://bucket/../x')).toThrow(/\.\./);
  });

  it('reads the environment, and the label never carries a credential', () => {
    const s = s3Settings('s3://b-1/p', { S3_ENDPOINT: 'http://127.0.0.1:9000/', S3_ACCESS_KEY_ID: 'AKID', S3_SECRET_ACCESS_KEY: 'SECRET', S3_FORCE_PATH_STYLE: 'true' });
    expect(s).toMatchObject({ bucket: 'b-1', prefix: 'p', region: 'us-east-1', forcePathStyle: true, endpoint: 'http://127.0.0.1:9000/' });
    const label = endpointLabel(s);
    expect(label).toBe('s3://b-1/p at http://127.0.0.1:9000');
    expect(label).not.toMatch(/SECRET|AKID/);
    expect(endpointLabel(s3Settings('s3://b-1', { S3_REGION: 'eu-west-3' }))).toBe('s3://b-1 at AWS S3 (eu-west-3)');
    expect(() => s3Settings('s3://b-1', { S3_ENDPOINT: 'http://user:pw@host' })).toThrow(/credentials/);
  });
});

describe('addressing', () => {
  /** The host and path a request would go to, captured before it is sent. */
  async function target(env: NodeJS.ProcessEnv): Promise<string> {
    const bucket = openS3('s3://photos-1/pre', { S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's', ...env });
    let seen = '';
    bucket.client.middlewareStack.add(
      () => async (args) => {
        const req = args.request as { hostname: string; port?: number; path: string };
        seen = `${req.hostname}${req.port ? `:${req.port}` : ''}${req.path}`;
        throw new Error('captured');
      },
      { step: 'finalizeRequest', priority: 'low' },
    );
    await bucket.head('ph_x').catch(() => {});
    bucket.destroy();
    return seen;
  }

  it('is path style with S3_FORCE_PATH_STYLE, virtual-hosted otherwise, on AWS and on a custom endpoint', async () => {
    expect(await target({ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: 'true' })).toBe('127.0.0.1:9000/photos-1/pre/ph_x');
    expect(await target({ S3_ENDPOINT: 'https://r2.example.com' })).toBe('photos-1.r2.example.com/pre/ph_x');
    expect(await target({ S3_REGION: 'eu-west-3' })).toBe('photos-1.s3.eu-west-3.amazonaws.com/pre/ph_x');
  });
});

describe('S3Bucket against s3rver', () => {
  let s3: TestS3;
  let bucket: S3Bucket;
  beforeAll(async () => {
    s3 = await startTestS3();
    bucket = openS3(`s3://${s3.bucket}/pre/fix`, s3.env);
  }, 30_000);
  afterAll(async () => {
    bucket?.destroy();
    await s3?.close();
  });

  it('puts a multipart stream, reads it back whole and by absolute range, lists and deletes', async () => {
    const bytes = randomBytes(11 * 1024 * 1024 + 17);
    await bucket.put('big', Readable.from([bytes.subarray(0, 3_000_000), bytes.subarray(3_000_000)]), { contentType: 'application/octet-stream', metadata: { sha256: 'x' } });
    await bucket.put('small', Buffer.from('hello'), { length: 5 });
    const head = await bucket.head('big');
    expect(head).toMatchObject({ size: bytes.length, metadata: { sha256: 'x' } });
    const whole = await bucket.get('big');
    expect(
      createHash('sha256')
        .update(await collect(whole!.body))
        .digest('hex'),
    ).toBe(createHash('sha256').update(bytes).digest('hex'));
    const tail = await bucket.get('big', { start: bytes.length - 10, end: bytes.length - 1 });
    expect((await collect(tail!.body)).equals(bytes.subarray(bytes.length - 10))).toBe(true);
    const names: string[] = [];
    for await (const o of bucket.list()) names.push(o.name);
    expect(names.sort()).toEqual(['big', 'small']);
    await bucket.delete(['big', 'small', 'never-was']);
    expect(await bucket.head('big')).toBeNull();
    expect(await bucket.get('small')).toBeNull();
  }, 60_000);

  it('deletes one object at a time when the service refuses the multi-object delete', async () => {
    const strict = openS3(`s3://${s3.bucket}/strict`, s3.env);
    strict.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'DeleteObjectsCommand') throw Object.assign(new Error('NotImplemented'), { name: 'NotImplemented', $metadata: { httpStatusCode: 501 } });
        return next(args);
      },
      { step: 'initialize' },
    );
    try {
      await strict.put('a', Buffer.from('a'));
      await strict.put('b', Buffer.from('b'));
      await strict.delete(['a', 'b']);
      const left: string[] = [];
      for await (const o of strict.list()) left.push(o.name);
      expect(left).toEqual([]);
    } finally {
      strict.destroy();
    }
  });

  /** A body that sends 6 MB (a multipart upload: more than one 5 MB part), waits until the upload exists, then fails. */
  function failingBody(before?: () => Promise<void>): Readable {
    return Readable.from(
      (async function* () {
        yield randomBytes(6 * 1024 * 1024);
        while (s3.incompleteUploads().length === 0) await new Promise((r) => setTimeout(r, 20));
        await before?.();
        throw new Error('the body failed midway');
      })(),
    );
  }

  it('aborts a multipart upload that fails midway: no parts are left behind', async () => {
    await expect(bucket.put('broken', failingBody())).rejects.toThrow('the body failed midway');
    expect(s3.incompleteUploads()).toEqual([]);
    expect(bucket.unaborted).toBe(0);
    expect(await bucket.head('broken')).toBeNull();
  }, 60_000);

  it('aborts an upload whose abort failed (the service was down) before the next upload', async () => {
    await expect(
      bucket.put(
        'broken',
        failingBody(() => s3.stop()),
      ),
    ).rejects.toThrow('the body failed midway');
    await s3.start();
    expect(s3.incompleteUploads()).toHaveLength(1);
    expect(bucket.unaborted).toBe(1);
    await bucket.put('after', Buffer.from('after'), { length: 5 });
    expect(s3.incompleteUploads()).toEqual([]);
    expect(bucket.unaborted).toBe(0);
    await bucket.delete(['after']);
  }, 60_000);

  it('reports an unreachable service as unavailable, naming no secret', async () => {
    await s3.stop();
    try {
      const err = await bucket.probe().then(
        () => null,
        (e: unknown) => e,
      );
      expect(isUnavailable(err)).toBe(true);
      expect(describeS3Error(err)).not.toContain(TEST_S3_SECRET);
    } finally {
      await s3.start();
    }
    await bucket.probe();
  }, 60_000);
});

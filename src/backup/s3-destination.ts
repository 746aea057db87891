/**
 * An S3 bucket as a backup destination (`s3://bucket/prefix`; endpoint and credentials from the
 * `S3_*` variables, docs/reference/object-storage.md), over the shared client of src/s3/. A PUT is
 * atomic in S3: a reader sees the whole object or none, as the folder destination guarantees with
 * a rename.
 */
import type { Readable } from 'node:stream';
import type { S3Bucket } from '../s3/index.js';
import type { Destination, ObjectInfo } from './destination.js';

async function collect(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(parts);
}

export class S3Destination implements Destination {
  readonly display: string;
  #bucket: S3Bucket;

  constructor(bucket: S3Bucket) {
    this.#bucket = bucket;
    // Bucket and prefix only: never the endpoint's credentials, which live in S3_* variables anyway.
    this.display = `s3://${bucket.bucket}${bucket.prefix ? `/${bucket.prefix}` : ''}`;
  }

  put(key: string, data: Buffer): Promise<void> {
    return this.#bucket.put(key, data, { length: data.length });
  }

  putStream(key: string, data: Readable): Promise<void> {
    return this.#bucket.put(key, data);
  }

  async get(key: string): Promise<Buffer | null> {
    const got = await this.#bucket.get(key);
    return got ? collect(got.body) : null;
  }

  async getStream(key: string): Promise<Readable | null> {
    return (await this.#bucket.get(key))?.body ?? null;
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    const out: ObjectInfo[] = [];
    for await (const o of this.#bucket.list(prefix)) out.push({ key: o.name, bytes: o.size });
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  delete(key: string): Promise<void> {
    return this.#bucket.delete([key]);
  }
}

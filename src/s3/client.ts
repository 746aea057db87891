/**
 * One S3 client for everything Tablebase keeps in a bucket: photos (photos/s3-blob-store.ts) and
 * backups (docs/reference/object-storage.md, docs/reference/backups.md). The AWS SDK v3 signs
 * every request (no hand-written SigV4) and works with any S3-compatible service.
 *
 * Object names given to these helpers are relative to the URL's prefix. Bodies are streams both
 * ways: `put` uploads through lib-storage (multipart above one part, at most `queueSize` parts
 * buffered), `get` hands back the response stream, so no object is ever held whole in memory.
 */
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, ListObjectsV2Command, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { endpointLabel, s3Settings, type S3Settings } from './config.js';

export interface S3ObjectInfo {
  /** Name relative to the prefix. */
  name: string;
  size: number;
  lastModified: Date;
}

export interface S3Head {
  size: number;
  etag: string | undefined;
  lastModified: Date | undefined;
  metadata: Record<string, string>;
}

export interface PutOptions {
  contentType?: string;
  /** Stored as `x-amz-meta-*` (lowercase keys). */
  metadata?: Record<string, string>;
  /** Known length, for a single PUT of a small body. */
  length?: number;
}

/** Multipart part size: S3's minimum; lib-storage buffers at most `QUEUE` of them at once. */
const PART_BYTES = 5 * 1024 * 1024;
const QUEUE = 2;

export class S3Bucket {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  /** Endpoint, bucket and prefix for errors and logs; never a credential. */
  readonly label: string;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    this.prefix = settings.prefix;
    this.label = endpointLabel(settings);
    const config: S3ClientConfig = {
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      // Without this the SDK streams uploads with aws-chunked framing and trailing checksums,
      // which several S3-compatible servers (s3rver among them) store as part of the object.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // An unreachable bucket must turn into a 503 within seconds, not hang a request.
      maxAttempts: 2,
      requestHandler: { connectionTimeout: 3_000, requestTimeout: 30_000 },
    };
    if (settings.endpoint) config.endpoint = settings.endpoint;
    if (settings.accessKeyId && settings.secretAccessKey) {
      config.credentials = { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey };
    }
    // The SDK is pinned to the last releases that support Node 20 (package.json); their notice
    // that later releases will not is multi-line noise in every server's log, not an actionable
    // warning. An operator who sets the variable themselves keeps their choice.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    this.client = new S3Client(config);
  }

  /** The full object key of `name`. */
  key(name: string): string {
    return this.prefix ? `${this.prefix}/${name}` : name;
  }

  /** Fails (with the SDK's error) when the bucket cannot be reached or does not exist. */
  async probe(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  async put(name: string, body: Readable | Buffer, options: PutOptions = {}): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.key(name), Body: body, ContentType: options.contentType, Metadata: options.metadata, ContentLength: options.length },
      partSize: PART_BYTES,
      queueSize: QUEUE,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  /**
   * The object's bytes, or `range` of them (inclusive, absolute offsets: some servers answer a
   * suffix range `bytes=-n` with the first bytes). null when there is no such object.
   */
  async get(name: string, range?: { start: number; end: number }): Promise<{ body: Readable; size: number } | null> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(name), Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
      return { body: res.Body as Readable, size: res.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async head(name: string): Promise<S3Head | null> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(name) }));
      return { size: res.ContentLength ?? 0, etag: res.ETag, lastModified: res.LastModified, metadata: res.Metadata ?? {} };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /**
   * Removes the named objects (missing ones are not an error), 1000 per request. Services that
   * refuse the multi-object call (some S3-compatible ones do not implement it, or reject the
   * checksum the SDK sends with it) get one DELETE per object instead.
   */
  async delete(names: readonly string[]): Promise<void> {
    for (let i = 0; i < names.length; i += 1000) {
      const batch = names.slice(i, i + 1000);
      let res;
      try {
        res = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((n) => ({ Key: this.key(n) })), Quiet: true } }));
      } catch (err) {
        const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status !== 400 && status !== 501) throw err;
        for (const n of batch) await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(n) }));
        continue;
      }
      const failed = res.Errors?.[0];
      if (failed) throw new Error(`could not delete ${failed.Key ?? 'an object'} from ${this.label}: ${failed.Code ?? ''} ${failed.Message ?? ''}`.trim());
    }
  }

  /**
   * Every object whose name starts with `namePrefix`, in key order, page by page (1000 a
   * request); `after` (a name) skips up to and including it.
   */
  async *list(namePrefix = '', after?: string): AsyncGenerator<S3ObjectInfo> {
    const full = this.prefix ? `${this.prefix}/${namePrefix}` : namePrefix;
    const strip = this.prefix ? this.prefix.length + 1 : 0;
    let token: string | undefined;
    const startAfter = after === undefined ? undefined : this.key(after);
    do {
      const res = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: full, ContinuationToken: token, StartAfter: token ? undefined : startAfter }));
      for (const o of res.Contents ?? []) {
        if (!o.Key) continue;
        yield { name: o.Key.slice(strip), size: o.Size ?? 0, lastModified: o.LastModified ?? new Date(0) };
      }
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
  }

  destroy(): void {
    this.client.destroy();
  }
}

/** The bucket of an `s3://bucket/prefix` URL, connection settings from the environment. */
export function openS3(url: string, env: NodeJS.ProcessEnv = process.env): S3Bucket {
  return new S3Bucket(s3Settings(url, env));
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

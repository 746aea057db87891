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
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
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
/** Multipart uploads whose abort failed, kept (bounded) to be aborted again before later requests. */
const MAX_UNABORTED = 1000;

export class S3Bucket {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  /** Endpoint, bucket and prefix for errors and logs; never a credential. */
  readonly label: string;
  /** Failed multipart uploads not yet aborted (the abort failed too: the service was down). */
  #unaborted: { key: string; uploadId: string }[] = [];

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

  /**
   * Stores `body` under `name`: one PUT for a body within one part, else a multipart upload. A
   * multipart upload that fails midway (the body's stream fails, a part or the completion is
   * refused, the service goes away) is aborted (AbortMultipartUpload), or its parts would stay in
   * the bucket, invisible to listings and billed; an abort that fails too (the service is down) is
   * tried again before the next upload, until it succeeds.
   */
  async put(name: string, body: Readable | Buffer, options: PutOptions = {}): Promise<void> {
    await this.#abortLeftovers();
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.key(name), Body: body, ContentType: options.contentType, Metadata: options.metadata, ContentLength: options.length },
      partSize: PART_BYTES,
      queueSize: QUEUE,
      // We abort ourselves: lib-storage aborts once and, when that fails, throws the abort's
      // error instead of the upload's and forgets the upload id.
      leavePartsOnError: true,
    });
    try {
      await upload.done();
    } catch (err) {
      // Set once CreateMultipartUpload answered; every part request has settled by now.
      const u = upload.uploadId ? { key: this.key(name), uploadId: upload.uploadId } : undefined;
      if (u && !(await this.#abort(u)) && this.#unaborted.length < MAX_UNABORTED) this.#unaborted.push(u);
      throw err;
    }
  }

  /** Aborts one upload; false when the service did not answer (the caller keeps it for later). */
  async #abort(u: { key: string; uploadId: string }): Promise<boolean> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.key, UploadId: u.uploadId }));
      return true;
    } catch (err) {
      // Already gone (aborted or completed meanwhile): nothing is left to bill.
      return (err as { name?: string } | null)?.name === 'NoSuchUpload';
    }
  }

  /** Aborts uploads whose abort failed earlier; at the first that fails again, the rest wait for the next call. */
  async #abortLeftovers(): Promise<void> {
    while (this.#unaborted.length > 0) {
      if (!(await this.#abort(this.#unaborted[0]!))) return;
      this.#unaborted.shift();
    }
  }

  /** Multipart uploads that failed and could not be aborted yet (tests). */
  get unaborted(): number {
    return this.#unaborted.length;
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

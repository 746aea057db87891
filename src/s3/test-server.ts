/**
 * A real S3-compatible server on loopback for tests (`s3rver`, a dev dependency): a free port, one
 * bucket, a fresh data folder. `stop()` and `start()` again on the same port let a test break and
 * restore the bucket mid-run. Known quirks, which Tablebase's client avoids: it stores aws-chunked
 * framing unless checksums are `WHEN_REQUIRED` (S3Bucket sets that), answers a suffix range
 * `bytes=-n` with the first bytes (always ask absolute ranges), and does not verify signatures (it knows the key id `S3RVER` only; any secret is accepted).
 * It does not implement AbortMultipartUpload (405): this server adds it, so tests can see that a
 * failed upload leaves no parts behind (`incompleteUploads`).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface TestS3 {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  bucket: string;
  /** The `S3_*` variables a server process needs to reach it (path style, dummy credentials). */
  env: Record<string, string>;
  /** Stops answering (connections are cut); the stored objects stay. */
  stop(): Promise<void>;
  /** Answers again on the same port. */
  start(): Promise<void>;
  /** Stops and removes the data folder. */
  close(): Promise<void>;
  /** Ids of multipart uploads started and neither completed nor aborted (their parts are kept, and billed on S3). */
  incompleteUploads(): string[];
}

/** Where s3rver's folder store keeps the parts of a bucket's unfinished multipart uploads, one folder per upload id. */
const uploadsDir = (directory: string, bucket: string) => join(directory, bucket, '._S3rver_uploads');

/** Dummy credentials: s3rver accepts any signature; the secret lets tests check it never leaks. */
export const TEST_S3_SECRET = 'tbTestSecret_9f3a7c1e5b2d4f60a8c';

export async function startTestS3(bucket = 'tablebase-test'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'tb-s3rver-'));
  let port = 0;
  let instance: S3rver | undefined;
  const start = async (): Promise<void> => {
    instance = new S3rver({ address: '127.0.0.1', port, silent: true, directory, allowMismatchedSignatures: true, configureBuckets: [{ name: bucket }] });
    // AbortMultipartUpload (DELETE /bucket/key?uploadId=…, path style), ahead of s3rver's routes.
    instance.middleware.unshift(async (ctx, next) => {
      const uploadId = ctx.query.uploadId;
      if (ctx.method !== 'DELETE' || typeof uploadId !== 'string') return next();
      const dir = join(uploadsDir(directory, decodeURIComponent(ctx.path.split('/')[1] ?? '')), uploadId.replace(/[^0-9a-f]/g, ''));
      if (!existsSync(dir)) {
        ctx.status = 404;
        ctx.type = 'application/xml';
        ctx.body = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>';
        return;
      }
      rmSync(dir, { recursive: true, force: true });
      ctx.status = 204;
    });
    port = (await instance.run()).port;
  };
  const stop = async (): Promise<void> => {
    const current = instance;
    instance = undefined;
    if (!current) return;
    // Keep-alive sockets would hold close() open; cut them as an outage would.
    current.httpServer?.closeAllConnections();
    await current.close();
  };
  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: {
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: TEST_S3_SECRET,
      S3_FORCE_PATH_STYLE: 'true',
    },
    start,
    stop,
    incompleteUploads: () => (existsSync(uploadsDir(directory, bucket)) ? readdirSync(uploadsDir(directory, bucket)) : []),
    close: async () => {
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

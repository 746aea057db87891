/**
 * Where an S3-compatible bucket is and how to reach it (docs/reference/object-storage.md).
 * The URL names the bucket and the key prefix; everything else, credentials above all, comes from
 * the environment only, so a URL pasted into a config file, a log line or an error never carries
 * a secret.
 */

export interface S3Location {
  bucket: string;
  /** Key prefix without leading or trailing `/`; '' for the bucket's root. */
  prefix: string;
}

export interface S3Settings extends S3Location {
  /** Custom endpoint (MinIO, R2, Garage, s3rver); undefined: AWS. */
  endpoint: string | undefined;
  region: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key`. */
  forcePathStyle: boolean;
}

/** Bucket names as S3 allows them (3–63 of a-z 0-9 . -), which also keeps them out of hostnames' trouble. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `s3://bucket/prefix` → bucket and prefix; anything else throws a message naming the problem. */
export function parseS3Url(url: string): S3Location {
  const m = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(url.trim());
  if (!m) throw new Error(`"${url}" is not an s3://bucket/prefix URL`);
  const bucket = m[1]!;
  if (!BUCKET.test(bucket)) throw new Error(`"${bucket}" is not a valid bucket name (3-63 of a-z, 0-9, "." and "-")`);
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((part) => part === '..' || part === '.')) throw new Error(`the prefix of "${url}" must not contain "." or ".." segments`);
  return { bucket, prefix };
}

export function isS3Url(url: string): boolean {
  return url.trim().toLowerCase().startsWith('s3://');
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

/** The URL's bucket and prefix with the connection from `S3_*` variables (docs/reference/configuration.md). */
export function s3Settings(url: string, env: NodeJS.ProcessEnv = process.env): S3Settings {
  const location = parseS3Url(url);
  const endpoint = env.S3_ENDPOINT?.trim() || undefined;
  if (endpoint !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(endpoint);
    } catch {
      throw new Error('S3_ENDPOINT must be a URL such as http://127.0.0.1:9000');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('S3_ENDPOINT must be an http:// or https:// URL');
    if (parsed.username || parsed.password) throw new Error('S3_ENDPOINT must not carry credentials; use S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY');
  }
  return {
    ...location,
    endpoint,
    region: env.S3_REGION?.trim() || 'us-east-1',
    accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
    forcePathStyle: truthy(env.S3_FORCE_PATH_STYLE),
  };
}

/**
 * How errors and logs name the bucket: endpoint (origin only), bucket and prefix. Built from the
 * parsed parts, never from the settings object, so a credential can never slip into it.
 */
export function endpointLabel(settings: S3Location & { endpoint?: string | undefined; region?: string }): string {
  const where = settings.endpoint ? new URL(settings.endpoint).origin : `AWS S3 (${settings.region ?? 'us-east-1'})`;
  return `s3://${settings.bucket}${settings.prefix ? `/${settings.prefix}` : ''} at ${where}`;
}

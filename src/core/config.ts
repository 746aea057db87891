/**
 * Settings: flags beat environment variables, which beat the project file (docs/reference/configuration.md).
 */
import { resolve } from 'node:path';
import type { Project } from '../define/project.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from './response-size.js';
import { resolveBackup, type BackupSettings } from './backup-settings.js';

/** docs/reference/conventions.md: request bodies past this many bytes are 413 unless the project sets `server.maxBodyBytes`. */
const DEFAULT_MAX_BODY = 1024 * 1024;

export interface AppConfig {
  readonly projectDir: string;
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  readonly maxBodyBytes: number;
  readonly maxResponseBytes: number;
  readonly maxPendingWrites: number;
  readonly trustedProxies: readonly string[];
  readonly corsOrigins: readonly string[];
  readonly smtpUrl: string | undefined;
  readonly jwtSecret: string;
  readonly passwordSecret: string;
  readonly synchronous: 'normal' | 'full';
  readonly streamHeartbeatMs: number;
  readonly maxStreams: number;
  readonly maxStreamsPerIp: number;
  /** /db/live subscriptions per connection (docs/reference/live.md; default 200). */
  readonly maxSubscriptionsPerConnection: number;
  /** PEM files: serve HTTPS with HTTP/2 + HTTP/1.1 on the port (`--tls-cert`/`--tls-key`, `TLS_CERT`/`TLS_KEY`). */
  readonly tls: { readonly cert: string; readonly key: string } | undefined;
  /** Budget for everything live queries hold (docs/reference/configuration.md; default 256 MiB). */
  readonly maxLiveMemoryBytes: number;
  /** `postgres://` or `postgresql://` URL (docs/reference/configuration.md, docs/reference/scaling.md); undefined: SQLite in the data folder. */
  readonly databaseUrl: string | undefined;
  /** `redis://` or `rediss://` URL (docs/reference/configuration.md, docs/reference/scaling.md); undefined: no Redis. */
  readonly redisUrl: string | undefined;
  /**
   * Where photo bytes live: `file://…` or `s3://bucket/prefix` (docs/reference/object-storage.md);
   * undefined: `<data>/photos/` (in PostgreSQL's `_blobs` too when on PostgreSQL).
   */
  readonly storageUrl: string | undefined;
  /** Prefix of every Redis key and channel (`REDIS_PREFIX`; default `tablebase:<database name>:`). */
  readonly redisPrefix: string | undefined;
  /** Continuous backup (`--backup`, BACKUP_URL, config `backup`); undefined: none. */
  readonly backup: BackupSettings | undefined;
  /**
   * Whether change notices on Redis carry the committed rows (default) or ids only
   * (`REDIS_CHANGE_ROWS=off`: for a Redis that must not see row data; receivers then re-run the
   * queries of the tables named). docs/reference/scaling.md.
   */
  readonly redisChangeRows?: boolean;
  /**
   * The origin users reach this server at (`PUBLIC_URL`, `server.publicUrl`, else `auth.publicUrl`):
   * email links that are paths (`/…`) are built on it. Undefined: the server's own listening origin
   * (right for `dev`; set it behind a proxy). docs/reference/configuration.md.
   */
  readonly publicUrl?: string | undefined;
}

export interface Flags {
  project?: string;
  data?: string;
  host?: string;
  port?: string;
  database?: string;
  redis?: string;
  storage?: string;
  tlsCert?: string;
  tlsKey?: string;
  backup?: string;
}

const list = (s: string | undefined) =>
  s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : undefined;

/** A one-line problem with a database URL, or undefined. Names only the scheme: the URL may hold a password. */
export function checkDatabaseUrl(url: string, source = '--database'): string | undefined {
  return checkUrl(url, source, ['postgres:', 'postgresql:'], 'a postgres:// or postgresql:// URL (leave it unset for SQLite)');
}

/** A one-line problem with a Redis URL, or undefined. */
export function checkRedisUrl(url: string, source = '--redis'): string | undefined {
  return checkUrl(url, source, ['redis:', 'rediss:'], 'a redis:// or rediss:// URL');
}

/** A one-line problem with a storage URL, or undefined (an s3:// URL holds no secret: credentials come from S3_* variables). */
export function checkStorageUrl(url: string, source = '--storage'): string | undefined {
  const what = 'a file:///absolute/path or s3://bucket/prefix URL';
  if (/^s3:\/\//i.test(url)) {
    if (!/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[^?#]*)?$/.test(url)) return `${source} must be ${what}; "${url}" does not name a valid bucket`;
    return undefined;
  }
  if (/^file:\/\//i.test(url)) {
    if (!/^file:\/\/\//i.test(url)) return `${source} must be ${what}: file:///absolute/path`;
    return undefined;
  }
  return `${source} must be ${what}`;
}

function checkUrl(url: string, source: string, schemes: readonly string[], what: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${source} must be ${what}; the value given is not a URL`;
  }
  const slashes = url.slice(parsed.protocol.length).startsWith('//');
  if (!schemes.includes(parsed.protocol)) return `${source} must be ${what}, not ${parsed.protocol}${slashes ? '//' : ''}…`;
  // `postgres:db` parses as a URL but names no server: connection URLs have an authority (RFC 3986 §3.2).
  if (!slashes) return `${source} must be ${what}: ${parsed.protocol}//host/...`;
  return undefined;
}

/** The first set value of flag, environment variable and config file, checked. */
function pickUrl(sources: readonly [string, string | undefined][], check: (url: string, source: string) => string | undefined): string | undefined {
  const found = sources.find(([, v]) => v !== undefined && v !== '');
  if (!found) return undefined;
  const problem = check(found[1]!, found[0]);
  if (problem) throw new Error(problem);
  return found[1];
}

/** Both files or neither: a certificate without its key (or the reverse) refuses to start. */
function tlsOf(cert: string | undefined, key: string | undefined, projectDir: string): AppConfig['tls'] {
  if (!cert && !key) return undefined;
  if (!cert || !key) throw new Error('HTTPS needs both --tls-cert and --tls-key (or TLS_CERT and TLS_KEY)');
  return { cert: resolve(projectDir, cert), key: resolve(projectDir, key) };
}

export function resolveConfig(flags: Flags, env: NodeJS.ProcessEnv, project: Project, secrets: { jwtSecret: string; passwordSecret: string }): AppConfig {
  const projectDir = resolve(flags.project ?? env.TABLEBASE_PROJECT ?? '.');
  const s = project.server ?? {};
  const port = Number(flags.port ?? env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Invalid port: ${flags.port ?? env.PORT}`);
  return Object.freeze({
    projectDir,
    dataDir: resolve(flags.data ?? env.TABLEBASE_DATA ?? resolve(projectDir, '.tablebase')),
    host: flags.host ?? env.HOST ?? 'localhost',
    port,
    maxBodyBytes: s.maxBodyBytes ?? DEFAULT_MAX_BODY,
    maxResponseBytes: Number(env.TABLEBASE_MAX_RESPONSE_BYTES ?? s.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES),
    maxPendingWrites: Number(env.TABLEBASE_MAX_PENDING_WRITES ?? s.maxPendingWrites ?? 64),
    trustedProxies: list(env.TRUSTED_PROXIES) ?? s.trustedProxies ?? [],
    publicUrl: checkPublicUrl(env.PUBLIC_URL || s.publicUrl || project.auth?.publicUrl),
    corsOrigins: list(env.CORS_ORIGINS) ?? s.corsOrigins ?? [],
    smtpUrl: env.SMTP_URL || undefined,
    jwtSecret: secrets.jwtSecret,
    passwordSecret: secrets.passwordSecret,
    synchronous: env.TABLEBASE_SYNCHRONOUS === 'full' ? 'full' : 'normal',
    streamHeartbeatMs: Number(env.TABLEBASE_STREAM_HEARTBEAT_MS ?? s.streams?.heartbeatMs ?? 15_000),
    maxStreams: Number(env.TABLEBASE_MAX_STREAMS ?? s.streams?.maxOpen ?? 10_000),
    maxStreamsPerIp: Number(env.TABLEBASE_MAX_STREAMS_PER_IP ?? s.streams?.maxPerIp ?? 100),
    maxSubscriptionsPerConnection: Number(env.TABLEBASE_MAX_SUBSCRIPTIONS ?? s.streams?.maxPerConnection ?? 200),
    tls: tlsOf(flags.tlsCert ?? env.TLS_CERT, flags.tlsKey ?? env.TLS_KEY, projectDir),
    maxLiveMemoryBytes: Number(env.TABLEBASE_MAX_LIVE_MEMORY_BYTES ?? s.maxLiveMemoryBytes ?? 256 * 1024 * 1024),
    databaseUrl: pickUrl(
      [
        ['--database', flags.database],
        ['DATABASE_URL', env.DATABASE_URL],
        ['server.databaseUrl', s.databaseUrl],
      ],
      checkDatabaseUrl,
    ),
    redisUrl: pickUrl(
      [
        ['--redis', flags.redis],
        ['REDIS_URL', env.REDIS_URL],
        ['server.redisUrl', s.redisUrl],
      ],
      checkRedisUrl,
    ),
    storageUrl: pickUrl(
      [
        ['--storage', flags.storage],
        ['STORAGE_URL', env.STORAGE_URL],
        ['storage', project.storage],
      ],
      checkStorageUrl,
    ),
    redisPrefix: env.REDIS_PREFIX || undefined,
    backup: resolveBackup(flags.backup, env, project.backup),
    redisChangeRows: env.REDIS_CHANGE_ROWS !== 'off',
  });
}

/** An http(s) origin (a path after it is kept), without a trailing slash; undefined stays undefined. */
function checkPublicUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`PUBLIC_URL / server.publicUrl must be an absolute http(s) URL, not "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`PUBLIC_URL / server.publicUrl must be an http(s) URL, not "${url}"`);
  return url.replace(/\/+$/, '');
}

/**
 * Settings: flags beat environment variables, which beat the project file (SPEC §1).
 */
import { resolve } from 'node:path';
import type { Project } from '../define/project.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from './response-size.js';

/** SPEC §2: request bodies past this many bytes are 413 unless the project sets `server.maxBodyBytes`. */
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
}

export interface Flags {
  project?: string;
  data?: string;
  host?: string;
  port?: string;
}

const list = (s: string | undefined) =>
  s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : undefined;

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
    corsOrigins: list(env.CORS_ORIGINS) ?? s.corsOrigins ?? [],
    smtpUrl: env.SMTP_URL || undefined,
    jwtSecret: secrets.jwtSecret,
    passwordSecret: secrets.passwordSecret,
    synchronous: env.TABLEBASE_SYNCHRONOUS === 'full' ? 'full' : 'normal',
    streamHeartbeatMs: Number(env.TABLEBASE_STREAM_HEARTBEAT_MS ?? s.streams?.heartbeatMs ?? 15_000),
    maxStreams: Number(env.TABLEBASE_MAX_STREAMS ?? s.streams?.maxOpen ?? 10_000),
    maxStreamsPerIp: Number(env.TABLEBASE_MAX_STREAMS_PER_IP ?? s.streams?.maxPerIp ?? 100),
  });
}

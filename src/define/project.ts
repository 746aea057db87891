/**
 * `defineProject(...)`: the one value a project's `tablebase.config.ts` exports by default.
 */
import type { AnyTable } from './table.js';
import type { AnyView } from './view.js';
import type { Jwt, PolicySetting, RateLimitPolicy, ServerContext, Verdict } from './types.js';
import type { PushOptions } from './push.js';

export interface PhotoRow {
  id: string;
  mimeType: string;
  size: number;
  ownerId: string | null;
  width: number | null;
  height: number | null;
  createdAt: string;
}

export interface PhotoOptions {
  /** Default 5 MiB. */
  maxBytes?: number;
  /** Default JPEG, PNG, WebP, GIF; decided from the bytes' signature. */
  allowedMimeTypes?: string[];
  rules?: {
    canUpload?: (jwt: Jwt | null) => Verdict; // default deny
    canView?: (jwt: Jwt | null, photo: PhotoRow) => Verdict; // default allow
    canDelete?: (jwt: Jwt | null, photo: PhotoRow) => Verdict; // default deny
  };
  /** Rules for reading `_photos` through /db; absent keeps it closed. */
  tableRules?: { canList?: (jwt: Jwt | null) => Verdict; canView?: (jwt: Jwt | null) => Verdict; canCount?: (jwt: Jwt | null) => Verdict };
  policies?: { upload?: PolicySetting; view?: PolicySetting; delete?: PolicySetting };
}

export interface CronJob {
  name: string;
  /** 5- or 6-field cron syntax. */
  schedule: string;
  run: (ctx: ServerContext) => unknown;
}

export interface EmailOptions {
  from?: string;
  /** Folder (relative to the project) holding `<name>.html` / `<name>.txt` / `<name>.subject` templates. */
  templatesDir?: string;
  links?: { verify?: string; reset?: string; magicLink?: string; changeEmail?: string };
  /** Who may call POST /email besides admins. */
  canSend?: (jwt: Jwt | null) => Verdict;
}

export interface ServerOptions {
  /** JSON body limit in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Pending writes before 503 WRITE_QUEUE_FULL (default 64). */
  maxPendingWrites?: number;
  /** IPs or CIDRs whose X-Forwarded-For is believed (default none). */
  trustedProxies?: string[];
  /** Allowed CORS origins (default none). */
  corsOrigins?: string[];
  /** The policy for every key no table overrides (default 100 per minute). */
  defaultPolicy?: RateLimitPolicy;
  streams?: { heartbeatMs?: number; maxOpen?: number; maxPerIp?: number };
  /** PostgreSQL URL (SPEC §14); `--database` and `DATABASE_URL` win. Default: SQLite in the data folder. */
  databaseUrl?: string;
  /** Redis URL shared by the nodes (SPEC §14); `--redis` and `REDIS_URL` win. Default: none. */
  redisUrl?: string;
}

export interface OpenApiInfo {
  /** The license of the API, shown in `info.license` (default: `{ name: 'Proprietary' }`). */
  license?: { name: string; url?: string };
}

export interface AuthSettings {
  /** Access-token lifetime: seconds or "1h" (default 1 hour). */
  accessTokenTtl?: number | string;
  refreshTokenTtl?: number | string;
  verifyTokenTtl?: number | string;
  resetTokenTtl?: number | string;
  passwordMinLength?: number;
  passwordMaxLength?: number;
  /** Where `/auth/oauth/*` may send the browser back to (exact URLs, or prefixes ending in `*`; SPEC §8a). */
  redirectAllowList?: string[];
  /** This server's public origin (`https://api.example.com`), for OAuth callback URLs; default `http://<Host>`. */
  publicUrl?: string;
  /**
   * Policies of auth routes called without a table (`auth:refresh`, `auth:confirm`, `auth:logout`,
   * `auth:changeEmail`, `auth:oauth`; SPEC §8); default: the server's default policy.
   */
  policies?: Record<string, PolicySetting>;
}

export interface ProjectDefinition {
  name?: string;
  tables: AnyTable[];
  views?: AnyView[];
  photos?: PhotoOptions;
  cron?: CronJob[];
  email?: EmailOptions;
  auth?: AuthSettings;
  server?: ServerOptions;
  /** Push providers (SPEC §11b); `pushFromEnv(process.env)` reads the `PUSH_*` variables. */
  push?: PushOptions;
  /** What the OpenAPI document says about the API itself (SPEC §11). */
  openapi?: OpenApiInfo;
}

export interface Project extends ProjectDefinition {
  readonly __tablebaseProject: true;
}

export function defineProject(definition: ProjectDefinition): Project {
  return Object.freeze({ ...definition, __tablebaseProject: true as const });
}

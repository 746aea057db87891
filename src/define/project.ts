/**
 * `defineProject(...)`: the one value a project's `tablebase.config.ts` exports by default.
 */
import type { AnyTable, TableHooks } from './table.js';
import type { AnyView } from './view.js';
import type { Jwt, PolicySetting, RateLimitPolicy, Schema, ServerContext, UntypedRow, UntypedSchema, Verdict } from './types.js';
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

/** `S` types `ctx`: the project's tables when the job is declared inside `defineProject`. */
export interface CronJob<S extends Schema = UntypedSchema> {
  name: string;
  /** 5- or 6-field cron syntax. */
  schedule: string;
  /** Method form (bivariant), so a job typed by its project fits where any job is accepted. */
  run(ctx: ServerContext<S>): unknown;
}

export interface EmailOptions {
  from?: string;
  /** Folder (relative to the project) holding `<name>.html` / `<name>.txt` / `<name>.subject` templates. */
  templatesDir?: string;
  links?: { verify?: string; reset?: string; magicLink?: string; changeEmail?: string };
  /** Who may call POST /email besides admins. */
  canSend?: (jwt: Jwt | null) => Verdict;
}

/** Continuous backup and point-in-time restore (docs/reference/backups.md). */
export interface BackupOptions {
  /** `file:///abs/path` or `s3://bucket/prefix` (BACKUP_URL and --backup override it). */
  to?: string;
  /** How often captured commits are shipped, in ms (default 1000). */
  syncIntervalMs?: number;
  /** Cron expression for periodic snapshots (default `0 3 * * *`). */
  snapshotEvery?: string;
  /** Snapshots and generations older than this many days are removed (default 7). */
  retainDays?: number;
}

export interface ServerOptions {
  /** JSON body limit in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Largest list answer or stream payload in bytes; larger ones are 400 RESPONSE_TOO_LARGE (default 8 MiB, docs/reference/data.md). */
  maxResponseBytes?: number;
  /**
   * Memory every live query and subscription may hold in all: unsent socket bytes, results being
   * delivered, per-stream overhead (default 256 MiB). Past it a new stream is 503 UNAVAILABLE and a
   * change ends the largest streams (docs/reference/live.md).
   */
  maxLiveMemoryBytes?: number;
  /** Pending writes before 503 WRITE_QUEUE_FULL (default 64). */
  maxPendingWrites?: number;
  /** IPs or CIDRs whose X-Forwarded-For is believed (default none). */
  trustedProxies?: string[];
  /** Allowed CORS origins (default none). */
  corsOrigins?: string[];
  /**
   * The origin users reach this server at (`https://api.example.com`; env `PUBLIC_URL` wins). Email
   * links given as paths are built on it; default: the server's own origin (`http://localhost:8080`).
   */
  publicUrl?: string;
  /** The policy for every key no table overrides (default 100 per minute). */
  defaultPolicy?: RateLimitPolicy;
  streams?: { heartbeatMs?: number; maxOpen?: number; maxPerIp?: number; /** /db/live subscriptions per connection (default 200). */ maxPerConnection?: number };
  /** PostgreSQL URL (docs/reference/scaling.md); `--database` and `DATABASE_URL` win. Default: SQLite in the data folder. */
  databaseUrl?: string;
  /** Redis URL shared by the nodes (docs/reference/scaling.md); `--redis` and `REDIS_URL` win. Default: none. */
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
  /** Where `/auth/oauth/*` may send the browser back to (exact URLs, or prefixes ending in `*`; docs/reference/auth.md). */
  redirectAllowList?: string[];
  /** This server's public origin (`https://api.example.com`), for OAuth callback URLs; default `http://<Host>`. */
  publicUrl?: string;
  /**
   * Policies of auth routes called without a table (`auth:refresh`, `auth:confirm`, `auth:logout`,
   * `auth:changeEmail`, `auth:oauth`; docs/reference/auth.md); default: the server's default policy.
   */
  policies?: Record<string, PolicySetting>;
}

/**
 * Typing hooks by the project (issue #10 item 6). A table's own `hooks` are declared before the
 * project exists, so their `ctx` can only be untyped. `defineProject` is generic over its `tables`
 * tuple (`T`); `SchemaOf<T>` maps each table's literal name to its row and create object, and the
 * project-level `hooks` (keyed by table name) and `cron` get `HookContext<SchemaOf<T>>`, so
 * `ctx.get('tasks', { done: { eq: false } })` answers a task row and a misspelt table or column
 * fails to compile. The returned `Project` erases them again (the server looks tables up by name
 * at run time) and keeps the schema as a phantom (`ProjectSchema<typeof project>`) for helpers
 * declared in other files. Project-level hooks are merged into the table's in core/model.ts.
 */
export type SchemaOf<T extends readonly AnyTable[]> = {
  [X in T[number] as X['name']]: X extends { readonly $row: infer R extends { id: string }; readonly $create: infer C extends object }
    ? { row: R; create: C }
    : { row: UntypedRow; create: Record<string, unknown> };
};

/** Hooks for the project's tables, keyed by table name; `ctx` is typed by the whole project. */
export type ProjectHooks<S extends Schema> = { [N in keyof S]?: TableHooks<S[N]['row'], S[N]['create'], S> };

/** Everything a project declares besides its tables, hooks and cron. */
export interface ProjectSettings {
  name?: string;
  views?: AnyView[];
  photos?: PhotoOptions;
  /**
   * Where photo bytes live: `file:///abs/path` or `s3://bucket/prefix`; `--storage` and
   * `STORAGE_URL` win (docs/reference/object-storage.md). S3 credentials come from `S3_*`
   * environment variables only. Default: `<data>/photos/`.
   */
  storage?: string;
  email?: EmailOptions;
  auth?: AuthSettings;
  server?: ServerOptions;
  /** Continuous backup (docs/reference/backups.md). */
  backup?: BackupOptions;
  /** Push providers (docs/reference/push.md); `pushFromEnv(process.env)` reads the `PUSH_*` variables. */
  push?: PushOptions;
  /** What the OpenAPI document says about the API itself (docs/reference/dashboard.md). */
  openapi?: OpenApiInfo;
}

export interface ProjectDefinition<T extends readonly AnyTable[] = readonly AnyTable[]> extends ProjectSettings {
  tables: T;
  /** Table hooks whose context is typed by this project, merged with the table's own `hooks` (naming one hook in both is an error). */
  hooks?: ProjectHooks<SchemaOf<T>>;
  cron?: CronJob<SchemaOf<T>>[];
}

/** A defined project as the server reads it: hooks and cron erased to untyped contexts. */
export interface Project<T extends readonly AnyTable[] = readonly AnyTable[]> extends ProjectSettings {
  readonly __tablebaseProject: true;
  readonly tables: T;
  readonly hooks?: Readonly<Record<string, TableHooks<UntypedRow, Record<string, unknown>>>>;
  readonly cron?: readonly CronJob[];
  /** Phantom: never set; carries the table map for `ProjectSchema`. */
  readonly $schema?: SchemaOf<T>;
}

/** The table map of a project, for helpers declared outside it: `HookContext<ProjectSchema<typeof project>>`. */
export type ProjectSchema<P> = P extends Project<infer T> ? SchemaOf<T> : never;

export function defineProject<const T extends readonly AnyTable[]>(definition: ProjectDefinition<T>): Project<T> {
  // The one erasure point: contexts typed by SchemaOf<T> become untyped ones (same object at run time).
  return Object.freeze({ ...definition, __tablebaseProject: true as const }) as unknown as Project<T>;
}

/**
 * What a route handler may use: the services the composition root (src/server/) assembled, each
 * behind its own interface. Handlers never see the whole app (no listen/close, no router) and
 * never the node:http objects; a new family adds its service here (e.g. `push`).
 */
import type { ProcessFigures } from '../dashboard/process-figures.js';
import type { BackupService } from '../backup/index.js';
import type { AuthFlows } from '../auth/flows.js';
import type { AuthServices } from '../auth/index.js';
import type { OAuthService } from '../auth/oauth/flow.js';
import type { Cluster } from '../cluster/index.js';
import type { HealthState } from '../core/health-state.js';
import type { StreamCaps } from '../cluster/types.js';
import type { Metrics } from '../core/metrics.js';
import type { Runtime } from '../core/runtime.js';
import type { CronStatus } from '../cron/scheduler.js';
import type { Dashboard } from '../dashboard/index.js';
import type { EmailService } from '../email/index.js';
import type { LiveEngine } from '../live/index.js';
import type { PhotoService } from '../photos/index.js';
import type { PushService } from '../push/index.js';

/** The settings handlers and the lifecycle read. */
export interface RouteSettings {
  readonly maxBodyBytes: number;
  /** Largest read answer or stream payload (docs/reference/data.md); past it 400 RESPONSE_TOO_LARGE. */
  readonly maxResponseBytes: number;
  readonly streamHeartbeatMs: number;
}

export interface Services {
  /** Model, driver, writer, limiter, token verifier, logger, clock: what the pipeline runs on. */
  readonly rt: Runtime;
  readonly config: RouteSettings;
  readonly auth: AuthServices;
  /** Sign-up, sign-in, refresh, logout, verification and reset (docs/reference/auth.md). */
  readonly authFlows: AuthFlows;
  readonly email: EmailService;
  readonly photos: PhotoService;
  readonly live: LiveEngine;
  /** Server-wide stream caps when several processes serve (workers); undefined: the engine's own. */
  readonly streamCaps?: StreamCaps;
  readonly metrics: Metrics;
  /** Infrastructure failures seen by requests: a full disk keeps /health at 503 until it takes writes. */
  readonly health: HealthState;
  /** Whether this node's Redis answers (health, docs/reference/scaling.md). */
  /** `ready`, `backupFailing` and `diskFull`: a worker's view of its primary, for `/health`. */
  readonly cluster: Pick<Cluster, 'redis'> & { readonly ready?: () => boolean; readonly backupFailing?: () => boolean; readonly diskFull?: () => boolean };
  readonly cron: CronStatus | undefined;
  /** Devices, sending and delivery counts (docs/reference/push.md). */
  readonly push: PushService;
  readonly dashboard: Dashboard;
  /** The OpenAPI document of this server, rendered once, on first request (docs/reference/dashboard.md). */
  openapi(): Promise<{ readonly json: string; readonly yaml: string }>;
  /** OAuth / OpenID Connect sign-in (docs/reference/auth.md). */
  readonly oauth: OAuthService;
  /** Continuous backup (docs/reference/backups.md); undefined without a destination. */
  readonly backup: BackupService | undefined;
  /** One row per process of this server (primary and workers, or the one process) for /dashboard/metrics. */
  readonly processes?: () => readonly ProcessFigures[];
}

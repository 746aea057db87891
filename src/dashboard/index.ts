/**
 * The dashboard's services, assembled once per server (docs/reference/dashboard.md): the request log and the
 * per-minute history (fed by the HTTP server's one `observe` call per answer), schema, admin rows,
 * users, photos, cron and live-stream views, and the bundled browser app. Values in, values out:
 * nothing here knows node:http; the routes live in http/routes/dashboard.ts.
 */
import type { AuthServices } from '../auth/index.js';
import type { Runtime } from '../core/runtime.js';
import type { CronRun, Scheduler } from '../cron/scheduler.js';
import type { PhotoRepo, PhotoService } from '../photos/index.js';
import { ApiError } from '../core/errors.js';
import type { Jwt } from '../define/types.js';
import { buildDashboardAssets, type DashboardAssets } from './assets.js';
import { auditAdmin } from './audit.js';
import { adminCommand, ADMIN_TABLE_SNIPPET } from '../core/next-steps.js';
import { MetricsHistory } from './history.js';
import { liveCensus, type LiveCensus, type StreamCount } from './live-census.js';
import { adminPhotos } from './photos.js';
import { RequestLog } from './request-log.js';
import { adminRows } from './rows.js';
import { describeSchema } from './schema.js';
import { adminUsers } from './users.js';

export interface DashboardOptions {
  rt: Runtime;
  /** The project folder: the sign-in page shows the `admin create --project …` command for it. */
  projectDir?: string;
  auth: AuthServices;
  photos: PhotoService;
  photoRepo: PhotoRepo;
  /** The scheduler, once the server listens (undefined when the project has no cron). */
  cron: () => Scheduler | undefined;
  /** Request-log entries kept (default 2000). */
  logSize?: number;
}

export interface CronJobView {
  readonly name: string;
  readonly schedule: string;
  readonly lastRunAt: string | null;
  readonly lastStatus: string | null;
  readonly lastError: string | null;
  readonly nextRunAt: string | null;
  readonly running: boolean;
  readonly runs: CronRun[];
}

/** Wraps the live engine so the dashboard can count streams by route and table; serve with `.engine`. */
export { liveCensus as trackLive };

export function createDashboard(o: DashboardOptions & { census: LiveCensus }) {
  const { rt } = o;
  const log = new RequestLog(o.logSize);
  const history = new MetricsHistory({ streams: () => o.census.engine.stats().open, writeQueue: () => rt.writer.pending });
  let assets: Promise<DashboardAssets> | undefined;
  const cronJobs = (): CronJobView[] => {
    const s = o.cron();
    if (!s) return [];
    return s.status().map((j) => {
      const runs = s.recentRuns(j.name) ?? [];
      return { ...j, running: runs[0]?.status === 'running', runs };
    });
  };
  return {
    /** The HTTP server calls this once per answer, where it records metrics (never with bodies or headers). */
    observe(method: string, route: string, status: number, ms: number, requestId: string, ip: string, at = Date.now()): void {
      const latencyMs = Math.round(ms * 100) / 100;
      log.add(at, method, route, status, latencyMs, requestId, ip);
      history.record(status, latencyMs, at);
    },
    requestLog: log,
    history,
    schema: () => describeSchema(rt.model),
    rows: adminRows(rt),
    users: adminUsers(rt, o.auth),
    photos: adminPhotos(rt, o.photos, o.photoRepo),
    cron: {
      jobs: cronJobs,
      async runNow(admin: Jwt, name: string): Promise<CronRun> {
        const s = o.cron();
        if (!s?.recentRuns(name)) throw new ApiError('NOT_FOUND', 'No such cron job');
        auditAdmin(rt.log, admin, { action: 'runCron', detail: name });
        return s.runNow(name);
      },
    },
    live: (): { open: number; sockets: number; queries: number; memoryBytes: number; streams: StreamCount[] } => {
      const stats = o.census.engine.stats();
      const streams = o.census.streams();
      const sockets = streams.reduce((n, s) => (s.route.startsWith('WS ') ? n + s.open : n), 0);
      return { open: stats.open, sockets, queries: stats.queries, memoryBytes: stats.memoryBytes, streams };
    },
    /** The bundled app; built on first call (createApp starts it at boot) and cached. */
    assets: (): Promise<DashboardAssets> => {
      const admins = rt.model.tables.filter((c) => c.auth?.admin).map((c) => c.name);
      return (assets ??= buildDashboardAssets(admins, { adminCommand: adminCommand(admins, o.projectDir ?? process.cwd()), adminTableSnippet: ADMIN_TABLE_SNIPPET }));
    },
  };
}

export type Dashboard = ReturnType<typeof createDashboard>;

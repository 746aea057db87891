/**
 * The composition root. createApp(project, config) assembles the runtime (database, writer,
 * limiter, tokens, email, live engine, photos), the narrow `Services` route handlers receive, and
 * the route table, in one place; nothing below src/server/ imports it. Shutdown reverses it
 * (docs/reference/configuration.md): stop accepting, finish in-flight requests and queued writes, close streams, close
 * the database.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createAuthFlows } from '../auth/flows.js';
import { authInternalTables, createAuthServices, type AuthServices } from '../auth/index.js';
import { createOAuthService } from '../auth/oauth/index.js';
import type { Project } from '../define/project.js';
import type { AnyTable } from '../define/table.js';
import { createEmailService } from '../email/index.js';
import { Router } from '../http/router.js';
import { routeTable } from '../http/routes.js';
import { createServer, forwardedHandler, type AppServer, type ServerDeps } from '../http/server.js';
import { createFrameServer, type FrameServer } from '../http/forward-exchange.js';
import type { Services } from '../http/services.js';
import { createLiveEngine, type LiveEngine } from '../live/index.js';
import { createPhotoService, photosTableFor, openPhotoStore, S3BlobStore } from '../photos/index.js';
import { readData } from '../pipeline/execute/reads.js';
import { checkedData } from '../core/response-size.js';
import { createClientIp, createPolicyResolver, createRateLimiter } from '../ratelimit/index.js';
import { joinCluster, openCluster, type Cluster } from '../cluster/index.js';
import type { Hub } from '../cluster/ipc-hub.js';
import type { LiveFigures } from '../cluster/ipc-protocol.js';
import type { WorkerCluster } from '../cluster/ipc-worker.js';
import { createForwarder, framesSocketPath, type Forwarder } from '../http/forward.js';
import { newId } from '../storage/ids.js';
import { openDatabase } from '../storage/open.js';
import type { Dialect } from '../storage/dialect.js';
import { WriteQueue } from '../storage/writer.js';
import type { AppConfig } from '../core/config.js';
import { emailSender } from './email-sender.js';
import { createLogger, type Logger } from '../core/logger.js';
import { Metrics } from '../core/metrics.js';
import { HealthState } from '../core/health-state.js';
import { diskTakesWrites } from './disk-probe.js';
import { compileProject } from '../core/model.js';
import { photoRepo } from './photo-repo.js';
import type { Runtime } from '../core/runtime.js';
import { prepareSchema } from './schema.js';
import { startScheduler, type Scheduler } from '../cron/scheduler.js';
import { createPushFor, pushInternalTables, setupPushFor, type PushService } from '../push/index.js';
import { createDashboard, trackLive } from '../dashboard/index.js';
import type { BackupService } from '../backup/index.js';
import { dashboardPrebuilt } from '../dashboard/assets.js';
import { ProcessMeter, type ProcessFigures } from '../dashboard/process-figures.js';
import { sharedPromise } from '../core/shared-promise.js';
import nodeCluster from 'node:cluster';

export interface App {
  readonly rt: Runtime;
  readonly router: Router;
  readonly config: AppConfig;
  /** What route handlers receive (http/services.ts). */
  readonly services: Services;
  readonly live: LiveEngine;
  readonly auth: AuthServices;
  readonly cron: Scheduler | undefined;
  readonly push: PushService;
  /** What this node shares with the others of its deployment (Redis, or in-process). */
  readonly cluster: Cluster;
  /** Continuous backup, when a destination is set and this process owns the SQLite writer. */
  readonly backup: BackupService | undefined;
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
  /** Graceful shutdown. */
  close(): Promise<void>;
}

export interface CreateOptions {
  /** `auto` (dev): generate and apply migrations; `apply` (serve): apply pending ones, refuse drift. */
  migrate?: 'auto' | 'apply';
  log?: Logger;
  /**
   * With `serve --workers` (docs/reference/scaling.md): `primary` owns the SQLite writer, cron,
   * push and the periodic purges, and answers the workers' forwarded requests on a private
   * socket; a `worker` accepts on the public port, reads through its own connections and
   * forwards what writes (SQLite) or reads server-wide figures. `single` (default) is one
   * process doing all of it. Anything that must run once per server (WAL shipping of a backup)
   * belongs where `ownsWriter(role, …)` is true.
   */
  process?: ProcessRole;
}

export type ProcessRole =
  | { readonly role: 'single' }
  | { readonly role: 'primary'; readonly socketPath: string; readonly cluster: (base: Cluster) => Hub }
  | { readonly role: 'worker'; readonly cluster: WorkerCluster; readonly forwardTo: string };

/** Whether this process runs the server's one writer (SQLite) and its once-per-server duties. */
export const ownsWriter = (p: ProcessRole): boolean => p.role !== 'worker';

/** The server's own `_` tables (sessions, confirmation tokens, photos), declared with the definition API. */
export function internalTables(project: Project): AnyTable[] {
  return [...authInternalTables, photosTableFor(project.photos), ...pushInternalTables];
}

/**
 * What the start has opened so far, closed in reverse order when a later step fails, so a failed
 * start leaves no connection (database, Redis), timer or file handle behind.
 */
class Opened {
  readonly #closers: { name: string; close: () => unknown }[] = [];

  add(name: string, close: () => unknown): void {
    this.#closers.push({ name, close });
  }

  async closeAll(log: Logger): Promise<void> {
    for (const { name, close } of this.#closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        log.warn({ err }, `closing ${name} after a failed start failed`);
      }
    }
  }
}

export async function createApp(project: Project, config: AppConfig, options: CreateOptions = {}): Promise<App> {
  const log = options.log ?? createLogger();
  const opened = new Opened();
  try {
    return await assembleApp(project, config, options, log, opened);
  } catch (err) {
    await opened.closeAll(log);
    throw err;
  }
}

async function assembleApp(project: Project, config: AppConfig, options: CreateOptions, log: Logger, opened: Opened): Promise<App> {
  const proc = options.process ?? { role: 'single' };
  mkdirSync(config.dataDir, { recursive: true });
  const model = compileProject(project, internalTables(project));
  const pushSetup = await setupPushFor(project, config); // key errors stop the start here, before the database opens
  const driver = await openDatabase(config);
  opened.add('the database', () => driver.close());
  const warn = (msg: string, err?: unknown) => log.warn({ err }, msg);
  // A worker's cluster belongs to its primary; the primary wraps the one it opens. Closed with the
  // app as close() below does, whoever built it.
  const cluster: Cluster = proc.role === 'worker' ? proc.cluster : await openCluster(config, driver.databaseName, warn).then((base) => (proc.role === 'primary' ? proc.cluster(base) : base));
  opened.add('the cluster', () => cluster.close());
  const limiter = createRateLimiter({ resolver: createPolicyResolver(model, project.server?.defaultPolicy), store: cluster.rateLimitStore });
  // Workers start once the primary applied the migrations.
  if (proc.role !== 'worker') await prepareSchema(driver, model, config, options.migrate ?? 'apply');
  // An unreachable bucket stops the start with one line naming it (docs/reference/object-storage.md).
  const photoStore = await openPhotoStore(config.storageUrl, driver, config.dataDir);
  if (photoStore instanceof S3BlobStore) {
    opened.add('photo storage', () => photoStore.bucket.destroy());
    log.info({ storage: photoStore.bucket.label }, `photos: stored in ${photoStore.bucket.label}`);
  }
  const writer = new WriteQueue(driver, { maxPending: config.maxPendingWrites, onListenerError: (err) => log.error({ err }, 'commit listener failed') });
  const auth = createAuthServices({
    secrets: { jwtSecret: config.jwtSecret, passwordSecret: config.passwordSecret },
    settings: project.auth,
    dialect: driver.dialect,
    reader: driver,
    write: (fn) => writer.submit((tx) => fn(tx)),
    newId,
  });
  await auth.start();
  /** The origin the server listens on, once it does: the default public URL of email links. */
  let listeningOrigin: string | undefined;
  const email = createEmailService({
    smtpUrl: config.smtpUrl,
    outboxDir: join(config.dataDir, 'outbox'),
    from: project.email?.from,
    templatesDir: project.email?.templatesDir ? resolve(config.projectDir, project.email.templatesDir) : undefined,
    links: project.email?.links,
    publicUrl: () => config.publicUrl ?? listeningOrigin,
    log,
  });
  opened.add('email', () => email.close());
  const rt: Runtime = {
    model,
    driver,
    writer,
    log,
    newId,
    now: () => new Date().toISOString(),
    limiter,
    tokens: auth.tokens,
    email: emailSender(email, auth),
    push: undefined,
    accounts: {
      revokeAll: async (tx, table, userId, reason) => void (await auth.sessions.revokeAllForUser({ table, userId }, reason, tx)),
    },
  };
  const push = createPushFor(rt, pushSetup);
  opened.add('push', () => push.stop());
  rt.push = push;
  const READ = { one: 'get', list: 'list', count: 'count' } as const;
  // A re-run whose payload would pass maxResponseBytes ends its streams with RESPONSE_TOO_LARGE (docs/reference/data.md).
  // The primary's figures include the workers' streams, as last gathered (before every server-wide read).
  let workerLive: readonly LiveFigures[] = [];
  const census = trackLive(
    createLiveEngine({
      run: async (q) => checkedData(await readData(rt, READ[q.kind], q.plan), config.maxResponseBytes),
      log,
      maxOpen: config.maxStreams,
      maxPerIp: config.maxStreamsPerIp,
      maxMemoryBytes: config.maxLiveMemoryBytes,
    }),
    proc.role === 'primary' ? () => workerLive : undefined,
  );
  const live = proc.role === 'worker' ? proc.cluster.watched(census.engine) : census.engine;
  opened.add('the live engine', () => live.close());
  writer.onCommit(live.onCommit);
  joinCluster(cluster, { onCommit: (l) => writer.onCommit(l), live, revocations: auth.revocations, reloadRevocations: () => auth.sessions.loadRevocations() }, warn);
  const photos = createPhotoService({
    options: project.photos,
    dataDir: config.dataDir,
    store: photoStore,
    repo: photoRepo(rt),
    newId: () => newId('ph'),
    now: rt.now,
    onError: (err, context) => log.error({ err, context }, 'photo storage'),
  });
  // Before the first request: bytes a killed process stored without a row are removed now.
  await photos.startRecovery();
  opened.add('the photo sweep', () => photos.stopRecovery());
  // The one backup start-up: it follows the writer's WAL, so only the process that owns the writer calls it.
  // Workers forward /dashboard/backups to the primary (serverWide routes).
  // Loaded only with a destination set: a start without backups skips the backup modules.
  const backup =
    ownsWriter(proc) && config.backup
      ? await (await import('../backup/index.js')).startBackup({ driver, photoStore: photos.store, settings: config.backup, databaseUrl: config.databaseUrl, log })
      : undefined;
  const oauth = createOAuthService({ rt, auth, dialect: driver.dialect, reader: driver, write: (fn) => writer.submit((tx) => fn(tx)), newId });
  const router = new Router(routeTable());
  const metrics = new Metrics();
  // The dashboard's per-process row of this process (a worker's reaches the primary with its live figures).
  const meter = new ProcessMeter(proc.role, proc.role === 'worker' ? (nodeCluster.worker?.id ?? 0) : 0);
  opened.add('the process meter', () => meter.close());
  const processes = (): ProcessFigures[] => {
    const all = census.engine.stats();
    if (proc.role !== 'primary') return [meter.figures(all)];
    // The primary's engine counts the workers' streams in (live-census.ts): its own are the rest.
    const workers = workerLive.flatMap((f) => (f.process ? [f.process] : [])).sort((a, b) => a.id - b.id);
    const own = { open: all.open - workerLive.reduce((n, f) => n + f.open, 0), queries: all.queries - workerLive.reduce((n, f) => n + f.queries, 0) };
    return [meter.figures(own), ...workers];
  };
  const health = new HealthState({ probeDisk: () => diskTakesWrites(config.dataDir) });
  writer.onCommit(() => health.wrote());
  const services: Services = {
    rt,
    config,
    auth,
    authFlows: createAuthFlows(rt, auth),
    email,
    photos,
    live,
    ...(proc.role === 'worker' ? { streamCaps: proc.cluster.streams } : {}),
    metrics,
    health,
    oauth,
    push,
    cluster,
    backup,
    processes,
    get cron() {
      return cron;
    },
    get dashboard() {
      return dashboard;
    },
    // docs/reference/dashboard.md: generated once per start, from the declarations and the model, on first
    // request; its modules are loaded then too, not at start. The server is `/`: wherever the document was
    // fetched from, behind proxies and on any port.
    openapi: sharedPromise(async () => {
      const { buildOpenApi, toYaml } = await import('../openapi/index.js');
      const doc = buildOpenApi(model, router.routes, { serverUrl: '/' });
      return Object.freeze({ json: JSON.stringify(doc), yaml: toYaml(doc) });
    }),
  };
  // Validated now (a bad schedule fails the start); timers begin once the server listens.
  let cron: Scheduler | undefined;
  const dashboard = createDashboard({ rt, auth, photos, photoRepo: photoRepo(rt), cron: () => cron, census, projectDir: config.projectDir });
  // A checkout bundles the dashboard with esbuild (about a second), so it starts now; the compiled
  // package reads its prebuilt files on the first dashboard request and a start pays nothing.
  if (!dashboardPrebuilt()) void dashboard.assets().catch((err) => log.error({ err }, 'dashboard bundle failed'));
  const purgeAll = () => Promise.all([auth.sessions.purgeExpired(), auth.otp.purgeExpired(), oauth.states.purgeExpired()]);
  const purge = !ownsWriter(proc) ? undefined : setInterval(() => void purgeAll().catch((err) => log.warn({ err }, 'session purge failed')), 3_600_000).unref();
  // Revocations written by another process (`tablebase admin create`, another node) reach this
  // one's in-memory list within seconds.
  const revocations = setInterval(() => void auth.sessions.loadRevocations().catch((err) => log.warn({ err }, 'revocation reload failed')), 5_000).unref();
  let server: AppServer | undefined;
  let frames: FrameServer | undefined;

  const app: App = {
    rt,
    router,
    config,
    services,
    live,
    auth,
    push,
    cluster,
    backup,
    get cron() {
      return cron;
    },
    listen: () =>
      new Promise((resolvePort, reject) => {
        // TLS on the public port only: the primary of --workers listens on a private socket.
        const tls = config.tls && proc.role !== 'primary' ? { cert: readFileSync(config.tls.cert), key: readFileSync(config.tls.key) } : undefined;
        const deps: ServerDeps = {
          router,
          services,
          corsOrigins: config.corsOrigins,
          log,
          metrics,
          ...serverRole(proc, config, driver.dialect, dashboard.observe, cluster, (f) => (workerLive = f), meter),
          maxSubscriptions: config.maxSubscriptionsPerConnection,
          maxLiveConnections: { total: config.maxStreams, perIp: config.maxStreamsPerIp },
          ...(tls ? { tls } : {}),
        };
        server = createServer(deps);
        server.once('error', reject);
        if (proc.role === 'primary') {
          // The workers' small writes come as frames (src/http/forward-frames.ts), beside the HTTP socket.
          frames = createFrameServer(forwardedHandler(deps), (err) => log.error({ err }, 'forwarded request frame refused'));
          frames.server.once('error', reject);
        }
        const listening = () => {
          if (ownsWriter(proc)) {
            if (project.cron?.length) cron = startScheduler(rt, project.cron, cluster.cron.claim);
            void push.start().catch((err) => log.error({ err }, 'push worker failed to start'));
          }
          const addr = server!.address();
          // A primary of workers listens on a socket; its public port is the workers' (config.port).
          const port = typeof addr === 'object' && addr ? addr.port : config.port;
          // Links in emails default to this origin (docs/reference/configuration.md, PUBLIC_URL).
          listeningOrigin = `http://${['0.0.0.0', '::', ''].includes(config.host) ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
          resolvePort(port);
        };
        if (proc.role === 'primary') frames!.server.listen(framesSocketPath(proc.socketPath), () => server!.listen(proc.socketPath, listening));
        else server.listen(config.port, config.host, listening);
      }),
    close: async () => {
      if (purge) clearInterval(purge);
      clearInterval(revocations);
      await cron?.stop();
      if (server) {
        const closed = new Promise<void>((r) => server!.close(() => r()));
        // The workers are gone when their primary closes: their frame connections with them.
        const framesClosed = new Promise<void>((r) => (frames ? frames.server.close(() => r()) : r()));
        live.close();
        server.closeIdleConnections();
        const force = setTimeout(() => (server!.closeAllConnections(), frames?.closeAll()), 5_000);
        await Promise.all([closed, framesClosed]);
        clearTimeout(force);
      }
      await push.stop();
      await photos.stopRecovery();
      await writer.whenIdle();
      await backup?.stop().catch((err: unknown) => log.warn({ err }, 'backup: final sync failed'));
      await email.close();
      await driver.close();
      await cluster.close();
    },
  };
  return app;
}

type Observe = (method: string, route: string, status: number, ms: number, requestId: string, ip: string) => void;

/** How this process's HTTP server differs by role: where the client address comes from, what it forwards. */
function serverRole(proc: ProcessRole, config: AppConfig, dialect: Dialect, recorded: Observe, cluster: Cluster, gathered: (f: readonly LiveFigures[]) => void, meter: ProcessMeter) {
  const clientIp = createClientIp(config.trustedProxies);
  // Every request this process answers passes here once: the per-process requests/s.
  const observe: Observe = (method, route, status, ms, requestId, ip) => {
    meter.count();
    recorded(method, route, status, ms, requestId, ip);
  };
  if (proc.role === 'single') return { clientIp, observe };
  if (proc.role === 'primary') {
    // Only workers reach the private socket, and each sends the client's address as the one entry.
    // Each request's log line is the worker's (src/http/server.ts, logsRequests); it is counted here.
    return {
      clientIp: (_socket: string, forwardedFor: string | undefined) => forwardedFor ?? '127.0.0.1',
      observe,
      gather: async () => gathered(await (cluster as Hub).gather()),
      logsRequests: false,
    };
  }
  // A database one process writes (SQLite): every write goes to the primary's writer.
  const oneWriter = !dialect.sharedByNodes;
  const c = proc.cluster;
  const forwarder = createForwarder(proc.forwardTo);
  return {
    clientIp,
    // Recorded by the primary, with the rest of the server's requests.
    observe: (method: string, route: string, status: number, ms: number, requestId: string, ip: string) => {
      meter.count();
      c.observe([method, route, status, ms, requestId, ip, Date.now()]);
    },
    forward: {
      when: (r: { writes: boolean; serverWide: boolean }) => r.serverWide || (oneWriter && r.writes),
      to: ((req, res, ip, requestId, route) => {
        meter.count();
        return forwarder(req, res, ip, requestId, route);
      }) satisfies Forwarder,
    },
  };
}

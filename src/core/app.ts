/**
 * createApp(project, config): assembles the runtime (database, writer, limiter, tokens, email,
 * live engine) and the route table, in one place. Shutdown reverses it (SPEC §1): stop
 * accepting, finish in-flight requests and queued writes, close streams, close the database.
 */
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Project } from '../define/project.js';
import type { Table } from '../define/table.js';
import { Router } from '../http/router.js';
import { routeTable, type Route } from '../http/routes.js';
import { createServer } from '../http/server.js';
import { newId } from '../storage/ids.js';
import { openSqlite } from '../storage/sqlite/driver.js';
import { WriteQueue } from '../storage/writer.js';
import { ApiError } from './errors.js';
import { createLogger, type Logger } from './logger.js';
import { Metrics } from './metrics.js';
import { compileProject } from './model.js';
import type { Runtime } from './runtime.js';
import { prepareSchema } from './schema.js';
import { createLiveEngine, type LiveEngine } from '../live/index.js';
import { readData } from '../pipeline/execute/reads.js';
import { createPolicyResolver, createRateLimiter, MemoryRateLimitStore, createClientIp } from '../ratelimit/index.js';
import type { AppConfig } from './config.js';

export interface App {
  readonly rt: Runtime;
  readonly router: Router;
  readonly config: AppConfig;
  readonly metrics: Metrics;
  readonly live: LiveEngine;
  readonly clientIp: (socketAddress: string, forwardedFor: string | undefined) => string;
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
  /** Graceful shutdown. */
  close(): Promise<void>;
}

export interface CreateOptions {
  /** `auto` (dev): generate and apply migrations; `apply` (serve): apply pending ones, refuse drift. */
  migrate?: 'auto' | 'apply';
  log?: Logger;
}

/** The server's own `_` tables (sessions, photos, ...), declared with the definition API. */
export function internalTables(): Table<any>[] {
  return [];
}

export async function createApp(project: Project, config: AppConfig, options: CreateOptions = {}): Promise<App> {
  const log = options.log ?? createLogger();
  mkdirSync(config.dataDir, { recursive: true });
  const model = compileProject(project, internalTables());
  const driver = openSqlite(join(config.dataDir, 'db.sqlite'), { synchronous: config.synchronous });
  try {
    await prepareSchema(driver, model, config, options.migrate ?? 'apply');
  } catch (err) {
    await driver.close();
    throw err;
  }
  const writer = new WriteQueue(driver, { maxPending: config.maxPendingWrites });
  const rt: Runtime = {
    model,
    driver,
    writer,
    log,
    newId,
    now: () => new Date().toISOString(),
    limiter: createRateLimiter({ resolver: createPolicyResolver(model, project.server?.defaultPolicy), store: new MemoryRateLimitStore() }),
    tokens: {
      verify: (authorization) => {
        if (authorization === undefined) return null;
        throw new ApiError('INVALID_TOKEN');
      },
    },
    email: undefined,
    push: undefined,
  };
  const READ = { one: 'get', list: 'list', count: 'count' } as const;
  const live = createLiveEngine({ run: (q) => readData(rt, READ[q.kind], q.plan), log, maxOpen: config.maxStreams, maxPerIp: config.maxStreamsPerIp });
  writer.onCommit(live.onCommit);
  const extraRoutes: Route[] = [];
  const router = new Router(routeTable(extraRoutes));
  const metrics = new Metrics();
  let server: Server | undefined;

  const app: App = {
    rt,
    router,
    config,
    metrics,
    live,
    clientIp: createClientIp(config.trustedProxies),
    listen: () =>
      new Promise((resolve, reject) => {
        server = createServer(app);
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          const addr = server!.address();
          resolve(typeof addr === 'object' && addr ? addr.port : config.port);
        });
      }),
    close: async () => {
      if (server) {
        const closed = new Promise<void>((r) => server!.close(() => r()));
        live.close();
        server.closeIdleConnections();
        const force = setTimeout(() => server!.closeAllConnections(), 5_000);
        await closed;
        clearTimeout(force);
      }
      await writer.whenIdle();
      await driver.close();
    },
  };
  return app;
}

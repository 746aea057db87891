/**
 * One worker of `serve --workers` (docs/reference/scaling.md): accepts on the shared port
 * (node:cluster hands connections round-robin), reads through its own database connections,
 * forwards the requests that write (SQLite) or read server-wide figures to the primary, and
 * shares everything else through the primary (src/cluster/ipc-worker.ts). It ends with its
 * primary: node:cluster exits a worker whose IPC channel closes, so no orphan keeps the port.
 */
import { isMessage, type ToPrimary, type ToWorker } from '../cluster/ipc-protocol.js';
import { workerCluster } from '../cluster/ipc-worker.js';
import type { AppConfig } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { Project } from '../define/project.js';
import { createApp } from './app.js';

export const PRIMARY_SOCKET_ENV = 'TABLEBASE_PRIMARY_SOCKET';
/**
 * This worker's share of `maxLiveMemoryBytes` (docs/reference/scaling.md): the budget counts the
 * whole server, and every stream and subscription lives in the worker that accepted it (the
 * primary forwards writes, never streams), so each of N workers gets budget / N.
 */
export const LIVE_MEMORY_SHARE_ENV = 'TABLEBASE_LIVE_MEMORY_SHARE';

/** The config a worker runs with: its share of the server-wide live memory budget. */
export function workerConfig(config: AppConfig, env: NodeJS.ProcessEnv = process.env): AppConfig {
  const share = Number(env[LIVE_MEMORY_SHARE_ENV]);
  return Number.isSafeInteger(share) && share > 0 ? { ...config, maxLiveMemoryBytes: share } : config;
}

export async function runWorker(project: Project, serverConfig: AppConfig, log: Logger, mode: 'apply' | 'auto'): Promise<void> {
  const config = workerConfig(serverConfig);
  const forwardTo = process.env[PRIMARY_SOCKET_ENV];
  if (!forwardTo || !process.send) throw new Error('a worker process needs its primary');
  const send = process.send.bind(process);
  const cluster = workerCluster({
    send: (m: ToPrimary) => void send(m),
    onMessage: (l: (m: ToWorker) => void) => void process.on('message', (m) => isMessage(m) && l(m as ToWorker)),
  });
  const app = await createApp(project, config, { migrate: mode, log, process: { role: 'worker', cluster, forwardTo } });
  // With this worker's row of the dashboard's per-process table (src/dashboard/process-figures.ts).
  cluster.setLiveFigures(() => ({ ...app.services.dashboard.live(), process: app.services.processes?.()[0] }));
  await app.listen();
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // In-flight requests finish, streams end, forwarded writes are answered by the primary.
    app.close().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'worker shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/**
 * `tablebase serve` (apply pending migrations, refuse drift) and the worker half of `dev`
 * (generate and apply automatically). Shutdown on SIGTERM/SIGINT is graceful (docs/reference/configuration.md). With
 * `--workers N` (N > 1) this process becomes the primary of N workers (src/server/primary.ts);
 * a forked worker runs this same command and takes the worker's part (src/server/worker.ts).
 */
import cluster from 'node:cluster';
import { createApp } from '../server/app.js';
import { resolveConfig } from '../core/config.js';
import { loadProject } from '../core/load-project.js';
import { createLogger, logFormat } from '../core/logger.js';
import { loadSecrets } from '../auth/secrets.js';
import { adminCommand, ADMIN_TABLE_SNIPPET } from '../core/next-steps.js';
import { workerCount } from '../server/workers.js';
import { configFlags, flag, projectDirOf, UsageError, type Args } from './args.js';
import { onParentGone } from './parent.js';

export async function serve(args: Args, mode: 'apply' | 'auto'): Promise<void> {
  if (process.env.TABLEBASE_DEV_SPARE === '1' && process.send) await waitForGo();
  let workers: number;
  try {
    workers = workerCount(flag(args, 'workers'), process.env.WORKERS, mode === 'auto');
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const projectDir = projectDirOf(args);
  const project = await loadProject(projectDir);
  const secrets = loadSecrets(process.env, projectDir);
  const config = resolveConfig(configFlags(args, projectDir), process.env, project, secrets);
  // dev talks to a person at a terminal, serve to a log collector (issue #16); LOG_FORMAT overrides.
  const log = createLogger(undefined, logFormat(process.env, mode === 'auto' ? 'pretty' : 'json'));
  if (cluster.isWorker) return (await import('../server/worker.js')).runWorker(project, config, log, mode);
  if (workers > 1) {
    // Started by npm, the primary stops with it like a single process does: its SIGTERM drains the workers.
    onParentGone(() => process.kill(process.pid, 'SIGTERM'));
    return (await import('../server/primary.js')).runPrimary(project, config, log, mode, workers);
  }
  const app = await createApp(project, config, { migrate: mode, log });
  const port = await app.listen();
  app.rt.log.info({ host: config.host, port, project: config.projectDir, data: config.dataDir }, `Tablebase listening on ${config.tls ? 'https' : 'http'}://${config.host}:${port}`);
  // Where to go next (issue #27 item 5): the dashboard and the exact command that makes its first admin.
  const origin = `${config.tls ? 'https' : 'http'}://${['0.0.0.0', '::'].includes(config.host) ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const admins = app.rt.model.tables.filter((c) => c.auth?.admin).map((c) => c.name);
  const command = adminCommand(admins, config.projectDir);
  app.rt.log.info(
    { dashboard: `${origin}/_` },
    command ? `Dashboard: ${origin}/_  (first admin: ${command})` : `Dashboard: ${origin}/_  (no admin table yet: add ${ADMIN_TABLE_SNIPPET} to the project's tables)`,
  );
  process.send?.({ tablebase: 'listening', port }); // dev's supervisor starts its type check now
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.rt.log.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      (err) => {
        app.rt.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  onParentGone(stop);
}

/**
 * A spare of `dev` (see dev.ts): this module's imports (the whole server) are loaded; the project
 * is read only when dev hands a restart over. If dev goes away first, there is nothing to stop.
 */
function waitForGo(): Promise<void> {
  return new Promise((resolveGo) => {
    const gone = () => process.exit(0);
    process.once('disconnect', gone);
    const onMessage = (m: unknown) => {
      if ((m as { tablebase?: string } | null)?.tablebase !== 'go') return;
      process.off('message', onMessage);
      process.off('disconnect', gone);
      resolveGo();
    };
    process.on('message', onMessage);
  });
}

/**
 * `tablebase serve` (apply pending migrations, refuse drift) and the worker half of `dev`
 * (generate and apply automatically). Shutdown on SIGTERM/SIGINT is graceful (SPEC §1).
 */
import { createApp } from '../server/app.js';
import { resolveConfig } from '../core/config.js';
import { loadProject } from '../core/load-project.js';
import { createLogger, logFormat } from '../core/logger.js';
import { loadSecrets } from '../auth/secrets.js';
import { configFlags, projectDirOf, type Args } from './args.js';

export async function serve(args: Args, mode: 'apply' | 'auto'): Promise<void> {
  const projectDir = projectDirOf(args);
  const project = await loadProject(projectDir);
  const secrets = loadSecrets(process.env, projectDir);
  const config = resolveConfig(configFlags(args, projectDir), process.env, project, secrets);
  // dev talks to a person at a terminal, serve to a log collector (issue #16); LOG_FORMAT overrides.
  const log = createLogger(undefined, logFormat(process.env, mode === 'auto' ? 'pretty' : 'json'));
  const app = await createApp(project, config, { migrate: mode, log });
  const port = await app.listen();
  app.rt.log.info({ host: config.host, port, project: config.projectDir, data: config.dataDir }, `Tablebase listening on ${config.tls ? 'https' : 'http'}://${config.host}:${port}`);
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
}

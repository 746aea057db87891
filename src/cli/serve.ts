/**
 * `tablebase serve` (apply pending migrations, refuse drift) and the worker half of `dev`
 * (generate and apply automatically). Shutdown on SIGTERM/SIGINT is graceful (SPEC §1).
 */
import { createApp } from '../server/app.js';
import { resolveConfig } from '../core/config.js';
import { loadProject } from '../core/load-project.js';
import { loadSecrets } from '../auth/secrets.js';
import { flag, type Args } from './args.js';

export async function serve(args: Args, mode: 'apply' | 'auto'): Promise<void> {
  const projectDir = flag(args, 'project') ?? process.env.TABLEBASE_PROJECT ?? '.';
  const project = await loadProject(projectDir);
  const secrets = loadSecrets(process.env, projectDir);
  const config = resolveConfig({ project: projectDir, data: flag(args, 'data'), host: flag(args, 'host'), port: flag(args, 'port') }, process.env, project, secrets);
  const app = await createApp(project, config, { migrate: mode });
  const port = await app.listen();
  app.rt.log.info({ host: config.host, port, project: config.projectDir, data: config.dataDir }, `Tablebase listening on http://${config.host}:${port}`);
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

/** Loading what most commands need: the project, its compiled model and the resolved settings. */
import { join } from 'node:path';
import { internalTables } from '../server/app.js';
import { resolveConfig, type AppConfig } from '../core/config.js';
import { loadProject } from '../core/load-project.js';
import { compileProject, type ProjectModel } from '../core/model.js';
import type { Project } from '../define/project.js';
import { loadSecrets } from '../auth/secrets.js';
import { flag, type Args } from './args.js';

export interface ProjectContext {
  project: Project;
  model: ProjectModel;
  config: AppConfig;
  migrationsDir: string;
}

/** `needSecrets: false` for commands that never sign or hash (migrate, openapi). */
export async function projectContext(args: Args, needSecrets = true): Promise<ProjectContext> {
  const projectDir = flag(args, 'project') ?? process.env.TABLEBASE_PROJECT ?? '.';
  const project = await loadProject(projectDir);
  const secrets = needSecrets ? loadSecrets(process.env, projectDir) : { jwtSecret: '', passwordSecret: '' };
  const config = resolveConfig({ project: projectDir, data: flag(args, 'data'), host: flag(args, 'host'), port: flag(args, 'port') }, process.env, project, secrets);
  const model = compileProject(project, internalTables(project));
  return { project, model, config, migrationsDir: join(config.projectDir, 'migrations') };
}

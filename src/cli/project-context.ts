/** Loading what most commands need: the project, its compiled model and the resolved settings. */
import { join } from 'node:path';
import { internalTables } from '../server/app.js';
import { resolveConfig, type AppConfig } from '../core/config.js';
import { loadProject } from '../core/load-project.js';
import { compileProject, type ProjectModel } from '../core/model.js';
import type { Project } from '../define/project.js';
import { loadSecrets } from '../auth/secrets.js';
import { configFlags, projectDirOf, type Args } from './args.js';

export interface ProjectContext {
  project: Project;
  model: ProjectModel;
  config: AppConfig;
  migrationsDir: string;
}

/** `needSecrets: false` for commands that never sign or hash (migrate, openapi). */
export async function projectContext(args: Args, needSecrets = true): Promise<ProjectContext> {
  const projectDir = projectDirOf(args);
  const project = await loadProject(projectDir);
  const secrets = needSecrets ? loadSecrets(process.env, projectDir) : { jwtSecret: '', passwordSecret: '' };
  const config = resolveConfig(configFlags(args, projectDir), process.env, project, secrets);
  const model = compileProject(project, internalTables(project));
  return { project, model, config, migrationsDir: join(config.projectDir, 'migrations') };
}

/**
 * Which migrations own which tables. The project's tables migrate through the project's
 * `migrations/` folder (reviewed, committed). The server's own `_` tables migrate automatically
 * from `<data>/system-migrations`, so upgrading Tablebase never makes a project's schema "drift".
 */
import { join } from 'node:path';
import type { Driver } from '../storage/driver.js';
import { autoMigrate, ensureSchema } from '../storage/migrations/index.js';
import type { ProjectModel } from '../core/model.js';

const only = (model: ProjectModel, internal: boolean): ProjectModel => ({ ...model, tables: model.tables.filter((t) => t.internal === internal) });

export const userModel = (model: ProjectModel): ProjectModel => only(model, false);

export async function prepareSchema(driver: Driver, model: ProjectModel, dirs: { projectDir: string; dataDir: string }, mode: 'auto' | 'apply'): Promise<void> {
  const dialect = driver.dialect;
  await autoMigrate({ driver, model: only(model, true), dialect, dir: join(dirs.dataDir, 'system-migrations'), allowDestructive: true, name: 'tablebase_internal' });
  // Named apart from the project's files: both kinds are recorded in the one `_migrations` table.
  const dir = join(dirs.projectDir, 'migrations');
  if (mode === 'auto') await autoMigrate({ driver, model: userModel(model), dialect, dir, allowDestructive: false });
  else await ensureSchema({ driver, model: userModel(model), dialect, dir });
}

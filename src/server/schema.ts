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

/**
 * Nodes starting together against one PostgreSQL database take turns (an advisory lock), so one
 * applies and the others find the migrations applied (issue #15).
 */
export async function prepareSchema(driver: Driver, model: ProjectModel, dirs: { projectDir: string; dataDir: string }, mode: 'auto' | 'apply'): Promise<void> {
  await driver.exclusive('tablebase:migrations', async () => {
    // Reproducible: every node writes the same bytes for the server's own migrations, so the
    // checksum one node recorded matches the file another node generated in its own data folder.
    await autoMigrate({ driver, model: only(model, true), dir: join(dirs.dataDir, 'system-migrations'), allowDestructive: true, name: 'tablebase_internal', reproducible: true });
    // Named apart from the project's files: both kinds are recorded in the one `_migrations` table.
    const dir = join(dirs.projectDir, 'migrations');
    if (mode === 'auto') await autoMigrate({ driver, model: userModel(model), dir, allowDestructive: false });
    else await ensureSchema({ driver, model: userModel(model), dir });
  });
}

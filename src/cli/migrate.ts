/** `tablebase migrate generate|apply|status` over the project's `migrations/` folder. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { userModel } from '../server/schema.js';
import { applyMigrations, describeChange, generateMigration, migrationStatus } from '../storage/migrations/index.js';
import { openSqlite } from '../storage/sqlite/driver.js';
import { flag, type Args } from './args.js';
import { projectContext } from './project-context.js';

export async function migrate(args: Args, sub: string | undefined): Promise<void> {
  const { model, config, migrationsDir: dir } = await projectContext(args, false);
  const user = userModel(model);
  if (sub === 'generate') {
    const { sqliteDialect: dialect } = await import('../storage/sqlite/dialect.js');
    const r = await generateMigration({ model: user, dialect, dir, allowDestructive: args.flags['allow-destructive'] === true, name: flag(args, 'name') });
    if (!r.file) console.log('No changes: the migrations already describe the declared schema.');
    else console.log(`Wrote ${r.file}\n${r.changes.map((c) => `  - ${describeChange(c)}`).join('\n')}`);
    return;
  }
  if (sub !== 'apply' && sub !== 'status') throw new Error('usage: tablebase migrate generate|apply|status');
  mkdirSync(config.dataDir, { recursive: true });
  const driver = openSqlite(join(config.dataDir, 'db.sqlite'), { synchronous: config.synchronous });
  try {
    if (sub === 'apply') {
      const applied = await applyMigrations({ driver, dir });
      console.log(applied.length ? `Applied ${applied.join(', ')}` : 'Nothing to apply.');
    } else {
      const s = await migrationStatus({ driver, dir, model: user });
      console.log(`applied: ${s.applied.join(', ') || '(none)'}\npending: ${s.pending.join(', ') || '(none)'}`);
      if (s.modified.length) console.log(`modified since applied: ${s.modified.join(', ')}`);
      if (s.drift) console.log('The declared schema differs from the migrations: run `tablebase migrate generate`.');
    }
  } finally {
    await driver.close();
  }
}

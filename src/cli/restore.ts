/**
 * `tablebase restore --from URL --data NEWDIR [--at T] [--force]` and, on PostgreSQL,
 * `--database URL` (docs/reference/cli.md, runbook in docs/reference/backups.md). Exit codes:
 * 0 restored; 1 a damaged backup or T outside the window (one line naming the object or giving
 * the window; NEWDIR left absent or empty); 2 NEWDIR not empty without --force.
 */
import { openDestination } from '../backup/open.js';
import { isEmptyTarget, parseAt, restoreToFolder } from '../backup/restore.js';
import { flag, UsageError, type Args } from './args.js';

export async function restore(args: Args): Promise<void> {
  const from = flag(args, 'from');
  if (!from) throw new UsageError('--from is required: the backup destination URL');
  const at = parseAt(flag(args, 'at'));
  const database = flag(args, 'database');
  const dest = await openDestination(from);
  if (database) {
    const { restorePostgres } = await import('../backup/postgres.js');
    const r = await restorePostgres(dest, database, at);
    console.log(`Restored snapshot ${r.snapshot.id} (taken ${r.snapshot.takenAt}) into the database${r.photos ? `, and ${r.photos} photo(s) into its _blobs` : ''}.`);
    if (r.missingPhotos.length) console.error(`warning: ${r.missingPhotos.length} photo(s) have no backed-up bytes: ${r.missingPhotos.join(', ')}`);
    return;
  }
  const data = flag(args, 'data');
  if (!data) throw new UsageError('--data is required: the new data folder (or --database for PostgreSQL)');
  const force = args.flags.force === true;
  if (!force && !isEmptyTarget(data)) throw new UsageError(`${data} is not empty; restore into a new folder, or pass --force to replace it`);
  const r = await restoreToFolder(dest, data, at, force);
  console.log(`Restored ${data} to ${new Date(r.plan.stateAt).toISOString()} (snapshot ${r.plan.snapshot.id}).`);
  if (r.missingPhotos.length) console.error(`warning: ${r.missingPhotos.length} photo(s) uploaded within the last sync interval have no backed-up bytes: ${r.missingPhotos.join(', ')}`);
}

/**
 * `tablebase backup create|list|verify` (docs/reference/cli.md, docs/reference/backups.md). They
 * work with the server running or stopped: `create` reads the database through SQLite (a
 * consistent copy, never the raw file), `list` and `verify` only the destination.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCatalog, snapshotList } from '../backup/catalog.js';
import { openDestination } from '../backup/open.js';
import { FORMAT, FORMAT_KEY, newBackupId, snapshotFormat } from '../backup/layout.js';
import { PhotoShipper, photosAt } from '../backup/photos.js';
import { formatWindow, planRestore } from '../backup/plan.js';
import { checkEveryObject, parseAt, restoreSqliteInto, withCatalog } from '../backup/restore.js';
import { uploadSnapshot } from '../backup/snapshot.js';
import { openSqlitePhotoStore } from '../photos/index.js';
import { isS3Url } from '../s3/index.js';
import { integrityCheck, rowCounts, vacuumInto } from '../storage/sqlite/wal-restore.js';
import { flag, UsageError, type Args } from './args.js';
import { projectContext } from './project-context.js';

function need(args: Args, name: string, what: string): string {
  const v = flag(args, name);
  if (!v) throw new UsageError(`--${name} is required: ${what}`);
  return v;
}

export async function backupCreate(args: Args): Promise<void> {
  const { config } = await projectContext(args, false);
  const to = flag(args, 'to') ?? config.backup?.to;
  if (!to) throw new UsageError('--to is required (or BACKUP_URL, or config backup.to): where the snapshot goes');
  const dest = await openDestination(to);
  if (config.databaseUrl) {
    const { openPhotoShipper, postgresSnapshot } = await import('../backup/postgres.js');
    // Photos in a bucket are outside the dump: shipped beside it. Without `--storage` (or with a
    // folder) they are rows of `_blobs`, inside it.
    const photos = config.storageUrl !== undefined && isS3Url(config.storageUrl) ? await openSqlitePhotoStore(config.storageUrl, config.dataDir) : undefined;
    try {
      const info = await postgresSnapshot(dest, config.databaseUrl, photos ? await openPhotoShipper(dest, photos.store) : undefined);
      console.log(info.id);
    } finally {
      photos?.close();
    }
    return;
  }
  if (!(await dest.get(FORMAT_KEY))) await dest.put(FORMAT_KEY, Buffer.from(JSON.stringify(FORMAT)));
  const work = mkdtempSync(join(tmpdir(), 'tablebase-snapshot-'));
  try {
    const file = join(work, 'db.sqlite');
    const takenAtMs = Date.now();
    // VACUUM INTO: one read transaction of its own, so a consistent copy even while a server writes.
    vacuumInto(join(config.dataDir, 'db.sqlite'), file);
    // A snapshot taken outside the server starts a generation of its own (no WAL follows it).
    const m = await uploadSnapshot(dest, { generation: newBackupId(takenAtMs), file, takenAtMs, database: 'sqlite', position: { epoch: 0, frame: 0 } });
    const catalog = await readCatalog(dest);
    // Through the deployment's photo store (`--storage`: the folder, or a bucket): every photo it holds.
    const photos = await openSqlitePhotoStore(config.storageUrl, config.dataDir);
    try {
      await new PhotoShipper(dest, photos.store, photosAt(catalog.photoLogs, Infinity)).sync(takenAtMs);
    } finally {
      photos.close();
    }
    console.log(m.id);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export async function backupList(args: Args): Promise<void> {
  const dest = await openDestination(need(args, 'from', 'the backup destination URL'));
  const c = await readCatalog(dest);
  const snapshots = snapshotList(c);
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  if (args.flags.json === true) {
    console.log(JSON.stringify({ destination: dest.display, earliest: iso(c.earliest), latest: iso(c.latest), snapshots }));
    return;
  }
  console.log(`${dest.display}: ${formatWindow(c)}`);
  for (const s of snapshots) console.log(`${s.id}  ${s.takenAt}  ${s.bytes} bytes`);
}

export async function backupVerify(args: Args): Promise<void> {
  const dest = await openDestination(need(args, 'from', 'the backup destination URL'));
  const at = parseAt(flag(args, 'at'));
  const catalog = await readCatalog(dest);
  const planned = planRestore(catalog, at ?? catalog.latest ?? Date.now());
  if (planned && snapshotFormat(planned.snapshot.database) === 'dump') {
    const { verifyPostgres } = await import('../backup/postgres.js');
    const v = await verifyPostgres(dest, at);
    console.log(`snapshot ${v.snapshot.id} (taken ${v.snapshot.takenAt}): checksum ok, every line readable`);
    for (const [table, n] of Object.entries(v.counts)) console.log(`${table}: ${n} rows`);
    console.log(`photos: ${v.photos} from the photo objects, every checksum matches`);
    console.log(`objects: ${v.objects} checked, every size and sha256 matches`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'tablebase-verify-'));
  try {
    const dir = join(work, 'data');
    await mkdir(dir);
    // Restore checks every object's size and sha256 and the database's integrity; photos likewise.
    const result = await restoreSqliteInto(dest, dir, at);
    const dbFile = join(dir, 'db.sqlite');
    const integrity = integrityCheck(dbFile);
    if (integrity !== 'ok') throw new Error(`integrity_check failed: ${integrity}`);
    console.log(`state at ${new Date(result.plan.stateAt).toISOString()} (snapshot ${result.plan.snapshot.id}, generation ${result.plan.generation})`);
    console.log('integrity_check: ok');
    for (const [table, n] of Object.entries(rowCounts(dbFile))) console.log(`${table}: ${n} rows`);
    if (result.missingPhotos.length) throw new Error(`photos without backed-up bytes: ${result.missingPhotos.join(', ')}`);
    console.log('photos: every checksum matches');
    // The drill above used what a restore at T needs; every other object is checked too.
    // Listed again if a compaction replaced objects under the check (restore.ts withCatalog).
    console.log(`objects: ${await withCatalog(dest, (c) => checkEveryObject(dest, c))} checked, every size and sha256 matches`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

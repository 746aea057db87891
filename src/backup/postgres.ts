/**
 * PostgreSQL mode (docs/reference/backups.md): a snapshot is a consistent logical dump of every
 * table (src/storage/postgres/snapshot.ts) stored like a SQLite snapshot (object, then manifest);
 * restore picks the last snapshot at or before T and loads it into an empty database. Point in
 * time between snapshots is PostgreSQL's own WAL archiving (see the docs).
 */
import { Cron } from 'croner';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BackupSettings, BackupStatus } from '../core/backup-settings.js';
import type { Logger } from '../core/logger.js';
import { dumpPostgres, restorePostgresDump, type DumpLine } from '../storage/postgres/snapshot.js';
import { readCatalog, snapshotList } from './catalog.js';
import type { Destination } from './destination.js';
import { FORMAT, FORMAT_KEY, newBackupId, snapshotFormat } from './layout.js';
import { formatWindow, planRestore } from './plan.js';
import { fetchSnapshot, OutsideWindow } from './restore.js';
import { infoOf, uploadSnapshot, type SnapshotInfo } from './snapshot.js';

/** Takes a snapshot of the database at `url` now. */
export async function postgresSnapshot(dest: Destination, url: string): Promise<SnapshotInfo> {
  if (!(await dest.get(FORMAT_KEY))) await dest.put(FORMAT_KEY, Buffer.from(JSON.stringify(FORMAT)));
  const work = mkdtempSync(join(tmpdir(), 'tablebase-pgdump-'));
  try {
    const file = join(work, 'dump.jsonl');
    const out = createWriteStream(file);
    const takenAtMs = Date.now();
    await dumpPostgres(url, async (line) => {
      if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
    });
    out.end();
    await once(out, 'finish');
    const m = await uploadSnapshot(dest, { generation: newBackupId(takenAtMs), file, takenAtMs, database: 'postgres', position: { epoch: 0, frame: 0 } });
    return infoOf(m);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function* readLines(file: string): AsyncGenerator<DumpLine> {
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) if (line) yield JSON.parse(line) as DumpLine;
}

/** Downloads (and checks) the snapshot for T into a temp file, then hands it to `use`. */
async function withDump<R>(dest: Destination, at: number | undefined, use: (file: string, s: SnapshotInfo) => Promise<R>): Promise<R> {
  const catalog = await readCatalog(dest);
  const t = at ?? catalog.latest;
  if (t === null || t === undefined || catalog.earliest === null || t < catalog.earliest || t > catalog.latest!) throw new OutsideWindow(t ?? Date.now(), catalog);
  const plan = planRestore(catalog, t);
  if (!plan) throw new Error(formatWindow(catalog));
  if (snapshotFormat(plan.snapshot.database) !== 'dump') throw new Error('this backup holds a SQLite database: restore it with --data <new folder>');
  const work = mkdtempSync(join(tmpdir(), 'tablebase-pgrestore-'));
  try {
    const file = join(work, 'dump.jsonl');
    await fetchSnapshot(dest, plan.snapshot, file);
    return await use(file, infoOf(plan.snapshot));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `restore --database URL`: loads the snapshot for T into an empty database. */
export function restorePostgres(dest: Destination, url: string, at: number | undefined): Promise<SnapshotInfo> {
  return withDump(dest, at, async (file, s) => {
    await restorePostgresDump(url, readLines(file));
    return s;
  });
}

/** `backup verify` of a PostgreSQL backup: the dump's checksum, then every line parsed; row counts per table. */
export function verifyPostgres(dest: Destination, at: number | undefined): Promise<{ snapshot: SnapshotInfo; counts: Record<string, number> }> {
  return withDump(dest, at, async (file, snapshot) => {
    const counts: Record<string, number> = {};
    for await (const line of readLines(file)) {
      if (line.kind === 'table') counts[line.name] = 0;
      if (line.kind === 'rows') counts[line.table] = (counts[line.table] ?? 0) + line.rows.length;
    }
    return { snapshot, counts };
  });
}

/** The server's side in PostgreSQL mode: snapshots on the schedule and on demand (no continuous shipping). */
export class PostgresBackup {
  readonly dest: Destination;
  #url: string;
  #log: Logger;
  #running: Promise<SnapshotInfo> | undefined;
  #last: number | null = null;
  #failures = 0;
  #consecutive = 0;
  #cron: Cron;

  constructor(dest: Destination, url: string, settings: BackupSettings, log: Logger) {
    this.dest = dest;
    this.#url = url;
    this.#log = log;
    this.#cron = new Cron(settings.snapshotEvery, () => void this.snapshotNow().catch(() => undefined));
  }

  snapshotNow(): Promise<SnapshotInfo> {
    this.#running ??= postgresSnapshot(this.dest, this.#url)
      .then(
        (info) => {
          this.#last = Date.now();
          this.#consecutive = 0;
          return info;
        },
        (err: unknown) => {
          this.#failures++;
          this.#consecutive++;
          this.#log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'backup: PostgreSQL snapshot failed');
          throw err;
        },
      )
      .finally(() => {
        this.#running = undefined;
      });
    return this.#running;
  }

  async snapshots(): Promise<{ earliest: number | null; latest: number | null; snapshots: SnapshotInfo[] }> {
    const c = await readCatalog(this.dest, { segments: false });
    return { earliest: c.earliest, latest: c.latest, snapshots: snapshotList(c) };
  }

  status(): BackupStatus {
    return { destination: this.dest.display, lastSyncAt: this.#last === null ? null : new Date(this.#last).toISOString(), lagMs: 0, failures: this.#failures, failing: this.#consecutive >= 3 };
  }

  async stop(): Promise<void> {
    this.#cron.stop();
    await this.#running?.catch(() => undefined);
  }
}

/**
 * `tablebase storage migrate --project P --data D --to <url>` (docs/reference/object-storage.md,
 * docs/reference/cli.md): copies every photo and thumbnail from the store the server uses now
 * (`--storage` / `STORAGE_URL` / config `storage`, default `<data>/photos/`) to `--to`, each
 * verified by SHA-256. Safe to re-run after an interruption: verified copies are skipped. The
 * server's configuration is not changed; point `--storage` at the new store once it reports done.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkStorageUrl } from '../core/config.js';
import { bucketTarget, folderTarget, FsBlobStore, migratePhotos, openPhotoStore, S3BlobStore, type CopyTarget } from '../photos/index.js';
import { isS3Url, openS3 } from '../s3/index.js';
import { openDatabase } from '../storage/open.js';
import type { Driver } from '../storage/driver.js';
import { photoIdsRepo } from '../storage/repos/photos.js';
import { prepareSchema } from '../server/schema.js';
import { flag, type Args } from './args.js';
import { projectContext } from './project-context.js';

/** The `_photos` ids in id order, a page at a time, so any number of photos fits in memory. */
async function* photoIds(driver: Driver): AsyncGenerator<string> {
  const repo = photoIdsRepo(driver.dialect);
  let after = '';
  for (;;) {
    const page = await repo.idsAfter(driver, after, 500);
    for (const id of page) yield (after = id);
    if (page.length < 500) return;
  }
}

export async function storage(args: Args): Promise<void> {
  const to = flag(args, 'to');
  if (!to) throw new Error('storage migrate needs --to <url>: file:///absolute/path or s3://bucket/prefix');
  const problem = checkStorageUrl(to, '--to');
  if (problem) throw new Error(problem);
  const { model, config } = await projectContext(args, false);
  if (to === config.storageUrl) throw new Error('--to names the store the server already uses');
  mkdirSync(config.dataDir, { recursive: true });
  const driver = await openDatabase(config);
  const bucket = isS3Url(to) ? openS3(to) : undefined;
  try {
    await prepareSchema(driver, model, config, 'apply');
    const source = (await openPhotoStore(config.storageUrl, driver, config.dataDir)) ?? new FsBlobStore(join(config.dataDir, 'photos'));
    if (bucket) await bucket.probe().catch((err: unknown) => Promise.reject(new Error(`${bucket.label} is not reachable: ${(err as Error).message}`)));
    const target: CopyTarget = bucket ? bucketTarget(bucket) : folderTarget(fileURLToPath(to));
    console.log(`copying photos to ${target.label}`);
    const report = await migratePhotos(source, photoIds(driver), target, (name, outcome) => {
      if (outcome !== 'unchanged') console.log(`${outcome.padEnd(9)} ${name}`);
    });
    console.log(`done: ${report.copied} copied, ${report.unchanged} already there and verified, ${report.missing.length} missing from the source, ${report.failed.length} failed`);
    for (const f of report.failed) console.error(`failed ${f.name}: ${f.error}`);
    if (source instanceof S3BlobStore) source.bucket.destroy();
    if (report.failed.length > 0) throw new Error(`${report.failed.length} object(s) were not copied; run the command again to retry them`);
  } finally {
    bucket?.destroy();
    await driver.close();
  }
}

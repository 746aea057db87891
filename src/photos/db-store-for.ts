/** Which blob store a server uses: on PostgreSQL the database (every node serves every photo, docs/reference/scaling.md); on SQLite the data folder. */
import { join } from 'node:path';
import type { Driver } from '../storage/driver.js';
import { DbBlobStore, prepareBlobTable } from './db-blob-store.js';
import type { FsBlobStore } from './blob-store.js';

export async function photoStoreFor(driver: Driver, dataDir: string): Promise<FsBlobStore | undefined> {
  // One process serves a database it does not share (SQLite): the data folder holds every photo.
  if (!driver.dialect.sharedByNodes) return undefined;
  await prepareBlobTable(driver);
  return new DbBlobStore(join(dataDir, 'photos'), driver);
}

/**
 * Photo bytes and thumbnails kept in the database (docs/reference/scaling.md: on PostgreSQL, every node serves
 * every photo), with this node's data folder as a cache. The interface stays BlobStore, so an
 * S3-compatible store can take this one's place later.
 *
 * Bytes are stored in parts of 256 KiB (`_blobs`: key, part, bytes) and moved one part at a time
 * in both directions, so a big photo is never held whole in memory. Keys: `<photoId>` for the
 * original, `<photoId>/<W>x<H>` for a thumbnail. A node that lacks a file on disk fetches it
 * before serving; uploads and rendered thumbnails are written to the database before they are
 * answered.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Driver } from '../storage/driver.js';
import { blobsRepo, type BlobsRepo } from '../storage/repos/blobs.js';
import { FsBlobStore, type BlobStat } from './blob-store.js';

const PART_BYTES = 256 * 1024;
export { BLOBS_TABLE, prepareBlobTable } from '../storage/repos/blobs.js';

export class DbBlobStore extends FsBlobStore {
  readonly #db: Driver;
  readonly #fetching = new Map<string, Promise<boolean>>();
  readonly #sql: BlobsRepo;

  constructor(rootDir: string, driver: Driver) {
    super(rootDir);
    this.#db = driver;
    this.#sql = blobsRepo(driver.dialect);
  }

  /** Copies a file into the database, one part at a time, in one transaction. */
  async #save(key: string, file: string): Promise<void> {
    await this.#db.transaction(async (tx) => {
      await this.#sql.remove(tx, key);
      let part = 0;
      for await (const chunk of createReadStream(file, { highWaterMark: PART_BYTES })) {
        await this.#sql.insertPart(tx, key, part++, chunk as Buffer);
      }
      if (part === 0) await this.#sql.insertPart(tx, key, 0, Buffer.alloc(0));
    });
  }

  /** Writes the database's copy of `key` to `target` (atomically); false when it has none. */
  async #load(key: string, target: string): Promise<boolean> {
    let pending = this.#fetching.get(key);
    if (!pending) {
      pending = (async () => {
        if (!(await this.#sql.exists(this.#db, key))) return false;
        const temp = join(this.tempDir, `db_${randomBytes(12).toString('hex')}.part`);
        const out = await open(temp, 'w', 0o600);
        try {
          for (let part = 0; ; part++) {
            const row = await this.#sql.part(this.#db, key, part);
            if (!row) break;
            await out.write(row.bytes as Buffer);
          }
          await out.close();
          await rename(temp, target);
          return true;
        } catch (err) {
          await out.close().catch(() => {});
          await rm(temp, { force: true });
          throw err;
        }
      })().finally(() => this.#fetching.delete(key));
      this.#fetching.set(key, pending);
    }
    return pending;
  }

  override async commit(tempPath: string, id: string): Promise<void> {
    await this.#save(id, tempPath);
    await super.commit(tempPath, id);
  }

  /** Makes the original available on this node's disk; false when no node ever stored it. */
  async fetch(id: string): Promise<boolean> {
    if (await super.stat(id)) return true;
    return this.#load(id, this.path(id));
  }

  override async stat(id: string): Promise<BlobStat | null> {
    return (await this.fetch(id)) ? super.stat(id) : null;
  }

  /** A thumbnail another node rendered, copied to `target`; false when none was. */
  async fetchThumb(id: string, name: string, target: string): Promise<boolean> {
    await mkdir(this.thumbDir(id), { recursive: true, mode: 0o700 });
    return this.#load(`${id}/${name}`, target);
  }

  async saveThumb(id: string, name: string, file: string): Promise<void> {
    await this.#save(`${id}/${name}`, file);
  }

  override async delete(id: string): Promise<void> {
    this.path(id); // validates the id before it reaches SQL
    await this.#db.transaction((tx) => this.#sql.remove(tx, id));
    await super.delete(id);
  }
}

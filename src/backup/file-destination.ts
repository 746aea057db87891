/**
 * A folder as a backup destination (`file:///abs/path`, possibly on another disk). Objects are
 * plain files under their keys, so the backup is readable with `ls` and `sha256sum`
 * (docs/reference/backups.md). Each write goes to a temporary name, is flushed, then renamed:
 * a crash leaves either the whole object or none.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import type { Destination, ObjectInfo } from './destination.js';

const TEMP = '.tmp-';

function missing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

export class FileDestination implements Destination {
  readonly root: string;
  readonly display: string;

  constructor(root: string) {
    this.root = root;
    this.display = `file://${root}`;
  }

  #path(key: string): string {
    if (key.split('/').some((p) => p === '..' || p === '' || p.startsWith(TEMP))) throw new Error(`bad backup key ${key}`);
    return join(this.root, ...key.split('/'));
  }

  async #atomically(key: string, write: (temp: string) => Promise<void>): Promise<void> {
    const target = this.#path(key);
    await mkdir(dirname(target), { recursive: true });
    const temp = join(dirname(target), `${TEMP}${randomBytes(6).toString('hex')}`);
    try {
      await write(temp);
      const h = await open(temp, 'r+');
      try {
        await h.sync();
      } finally {
        await h.close();
      }
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  put(key: string, data: Buffer): Promise<void> {
    return this.#atomically(key, async (temp) => {
      const h = await open(temp, 'w');
      try {
        await h.writeFile(data);
      } finally {
        await h.close();
      }
    });
  }

  putStream(key: string, data: Readable): Promise<void> {
    return this.#atomically(key, (temp) => pipeline(data, createWriteStream(temp)));
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.#path(key));
    } catch (err) {
      if (missing(err)) return null;
      throw err;
    }
  }

  async getStream(key: string): Promise<Readable | null> {
    const p = this.#path(key);
    try {
      if (!(await stat(p)).isFile()) return null;
    } catch (err) {
      if (missing(err)) return null;
      throw err;
    }
    return createReadStream(p);
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    const out: ObjectInfo[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if (missing(err)) return;
        throw err;
      }
      for (const e of entries) {
        if (e.name.startsWith(TEMP)) continue;
        const p = join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (e.isFile()) {
          const key = relative(this.root, p).split(sep).join('/');
          if (key.startsWith(prefix)) out.push({ key, bytes: (await stat(p)).size });
        }
      }
    };
    // Start from the deepest folder the prefix names, not the whole tree.
    const slash = prefix.lastIndexOf('/');
    await walk(slash > 0 ? join(this.root, ...prefix.slice(0, slash).split('/')) : this.root);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(key: string): Promise<void> {
    await rm(this.#path(key), { force: true });
  }
}

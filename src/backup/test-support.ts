/** What backup tests share (exempt from the storage boundary check, like every test-support.ts). */
import type { Readable } from 'node:stream';
import type { Destination, ObjectInfo } from './destination.js';

/** Wraps a destination so a test can act between the collector's (or a sync's) calls. */
export class Hooked implements Destination {
  readonly display = 'hooked';
  constructor(
    readonly inner: Destination,
    readonly hooks: {
      afterList?: (prefix: string) => Promise<void>;
      beforePut?: (key: string) => Promise<void>;
      beforeDelete?: (key: string) => Promise<void>;
      beforeGet?: (key: string) => Promise<void>;
    } = {},
  ) {}
  async put(key: string, data: Buffer) {
    await this.hooks.beforePut?.(key);
    return this.inner.put(key, data);
  }
  putStream(key: string, data: Readable) {
    return this.inner.putStream(key, data);
  }
  async get(key: string) {
    await this.hooks.beforeGet?.(key);
    return this.inner.get(key);
  }
  async getStream(key: string) {
    await this.hooks.beforeGet?.(key);
    return this.inner.getStream(key);
  }
  async list(prefix: string): Promise<ObjectInfo[]> {
    const out = await this.inner.list(prefix);
    await this.hooks.afterList?.(prefix);
    return out;
  }
  async delete(key: string) {
    await this.hooks.beforeDelete?.(key);
    return this.inner.delete(key);
  }
}

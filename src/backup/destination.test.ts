/** One conformance suite, run on both destinations: a folder and S3 (s3rver on loopback). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openS3 } from '../s3/index.js';
import { startTestS3, type TestS3 } from '../s3/test-server.js';
import type { Destination } from './destination.js';
import { FileDestination } from './file-destination.js';
import { S3Destination } from './s3-destination.js';

async function text(s: Readable | null): Promise<string | null> {
  if (!s) return null;
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function conformance(name: string, open: () => Promise<Destination>, close: () => Promise<void>) {
  describe(`${name} destination`, () => {
    let d: Destination;
    beforeAll(async () => {
      d = await open();
    }, 60_000);
    afterAll(close);

    it('puts, gets and overwrites whole objects; a missing one is null', async () => {
      await d.put('a/b/one.json', Buffer.from('{"v":1}'));
      expect((await d.get('a/b/one.json'))?.toString()).toBe('{"v":1}');
      await d.put('a/b/one.json', Buffer.from('{"v":2}'));
      expect((await d.get('a/b/one.json'))?.toString()).toBe('{"v":2}');
      expect(await d.get('a/b/none.json')).toBeNull();
      expect(await d.getStream('a/b/none.json')).toBeNull();
    });

    it('streams large objects both ways', async () => {
      const big = Buffer.alloc(6 * 1024 * 1024 + 17, 7);
      await d.putStream('snapshots/big.db', Readable.from([big.subarray(0, 1000), big.subarray(1000)]));
      const back = await text(await d.getStream('snapshots/big.db'));
      expect(back?.length).toBe(big.length);
      expect((await d.get('snapshots/big.db'))?.equals(big)).toBe(true);
    }, 60_000);

    it('lists by prefix in key order with sizes, and deletes', async () => {
      await d.put('g/2/x', Buffer.from('xx'));
      await d.put('g/1/y', Buffer.from('y'));
      await d.put('h/z', Buffer.from('z'));
      expect(await d.list('g/')).toEqual([
        { key: 'g/1/y', bytes: 1 },
        { key: 'g/2/x', bytes: 2 },
      ]);
      await d.delete('g/1/y');
      await d.delete('g/1/never');
      expect((await d.list('g/')).map((o) => o.key)).toEqual(['g/2/x']);
    });

    it('shows no credentials', () => {
      expect(d.display).not.toMatch(/S3RVER|Secret|@/);
    });
  });
}

const folder = mkdtempSync(join(tmpdir(), 'tb-dest-'));
conformance(
  'folder',
  async () => new FileDestination(folder),
  async () => rmSync(folder, { recursive: true, force: true }),
);

let s3: TestS3 | undefined;
conformance(
  'S3',
  async () => {
    s3 = await startTestS3('backups');
    return new S3Destination(openS3('s3://backups/tb/prefix', s3.env));
  },
  async () => {
    await s3?.close();
  },
);

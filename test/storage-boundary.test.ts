/**
 * The storage boundary check (scripts/check-storage-boundary.ts): the tree holds no SQL text and
 * no database-name check outside src/storage/, and the check does fail on a planted violation.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkTree, violationsIn } from '../scripts/check-storage-boundary.js';

describe('storage boundary', () => {
  it('finds nothing in the tree', () => {
    expect(checkTree(join(import.meta.dirname, '..'))).toEqual([]);
  });

  it('fails on SQL text and on database-name checks outside src/storage/, and ignores comments, tests and storage', () => {
    const root = mkdtempSync(join(tmpdir(), 'tb-boundary-'));
    try {
      for (const dir of ['src/push', 'src/storage/repos']) mkdirSync(join(root, dir), { recursive: true });
      const planted = [
        '// SELECT a FROM b in a comment is fine',
        'export const q = (t: string) => `SELECT id FROM ${t} WHERE x = ?`;',
        "export const up = 'INSERT INTO t (a) VALUES (?) ON CONFLICT DO NOTHING';",
        "export const pg = (d: { name: string }) => d.name === 'postgres';",
        'export const n = (rt: { driver: { dialect: { name: string } } }) => rt.driver.dialect.name;',
      ].join('\n');
      writeFileSync(join(root, 'src/push/bad.ts'), planted);
      writeFileSync(join(root, 'src/push/bad.test.ts'), planted);
      writeFileSync(join(root, 'src/storage/repos/ok.ts'), planted);
      const found = checkTree(root);
      expect(found.map((v) => `${v.file}:${v.line}`)).toEqual(['src/push/bad.ts:2', 'src/push/bad.ts:3', 'src/push/bad.ts:4', 'src/push/bad.ts:5']);
      expect(found[0]!.what).toMatch(/SQL text/);
      expect(found[2]!.what).toMatch(/database name/);
      expect(found[3]!.what).toMatch(/dialect\.name/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('does not take prose for SQL', () => {
    expect(violationsIn('x.ts', "const m = 'select a photo from the list, then update the settings';")).toEqual([]);
  });
});

/** Text matching on SQLite agrees with JavaScript's includes/startsWith/endsWith (docs/reference/data.md) and stays cheap. */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { sqliteDialect, usesTextMatch } from './dialect.js';

const db = new Database(':memory:');
db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT)');
const texts = [null, '', 'abc', 'ABC', 'a%c', 'a_c', 'a*c', 'a?c', 'a[b]c', 'héllo wörld', '😀x😀', 'xx😀', '😀', 'a\nb', 'aaaa'];
const insert = db.prepare('INSERT INTO t (s) VALUES (?)');
texts.forEach((t) => insert.run(t));

function matching(op: 'contains' | 'startsWith' | 'endsWith', value: string): (string | null)[] {
  const params: unknown[] = [];
  const where = sqliteDialect.textMatch(op, '"s"', value, (v) => (params.push(v), '?'));
  return (db.prepare(`SELECT s FROM t WHERE ${where} ORDER BY id`).all(...params) as { s: string }[]).map((r) => r.s);
}

describe('sqlite textMatch', () => {
  const operands = ['', 'a', 'A', 'b', 'c', '%', '_', '*', '?', '[b]', 'a%', '%c', 'ö', 'wörld', '😀', 'x😀', '😀x', 'aa', 'aaaaa', '\n', 'abc', 'bc'];
  for (const op of ['contains', 'startsWith', 'endsWith'] as const) {
    it(`${op} agrees with String.prototype.${op === 'contains' ? 'includes' : op}`, () => {
      for (const v of operands) {
        const expected = texts.filter((t): t is string => t !== null && (op === 'contains' ? t.includes(v) : op === 'startsWith' ? t.startsWith(v) : t.endsWith(v)));
        expect(matching(op, v), `${op} ${JSON.stringify(v)}`).toEqual(expected);
      }
    });
  }

  it('never compiles to GLOB or LIKE, and binds the operand', () => {
    const params: unknown[] = [];
    for (const op of ['contains', 'startsWith', 'endsWith'] as const) {
      const sql = sqliteDialect.textMatch(op, '"s"', "x' OR 1=1 --", (v) => (params.push(v), '?'));
      expect(sql).not.toMatch(/GLOB|LIKE|OR 1=1/);
    }
    expect(params).toContain("x' OR 1=1 --");
  });
});

describe('usesTextMatch (which reads go to the worker pool)', () => {
  const where = (op: 'contains' | 'startsWith' | 'endsWith') => sqliteDialect.textMatch(op, '"s"', 'x', () => '?');

  it('finds every text match the dialect writes, wherever it sits in the SQL', () => {
    for (const op of ['contains', 'startsWith', 'endsWith'] as const) {
      expect(usesTextMatch(`SELECT * FROM t WHERE ${where(op)}`)).toBe(true);
      expect(usesTextMatch(`SELECT * FROM t WHERE "n" = ? AND ${where(op)} ORDER BY "id"`)).toBe(true);
    }
  });

  it('finds a match after an earlier "str(" that is not one (a quoted column name)', () => {
    expect(usesTextMatch(`SELECT "mystr(" FROM t WHERE ${where('contains')}`)).toBe(true);
    expect(usesTextMatch(`SELECT "mystr(" FROM t WHERE ${where('endsWith')}`)).toBe(true);
  });

  it('keeps other reads on the main thread', () => {
    expect(usesTextMatch('SELECT "id", "title" FROM "items" WHERE "id" = ? ORDER BY "id" ASC LIMIT 1')).toBe(false);
    expect(usesTextMatch('SELECT COUNT(*) AS n FROM "items"')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { column } from '../define/columns.js';
import { table } from '../define/table.js';
import { postgresDialect } from './postgres/dialect.js';
import { sqliteDialect } from './sqlite/dialect.js';
import { as, compile, empty, excluded, ident, join, onConflictUpdate, returning, skipLocked, sql, tableRef, type SqlPiece } from './sql.js';

const things = table('_things', { prefix: 'th', columns: { ownerId: column.text(), count: column.integer() } });
const T = tableRef(things);

describe('sql builder', () => {
  it('binds every interpolated value and numbers placeholders per dialect', () => {
    const q = sql`SELECT ${T.c.ownerId} FROM ${T.table} WHERE ${T.c.id} = ${'th_1'} AND ${T.c.count} > ${3}`;
    expect(compile(sqliteDialect, q)).toEqual({ text: 'SELECT "owner_id" FROM "_things" WHERE "id" = ? AND "count" > ?', params: ['th_1', 3] });
    expect(compile(postgresDialect, q)).toEqual({ text: 'SELECT "owner_id" FROM "_things" WHERE "id" = $1 AND "count" > $2', params: ['th_1', 3] });
  });

  it('numbers placeholders across nested fragments and joined lists in order', () => {
    const where = sql`${T.c.ownerId} IN (${join(['a', 'b', 'c'])})`;
    const q = sql`UPDATE ${T.table} SET ${T.c.count} = ${1} WHERE ${where} AND ${T.c.id} <> ${'x'}`;
    const c = compile(postgresDialect, q);
    expect(c.text).toBe('UPDATE "_things" SET "count" = $1 WHERE "owner_id" IN ($2, $3, $4) AND "id" <> $5');
    expect(c.params).toEqual([1, 'a', 'b', 'c', 'x']);
  });

  it('never puts a value into the text, whatever it holds', () => {
    const evil = `x'); DROP TABLE "_things"; --`;
    const c = compile(sqliteDialect, sql`SELECT 1 FROM ${T.table} WHERE ${T.c.id} = ${evil}`);
    expect(c.text).not.toContain('DROP');
    expect(c.params).toEqual([evil]);
  });

  it('refuses undefined (a forgotten value) rather than binding it', () => {
    expect(() => compile(sqliteDialect, sql`SELECT ${undefined as unknown as SqlPiece}`)).toThrow(/undefined/);
  });

  it('accepts only checked identifiers; table refs know only declared columns', () => {
    expect(() => ident('a"b')).toThrow(/not a valid identifier/);
    expect(() => ident('1x')).toThrow();
    expect(Object.keys(T.c).sort()).toEqual(['count', 'id', 'ownerId']);
    // @ts-expect-error an undeclared column is a type error, and undefined at run time
    const missing: unknown = T.c.nope;
    expect(missing).toBeUndefined();
  });

  it('qualifies an aliased table and its columns', () => {
    const t = T.as('t');
    expect(compile(sqliteDialect, sql`SELECT ${as(t.c.ownerId, 'ownerId')} FROM ${t.table}`).text).toBe('SELECT "t"."owner_id" AS "ownerId" FROM "_things" "t"');
  });

  it('writes capability clauses from the dialect, never from its name', () => {
    expect(compile(sqliteDialect, skipLocked(sqliteDialect, 'q')).text).toBe('');
    expect(compile(postgresDialect, skipLocked(postgresDialect, 'q')).text).toBe(' FOR UPDATE OF "q" SKIP LOCKED');
    const up = onConflictUpdate(sqliteDialect, [T.c.ownerId], sql`${T.c.count} = ${excluded(T.c.count)}`);
    expect(compile(sqliteDialect, up).text).toBe('ON CONFLICT ("owner_id") DO UPDATE SET "count" = excluded."count"');
    expect(compile(postgresDialect, returning(postgresDialect, [T.c.id])).text).toBe(' RETURNING "id"');
    expect(compile(sqliteDialect, empty)).toEqual({ text: '', params: [] });
  });

  it('reuses the text of a shape seen before, and only of the same shape and dialect', () => {
    const q = (ids: string[], lock: boolean) => sql`SELECT ${T.c.id} FROM ${T.table} WHERE ${T.c.id} IN (${join(ids)})${lock ? sql` FOR UPDATE` : empty}`;
    const a = compile(sqliteDialect, q(['a', 'b'], false));
    const b = compile(sqliteDialect, q(['c', 'd'], false));
    expect(b.text).toBe(a.text); // the same string object: the driver's statement cache finds it at once
    expect(b.params).toEqual(['c', 'd']);
    expect(compile(sqliteDialect, q(['a', 'b', 'c'], false)).text).toBe('SELECT "id" FROM "_things" WHERE "id" IN (?, ?, ?)');
    expect(compile(sqliteDialect, q(['a'], true)).text).toBe('SELECT "id" FROM "_things" WHERE "id" IN (?) FOR UPDATE');
    expect(compile(postgresDialect, q(['a', 'b'], false)).text).toBe('SELECT "id" FROM "_things" WHERE "id" IN ($1, $2)');
    expect(compile(sqliteDialect, q(['x', 'y'], false)).text).toBe('SELECT "id" FROM "_things" WHERE "id" IN (?, ?)');
    const other = T.as('o');
    const r = (t: typeof T) => sql`SELECT ${t.c.ownerId} FROM ${t.table}`;
    expect(compile(sqliteDialect, r(T)).text).toBe('SELECT "owner_id" FROM "_things"');
    expect(compile(sqliteDialect, r(other)).text).toBe('SELECT "o"."owner_id" FROM "_things" "o"');
  });
});

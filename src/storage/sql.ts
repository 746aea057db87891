/**
 * The one SQL builder of the internal tables: a tagged template whose interpolations are bound
 * parameters unless they are identifiers or nested fragments, compiled per dialect (`?` on
 * SQLite, `$n` on PostgreSQL). The data routes keep their own compiler (compiler.ts: plans to
 * SQL on the hot path); this one serves the repositories in repos/.
 *
 *   const S = tableRef(sessionsTable);          // identifiers of the declared columns only
 *   const x = sqlExec(dialect);
 *   const row = await x.get(runner, sql`SELECT ${as(S.c.userId, 'userId')} FROM ${S.table} WHERE ${S.c.id} = ${sessionId}`);
 *   // SQLite:     SELECT "user_id" AS "userId" FROM "_sessions" WHERE "id" = ?    ['ss_…']
 *   // PostgreSQL: SELECT "user_id" AS "userId" FROM "_sessions" WHERE "id" = $1   ['ss_…']
 *
 * Safety by construction: a value can only become a parameter (its type is checked: no objects,
 * no undefined); text enters only through the template's literal parts, `ident` (a checked
 * name), `tableRef`/`modelRef`/`namedRef` (names of a known table only, typed by its columns) and
 * the capability clauses at the end of this file (`onConflictUpdate`, `skipLocked`, `returning`,
 * `blobType`), whose text the Dialect chooses. Compiled text is reused per statement shape, so a
 * repository method costs about what a hand-built statement did (bench/sql-builder.ts).
 */
import { toSnake } from '../core/naming.js';
import type { CollectionModel } from '../core/model.js';
import type { Dialect } from './dialect.js';
import type { RawRow, SqlRunner } from './driver.js';

/** What may be bound as a parameter. */
export type SqlValue = string | number | bigint | boolean | null | Uint8Array;

/** A quoted identifier, optionally qualified (`q.id` → `"q"."id"`). */
export class Ident {
  // The quoted text for the dialect last asked: repositories build their idents once and compile
  // them on every call, so quoting is paid once per process (bench/sql-builder.ts).
  #dialect: Dialect | undefined;
  #text = '';

  constructor(readonly path: readonly string[]) {}

  text(d: Dialect): string {
    if (this.#dialect !== d) {
      this.#text = this.path.length === 1 ? d.quote(this.path[0]!) : this.path.map(d.quote).join('.');
      this.#dialect = d;
    }
    return this.#text;
  }
}

/** A fragment: literal text parts and what goes between them. */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly pieces: readonly SqlPiece[],
  ) {}
}

/** Text the dialect chooses at compile time (a type name, a keyword): never a caller's value. */
export class DialectText {
  constructor(readonly pick: (d: Dialect) => string) {}
}

export type SqlPiece = SqlValue | Ident | Sql | DialectText;

export interface Compiled {
  readonly text: string;
  readonly params: unknown[];
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function sql(strings: TemplateStringsArray, ...pieces: SqlPiece[]): Sql {
  return new Sql(strings, pieces);
}

/** An identifier that is not a declared column (an alias, a bookkeeping table): checked, then quoted. */
export function ident(...path: string[]): Ident {
  for (const name of path) if (!NAME_RE.test(name)) throw new Error(`sql: "${name}" is not a valid identifier`);
  return new Ident(path);
}

/** The literal parts of a join of `n` items: one array per (n, separator), so its identity is stable (compile's cache). */
const joinStrings = new Map<string, readonly string[]>();

/** Joins fragments (or values, each bound) with `separator` (literal text chosen by the caller). */
export function join(items: readonly SqlPiece[], separator: ', ' | ' AND ' | ' OR ' | ' ' = ', '): Sql {
  if (items.length === 0) return empty;
  const key = `${items.length}${separator}`;
  let strings = joinStrings.get(key);
  if (strings === undefined) {
    strings = Object.freeze(['', ...Array<string>(items.length - 1).fill(separator), '']);
    if (joinStrings.size < 1024) joinStrings.set(key, strings);
  }
  return new Sql(strings, items);
}

/** An empty fragment, for a clause a capability leaves out. */
export const empty: Sql = new Sql(Object.freeze(['']), []);

/** Stands for a bound value in a statement's shape. */
const VALUE = Symbol('value');

/**
 * The shape of a statement: every literal-parts array (by identity: one per template call site
 * or join size; its length fixes how many pieces follow), each identifier's length and names,
 * each dialect text, and VALUE where a value is bound: read back, it determines the text. Two calls
 * of one repository method have the same shape, so they share one compiled text.
 */
function collect(s: Sql, shape: unknown[], params: unknown[]): void {
  shape.push(s.strings);
  for (const p of s.pieces) {
    if (p instanceof Sql) collect(p, shape, params);
    else if (p instanceof Ident) {
      // The length first, so `a.b` then `c` never reads as `a` then `b.c`.
      shape.push(p.path.length);
      for (const name of p.path) shape.push(name);
    } else if (p instanceof DialectText) shape.push(p);
    else if (p === undefined) throw new Error('sql: undefined cannot be bound (use null)');
    else {
      shape.push(VALUE);
      params.push(p);
    }
  }
}

function render(d: Dialect, q: Sql): string {
  let n = 0;
  let text = '';
  const walk = (s: Sql) => {
    text += s.strings[0]!;
    for (let i = 0; i < s.pieces.length; i++) {
      const p = s.pieces[i];
      if (p instanceof Sql) walk(p);
      else if (p instanceof Ident) text += p.text(d);
      else if (p instanceof DialectText) text += p.pick(d);
      else text += d.param(++n);
      text += s.strings[i + 1]!;
    }
  };
  walk(q);
  return text;
}

interface Shaped {
  readonly dialect: Dialect;
  readonly shape: readonly unknown[];
  readonly text: string;
}

/** The last compiled text per call site (its root literal parts) and dialect. */
const compiled = new WeakMap<readonly string[], Shaped[]>();

function sameShape(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Compiles a fragment for `d`: the text with numbered placeholders, and the values in order. The
 * text of a shape seen before is reused (the same string object, so the driver's statement cache
 * finds it without hashing a new string): building it anew on every call cost about as much as
 * the statement itself on SQLite (bench/sql-builder.ts).
 */
export function compile(d: Dialect, q: Sql): Compiled {
  const shape: unknown[] = [];
  const params: unknown[] = [];
  collect(q, shape, params);
  let entries = compiled.get(q.strings);
  const hit = entries?.find((e) => e.dialect === d);
  if (hit && sameShape(hit.shape, shape)) return { text: hit.text, params };
  const text = render(d, q);
  if (!entries) compiled.set(q.strings, (entries = []));
  const entry: Shaped = { dialect: d, shape, text };
  const at = entries.findIndex((e) => e.dialect === d);
  if (at >= 0) entries[at] = entry;
  else entries.push(entry);
  return { text, params };
}

/** Runs fragments on a runner with one dialect's compilation: what every repository uses. */
export interface SqlExec {
  readonly dialect: Dialect;
  all(r: SqlRunner, q: Sql): Promise<RawRow[]>;
  get(r: SqlRunner, q: Sql): Promise<RawRow | undefined>;
  run(r: SqlRunner, q: Sql): Promise<{ changes: number }>;
}

export function sqlExec(dialect: Dialect): SqlExec {
  return {
    dialect,
    all: (r, q) => {
      const c = compile(dialect, q);
      return r.all(c.text, c.params);
    },
    get: (r, q) => {
      const c = compile(dialect, q);
      return r.get(c.text, c.params);
    },
    run: (r, q) => {
      const c = compile(dialect, q);
      return r.run(c.text, c.params);
    },
  };
}

/** A table's identifiers, by camelCase column name; only declared names exist (typed and checked). */
export interface TableRef<C extends string> {
  /** The table (with its alias after it, for an aliased ref). */
  readonly table: Ident | Sql;
  readonly c: { readonly [K in C]: Ident };
  /** The same table under alias `a`: `table` is `"t" a`, columns are `a."col"`. */
  as(a: string): TableRef<C>;
}

function makeRef<C extends string>(name: string, columns: ReadonlyMap<string, string>, alias?: string): TableRef<C> {
  const c: Record<string, Ident> = {};
  for (const [key, column] of columns) c[key] = alias === undefined ? ident(column) : ident(alias, column);
  const table = ident(name);
  return Object.freeze({
    table: alias === undefined ? table : sql`${table} ${ident(alias)}`,
    c: Object.freeze(c) as TableRef<C>['c'],
    as: (a: string) => makeRef<C>(name, columns, a),
  });
}

/**
 * A table declared with the definition API, as a repository needs it: its name and (at least) the
 * columns `K`. Repositories state the columns they use; the feature passes its declaration, and
 * TypeScript checks it has them.
 */
export interface TableDecl<K extends string> {
  readonly name: string;
  readonly columns: { readonly [k in K]: unknown };
}

/** The identifiers of an internal table declared with the definition API (auth, push schema files). */
export function tableRef<K extends string>(t: TableDecl<K>): TableRef<K | 'id'> {
  const columns = new Map<string, string>([['id', 'id']]);
  for (const key of Object.keys(t.columns)) columns.set(key, toSnake(key));
  return makeRef(t.name, columns);
}

/** The identifiers of a project table, from its model (column SQL names as migrated). */
export function modelRef(m: CollectionModel): TableRef<string> {
  return makeRef(m.name, new Map([...m.columns].map(([k, col]) => [k, col.sql])));
}

/** The identifiers of a table that has no declaration (storage's own bookkeeping tables). */
export function namedRef<C extends string>(name: string, columns: readonly C[]): TableRef<C> {
  return makeRef(name, new Map(columns.map((k) => [k, k])));
}

// Clauses whose form is a dialect capability (dialect.ts), so no repository asks which database it is.

/** `ON CONFLICT (target) DO UPDATE SET …` (the dialect's upsert form); `set` may use `excluded(col)`. */
export function onConflictUpdate(d: Dialect, target: readonly Ident[], set: Sql): Sql {
  if (d.upsert !== 'on-conflict') throw new Error(`sql: upsert form ${String(d.upsert)} is not supported`);
  return sql`ON CONFLICT (${join(target)}) DO UPDATE SET ${set}`;
}

/** The proposed row's value of `column` inside an upsert's SET. */
export const excluded = (column: Ident): Sql => sql`excluded.${column}`;

/**
 * Appended to a claim's SELECT: where concurrent claimers exist (PostgreSQL) rows another holds
 * locked are skipped rather than waited for; where one writer serializes every claim (SQLite)
 * nothing is needed.
 */
export const skipLocked = (d: Dialect, alias: string): Sql => (d.supportsSkipLocked ? sql` FOR UPDATE OF ${ident(alias)} SKIP LOCKED` : empty);

/** `RETURNING cols`: the rows a write changed, answered by the same statement. */
export function returning(d: Dialect, columns: readonly (Ident | Sql)[]): Sql {
  if (!d.supportsReturning) throw new Error('sql: this database cannot answer RETURNING');
  return sql` RETURNING ${join(columns)}`;
}

/** The dialect's DDL type for bytes (`BLOB`, `BYTEA`). */
export const blobType = new DialectText((d) => d.blobType);

/** `expr AS "alias"`. */
export const as = (expr: Ident | Sql, alias: string): Sql => sql`${expr} AS ${ident(alias)}`;

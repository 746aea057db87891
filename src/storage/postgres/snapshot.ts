/**
 * Logical snapshots of a PostgreSQL database for backups (docs/reference/backups.md): every table
 * of the `public` schema (internal ones and `_blobs` included), its columns, constraints, indexes
 * and sequences, read in ONE repeatable-read, read-only transaction so the copy is consistent
 * while the server writes. The format is JSON lines (readable without Tablebase); rows are
 * `row_to_json` and come back through `json_populate_recordset`, so PostgreSQL itself converts
 * every type both ways.
 */
import pg from 'pg';
import { BLOBS_TABLE } from '../repos/blobs.js';

const PHOTOS_TABLE = '_photos';

export type DumpLine =
  | { kind: 'header'; format: 'tablebase-pg-dump'; version: 1; takenAt: string }
  | { kind: 'sequence'; name: string; last: string | null; increment: string }
  | { kind: 'table'; name: string; columns: { name: string; type: string; notNull: boolean; default: string | null }[] }
  | { kind: 'rows'; table: string; rows: unknown[] }
  | { kind: 'constraint'; table: string; name: string; type: string; def: string }
  | { kind: 'index'; def: string };

const BATCH = 500;
const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Writes the whole database as lines through `write` (which may await, for backpressure). */
export async function dumpPostgres(url: string, write: (line: DumpLine) => Promise<void>): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const taken = (await c.query<{ now: Date }>('SELECT now() AS now')).rows[0]!.now;
    await write({ kind: 'header', format: 'tablebase-pg-dump', version: 1, takenAt: taken.toISOString() });
    const seqs = await c.query<{ name: string; last: string | null; increment: string }>(
      "SELECT sequencename AS name, last_value::text AS last, increment_by::text AS increment FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1",
    );
    for (const s of seqs.rows) await write({ kind: 'sequence', ...s });
    const tables = await c.query<{ oid: number; name: string }>(
      "SELECT c.oid, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.relname",
    );
    const constraints: DumpLine[] = [];
    const indexes: DumpLine[] = [];
    for (const t of tables.rows) {
      const cols = await c.query<{ name: string; type: string; notNull: boolean; default: string | null }>(
        `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS "notNull", pg_get_expr(d.adbin, d.adrelid) AS default
           FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
        [t.oid],
      );
      await write({ kind: 'table', name: t.name, columns: cols.rows });
      await c.query(`DECLARE dump NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS j FROM ${q(t.name)} t`);
      for (;;) {
        const batch = await c.query<{ j: string }>(`FETCH ${BATCH} FROM dump`);
        if (batch.rows.length === 0) break;
        await write({ kind: 'rows', table: t.name, rows: batch.rows.map((r) => JSON.parse(r.j) as unknown) });
      }
      await c.query('CLOSE dump');
      const cons = await c.query<{ name: string; type: string; def: string }>(
        'SELECT conname AS name, contype::text AS type, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1 ORDER BY conname',
        [t.oid],
      );
      for (const k of cons.rows) constraints.push({ kind: 'constraint', table: t.name, ...k });
      const idx = await c.query<{ def: string }>(
        'SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i WHERE i.indrelid = $1 AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)',
        [t.oid],
      );
      for (const i of idx.rows) indexes.push({ kind: 'index', def: i.def });
    }
    // Foreign keys last, once every key they point at exists.
    constraints.sort((a, b) => Number((a as { type: string }).type === 'f') - Number((b as { type: string }).type === 'f'));
    for (const k of [...constraints, ...indexes]) await write(k);
    await c.query('COMMIT');
  } finally {
    await c.end();
  }
}

/** Restores dump lines into an EMPTY database, in one transaction: on any failure nothing is left. */
export async function restorePostgresDump(url: string, lines: AsyncIterable<DumpLine>): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const counts: Record<string, number> = {};
  try {
    const existing = await c.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'S', 'v', 'm')",
    );
    if (existing.rows[0]!.n !== '0') throw new Error('the target database is not empty: restore into a new, empty database');
    await c.query('BEGIN');
    const sequences: { name: string; last: string | null }[] = [];
    for await (const line of lines) {
      if (line.kind === 'sequence') {
        await c.query(`CREATE SEQUENCE ${q(line.name)} INCREMENT BY ${Number(line.increment)}`);
        sequences.push(line);
      } else if (line.kind === 'table') {
        const cols = line.columns.map((col) => `${q(col.name)} ${col.type}${col.notNull ? ' NOT NULL' : ''}${col.default !== null ? ` DEFAULT ${col.default}` : ''}`);
        await c.query(`CREATE TABLE ${q(line.name)} (${cols.join(', ')})`);
        counts[line.name] = 0;
      } else if (line.kind === 'rows') {
        await c.query(`INSERT INTO ${q(line.table)} SELECT * FROM json_populate_recordset(NULL::${q(line.table)}, $1::json)`, [JSON.stringify(line.rows)]);
        counts[line.table] = (counts[line.table] ?? 0) + line.rows.length;
      } else if (line.kind === 'constraint') {
        await c.query(`ALTER TABLE ${q(line.table)} ADD CONSTRAINT ${q(line.name)} ${line.def}`);
      } else if (line.kind === 'index') {
        await c.query(line.def);
      }
    }
    for (const s of sequences) if (s.last !== null) await c.query('SELECT setval($1, $2::bigint, true)', [q(s.name), s.last]);
    await c.query('COMMIT');
    return counts;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await c.end();
  }
}

/**
 * What a dump says about photos (docs/reference/backups.md, "PostgreSQL"): the ids of its
 * `_photos` rows (null when it has no such table) and the ids whose original it holds itself in
 * `_blobs` (part 0 of key `<id>`; a deployment without `--storage`). The others' bytes come from
 * the backup's photo objects. Only ids are kept, never bytes.
 */
export async function photosInDump(lines: AsyncIterable<DumpLine>): Promise<{ photos: string[] | null; held: Set<string> }> {
  let photos: string[] | null = null;
  const held = new Set<string>();
  for await (const line of lines) {
    if (line.kind === 'table' && line.name === PHOTOS_TABLE) photos ??= [];
    if (line.kind !== 'rows') continue;
    if (line.table === PHOTOS_TABLE) for (const r of line.rows as { id: string }[]) (photos ??= []).push(r.id);
    if (line.table === BLOBS_TABLE) for (const r of line.rows as { key: string; part: number }[]) if (r.part === 0 && !r.key.includes('/')) held.add(r.key);
  }
  return { photos, held };
}

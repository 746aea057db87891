/** Row-level reads and writes over any SqlRunner: compile, run, decode into client rows. */
import type { CollectionModel, ColumnModel } from '../core/model.js';
import { compileCount, compileDeleteById, compileInsert, compileSelect, compileUpdateById, perDialect } from './compiler.js';
import type { Dialect } from './dialect.js';
import type { SqlRunner } from './driver.js';
import type { RawRow } from './plan.js';
import type { ReadPlan, Row } from './plan.js';

const decoderCaches = perDialect<(raw: RawRow) => Row>();

/** The row decoder of `c` for `d`, built once per (dialect, collection). */
export function decoderFor(d: Dialect, c: CollectionModel): (raw: RawRow) => Row {
  const decoders = decoderCaches(d);
  let dec = decoders.get(c);
  if (!dec) {
    dec = d.decoder(c.columnList.filter((col) => !col.hidden));
    decoders.set(c, dec);
  }
  return dec;
}

/**
 * `forWrite`: the rows are read inside a write transaction to be changed; they are locked
 * until it commits where the database needs it (Dialect.lockForWrite).
 */
export async function selectRows(db: SqlRunner, d: Dialect, plan: ReadPlan, forWrite = false): Promise<Row[]> {
  const q = compileSelect(d, plan, undefined, forWrite);
  const raw = await db.all(q.sql, q.params);
  const dec = decoderFor(d, plan.collection);
  for (let i = 0; i < raw.length; i++) dec(raw[i]!);
  return raw as Row[];
}

export async function countRows(db: SqlRunner, d: Dialect, plan: ReadPlan): Promise<number> {
  const q = compileCount(d, plan);
  const r = await db.get(q.sql, q.params);
  return Number(r?.n ?? 0);
}

export async function insertRow(db: SqlRunner, d: Dialect, c: CollectionModel, values: ReadonlyMap<ColumnModel, unknown>): Promise<Row> {
  const q = compileInsert(d, c, values);
  const rows = await db.all(q.sql, q.params);
  return decoderFor(d, c)(rows[0]!);
}

export async function updateRowById(db: SqlRunner, d: Dialect, c: CollectionModel, id: string, sets: ReadonlyMap<ColumnModel, unknown>): Promise<Row> {
  const q = compileUpdateById(d, c, id, sets);
  const rows = await db.all(q.sql, q.params);
  return decoderFor(d, c)(rows[0]!);
}

export async function deleteRowById(db: SqlRunner, d: Dialect, c: CollectionModel, id: string): Promise<void> {
  const q = compileDeleteById(d, c, id);
  await db.run(q.sql, q.params);
}

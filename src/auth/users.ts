/** Reading and writing auth-table rows for the auth routes: the only place that reads password hashes. */
import type { CollectionModel, ColumnModel } from '../core/model.js';
import type { Runtime } from '../core/runtime.js';
import type { SqlRunner } from '../storage/driver.js';
import { byColumnPlan, type Row } from '../storage/plan.js';
import { findCredentials as credentialsOf } from '../storage/repos/users.js';
import { selectRows, updateRowById } from '../storage/rows.js';

export async function findUser(rt: Runtime, c: CollectionModel, column: 'id' | 'email', value: string, db: SqlRunner = rt.driver): Promise<Row | null> {
  return (await selectRows(db, rt.driver.dialect, byColumnPlan(c, column, value)))[0] ?? null;
}

/** The stored hash of a user found by email, with the user's id. */
export function findCredentials(rt: Runtime, c: CollectionModel, email: string): Promise<{ id: string; hash: unknown } | null> {
  return credentialsOf(rt.driver, rt.driver.dialect, c, email);
}

/** Sets columns of one user inside a writer job, announcing the change to live queries. */
export async function setUserColumns(rt: Runtime, tx: SqlRunner, c: CollectionModel, id: string, values: Record<string, unknown>, changes: { push(c: unknown): void }): Promise<Row | null> {
  const before = (await selectRows(tx, rt.driver.dialect, byColumnPlan(c, 'id', id), true))[0];
  if (!before) return null;
  const sets = new Map<ColumnModel, unknown>();
  for (const [k, v] of Object.entries(values)) sets.set(c.columns.get(k)!, v);
  const updatedAt = c.columnList.find((col) => col.spec.kind === 'updatedAt');
  if (updatedAt) sets.set(updatedAt, rt.now());
  const after = await updateRowById(tx, rt.driver.dialect, c, id, sets);
  changes.push({ table: c.name, op: 'update', id, before, after });
  return after;
}

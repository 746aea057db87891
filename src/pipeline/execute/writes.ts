/**
 * Step 4 for mutations: the write jobs run by the serialized writer. Before-hooks run inside the
 * job, before the SQL; row rules (canUpdate, canDelete, and canView on the rows answered) run
 * inside the transaction before it commits, so a denial writes nothing (docs/reference/rules-and-hooks.md). After-hooks
 * are returned as a thunk for step 6.
 */
import { ApiError, badRequest, forbidden, notFound } from '../../core/errors.js';
import type { CollectionModel, ColumnModel } from '../../core/model.js';
import type { Runtime } from '../../core/runtime.js';
import type { Change } from '../../storage/changes.js';
import type { Tx } from '../../storage/driver.js';
import type { ReadPlan, Row } from '../../storage/plan.js';
import { deleteRowById, insertRow, selectRows, updateRowById } from '../../storage/rows.js';
import { applyUpdates, checkCreateObject, type UpdatePlan } from '../plan/objects.js';
import { filterRows } from '../filter-rows.js';
import type { WriteScope } from './write-scope.js';
import { hookRejected, runAfterHook } from './hooks.js';

export interface WriteResult<T> {
  readonly value: T;
  /** Step 6: the after-success hooks, run after the commit and before the answer. */
  readonly after: () => Promise<void>;
}

export interface WriteOptions {
  readonly scope: WriteScope;
  /** Hook, cron and handler writes: no rules and no row rules (docs/reference/rules-and-hooks.md). */
  readonly trusted: boolean;
}

/** Marks a failure of the SQL itself, so after*Error hooks fire and the driver maps it. */
class SqlFailure extends Error {
  constructor(readonly original: unknown) {
    super('sql failed');
  }
}

async function sql<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new SqlFailure(err);
  }
}

async function rowVisible(c: CollectionModel, o: WriteOptions, row: Row): Promise<void> {
  if (o.trusted || !c.rowFiltered) return;
  if (!(await c.rowRules!.canView!(o.scope.jwt, row))) throw forbidden();
}

/**
 * The before-image check (docs/reference/rules-and-hooks.md): a write never touches a row its caller cannot see. Every
 * matched row passes the row `canView` before any hook or SQL runs, inside the write's
 * transaction; one failure makes the request 403 with nothing written.
 */
export async function matchedVisible(c: CollectionModel, o: WriteOptions, rows: readonly Row[]): Promise<void> {
  if (!o.trusted) await filterRows(c, o.scope.jwt, rows);
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || (typeof a === 'object' && a !== null && JSON.stringify(a) === JSON.stringify(b));
}

/** Runs a job on the writer; maps SQL failures and fires the table's after*Error hook. */
async function submit<T>(rt: Runtime, o: WriteOptions, onError: ((err: Error) => Promise<void>) | undefined, job: (tx: Tx, changes: Change[]) => Promise<T>): Promise<T> {
  try {
    return await rt.writer.submit(async (tx, changes) => {
      o.scope.writeTx = tx;
      try {
        return await job(tx, changes);
      } finally {
        o.scope.writeTx = undefined;
      }
    });
  } catch (err) {
    o.scope.failed();
    if (!(err instanceof SqlFailure)) throw err;
    const mapped = rt.driver.mapError(err.original);
    if (!mapped) rt.log.error({ err: err.original }, 'write failed');
    const apiErr = mapped ?? new ApiError('INTERNAL', undefined, { cause: err.original });
    if (onError) await onError(apiErr);
    throw apiErr;
  }
}

function fullRow(rt: Runtime, c: CollectionModel, object: Record<string, unknown>, now: string, path: string): Map<ColumnModel, unknown> {
  const values = new Map<ColumnModel, unknown>();
  for (const col of c.columnList) {
    const k = col.spec.kind;
    if (k === 'id') values.set(col, rt.newId(c.prefix!));
    else if (k === 'createdAt' || k === 'updatedAt') values.set(col, now);
    else if (k === 'updatedWhen') values.set(col, null);
    else if (k === 'isVerified') values.set(col, object[col.name] === true);
    else if (object[col.name] !== undefined) values.set(col, object[col.name]);
    else if (col.spec.hasDefault) values.set(col, typeof col.spec.default === 'function' ? (col.spec.default as () => unknown)() : col.spec.default);
    else if (col.spec.nullable) values.set(col, null);
    else throw badRequest(`${path}/${col.name}`, `"${col.name}" is required`);
  }
  return values;
}

export async function createRows(c: CollectionModel, objects: Record<string, unknown>[], o: WriteOptions, many: boolean): Promise<WriteResult<Row[]>> {
  // The hook context (o.scope.context) is built on a hook's first use, not per write: a table
  // without hooks never pays for it (issue #24: ~15 µs of a create, its closures and frozen object).
  const rt = o.scope.rt;
  const hooks = c.hooks;
  const rows = await submit(
    rt,
    o,
    hooks?.afterCreateError && ((error) => runAfterHook(rt, 'afterCreateError', () => hooks.afterCreateError!(o.scope.context, { object: many ? objects : objects[0], error }))),
    async (tx, changes) => {
      const now = rt.now();
      const out: Row[] = [];
      for (let i = 0; i < objects.length; i++) {
        const path = many ? `/objects/${i}` : '/object';
        let object = objects[i]!;
        if (hooks?.beforeCreate) {
          let changed: unknown;
          try {
            changed = await hooks.beforeCreate(o.scope.context, { ...object });
          } catch (err) {
            throw hookRejected(err);
          }
          if (changed) object = checkCreateObject(c, changed, path, true);
        }
        const row = await sql(insertRow(tx, rt.driver.dialect, c, fullRow(rt, c, object, now, path)));
        await rowVisible(c, o, row);
        changes.push({ table: c.name, op: 'insert', id: row.id, before: null, after: row });
        out.push(row);
      }
      return out;
    },
  );
  return {
    value: rows,
    after: async () => {
      if (hooks?.afterCreateSuccess) for (const row of rows) await runAfterHook(rt, 'afterCreateSuccess', () => hooks.afterCreateSuccess!(o.scope.context, row));
    },
  };
}

function asClientUpdates(updates: readonly UpdatePlan[]) {
  return updates.map((u) => ({ column: u.column.name, value: u.form === 'set' ? u.value : { [u.form]: u.value } }));
}

export async function updateRows(c: CollectionModel, read: ReadPlan, updates: UpdatePlan[], o: WriteOptions, many: boolean): Promise<WriteResult<Row[]>> {
  const rt = o.scope.rt;
  const hooks = c.hooks;
  const pairs: { before: Row; after: Row }[] = [];
  const onError =
    hooks?.afterUpdateError &&
    ((error: Error) => runAfterHook(rt, 'afterUpdateError', () => hooks.afterUpdateError!(o.scope.context, { where: read.where, updates: asClientUpdates(updates), error })));
  await submit(rt, o, onError, async (tx, changes) => {
    const now = rt.now();
    const found = await selectRows(tx, rt.driver.dialect, read, true);
    if (!many && found.length === 0) throw notFound('No row matches the filter');
    await matchedVisible(c, o, found);
    for (const before of found) {
      const after = applyUpdates(before, updates);
      for (const col of c.columnList) {
        if (col.spec.kind === 'updatedAt') after[col.name] = now;
        else if (col.spec.kind === 'updatedWhen' && !sameValue(before[col.spec.watches!], after[col.spec.watches!])) after[col.name] = now;
      }
      if (hooks?.beforeUpdate) {
        try {
          await hooks.beforeUpdate(o.scope.context, { before, after: after as Row, updates: asClientUpdates(updates) as never });
        } catch (err) {
          throw hookRejected(err);
        }
      }
      if (!o.trusted && c.rowRules?.canUpdate && !(await c.rowRules.canUpdate(o.scope.jwt, before, after))) throw forbidden();
      // An account whose email is changed by an admin or a hook (clients go through
      // /auth/change-email) is no longer verified and loses its sessions (docs/reference/auth.md).
      const newEmail = c.auth !== undefined && !sameValue(before.email, after.email);
      if (newEmail) for (const col of c.columnList) if (col.spec.kind === 'isVerified') after[col.name] = false;
      const sets = new Map<ColumnModel, unknown>();
      for (const col of c.columnList) if (!col.hidden && col.name !== 'id' && !sameValue(before[col.name], after[col.name])) sets.set(col, after[col.name]);
      if (newEmail) await rt.accounts?.revokeAll(tx, c.name, before.id, 'email');
      if (sets.size === 0) {
        pairs.push({ before, after: before });
        continue;
      }
      const row = await sql(updateRowById(tx, rt.driver.dialect, c, before.id, sets));
      await rowVisible(c, o, row);
      changes.push({ table: c.name, op: 'update', id: row.id, before, after: row });
      pairs.push({ before, after: row });
    }
  });
  return {
    value: pairs.map((p) => p.after),
    after: async () => {
      if (hooks?.afterUpdateSuccess) for (const p of pairs) await runAfterHook(rt, 'afterUpdateSuccess', () => hooks.afterUpdateSuccess!(o.scope.context, p));
    },
  };
}

export async function deleteRows(c: CollectionModel, read: ReadPlan, o: WriteOptions, many: boolean): Promise<WriteResult<Row[]>> {
  const rt = o.scope.rt;
  const hooks = c.hooks;
  const onError = hooks?.afterDeleteError && ((error: Error) => runAfterHook(rt, 'afterDeleteError', () => hooks.afterDeleteError!(o.scope.context, { where: read.where, error })));
  const deleted = await submit(rt, o, onError, async (tx, changes) => {
    const found = await selectRows(tx, rt.driver.dialect, read, true);
    if (!many && found.length === 0) throw notFound('No row matches the filter');
    await matchedVisible(c, o, found);
    for (const row of found) {
      if (hooks?.beforeDelete) {
        try {
          await hooks.beforeDelete(o.scope.context, row);
        } catch (err) {
          throw hookRejected(err);
        }
      }
      if (!o.trusted && c.rowRules?.canDelete && !(await c.rowRules.canDelete(o.scope.jwt, row))) throw forbidden();
      await sql(deleteRowById(tx, rt.driver.dialect, c, row.id));
      // An account's sessions end with its row, in the same transaction (docs/reference/auth.md).
      if (c.auth) await rt.accounts?.revokeAll(tx, c.name, row.id, 'deleted');
      changes.push({ table: c.name, op: 'delete', id: row.id, before: row, after: null });
    }
    return found;
  });
  return {
    value: deleted,
    after: async () => {
      if (hooks?.afterDeleteSuccess) for (const row of deleted) await runAfterHook(rt, 'afterDeleteSuccess', () => hooks.afterDeleteSuccess!(o.scope.context, row));
    },
  };
}

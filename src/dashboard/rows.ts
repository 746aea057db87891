/**
 * Admin row access (docs/reference/dashboard.md Tables): list with the ordinary body (where grammar, paging,
 * order_by, all its bounds), and create/update/delete of one row by id. Table rules and row rules
 * do not apply (admins only reach here), but everything else does: value validation in the
 * operations step, the serialized writer, the table's before/after hooks with the admin's token in
 * their context, and the live engine hears every change. Views are read-only (403).
 */
import { ApiError, badRequest } from '../core/errors.js';
import type { CollectionModel } from '../core/model.js';
import type { Runtime } from '../core/runtime.js';
import type { Jwt } from '../define/types.js';
import { readData } from '../pipeline/execute/reads.js';
import { createRows, deleteRows, updateRows, type WriteResult } from '../pipeline/execute/writes.js';
import { planOperation } from '../pipeline/plan/index.js';
import { checkCreateObject, checkUpdates, type UpdatePlan } from '../pipeline/plan/objects.js';
import { collectionOrThrow } from '../pipeline/resolve.js';
import { Scope } from '../pipeline/scope.js';
import type { ReadPlan, Row } from '../storage/plan.js';
import { auditAdmin } from './audit.js';

export interface RowPage {
  readonly items: Row[];
  readonly total: number;
}

function tableOf(rt: Runtime, name: unknown): CollectionModel {
  const c = collectionOrThrow(rt.model, name, true);
  if (c.kind === 'view') throw new ApiError('FORBIDDEN', 'Views are read-only');
  // Sessions, tokens and photo rows belong to their services (a photo row without its files, a
  // session without its revocation); the dashboard shows them but changes them only through
  // the Users and Photos actions.
  if (c.internal) throw new ApiError('FORBIDDEN', 'Internal tables are read-only here');
  return c;
}

function byId(c: CollectionModel, id: unknown): ReadPlan {
  if (typeof id !== 'string' || id.length === 0 || id.length > 64) throw badRequest('/id', 'must be a row id');
  return { collection: c, where: { kind: 'cmp', column: c.columns.get('id')!, op: 'eq', value: id }, orderBy: [], limit: 1, offset: undefined };
}

/** Runs one trusted write as the admin: hooks fire and their queued work follows the commit. */
async function asAdmin<T>(rt: Runtime, admin: Jwt, write: (scope: Scope) => Promise<WriteResult<T>>): Promise<T> {
  const scope = new Scope(rt, admin);
  const result = await write(scope);
  await result.after();
  scope.committed();
  return result.value;
}

/** `{column: value}` → update plans, each error pointing at `/values/<column>` for the editor. */
function updatesOf(c: CollectionModel, values: unknown): UpdatePlan[] {
  if (typeof values !== 'object' || values === null || Array.isArray(values)) throw badRequest('/values', 'must be an object of column values');
  const out: UpdatePlan[] = [];
  for (const [column, value] of Object.entries(values)) {
    try {
      out.push(...checkUpdates(c, [{ column, value }], '/values'));
    } catch (err) {
      if (err instanceof ApiError && err.details) throw badRequest(`/values/${column}`, err.details[0]!.message);
      throw err;
    }
  }
  if (out.length === 0) throw badRequest('/values', 'nothing to change');
  return out;
}

export function adminRows(rt: Runtime) {
  return {
    /** `body` as for `/db/list`: table, where, limit, offset, order_by. */
    async list(body: Record<string, unknown>): Promise<RowPage> {
      const collection = collectionOrThrow(rt.model, body.table, true);
      const plan = planOperation({ op: 'list', collection, body, authorization: undefined, jwt: null, ip: '' });
      if (plan.kind !== 'list') throw new ApiError('INTERNAL');
      return (await readData(rt, 'list', plan.read)) as RowPage;
    },

    async create(admin: Jwt, table: unknown, object: unknown): Promise<Row> {
      const c = tableOf(rt, table);
      const checked = checkCreateObject(c, object, '/object');
      const [row] = await asAdmin(rt, admin, (scope) => createRows(c, [checked], { scope, trusted: true }, false));
      auditAdmin(rt.log, admin, { action: 'create', table: c.name, id: row!.id });
      return row!;
    },

    async update(admin: Jwt, table: unknown, id: unknown, values: unknown): Promise<Row> {
      const c = tableOf(rt, table);
      const plan = byId(c, id);
      const updates = updatesOf(c, values);
      const [row] = await asAdmin(rt, admin, (scope) => updateRows(c, plan, updates, { scope, trusted: true }, false));
      auditAdmin(rt.log, admin, { action: 'update', table: c.name, id: row!.id, detail: updates.map((u) => u.column.name).join(',') });
      return row!;
    },

    async delete(admin: Jwt, table: unknown, id: unknown): Promise<void> {
      const c = tableOf(rt, table);
      const plan = byId(c, id);
      await asAdmin(rt, admin, (scope) => deleteRows(c, plan, { scope, trusted: true }, false));
      auditAdmin(rt.log, admin, { action: 'delete', table: c.name, id: id as string });
    },
  };
}

export type AdminRows = ReturnType<typeof adminRows>;

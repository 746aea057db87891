/**
 * Writes made by trusted server code (hook-queued mutations, custom handlers, cron): the same
 * write jobs as the data API, without rules or row rules; the target table's hooks still fire,
 * and their own queued work shares the originating request's budget.
 */
import { badRequest } from '../../core/errors.js';
import type { ServerContext, Update, Where } from '../../define/types.js';
import type { Row } from '../../storage/plan.js';
import { checkCreateObject, checkUpdates } from '../plan/objects.js';
import { parseWhere } from '../plan/where.js';
import { collectionOrThrow } from '../resolve.js';
import type { WriteScope } from './write-scope.js';
import { createRows, deleteRows, updateRows, type WriteResult } from './writes.js';

type ManyOptions = { many?: boolean; limit?: number };

export function trustedWrites(parent: WriteScope): ServerContext['db'] {
  const model = parent.rt.model;
  const table = (name: string) => {
    const c = collectionOrThrow(model, name, true);
    if (c.kind !== 'table') throw badRequest('/table', 'views are read-only');
    return c;
  };
  const read = (name: string, where: Where, options: ManyOptions = {}) => {
    const c = table(name);
    const limit = options.many ? options.limit : 1;
    return { c, plan: { collection: c, where: parseWhere(c, where), orderBy: c.defaultOrder.map((o) => ({ column: c.columns.get(o.column)!, direction: o.direction })), limit, offset: undefined } };
  };
  const run = async <T>(write: (scope: WriteScope) => Promise<WriteResult<T>>): Promise<T> => {
    const scope = parent.child();
    const result = await write(scope);
    await result.after();
    scope.committed();
    return result.value;
  };
  return {
    create: async (name: string, object: Record<string, unknown>): Promise<Row> => {
      const c = table(name);
      const rows = await run((scope) => createRows(c, [checkCreateObject(c, object, '/object', true)], { scope, trusted: true }, false));
      return rows[0]!;
    },
    update: async (name: string, where: Where, updates: Update[], options?: ManyOptions): Promise<Row[]> => {
      const { c, plan } = read(name, where, options);
      const ups = checkUpdates(c, updates);
      // A trusted single update that matches nothing answers [] rather than throwing.
      const rows = await run((scope) => updateRows(c, plan, ups, { scope, trusted: true }, true));
      return rows;
    },
    delete: async (name: string, where: Where, options?: ManyOptions): Promise<number> => {
      const { c, plan } = read(name, where, options);
      const rows = await run((scope) => deleteRows(c, plan, { scope, trusted: true }, true));
      return rows.length;
    },
  };
}

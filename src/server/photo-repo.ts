/** `_photos` rows through the serialized writer, so photo metadata follows the one-writer rule (docs/reference/rules-and-hooks.md). */
import type { PhotoRow } from '../define/project.js';
import type { PhotoRepo } from '../photos/index.js';
import { byColumnPlan, type Row } from '../storage/plan.js';
import { deleteRowById, insertRow, selectRows } from '../storage/rows.js';
import type { CollectionModel } from '../core/model.js';
import type { Runtime } from '../core/runtime.js';

export function photoRepo(rt: Runtime): PhotoRepo {
  const c = rt.model.collections.get('_photos') as CollectionModel;
  const d = rt.driver.dialect;
  const byId = (id: string) => byColumnPlan(c, 'id', id);
  return {
    insert: (row: PhotoRow) =>
      rt.writer.submit(async (tx, changes) => {
        const values = new Map(c.columnList.map((col) => [col, (row as unknown as Record<string, unknown>)[col.name] ?? null]));
        const stored = await insertRow(tx, d, c, values);
        changes.push({ table: c.name, op: 'insert', id: stored.id, before: null, after: stored });
      }),
    get: async (id: string) => ((await selectRows(rt.driver, d, byId(id)))[0] as (Row & PhotoRow) | undefined) ?? null,
    delete: (id: string) =>
      rt.writer.submit(async (tx, changes) => {
        const [before] = await selectRows(tx, d, byId(id), true);
        if (!before) return;
        await deleteRowById(tx, d, c, id);
        changes.push({ table: c.name, op: 'delete', id, before, after: null });
      }),
  };
}

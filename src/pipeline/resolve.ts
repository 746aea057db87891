/** Finding the collection a request names (docs/reference/data.md: unknown table or view → 404). */
import { ApiError, badRequest } from '../core/errors.js';
import type { CollectionModel, ProjectModel } from '../core/model.js';

/** `trusted` (server code) also reaches internal `_` tables. */
export function collectionOrThrow(model: ProjectModel, table: unknown, trusted = false): CollectionModel {
  if (table === undefined) throw badRequest('/table', '"table" is required');
  if (typeof table !== 'string') throw badRequest('/table', 'must be a string');
  const c = model.collections.get(table);
  // Internal tables are reachable only when the project gave them rules (docs/reference/photos.md, docs/reference/dashboard.md).
  if (!c || (c.internal && !c.rules && !trusted)) throw new ApiError('NOT_FOUND', `No table or view named "${table.slice(0, 64)}"`);
  return c;
}

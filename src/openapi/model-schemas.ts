/**
 * The per-table schemas a declaration names with `modelSchema(name)`: generated from the project
 * model, since the tables are the project's, not the route's (SPEC §11, §13.13).
 */
import type { DocContext, JsonSchema } from './context.js';

export function modelSchemas(name: string, _ctx: DocContext): JsonSchema {
  throw new Error(`No model schema named "${name}"`);
}

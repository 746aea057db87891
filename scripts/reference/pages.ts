/** The generated pages of docs/reference/, by file name (scripts/gen-reference.ts writes them). */
import { compileProject } from '../../src/core/model.js';
import { routeTable } from '../../src/http/routes.js';
import { buildOpenApi } from '../../src/openapi/index.js';
import { internalTables } from '../../src/server/app.js';
import project from '../../examples/conformance/tablebase.config.js';
import { cliPage } from './cli.js';
import { errorsPage } from './errors.js';
import { httpApiPage } from './http-api.js';

/**
 * The conformance project is imported, not loaded through the CLI's config loader: `tablebase` in it
 * resolves to this checkout's sources (tsconfig paths under tsx, the vitest alias in tests).
 */
export async function referencePages(): Promise<Record<string, string>> {
  const routes = routeTable();
  const doc = buildOpenApi(compileProject(project, internalTables(project)), routes, { serverUrl: '/' });
  return { 'http-api.md': httpApiPage(doc, routes), 'cli.md': cliPage(), 'errors.md': errorsPage() };
}

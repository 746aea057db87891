/** The generated pages of docs/reference/, by file name (scripts/gen-reference.ts writes them). */
import { join } from 'node:path';
import { loadProject } from '../../src/core/load-project.js';
import { compileProject } from '../../src/core/model.js';
import { routeTable } from '../../src/http/routes.js';
import { buildOpenApi } from '../../src/openapi/index.js';
import { internalTables } from '../../src/server/app.js';
import { cliPage } from './cli.js';
import { errorsPage } from './errors.js';
import { httpApiPage } from './http-api.js';

export async function referencePages(root: string): Promise<Record<string, string>> {
  const project = await loadProject(join(root, 'examples/conformance'));
  const routes = routeTable();
  const doc = buildOpenApi(compileProject(project, internalTables(project)), routes, { serverUrl: '/' });
  return { 'http-api.md': httpApiPage(doc, routes), 'cli.md': cliPage(), 'errors.md': errorsPage() };
}

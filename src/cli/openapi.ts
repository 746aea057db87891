/**
 * `tablebase openapi [--project DIR] [--format json|yaml] [--host H] [--port P]`: prints the
 * OpenAPI document of docs/reference/dashboard.md without opening a database. It documents the route table plus
 * every route the server answers (the server registers the auth, photo, stream, email and dashboard
 * routes at start), with the server URL the flags and environment would give `serve`.
 */
import { internalTables } from '../server/app.js';
import { loadProject } from '../core/load-project.js';
import { compileProject } from '../core/model.js';
import { routeTable } from '../http/routes.js';
import { buildOpenApi, toYaml, type OpenApiDocument } from '../openapi/index.js';
import { flag, projectDirOf, type Args } from './args.js';

export async function openApiDocument(args: Args): Promise<OpenApiDocument> {
  const projectDir = projectDirOf(args);
  const project = await loadProject(projectDir);
  const model = compileProject(project, internalTables(project));
  const host = flag(args, 'host') ?? process.env.HOST ?? 'localhost';
  const port = flag(args, 'port') ?? process.env.PORT ?? '8080';
  return buildOpenApi(model, routeTable(), { serverUrl: `http://${host}:${port}` });
}

export async function openapi(args: Args): Promise<void> {
  const format = flag(args, 'format') ?? 'json';
  const doc = await openApiDocument(args);
  // `tablebase openapi | head` closes the pipe early; that is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  process.stdout.write(format === 'yaml' ? toYaml(doc) : `${JSON.stringify(doc, null, 2)}\n`);
}

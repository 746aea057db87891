/** The route description itself and the dashboard page (SPEC §11). */
import type { JsonSchema, RouteDoc } from './context.js';

export function systemSchemas(): Record<string, JsonSchema> {
  return {};
}

const publicRoute = { security: [] };

export const systemRoutes: readonly RouteDoc[] = [
  {
    method: 'GET',
    path: '/swagger.json',
    group: 'system',
    operationId: 'openApiJson',
    summary: 'This OpenAPI document as JSON',
    describe: () => ({ ...publicRoute, responses: { '200': { description: 'OpenAPI 3.0.3', content: { 'application/json': { schema: { type: 'object' } } } } } }),
  },
  {
    method: 'GET',
    path: '/swagger.yaml',
    group: 'system',
    operationId: 'openApiYaml',
    summary: 'This OpenAPI document as YAML',
    describe: () => ({ ...publicRoute, responses: { '200': { description: 'OpenAPI 3.0.3', content: { 'text/yaml': { schema: { type: 'string' } } } } } }),
  },
  {
    method: 'GET',
    path: '/_',
    group: 'dashboard',
    operationId: 'dashboardPage',
    summary: 'The admin dashboard (HTML)',
    describe: () => ({
      ...publicRoute,
      description: 'The page signs in against an admin auth table and then calls the admin-only /dashboard/ routes.',
      responses: { '200': { description: 'The dashboard page', content: { 'text/html': { schema: { type: 'string' } } } } },
    }),
  },
];

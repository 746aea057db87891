/**
 * Health, the route description itself, dashboard metrics, email and the dashboard page
 * (SPEC §11, §13.9, §13.10).
 */
import { errors } from './components.js';
import { jsonOk, schemaRef, type JsonSchema, type RouteDoc } from './context.js';

const int = { type: 'integer', minimum: 0 };
const num = { type: 'number', minimum: 0 };
const counts = { type: 'object', additionalProperties: int };
const nullableTime = { type: 'string', format: 'date-time', nullable: true };
const obj = (properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema => ({ type: 'object', required: Object.keys(properties), properties, ...extra });

export function systemSchemas(): Record<string, JsonSchema> {
  const recipients: JsonSchema = {
    description: 'one address or a list (at most 50)',
    oneOf: [
      { type: 'string', format: 'email' },
      { type: 'array', minItems: 1, maxItems: 50, items: { type: 'string', format: 'email' } },
    ],
  };
  return {
    Metrics: obj({
      uptimeSeconds: num,
      requests: obj({ total: int, byStatus: { ...counts, example: { '200': 10, '404': 1 } }, byRoute: { ...counts, example: { 'GET /db/list': 4 } } }),
      latencyMs: obj({ p50: num, p95: num, p99: num }),
      streams: obj({ open: int }),
      writeQueue: obj({ pending: int, rejected: int }),
      rateLimited: int,
      tables: { ...counts, description: 'rows per table' },
      dbSizeBytes: int,
      cron: {
        type: 'array',
        items: obj({
          name: { type: 'string' },
          schedule: { type: 'string' },
          lastRunAt: nullableTime,
          lastStatus: { type: 'string', nullable: true, example: 'ok' },
          lastError: { type: 'string', nullable: true },
          nextRunAt: nullableTime,
        }),
      },
      memory: obj({ rssBytes: int, heapUsedBytes: int }),
    }),
    EmailTemplateMessage: {
      type: 'object',
      required: ['to', 'template'],
      properties: {
        to: recipients,
        template: { type: 'string', description: 'a project template, or the built-in verifyEmail / resetPassword' },
        variables: { type: 'object', additionalProperties: true },
        subject: { type: 'string', description: "replaces the template's own subject" },
      },
      additionalProperties: false,
    },
    EmailDirectMessage: {
      type: 'object',
      required: ['to', 'subject'],
      description: 'text, html or both',
      properties: { to: recipients, subject: { type: 'string', maxLength: 998 }, text: { type: 'string' }, html: { type: 'string' } },
      additionalProperties: false,
    },
  };
}

const publicRoute = { security: [] };
const adminOnly = { security: [{ bearerAuth: [] }] };

export const systemRoutes: readonly RouteDoc[] = [
  {
    method: 'GET',
    path: '/health',
    group: 'system',
    operationId: 'health',
    summary: 'Health check',
    describe: () => ({
      ...publicRoute,
      responses: {
        '200': jsonOk('The database answers', obj({ status: { type: 'string', enum: ['ok'] } }), { status: 'ok' }),
        '503': { $ref: '#/components/responses/Unavailable' },
      },
    }),
  },
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
    path: '/dashboard/metrics',
    group: 'dashboard',
    operationId: 'dashboardMetrics',
    summary: 'Server metrics (admin)',
    describe: () => ({
      ...adminOnly,
      description: 'Admin token only: 401 without a token, 403 for a non-admin. With `Accept: text/plain` the same in the Prometheus text format.',
      responses: {
        '200': {
          description: 'Metrics',
          content: {
            'application/json': { schema: { type: 'object', required: ['data'], properties: { data: schemaRef('Metrics') }, additionalProperties: false } },
            'text/plain': { schema: { type: 'string', description: 'Prometheus text exposition format' } },
          },
        },
        ...errors('Unauthorized', 'Forbidden', 'Internal'),
      },
    }),
  },
  {
    method: 'POST',
    path: '/email',
    group: 'email',
    operationId: 'sendEmail',
    summary: 'Send an email (admin or email.canSend)',
    describe: () => ({
      ...adminOnly,
      description: "An admin token, or a caller the project's email.canSend allows. No token: 401 UNAUTHENTICATED; refused: 403. An unknown template is 404.",
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { oneOf: [schemaRef('EmailTemplateMessage'), schemaRef('EmailDirectMessage')] },
            example: { to: 'ann@example.com', subject: 'Hello', text: 'Hi Ann' },
          },
        },
      },
      responses: {
        '200': jsonOk('Queued for delivery (SMTP, or the outbox folder)', obj({ id: { type: 'string' } }, { additionalProperties: false }), { id: 'em_01jf8x7k2m3n4p5q' }),
        ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'PayloadTooLarge', 'RateLimited', 'Internal', 'Unavailable'),
      },
    }),
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

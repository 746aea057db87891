/** GET /health (SPEC §11): public; 200 while the database answers, else 503. */
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../core/errors.js';
import { defineRoute } from '../declare.js';

export const healthRoute = defineRoute({
  method: 'GET',
  path: '/health',
  family: 'system',
  summary: 'Health check',
  operationId: 'health',
  access: 'public',
  responses: { 200: Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false }) },
  errors: ['UNAVAILABLE'],
  examples: { data: { status: 'ok' } },
  handler: async (_input, s) => {
    if (!(await s.rt.driver.ping())) throw new ApiError('UNAVAILABLE', 'The database is not answering');
    return { status: 'ok' as const };
  },
});

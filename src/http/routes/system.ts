/**
 * GET /health and the OpenAPI document (docs/reference/dashboard.md): public; no token is read. Health is 200 while
 * the database answers, else 503; with Redis configured and down, still 200 but degraded (docs/reference/scaling.md):
 * the node serves, without sharing.
 */
import { Type } from '@sinclair/typebox';
import { ApiError, InfrastructureError } from '../../core/errors.js';
import { defineRoute, raw } from '../declare.js';

const STARTING = JSON.stringify(new ApiError('UNAVAILABLE', 'Workers are still starting').toJSON());

export const systemRoutes = [
  defineRoute({
    method: 'GET',
    path: '/swagger.json',
    family: 'system',
    summary: 'This OpenAPI document as JSON',
    operationId: 'openApiJson',
    access: 'public',
    responses: { 200: { description: 'OpenAPI 3.0.3', content: { 'application/json': Type.Object({}, { additionalProperties: true }) } } },
    handler: async (_input, s) => raw(200, { 'content-type': 'application/json; charset=utf-8' }, (await s.openapi()).json),
  }),
  defineRoute({
    method: 'GET',
    path: '/swagger.yaml',
    family: 'system',
    summary: 'This OpenAPI document as YAML',
    operationId: 'openApiYaml',
    access: 'public',
    responses: { 200: { description: 'OpenAPI 3.0.3', content: { 'text/yaml': Type.String() } } },
    handler: async (_input, s) => raw(200, { 'content-type': 'text/yaml; charset=utf-8' }, (await s.openapi()).yaml),
  }),
  defineRoute({
    method: 'GET',
    path: '/health',
    family: 'system',
    summary: 'Health check',
    operationId: 'health',
    access: 'public',
    responses: {
      200: Type.Object(
        {
          status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
          redis: Type.Optional(Type.Literal('down')),
          backup: Type.Optional(Type.Literal('failing')),
          storage: Type.Optional(Type.Literal('down')),
        },
        { additionalProperties: false },
      ),
    },
    errors: ['UNAVAILABLE'],
    examples: { data: { status: 'ok' } },
    handler: async (_input, s) => {
      // With workers, 200 only once every worker accepts requests (docs/reference/scaling.md).
      // Answered, not thrown: starting is expected, so it is not logged as a failed request.
      if (s.cluster.ready && !s.cluster.ready()) return raw(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' }, STARTING);
      if (!(await s.rt.driver.ping())) throw new InfrastructureError('database', undefined);
      s.health.recover('database');
      // A full disk stays 503 until the data folder takes a write again (core/health-state.ts).
      // A worker of `--workers` writes nothing itself: its primary says when its writes meet a full
      // disk, and the worker probes the same folder, so it answers 200 once space is freed.
      if (s.cluster.diskFull?.()) s.health.fail('disk');
      if ((await s.health.check()).includes('disk')) throw new InfrastructureError('disk', undefined);
      const redisDown = s.cluster.redis() === 'down';
      // Three consecutive failed syncs (docs/reference/backups.md): serving, but not backed up.
      // A worker of `--workers` has no backup of its own: its primary's state, as last announced.
      const backupFailing = s.backup?.status().failing === true || s.cluster.backupFailing?.() === true;
      // Photo storage down (an unreachable bucket) degrades only the photo routes
      // (docs/reference/object-storage.md): the node still serves everything else.
      const storageDown = (await s.photos.storageHealth()) === 'down';
      if (redisDown || backupFailing || storageDown)
        return {
          status: 'degraded' as const,
          ...(redisDown ? { redis: 'down' as const } : {}),
          ...(backupFailing ? { backup: 'failing' as const } : {}),
          ...(storageDown ? { storage: 'down' as const } : {}),
        };
      return { status: 'ok' as const };
    },
  }),
];

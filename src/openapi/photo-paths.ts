/**
 * The /img routes (SPEC §10). Size and type are checked before the rules: 413 and 415 come
 * before any 403. The allowed types are the project's `allowedMimeTypes`.
 */
import { errors, RATE_LIMIT_HEADERS } from './components.js';
import { headerRef, jsonOk, schemaRef, withHeaders, type DocContext, type JsonSchema, type RouteDoc } from './context.js';
import { exampleId, ID_REMAINDER, timestampOutput } from './values.js';

export const DEFAULT_PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'];
const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;

const allowedTypes = (ctx: DocContext): string[] => ctx.model.project.photos?.allowedMimeTypes ?? DEFAULT_PHOTO_TYPES;
const maxBytes = (ctx: DocContext): number => ctx.model.project.photos?.maxBytes ?? DEFAULT_MAX_BYTES;
const binary: JsonSchema = { type: 'string', format: 'binary' };
const photoId: JsonSchema = { type: 'string', pattern: `^ph_${ID_REMAINDER}$`, example: exampleId('ph') };

export function photoSchemas(): Record<string, JsonSchema> {
  const nullableInt = { type: 'integer', minimum: 0, nullable: true };
  return {
    Photo: {
      type: 'object',
      description: 'The metadata row of an uploaded photo (table `_photos`).',
      required: ['id', 'mimeType', 'size', 'ownerId', 'width', 'height', 'createdAt'],
      properties: {
        id: photoId,
        mimeType: { type: 'string', example: 'image/png' },
        size: { type: 'integer', minimum: 0, description: 'bytes' },
        ownerId: { type: 'string', nullable: true, description: "the uploader's user id, or null" },
        width: nullableInt,
        height: nullableInt,
        createdAt: timestampOutput(),
      },
      additionalProperties: false,
    },
  };
}

const idParam: JsonSchema = { name: 'id', in: 'path', required: true, schema: photoId };

export const photoRoutes: readonly RouteDoc[] = [
  {
    method: 'POST',
    path: '/img',
    group: 'photos',
    operationId: 'uploadPhoto',
    summary: 'Upload a photo',
    describe: (ctx) => ({
      description: `A multipart form with one file part named \`file\`, or the raw bytes with an image content type. At most ${maxBytes(ctx)} bytes (413, cut off as soon as it passes); types ${allowedTypes(ctx).join(', ')} decided from the bytes (415). Then canUpload (default deny).`,
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: binary } } },
          ...Object.fromEntries(allowedTypes(ctx).map((t) => [t, { schema: binary }])),
        },
      },
      responses: {
        '200': withHeaders(
          jsonOk('The stored photo', schemaRef('Photo'), { id: exampleId('ph'), mimeType: 'image/png', size: 1024, ownerId: null, width: 64, height: 64, createdAt: '2026-11-22T10:00:00.000Z' }),
          RATE_LIMIT_HEADERS,
        ),
        ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'PayloadTooLarge', 'UnsupportedMediaType', 'RateLimited', 'Internal', 'Unavailable'),
      },
    }),
  },
  {
    method: 'GET',
    path: '/img/:id',
    group: 'photos',
    operationId: 'getPhoto',
    summary: 'Serve a photo (or a thumbnail)',
    describe: (ctx) => ({
      description: 'canView(jwt, photo) decides (default allow). A thumbnail fits inside WxH keeping the aspect ratio and the format; it is made once and cached.',
      parameters: [
        idParam,
        { name: 'thumb', in: 'query', required: false, description: 'WxH, e.g. 200x200', schema: { type: 'string', pattern: '^[1-9][0-9]{0,4}x[1-9][0-9]{0,4}$' } },
        { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
        { name: 'Range', in: 'header', required: false, description: 'one byte range, e.g. bytes=0-1023 (RFC 9110 §14.2)', schema: { type: 'string' } },
        { name: 'If-Range', in: 'header', required: false, description: 'the ETag the range is valid for', schema: { type: 'string' } },
      ],
      responses: {
        '200': {
          description: 'The bytes',
          headers: {
            ETag: { schema: { type: 'string' } },
            'Cache-Control': { schema: { type: 'string' } },
            'Content-Length': { schema: { type: 'integer' } },
            'X-Content-Type-Options': { schema: { type: 'string', enum: ['nosniff'] } },
          },
          content: Object.fromEntries(allowedTypes(ctx).map((t) => [t, { schema: binary }])),
        },
        '206': {
          description: 'The requested byte range',
          headers: { 'Content-Range': headerRef('Content-Range'), ETag: { schema: { type: 'string' } } },
          content: Object.fromEntries(allowedTypes(ctx).map((t) => [t, { schema: binary }])),
        },
        '304': { description: 'Not modified (If-None-Match matched the ETag)' },
        ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'RangeNotSatisfiable', 'RateLimited', 'Internal'),
      },
    }),
  },
  {
    method: 'DELETE',
    path: '/img/:id',
    group: 'photos',
    operationId: 'deletePhoto',
    summary: 'Delete a photo',
    describe: () => ({
      description: 'canDelete(jwt, photo) decides (default deny). The file and its thumbnails are gone.',
      parameters: [idParam],
      responses: { '204': withHeaders({ description: 'Deleted; no body' }, RATE_LIMIT_HEADERS), ...errors('Unauthorized', 'Forbidden', 'NotFound', 'RateLimited', 'Internal', 'Unavailable') },
    }),
  },
];

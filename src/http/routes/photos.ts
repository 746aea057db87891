/**
 * The /img routes (docs/reference/photos.md): rate limit (upload, view, delete on `_photos`), then the token, then
 * the photo service, which checks size and type before the photo rules (413 and 415 come before
 * any 403) and writes photo bytes to the answer's sink.
 */
import { Type } from '@sinclair/typebox';
import { PHOTOS_TABLE } from '../../ratelimit/policy.js';
import { defineRoute, modelSchema, noContent, stream } from '../declare.js';

const PhotoId = Type.String({ pattern: '^ph_[0-9a-z]{16,32}$', example: 'ph_01jf8x7k2m3n4p5q' });
/** Any string: an unknown or malformed id is the service's 404, not a 400. Documented with its pattern. */
const IdParams = Type.Object({ id: Type.String({ 'x-tablebase-model': 'PhotoId' }) });
const nullableInt = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]);

export const Photo = Type.Object(
  {
    id: PhotoId,
    mimeType: Type.String({ example: 'image/png' }),
    size: Type.Integer({ minimum: 0, description: 'bytes' }),
    ownerId: Type.Union([Type.String(), Type.Null()], { description: "the uploader's user id, or null" }),
    width: nullableInt,
    height: nullableInt,
    createdAt: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, description: 'The metadata row of an uploaded photo (table `_photos`).' },
);

export const photoRoutes = [
  defineRoute({
    method: 'POST',
    path: '/img',
    family: 'photos',
    summary: 'Upload a photo (multipart field `file`, or a raw image body)',
    description:
      'A multipart form with one file part named `file`, or the raw bytes with an image content type. Past the project maxBytes: 413, cut off as soon as it passes; the type is decided from the bytes (415). Then canUpload (default deny).',
    operationId: 'uploadPhoto',
    access: 'optional',
    rateLimit: { table: PHOTOS_TABLE, op: 'upload' },
    body: 'raw',
    rawBody: modelSchema('PhotoUpload'),
    responses: { 200: Photo },
    errors: ['UNSUPPORTED_MEDIA_TYPE', 'UNAVAILABLE'],
    examples: { data: { id: 'ph_01jf8x7k2m3n4p5q', mimeType: 'image/png', size: 1024, ownerId: null, width: 64, height: 64, createdAt: '2026-11-22T10:00:00.000Z' } },
    handler: ({ source, jwt }, s) => s.photos.upload(source, jwt),
  }),
  defineRoute({
    method: 'GET',
    path: '/img/:id',
    family: 'photos',
    summary: 'Serve a photo, or a thumbnail with ?thumb=WxH',
    description: 'canView(jwt, photo) decides (default allow). A thumbnail fits inside WxH keeping the aspect ratio and the format; it is made once and cached.',
    operationId: 'getPhoto',
    access: 'optional',
    rateLimit: { table: PHOTOS_TABLE, op: 'view' },
    // The thumb is checked by the service after the rules (docs/reference/rules-and-hooks.md: 403 before 400).
    params: IdParams,
    query: Type.Object({ thumb: Type.Optional(Type.String({ description: 'WxH, e.g. 200x200', 'x-tablebase-model': 'ThumbSize' })) }),
    headers: Type.Object({
      'If-None-Match': Type.Optional(Type.String()),
      Range: Type.Optional(Type.String({ description: 'one byte range, e.g. bytes=0-1023 (RFC 9110 §14.2)' })),
      'If-Range': Type.Optional(Type.String({ description: 'the ETag the range is valid for' })),
    }),
    responses: {
      200: {
        description: 'The bytes',
        content: modelSchema('PhotoBytes'),
        headers: { ETag: Type.String(), 'Cache-Control': Type.String(), 'Content-Length': Type.Integer(), 'X-Content-Type-Options': Type.Literal('nosniff') },
      },
      206: { description: 'The requested byte range', content: modelSchema('PhotoBytes'), headers: { 'Content-Range': Type.String(), ETag: Type.String() } },
      304: 'Not modified (If-None-Match matched the ETag)',
    },
    errors: ['NOT_FOUND', 'RANGE_NOT_SATISFIABLE'],
    handler: ({ method, headers, params, query, jwt }, s) => stream((sink) => s.photos.serve({ method, headers }, sink, params.id, jwt, query.thumb)),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/img/:id',
    family: 'photos',
    summary: 'Delete a photo and its thumbnails',
    description: 'canDelete(jwt, photo) decides (default deny). The file and its thumbnails are gone.',
    operationId: 'deletePhoto',
    access: 'optional',
    rateLimit: { table: PHOTOS_TABLE, op: 'delete' },
    params: IdParams,
    responses: { 204: 'Deleted; no body' },
    errors: ['NOT_FOUND', 'UNAVAILABLE'],
    handler: async ({ params, jwt }, s) => {
      await s.photos.delete(params.id, jwt);
      return noContent();
    },
  }),
];

/**
 * Shared components: the error envelope of docs/reference/conventions.md with its code enum (the one catalog in
 * core/errors.ts), one reusable response per error status, the response headers every route
 * or family sets, and the bearer scheme (docs/reference/auth.md).
 */
import { ERROR_STATUS, type ErrorCode } from '../core/errors.js';
import { headerRef, schemaRef, type JsonSchema } from './context.js';

const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export function errorSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'Every error answers this envelope (docs/reference/conventions.md). No stack traces, SQL text or file paths.',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', enum: ERROR_CODES },
          message: { type: 'string', description: 'safe to show a user' },
          details: {
            type: 'array',
            description: 'for validation errors: where in the request body the problem is',
            items: {
              type: 'object',
              required: ['path', 'message'],
              properties: { path: { type: 'string', description: 'JSON pointer into the request body', example: '/object/title' }, message: { type: 'string' } },
              additionalProperties: false,
            },
          },
        },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  };
}

interface ErrorResponse {
  readonly status: number;
  readonly codes: readonly ErrorCode[];
  readonly description: string;
  readonly headers?: readonly string[];
}

/** One reusable response per status; a route lists the ones it can answer. */
export const ERROR_RESPONSES = {
  BadRequest: {
    status: 400,
    codes: ['BAD_REQUEST', 'HOOK_REJECTED', 'INVALID_CONFIRMATION_TOKEN'],
    description: 'Malformed body, unknown column, wrong value type, a filter past its bounds, or a before-hook rejected the write',
  },
  /** The 400 of reads whose answers are capped by maxResponseBytes (docs/reference/data.md); replaces BadRequest there. */
  BadRequestOrTooLarge: {
    status: 400,
    codes: ['BAD_REQUEST', 'RESPONSE_TOO_LARGE'],
    description: 'Malformed body, unknown column, wrong value type, a filter past its bounds, or an answer (stream payload) over maxResponseBytes: ask for a smaller limit',
  },
  Unauthorized: {
    status: 401,
    codes: ['INVALID_TOKEN', 'UNAUTHENTICATED', 'INVALID_CREDENTIALS'],
    description: 'A bad or expired bearer token, a missing one on an admin route, or failed credentials',
  },
  Forbidden: { status: 403, codes: ['FORBIDDEN'], description: 'A rule denied, a row failed the row filter, or a write named a view' },
  NotFound: { status: 404, codes: ['NOT_FOUND'], description: 'No such table, view, row, photo or custom operation' },
  Conflict: { status: 409, codes: ['CONFLICT'], description: 'A unique constraint' },
  PayloadTooLarge: { status: 413, codes: ['PAYLOAD_TOO_LARGE'], description: 'The body is over the configured limit' },
  UnsupportedMediaType: { status: 415, codes: ['UNSUPPORTED_MEDIA_TYPE'], description: 'A JSON body sent with another Content-Type, or photo bytes that are not an allowed image type' },
  RangeNotSatisfiable: { status: 416, codes: ['RANGE_NOT_SATISFIABLE'], description: 'The byte range lies outside the photo', headers: ['Content-Range'] },
  RateLimited: { status: 429, codes: ['RATE_LIMITED'], description: 'Over the rate limit (or an open-stream cap)', headers: ['Retry-After'] },
  Internal: { status: 500, codes: ['INTERNAL'], description: 'Unexpected; logged server-side with the request id' },
  NotImplemented: { status: 501, codes: ['NOT_IMPLEMENTED'], description: 'A custom operation registered in rules with no handler' },
  Unavailable: { status: 503, codes: ['WRITE_QUEUE_FULL', 'UNAVAILABLE'], description: 'The write queue is full, or the database is not answering', headers: ['Retry-After'] },
} as const satisfies Record<string, ErrorResponse>;

export type ErrorResponseName = keyof typeof ERROR_RESPONSES;

const EXAMPLE_MESSAGE: Partial<Record<ErrorCode, string>> = { BAD_REQUEST: 'unknown column "nope"' };

function errorResponse(r: ErrorResponse): JsonSchema {
  const code = r.codes[0]!;
  const error: Record<string, unknown> = { code, message: EXAMPLE_MESSAGE[code] ?? r.description };
  if (code === 'BAD_REQUEST') error.details = [{ path: '/object/nope', message: 'unknown column "nope"' }];
  const response: JsonSchema = {
    description: `${r.description} (${r.codes.join(', ')})`,
    content: { 'application/json': { schema: schemaRef('Error'), example: { error } } },
  };
  if (r.headers) response.headers = Object.fromEntries(r.headers.map((h) => [h, headerRef(h)]));
  return response;
}

export function errorResponses(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [name, r] of Object.entries(ERROR_RESPONSES)) out[name] = errorResponse(r);
  return out;
}

export function headers(): Record<string, JsonSchema> {
  const int = { type: 'integer', minimum: 0 };
  return {
    'X-Request-Id': { description: 'Echoed when the client sent one, else generated (docs/reference/conventions.md)', schema: { type: 'string' } },
    'Content-Range': { description: 'bytes */<size> on a 416; bytes <start>-<end>/<size> on a 206 (RFC 9110 §14.4)', schema: { type: 'string' } },
    'Retry-After': { description: 'Whole seconds to wait, at most the policy window (docs/reference/rate-limits.md)', schema: int },
    'RateLimit-Limit': { description: 'The policy maximum for this table and operation (docs/reference/rate-limits.md)', schema: int },
    'RateLimit-Remaining': { description: 'Requests left in the current window', schema: int },
    'RateLimit-Reset': { description: 'Seconds until a request is admitted again', schema: int },
  };
}

/** Headers of answers on rate-limited routes. */
export const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

export function securitySchemes(): Record<string, JsonSchema> {
  return {
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'The accessToken of /auth/sign-in, /auth/sign-up or /auth/refresh. Optional on /db routes: rules see null without it (docs/reference/auth.md).',
    },
  };
}

/** Error responses by name, as a `responses` map fragment. */
export function errors(...names: ErrorResponseName[]): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const n of names) out[String(ERROR_RESPONSES[n].status)] = { $ref: `#/components/responses/${n}` };
  return out;
}

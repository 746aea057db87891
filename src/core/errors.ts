/**
 * The one error catalog (docs/reference/conventions.md). Code decides status; messages are safe to show a client. The
 * raw cause, when there is one, stays server-side for the log.
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  HOOK_REJECTED: 400,
  INVALID_CONFIRMATION_TOKEN: 400,
  INVALID_OAUTH_STATE: 400,
  RESPONSE_TOO_LARGE: 400,
  INVALID_CREDENTIALS: 401,
  INVALID_TOKEN: 401,
  OAUTH_FAILED: 401,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  NOT_IMPLEMENTED: 501,
  WRITE_QUEUE_FULL: 503,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const DEFAULT_MESSAGE: Record<ErrorCode, string> = {
  BAD_REQUEST: 'The request is malformed',
  HOOK_REJECTED: 'The request was rejected',
  INVALID_CONFIRMATION_TOKEN: 'The confirmation token is invalid or expired',
  INVALID_OAUTH_STATE: 'The sign-in attempt is unknown, used or expired; start again',
  OAUTH_FAILED: 'The identity provider did not confirm the sign-in',
  RESPONSE_TOO_LARGE: 'The answer is too large; ask for a smaller limit',
  INVALID_CREDENTIALS: 'Invalid email or password',
  INVALID_TOKEN: 'The access token is invalid or expired',
  UNAUTHENTICATED: 'Authentication required',
  FORBIDDEN: 'Forbidden',
  NOT_FOUND: 'Not found',
  METHOD_NOT_ALLOWED: 'Method not allowed',
  CONFLICT: 'A row with that value already exists',
  PAYLOAD_TOO_LARGE: 'The request body is too large',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported media type',
  RANGE_NOT_SATISFIABLE: 'The requested range is not satisfiable',
  RATE_LIMITED: 'Too many requests',
  INTERNAL: 'Internal server error',
  NOT_IMPLEMENTED: 'Not implemented',
  WRITE_QUEUE_FULL: 'The server is busy; retry shortly',
  UNAVAILABLE: 'Service unavailable',
};

export interface ErrorDetail {
  /** JSON pointer into the request body, e.g. `/object/title`. */
  path: string;
  message: string;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  /** Extra response headers (Retry-After, Allow). */
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message?: string, options: { details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message ?? DEFAULT_MESSAGE[code], options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers;
  }

  toJSON(): { error: { code: ErrorCode; message: string; details?: ErrorDetail[] } } {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }
}

/** A 400 naming where in the body the problem is. */
export function badRequest(path: string, message: string): ApiError {
  return new ApiError('BAD_REQUEST', message, { details: [{ path, message }] });
}

export const forbidden = (): ApiError => new ApiError('FORBIDDEN');
export const notFound = (message?: string): ApiError => new ApiError('NOT_FOUND', message);

/**
 * Maps anything thrown to an ApiError: infrastructure failures (a full disk, PostgreSQL down) are
 * 503 UNAVAILABLE with Retry-After (core/infrastructure.ts); other unknown errors a generic 500.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return infrastructureError(err) ?? new ApiError('INTERNAL', undefined, { cause: err });
}

/*
 * The one mapping of infrastructure failures to 503 UNAVAILABLE with Retry-After
 * (docs/reference/errors.md): a full or failing disk (SQLite `SQLITE_FULL`/`SQLITE_IOERR*`, the
 * file system's `ENOSPC`/`EDQUOT`/`EIO`, photos included) and an unreachable or overloaded
 * PostgreSQL (connection classes 08, 53, 57P, refused/reset/timed-out sockets). Nothing about them
 * is the client's fault, and retrying later works once the operator has acted, so they are never
 * a 500. `toApiError` applies it to everything thrown, and the drivers' `mapError` start with it;
 * `/health` reflects what it saw (core/health-state.ts).
 */
export type Infrastructure = 'disk' | 'database';

export const INFRASTRUCTURE_RETRY_AFTER = '5';

const DISK_CODES = new Set(['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'ENOSPC', 'EDQUOT', 'EIO', 'EROFS']);
const DB_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** Which piece of infrastructure failed, or undefined when `err` is something else. Follows `cause`. */
export function infrastructureOf(err: unknown): Infrastructure | undefined {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (DISK_CODES.has(code) || code.startsWith('SQLITE_IOERR')) return 'disk';
      if (DB_SOCKET_CODES.has(code) || code.startsWith('08') || code.startsWith('53') || code.startsWith('57P')) return 'database';
    }
    // node-postgres: "Connection terminated unexpectedly", "timeout exceeded when trying to connect".
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && /^Connection terminated|timeout exceeded when trying to connect|Client was closed/.test(message)) return 'database';
  }
  return undefined;
}

/** A 503 that says which part is down, for `/health` and the logs. */
export class InfrastructureError extends ApiError {
  readonly infrastructure: Infrastructure;

  constructor(infrastructure: Infrastructure, cause: unknown) {
    const message = infrastructure === 'disk' ? 'The server cannot write to its storage right now; retry later' : 'The database is not reachable right now; retry later';
    super('UNAVAILABLE', message, { headers: { 'Retry-After': INFRASTRUCTURE_RETRY_AFTER }, cause });
    this.infrastructure = infrastructure;
  }
}

export function infrastructureError(err: unknown): InfrastructureError | null {
  if (err instanceof InfrastructureError) return err;
  const kind = infrastructureOf(err);
  return kind ? new InfrastructureError(kind, err) : null;
}

/**
 * Structured logs (pino). Secrets never reach a log line: headers and fields that can carry them
 * are redacted by path, and request bodies and query strings are never logged.
 *
 * Two formats (issue #16 item 4): JSON lines for machines (`serve`), and short coloured lines for a
 * person at a terminal (`dev`, through pino-pretty). `LOG_FORMAT=json|pretty` overrides either.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import { createRequire } from 'node:module';
import type Pretty from 'pino-pretty';

export type LogFormat = 'json' | 'pretty';

/** The format LOG_FORMAT asks for, else the command's default. A wrong value is a one-line error. */
export function logFormat(env: NodeJS.ProcessEnv, fallback: LogFormat): LogFormat {
  const v = env.LOG_FORMAT;
  if (v === undefined || v === '') return fallback;
  if (v !== 'json' && v !== 'pretty') throw new Error(`LOG_FORMAT must be json or pretty, not "${v}"`);
  return v;
}

/** `destination` is for tests; by default lines go to stdout. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', format: LogFormat = 'json', destination?: NodeJS.WritableStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: undefined,
    redact: {
      paths: ['password', 'newPassword', '*.password', '*.newPassword', 'token', '*.token', 'refreshToken', '*.refreshToken', 'headers.authorization', 'req.headers.authorization', 'smtpUrl'],
      censor: '[redacted]',
    },
    serializers: { err: pino.stdSerializers.err },
  };
  if (format === 'pretty') return pino(options, prettyStream(destination));
  return destination ? pino(options, destination as DestinationStream) : pino(options);
}

/** Fields of the request line (see logRequest); shown in the message, not repeated after it. */
const REQUEST_FIELDS = ['method', 'path', 'route', 'status', 'ms', 'requestId'] as const;

/**
 * pino-pretty in-process (no worker thread): `19:04:24.406 INFO  POST /db 200 3.1ms a1b2c3d4-5`.
 * Colours only when stdout is a terminal, or when FORCE_COLOR asks (NO_COLOR and FORCE_COLOR=0 win).
 */
function prettyStream(destination: NodeJS.WritableStream | undefined): DestinationStream {
  // The usual conventions: NO_COLOR set turns colour off; FORCE_COLOR=0|false too; any other FORCE_COLOR turns it on.
  const force = process.env.FORCE_COLOR;
  const colorize = !process.env.NO_COLOR && force !== '0' && force !== 'false' && (force !== undefined || (!destination && process.stdout.isTTY === true));
  // Only `dev` (or LOG_FORMAT=pretty) pays for loading pino-pretty (issue #25).
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof Pretty;
  return pretty({
    colorize,
    ...(destination ? { destination } : {}),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: ['pid', 'hostname', ...REQUEST_FIELDS].join(','),
    singleLine: true,
    sync: true,
    messageFormat: (log, messageKey, _level, { colors }) => {
      const msg = String(log[messageKey] ?? '');
      if (msg !== 'request' || typeof log.status !== 'number') return msg;
      const s = log.status;
      const paint = s >= 500 ? colors.red : s >= 400 ? colors.yellow : s >= 300 ? colors.cyan : colors.green;
      return `${colors.bold(String(log.method))} ${String(log.path)} ${paint(String(s))} ${colors.gray(`${String(log.ms)}ms ${String(log.requestId)}`)}`;
    },
  });
}

export interface RequestLine {
  readonly method: string;
  /** The path without its query string (queries carry JSON bodies: never logged). */
  readonly path: string;
  /** The matched route pattern, or `unmatched`. */
  readonly route: string;
  readonly status: number;
  readonly ms: number;
  readonly requestId: string;
}

/**
 * One line per answered request. 500 is an error (its cause is logged beside it with the same
 * request id); 429 and 503 are warnings (the server is shedding load); the rest is info.
 */
export function logRequest(log: Logger, r: RequestLine): void {
  // The level is checked first so that a disabled level (LOG_LEVEL=warn, the bench) builds no line per request.
  const level = r.status === 500 ? 'error' : r.status === 429 || r.status >= 500 ? 'warn' : 'info';
  if (!log.isLevelEnabled(level)) return;
  const line = { ...r, path: r.path.length > 200 ? `${r.path.slice(0, 200)}…` : r.path, ms: Math.round(r.ms * 10) / 10 };
  requestLogger(log)[level](line, 'request');
}

const unredacted = new WeakMap<Logger, Logger>();

/**
 * The logger's child without redaction, for request lines only. Redaction matches keys (password,
 * token, headers.authorization…) and a request line has none of them (method, path without its
 * query, route, status, ms, request id), so it never changed one; it was most of the line's cost
 * (measured: 8.1–8.6 µs of CPU per line with it, 3.4 without; docs/scaling.md), paid on every
 * request at the default LOG_LEVEL=info.
 */
function requestLogger(log: Logger): Logger {
  let child = unredacted.get(log);
  if (!child) unredacted.set(log, (child = log.child({}, { redact: [] })));
  if (child.level !== log.level) child.level = log.level;
  return child;
}

export type { Logger };

/**
 * Structured logs (pino). Secrets never reach a log line: headers and fields that can carry them
 * are redacted by path, and request bodies are never logged.
 */
import pino, { type Logger } from 'pino';

export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: ['password', 'newPassword', '*.password', '*.newPassword', 'token', '*.token', 'refreshToken', '*.refreshToken', 'headers.authorization', 'req.headers.authorization', 'smtpUrl'],
      censor: '[redacted]',
    },
    serializers: { err: pino.stdSerializers.err },
  });
}

export type { Logger };

/** CORS with an allow-list; none by default (docs/reference/conventions.md). Answers preflights itself. */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** True when the request was a preflight and has been answered. */
export function applyCors(origins: readonly string[], req: IncomingMessage, res: ServerResponse): boolean {
  if (origins.length === 0) return false;
  const origin = req.headers.origin;
  if (!origin || !(origins.includes(origin) || origins.includes('*'))) return false;
  res.setHeader('access-control-allow-origin', origins.includes('*') ? '*' : origin);
  res.setHeader('vary', 'Origin');
  res.setHeader('access-control-expose-headers', 'X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset');
  if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
    res.setHeader('access-control-allow-methods', 'GET, POST, PATCH, DELETE');
    res.setHeader('access-control-allow-headers', 'Authorization, Content-Type, X-Request-Id');
    res.setHeader('access-control-max-age', '600');
    res.writeHead(204);
    res.end();
    return true;
  }
  return false;
}

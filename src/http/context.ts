/**
 * What the server hands a route: the node:http request and response (only http/ sees them), the
 * parsed URL, the client IP and the narrow services. Declared routes never see this object: the
 * lifecycle (lifecycle.ts) turns it into a typed input and writes their answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Services } from './services.js';

export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly services: Services;
  readonly path: string;
  /** The query string without `?`. */
  readonly search: string;
  readonly params: Readonly<Record<string, string>>;
  /** The client IP (docs/reference/rate-limits.md: socket peer, or X-Forwarded-For from trusted proxies). */
  readonly ip: string;
  readonly requestId: string;
}

/** What a route handler receives. The http/ folder is the only one that knows HTTP. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { App } from '../core/app.js';

export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly app: App;
  readonly path: string;
  /** The query string without `?`. */
  readonly search: string;
  readonly params: Readonly<Record<string, string>>;
  /** The client IP (SPEC §9: socket peer, or X-Forwarded-For from trusted proxies). */
  readonly ip: string;
  readonly requestId: string;
}

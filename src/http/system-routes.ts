/** /health (SPEC §11): 200 while the database answers, else 503. */
import type { RequestContext } from './context.js';
import { sendError, sendJson } from './respond.js';
import { ApiError } from '../core/errors.js';

export async function health(ctx: RequestContext): Promise<void> {
  if (await ctx.app.rt.driver.ping()) sendJson(ctx.res, 200, '{"data":{"status":"ok"}}');
  else sendError(ctx.res, new ApiError('UNAVAILABLE', 'The database is not answering'));
}

/**
 * /health (SPEC §11): 200 while the database answers, else 503. With Redis configured and down,
 * still 200 but degraded (SPEC §14): the node serves, without sharing.
 */
import type { RequestContext } from './context.js';
import { sendError, sendJson } from './respond.js';
import { ApiError } from '../core/errors.js';

export async function health(ctx: RequestContext): Promise<void> {
  if (!(await ctx.app.rt.driver.ping())) sendError(ctx.res, new ApiError('UNAVAILABLE', 'The database is not answering'));
  else if (ctx.app.cluster.redis() === 'down') sendJson(ctx.res, 200, '{"data":{"status":"degraded","redis":"down"}}');
  else sendJson(ctx.res, 200, '{"data":{"status":"ok"}}');
}

/**
 * POST /email (SPEC §11, §13.10): an admin token, or the project's `email.canSend` rule. No token:
 * 401 UNAUTHENTICATED; a token the rule refuses: 403.
 */
import { ApiError } from '../core/errors.js';
import { jsonBody } from '../http/body.js';
import type { RequestContext } from '../http/context.js';
import { sendData } from '../http/respond.js';

export async function emailRoute(ctx: RequestContext): Promise<void> {
  const { app } = ctx;
  const jwt = await app.rt.tokens.verify(ctx.req.headers.authorization);
  if (!jwt) throw new ApiError('UNAUTHENTICATED');
  const canSend = app.rt.model.project.email?.canSend;
  const allowed = jwt.admin?.isAdmin === true || (canSend ? (await canSend(jwt)) === true : false);
  if (!allowed) throw new ApiError('FORBIDDEN');
  const body = await jsonBody(ctx.req, ctx.search, app.config.maxBodyBytes);
  sendData(ctx.res, await app.email.send(body as never));
}

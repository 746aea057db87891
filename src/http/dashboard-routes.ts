/**
 * The admin API under /dashboard/ (SPEC §11, §11a): admin token only (401 without a token, 403
 * for a non-admin, whatever table rules say), then the dashboard services. Bodies follow the data
 * API's conventions: GET routes take their JSON in `?body=`.
 */
import { badRequest } from '../core/errors.js';
import { requireAdmin } from '../dashboard/metrics.js';
import { optionalInt } from '../pipeline/plan/body.js';
import { jsonBody } from './body.js';
import type { RequestContext } from './context.js';
import { sendData, sendNoContent } from './respond.js';

type Admin = Awaited<ReturnType<typeof requireAdmin>>;

/** Most dashboard calls carry no body (`?body=` for GETs); a missing one means `{}`. */
function hasBody(ctx: RequestContext): boolean {
  if (new URLSearchParams(ctx.search).has('body')) return true;
  const h = ctx.req.headers;
  return h['transfer-encoding'] !== undefined || Number(h['content-length'] ?? 0) > 0;
}

/** Admin check first (before the body is read), then the body, then the work. */
function admin(work: (ctx: RequestContext, body: Record<string, unknown>, jwt: Admin) => Promise<unknown>, answer: 'data' | 'none' = 'data') {
  return async function handleDashboard(ctx: RequestContext): Promise<void> {
    const jwt = await requireAdmin(ctx);
    const body = hasBody(ctx) ? await jsonBody(ctx.req, ctx.search, ctx.app.config.maxBodyBytes) : {};
    const data = await work(ctx, body, jwt);
    if (answer === 'none') sendNoContent(ctx.res);
    else sendData(ctx.res, data);
  };
}

const text = (body: Record<string, unknown>, key: string, max = 256): string | undefined => {
  const v = body[key];
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string' || v.length > max) throw badRequest(`/${key}`, `must be a string of at most ${max} characters`);
  return v;
};

export const dashboardHistory = admin(async (ctx) => ctx.app.dashboard.history.samples());
export const dashboardSchema = admin(async (ctx) => ctx.app.dashboard.schema());
export const dashboardRows = admin(async (ctx, body) => ctx.app.dashboard.rows.list(body));
export const dashboardCreateRow = admin(async (ctx, body, jwt) => ctx.app.dashboard.rows.create(jwt, body.table, body.object));
export const dashboardUpdateRow = admin(async (ctx, body, jwt) => ctx.app.dashboard.rows.update(jwt, body.table, body.id, body.values));
export const dashboardDeleteRow = admin(async (ctx, body, jwt) => ctx.app.dashboard.rows.delete(jwt, body.table, body.id), 'none');
export const dashboardVerifyUser = admin(async (ctx, body, jwt) => ctx.app.dashboard.users.markVerified(jwt, body.table, body.id));
export const dashboardResetUser = admin(async (ctx, body, jwt) => ctx.app.dashboard.users.sendReset(jwt, body.table, body.id), 'none');
export const dashboardRevokeUser = admin(async (ctx, body, jwt) => ({ revoked: await ctx.app.dashboard.users.revokeSessions(jwt, body.table, body.id) }));
export const dashboardPhotos = admin(async (ctx, body) => ctx.app.dashboard.photos.list(optionalInt(body, 'limit', 1, 200) ?? 48, optionalInt(body, 'offset', 0, 1_000_000_000) ?? 0));
export const dashboardDeletePhoto = admin(async (ctx, _body, jwt) => ctx.app.dashboard.photos.delete(jwt, ctx.params.id!), 'none');
export const dashboardCron = admin(async (ctx) => ctx.app.dashboard.cron.jobs());
export const dashboardRunCron = admin(async (ctx, _body, jwt) => ctx.app.dashboard.cron.runNow(jwt, ctx.params.name!));
export const dashboardLive = admin(async (ctx) => ctx.app.dashboard.live());
export const dashboardLogs = admin(async (ctx, body) => {
  const statusClass = text(body, 'statusClass', 3);
  if (statusClass !== undefined && !/^[1-5]xx$/.test(statusClass)) throw badRequest('/statusClass', 'must be 1xx, 2xx, 3xx, 4xx or 5xx');
  return ctx.app.dashboard.requestLog.query({ statusClass, route: text(body, 'route'), requestId: text(body, 'requestId', 128), limit: optionalInt(body, 'limit', 1, 2000) });
});

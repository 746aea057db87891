/** The dashboard's part of the route table (SPEC §11, §11a): the admin API, then the page and its assets. */
import * as d from './dashboard-routes.js';
import { dashboardPage } from './dashboard-page.js';
import type { Route, RouteGroup, RouteHandler } from './routes.js';

type Make = (method: Route['method'], path: string, group: RouteGroup, summary: string, handler: RouteHandler) => Route;

export function dashboardRoutes(r: Make): Route[] {
  const g = 'dashboard';
  return [
    r('GET', '/dashboard/history', g, 'Per-minute metrics for the last hour (admin)', d.dashboardHistory),
    r('GET', '/dashboard/schema', g, 'Every table and view with its columns (admin)', d.dashboardSchema),
    r('GET', '/dashboard/rows', g, 'List rows of any table or view, rules bypassed (admin)', d.dashboardRows),
    r('POST', '/dashboard/rows', g, 'Create a row; hooks fire (admin)', d.dashboardCreateRow),
    r('PATCH', '/dashboard/rows', g, 'Update a row by id; hooks fire (admin)', d.dashboardUpdateRow),
    r('DELETE', '/dashboard/rows', g, 'Delete a row by id; hooks fire (admin)', d.dashboardDeleteRow),
    r('POST', '/dashboard/users/verify', g, 'Mark a user verified (admin)', d.dashboardVerifyUser),
    r('POST', '/dashboard/users/reset', g, 'Send a user a password-reset email (admin)', d.dashboardResetUser),
    r('POST', '/dashboard/users/revoke', g, 'Revoke every session of a user (admin)', d.dashboardRevokeUser),
    r('GET', '/dashboard/photos', g, 'List photos, newest first (admin)', d.dashboardPhotos),
    r('DELETE', '/dashboard/photos/:id', g, 'Delete a photo (admin)', d.dashboardDeletePhoto),
    r('GET', '/dashboard/cron', g, 'Cron jobs with their recent runs (admin)', d.dashboardCron),
    r('POST', '/dashboard/cron/:name/run', g, 'Run a cron job now, never overlapping a run in progress (admin)', d.dashboardRunCron),
    r('GET', '/dashboard/logs', g, 'Recent requests, newest first (admin)', d.dashboardLogs),
    r('GET', '/dashboard/live', g, 'Open streams by route and table, and the live-query count (admin)', d.dashboardLive),
    r('GET', '/_', g, 'The admin dashboard (HTML)', dashboardPage),
    r('GET', '/_/', g, 'The admin dashboard (HTML)', dashboardPage),
    r('GET', '/_/:screen', g, 'A dashboard screen (HTML)', dashboardPage),
    r('GET', '/_/:screen/:item', g, 'A dashboard screen or asset', dashboardPage),
    r('GET', '/_/:screen/:item/:sub', g, 'A dashboard screen (HTML)', dashboardPage),
  ];
}

/** Admin-only routes under /dashboard and the /email route. */
import { emailRoute } from '../email/route.js';
import type { Route } from '../http/routes.js';
import { metricsRoute } from './metrics.js';

export function dashboardRoutes(): Route[] {
  return [
    Object.freeze({ method: 'GET' as const, path: '/dashboard/metrics', group: 'dashboard' as const, summary: 'Server metrics (admin); Prometheus text with Accept: text/plain', handler: metricsRoute }),
    Object.freeze({ method: 'POST' as const, path: '/email', group: 'email' as const, summary: 'Send an email (admin, or the project email.canSend rule)', handler: emailRoute }),
  ];
}

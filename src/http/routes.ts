/**
 * THE route table: every route the server answers, one family per line, in the order of docs/reference/http-api.md.
 * Each family is declared in one file under ./routes/ (see ./declare.ts for how); the lifecycle,
 * request validation and the OpenAPI document are all generated from these declarations.
 */
import type { DeclaredRoute } from './declare.js';
import { authRoutes } from './routes/auth.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { dashboardBackupRoutes } from './routes/dashboard-backups.js';
import { dataRoutes } from './routes/data.js';
import { emailRoutes } from './routes/email.js';
import { signInRoutes } from './routes/signin.js';
import { pushRoutes } from './routes/push.js';
import { photoRoutes } from './routes/photos.js';
import { streamRoutes } from './routes/stream.js';
import { systemRoutes } from './routes/system.js';

export type Route = DeclaredRoute;

/** Every route, in one list. Pure: the CLI reads it without opening a database. */
export function routeTable(extra: readonly Route[] = []): Route[] {
  return [
    ...dataRoutes, //      /db, /db/many, /db/custom/:name          routes/data.ts
    ...streamRoutes, //    /db/stream, /db/stream/list, …/count     routes/stream.ts
    ...photoRoutes, //     /img, /img/:id                           routes/photos.ts
    ...authRoutes, //      /auth/*                                  routes/auth.ts
    ...signInRoutes, //    /auth/otp/*, magic-link, change-email, oauth  routes/signin.ts
    ...dashboardRoutes, // /dashboard/*                             routes/dashboard.ts
    ...dashboardBackupRoutes, // /dashboard/backups                 routes/dashboard-backups.ts
    ...emailRoutes, //     /email                                   routes/email.ts
    ...pushRoutes, //      /push/devices, /push/vapid-public-key    routes/push.ts
    ...extra,
    ...systemRoutes, //    /swagger.json, /swagger.yaml, /health    routes/system.ts
  ];
}

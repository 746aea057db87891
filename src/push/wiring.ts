/**
 * The two calls the composition root makes: read the project's push options (at start, before the
 * database opens, so a bad key stops the server) and build the service over the runtime.
 */
import type { AppConfig } from '../core/config.js';
import type { Runtime } from '../core/runtime.js';
import type { Project } from '../define/project.js';
import { setupPush, type PushSetup } from './config.js';
import { createPushService, type PushService } from './service.js';

export const setupPushFor = (project: Project, config: AppConfig): Promise<PushSetup> => setupPush(project.push, config.projectDir);

export function createPushFor(rt: Runtime, setup: PushSetup): PushService {
  return createPushService({
    setup,
    dialect: rt.driver.dialect,
    reader: rt.driver,
    write: (fn) => rt.writer.submit((tx) => fn(tx)),
    newId: rt.newId,
    log: rt.log,
    // A database one process serves (SQLite) has no other holder: leases left by a killed one are stale at start.
    releaseAtStart: !rt.driver.dialect.sharedByNodes,
  });
}

/** Push notifications (docs/reference/push.md): providers, devices, the durable queue and its delivery worker. */
export { setupPush, PushConfigError } from './config.js';
export type { PushSetup } from './config.js';
export { createPushService, MAX_LIST, MAX_PAYLOAD_BYTES, MAX_TARGET_USERS } from './service.js';
export type { PushService, PushMetrics, RegisterBody } from './service.js';
export { pushInternalTables, devicesTable, queueTable } from './schema.js';
export type { Device } from './store.js';
export type { Platform, PushProvider, Outcome, PushPayload } from './provider.js';
export { PLATFORMS } from './provider.js';
export { createPushFor, setupPushFor } from './wiring.js';

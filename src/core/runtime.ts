/**
 * The runtime: what every pipeline stage, hook and cron run works with (model, driver, writer,
 * limiter, token verifier, logger, clock), assembled once by createApp (src/server/app.ts).
 * `email` and `push` stay undefined when the project does not configure them. Route handlers get
 * it as `services.rt` (http/services.ts). The storage types are imported for their names only
 * (type-only; .dependency-cruiser.cjs states this one exception to "core imports only define/").
 */
import type { Logger } from 'pino';
import type { EmailMessage, Jwt, PushMessage, PushQueued } from '../define/types.js';
import type { Driver, Tx } from '../storage/driver.js';
import type { WriteQueue } from '../storage/writer.js';
import type { ProjectModel } from './model.js';

/** Step 1's store-agnostic face. `null`: this (table, op) is unlimited. */
export interface Limiter {
  /** Throws ApiError RATE_LIMITED when over; answers response headers when limited, else null. */
  enforce(ip: string, table: string, op: string): Record<string, string> | Promise<Record<string, string>> | null;
}

export interface EmailSender {
  send(message: EmailMessage): Promise<{ id: string }>;
  sendVerification(user: { id: string; email: string }, table: string): Promise<void>;
  sendPasswordReset(user: { id: string; email: string }, table: string): Promise<void>;
}

/** Verifies an Authorization header: null when none was sent; throws 401 INVALID_TOKEN when bad. */
export interface TokenVerifier {
  verify(authorization: string | undefined): Jwt | null | Promise<Jwt | null>;
}

export interface PushSender {
  /** `tx`: the write job a before-hook runs in; the queue rows then commit or roll back with it. */
  send(message: PushMessage, tx?: Tx): Promise<PushQueued>;
}

/**
 * What the write executor tells the auth service about account rows (docs/reference/auth.md):
 * a deleted auth row, or one whose email an admin or a hook changed, loses every session in the
 * same transaction, wherever the write came from (/db, the dashboard, a hook).
 */
export interface AccountSessions {
  revokeAll(tx: Tx, table: string, userId: string, reason: 'deleted' | 'email'): Promise<void>;
}

export interface Runtime {
  readonly model: ProjectModel;
  readonly driver: Driver;
  readonly writer: WriteQueue;
  readonly log: Logger;
  readonly newId: (prefix: string) => string;
  /** Current time as an ISO-8601 string (injectable for tests). */
  readonly now: () => string;
  limiter: Limiter;
  tokens: TokenVerifier;
  email: EmailSender | undefined;
  push: PushSender | undefined;
  /** Undefined in unit tests that build a runtime without auth. */
  accounts?: AccountSessions;
}

/** Most additional mutations one request may cause through hook-queued work (docs/reference/rules-and-hooks.md). */
export const MAX_QUEUED_MUTATIONS = 10;

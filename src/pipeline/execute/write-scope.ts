/**
 * What a write needs of its request's scope (pipeline/scope.ts implements it): the caller, the
 * hook context, and the shared budget of queued mutations (SPEC §6). An interface, so that the
 * writes and the trusted writes the hook context offers do not import the scope back.
 */
import type { Runtime } from '../../core/runtime.js';
import type { Jwt, ServerContext } from '../../define/types.js';

export interface WriteScope {
  readonly rt: Runtime;
  readonly jwt: Jwt | null;
  readonly context: ServerContext;
  /** A scope for a hook-caused write: same caller, same budget. */
  child(): WriteScope;
  queue(what: string, work: () => Promise<unknown>): void;
  committed(): void;
  failed(): void;
}

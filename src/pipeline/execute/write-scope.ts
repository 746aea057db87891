/**
 * What a write needs of its request's scope (pipeline/scope.ts implements it): the caller, the
 * hook context, and the shared budget of queued mutations (docs/reference/rules-and-hooks.md). An interface, so that the
 * writes and the trusted writes the hook context offers do not import the scope back.
 */
import type { Runtime } from '../../core/runtime.js';
import type { Jwt, ServerContext } from '../../define/types.js';
import type { Tx } from '../../storage/driver.js';

export interface WriteScope {
  readonly rt: Runtime;
  readonly jwt: Jwt | null;
  readonly context: ServerContext;
  /**
   * The transaction of the write job now running this request's before-hooks, if any: `push.send`
   * from a before-hook queues in it (commits or rolls back with the write) instead of submitting a
   * job that would wait for the very job it is called from. Passed explicitly rather than through
   * AsyncLocalStorage, whose async hooks cost every promise in the process (~15% of a GET).
   */
  writeTx: Tx | undefined;
  /** A scope for a hook-caused write: same caller, same budget. */
  child(): WriteScope;
  queue(what: string, work: () => Promise<unknown>): void;
  committed(): void;
  failed(): void;
}

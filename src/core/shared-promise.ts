/**
 * Work done once and shared by every caller (a lazily loaded module, an OIDC discovery), except
 * that a failure is not kept: a rejected promise is forgotten, so the next call tries again
 * instead of failing for the life of the process.
 */
export function sharedPromise<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= load().catch((err: unknown) => {
      pending = undefined;
      throw err;
    }));
}

/**
 * Revoked sessions, in memory, so checking a bearer token costs one Map lookup (docs/reference/auth.md logout;
 * docs/reference/auth.md: a confirmed reset and a reused refresh token invalidate the access tokens already
 * issued to the affected sessions).
 *
 * Every access token names its session in `jti` (`<sessionId>.<random>`). A revoked session never
 * issues another token, so every token of it was issued before the revocation and is dead by
 * `revokedAt + accessTokenTtl`; after that the entry can go. So the list holds only sessions
 * revoked within one access-token lifetime: its size is bounded by the revocation rate, not by the
 * number of sessions ever made. It is loaded from storage at start (`_sessions.revoked_at`) and
 * updated as sessions are revoked; a server with several nodes re-loads it periodically.
 */

/** Prune at most this often (amortizes the walk over many lookups). */
const PRUNE_EVERY_MS = 1_000;
/** Slack added to the retention so an entry never leaves a moment before its last token dies. */
const RETENTION_SLACK_MS = 5_000;

export interface RevokedSession {
  readonly sessionId: string;
  /** Epoch milliseconds. */
  readonly revokedAt: number;
}

export class RevocationList {
  /** sessionId → revokedAt (ms), in insertion order, which is roughly revocation order. */
  #revoked = new Map<string, number>();
  #retentionMs: number;
  #now: () => number;
  #lastPrune = 0;
  #listeners: ((entry: RevokedSession) => void)[] = [];

  /** `accessTokenTtlSeconds`: the longest lifetime of any access token this server signs. */
  constructor(accessTokenTtlSeconds: number, now: () => number = Date.now) {
    this.#retentionMs = accessTokenTtlSeconds * 1000 + RETENTION_SLACK_MS;
    this.#now = now;
  }

  /** How long (ms) a revocation must be remembered; storage loads revocations this recent. */
  get retentionMs(): number {
    return this.#retentionMs;
  }

  get size(): number {
    return this.#revoked.size;
  }

  /** Called for revocations made here (not for those loaded): other nodes are told (cluster/). */
  onRevoke(listener: (entry: RevokedSession) => void): void {
    this.#listeners.push(listener);
  }

  revoke(sessionId: string, revokedAt: number = this.#now()): void {
    this.#record(sessionId, revokedAt);
    for (const l of this.#listeners) l({ sessionId, revokedAt });
  }

  #record(sessionId: string, revokedAt: number): void {
    const had = this.#revoked.get(sessionId);
    // Keep the latest moment: it decides when the entry may be pruned, and pruning later is safe.
    if (had === undefined || revokedAt > had) {
      this.#revoked.delete(sessionId);
      this.#revoked.set(sessionId, revokedAt);
    }
    this.#maybePrune();
  }

  /** Merges revocations read from storage (at start, or a periodic sync between nodes). */
  load(entries: Iterable<RevokedSession>): void {
    for (const e of entries) this.#record(e.sessionId, e.revokedAt);
  }

  isRevoked(sessionId: string): boolean {
    this.#maybePrune();
    return this.#revoked.has(sessionId);
  }

  #maybePrune(): void {
    const now = this.#now();
    if (now - this.#lastPrune < PRUNE_EVERY_MS) return;
    this.#lastPrune = now;
    const cutoff = now - this.#retentionMs;
    // Entries are close to time order: stop at the first young one. A stray old entry behind it
    // only stays a little longer, which is safe.
    for (const [id, at] of this.#revoked) {
      if (at > cutoff) break;
      this.#revoked.delete(id);
    }
  }
}

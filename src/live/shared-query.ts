/**
 * One query shared by every stream that asked for it (same `queryKey`), with the fingerprint of
 * its last payload — not the payload: hundreds of queries over large rows would otherwise hold
 * hundreds of megabytes between changes (src/live/memory.ts). A new result is serialized once and
 * the same string goes to every subscriber; a subscriber is pushed only a payload that differs
 * from the last one it got (docs/reference/live.md: identical consecutive results are not pushed again).
 */
import { toApiError, type ApiError } from '../core/errors.js';
import type { CollectionModel } from '../core/model.js';
import type { WhereNode } from '../storage/plan.js';
import { chooseIndex, type IndexChoice, type Indexed } from './change-index.js';
import { fingerprint, type Metered } from './memory.js';
import type { LiveQuery, Subscriber } from './types.js';

export interface Subscription extends Metered {
  readonly subscriber: Subscriber;
  readonly ip: string;
  /** `version` of the query's payload this stream last got, or -1 when it got another one. */
  sent: number;
  /** Fingerprint of the payload it last got (the query's string when they agree). */
  sentPrint: string;
  /** Runs numbered below this started before the stream joined; their results may be older than its first payload. */
  minRun: number;
  closed: boolean;
}

/** How a query reports a stream that must end, without knowing the engine. */
export interface Delivery {
  fail(query: SharedQuery, sub: Subscription, err: ApiError): void;
  pushError(query: SharedQuery, sub: Subscription, err: unknown): void;
  /** Makes room in the memory budget for pushing `bytes` to `sub`; false when `sub` was ended for it. */
  room(sub: Subscription, bytes: number): boolean;
  /** After a push: count what `sub` now holds. */
  pushed(sub: Subscription): void;
}

export class SharedQuery implements Indexed {
  readonly key: string;
  readonly q: LiveQuery;
  readonly collection: CollectionModel;
  readonly where: WhereNode;
  /** Hash-index registration (table queries with an indexable conjunct). */
  readonly choice: IndexChoice | null;
  /** Stamp of the last change that offered this query, so one change tests it once. */
  visit = 0;
  /** Fingerprint of the last serialized payload `{"data": …}` and its version (bumped when it changes). */
  print: string;
  /** Length of the last payload: what its next run is expected to cost. */
  bytes: number;
  version = 0;
  /** A change may have altered the result: run again. */
  dirty = false;
  /** Running or delivering; never twice at once, so payloads stay in order. */
  running = false;
  /** The read itself is in flight (its snapshot time is unknown). */
  reading = false;
  /** An incremental count changed and awaits delivery. */
  deltaPending = false;
  closed = false;
  runId = 0;
  /** Incremental count base, null when not maintained. */
  count: number | null = null;
  #subs = new Set<Subscription>();
  #delivery: Delivery;

  constructor(key: string, q: LiveQuery, json: string, delivery: Delivery) {
    this.key = key;
    this.q = q;
    this.collection = q.plan.collection;
    this.where = q.plan.where;
    this.choice = this.collection.kind === 'table' ? chooseIndex(this.where) : null;
    this.print = fingerprint(json);
    this.bytes = json.length;
    this.#delivery = delivery;
  }

  get size(): number {
    return this.#subs.size;
  }

  /** A snapshot, safe to iterate while streams leave. */
  subscriptions(): Subscription[] {
    return [...this.#subs];
  }

  /** `print`: fingerprint of the payload the stream was first sent, `bytes` its length. */
  add(subscriber: Subscriber, ip: string, print: string, bytes: number): Subscription {
    const current = print === this.print;
    const sub: Subscription = {
      subscriber,
      ip,
      sent: current ? this.version : -1,
      sentPrint: current ? this.print : print,
      minRun: this.running ? this.runId + 1 : 0,
      closed: false,
      held: 0,
      lastBytes: bytes,
    };
    this.#subs.add(sub);
    return sub;
  }

  /** False when already removed. */
  remove(sub: Subscription): boolean {
    if (sub.closed) return false;
    sub.closed = true;
    this.#subs.delete(sub);
    return true;
  }

  /**
   * A new result of run `runId`: pushed to each stream whose last payload differs, after that
   * stream's checks (docs/reference/live.md: token expiry, row filter — they run on every re-run, changed or
   * not). Resolves when every check has settled, so the next run's payloads come after these.
   */
  async deliver(data: unknown, json: string): Promise<void> {
    const previous = this.version;
    const print = fingerprint(json);
    this.bytes = json.length;
    if (print !== this.print) {
      this.print = print;
      this.version++;
    }
    let waits: Promise<void>[] | undefined;
    for (const sub of this.subscriptions()) {
      if (sub.closed || sub.minRun > this.runId) continue;
      const stale = !this.#current(sub, print, previous);
      const check = sub.subscriber.check;
      if (!check) {
        if (stale) this.#push(sub, json);
        continue;
      }
      let pending: Promise<ApiError | null>;
      try {
        pending = check.call(sub.subscriber, data);
      } catch (e) {
        pending = Promise.reject(e);
      }
      const settled = pending.then(
        (err) => {
          if (sub.closed) return;
          if (err) this.#delivery.fail(this, sub, err);
          else if (stale) this.#push(sub, json);
        },
        (e: unknown) => {
          if (!sub.closed) this.#delivery.fail(this, sub, toApiError(e));
        },
      );
      (waits ??= []).push(settled);
    }
    if (waits) await Promise.all(waits);
  }

  /** Does the stream already hold `print`? Versions answer without comparing in the common cases. */
  #current(sub: Subscription, print: string, previous: number): boolean {
    if (sub.sent === this.version) return true;
    if (sub.sent === previous && sub.sent !== -1) return false; // it holds the payload just replaced
    if (sub.sentPrint !== print) return false;
    sub.sent = this.version;
    sub.sentPrint = this.print;
    return true;
  }

  #push(sub: Subscription, json: string): void {
    if (!this.#delivery.room(sub, json.length)) return;
    sub.sent = this.version;
    sub.sentPrint = this.print;
    sub.lastBytes = json.length;
    try {
      sub.subscriber.push(json);
    } catch (err) {
      this.#delivery.pushError(this, sub, err);
      return;
    }
    this.#delivery.pushed(sub);
  }
}

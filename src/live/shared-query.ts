/**
 * One query shared by every stream that asked for it (same `queryKey`), with its last payload.
 * A new result is serialized once and the same string goes to every subscriber; a subscriber is
 * pushed only a payload that differs from the last one it got (SPEC §7: identical consecutive
 * results are not pushed again).
 */
import { toApiError, type ApiError } from '../core/errors.js';
import type { CollectionModel } from '../core/model.js';
import type { WhereNode } from '../storage/plan.js';
import { chooseIndex, type IndexChoice, type Indexed } from './change-index.js';
import type { LiveQuery, Subscriber } from './types.js';

export interface Subscription {
  readonly subscriber: Subscriber;
  readonly ip: string;
  /** `version` of the query's payload this stream last got, or -1 when it got another one. */
  sent: number;
  /** The payload it last got (a reference to the query's string when they agree). */
  sentJson: string;
  /** Runs numbered below this started before the stream joined; their results may be older than its first payload. */
  minRun: number;
  closed: boolean;
}

/** How a query reports a stream that must end, without knowing the engine. */
export interface Delivery {
  fail(query: SharedQuery, sub: Subscription, err: ApiError): void;
  pushError(query: SharedQuery, sub: Subscription, err: unknown): void;
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
  /** Last serialized payload `{"data": …}` and its version (bumped when the text changes). */
  json: string;
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
    this.json = json;
    this.#delivery = delivery;
  }

  get size(): number {
    return this.#subs.size;
  }

  /** A snapshot, safe to iterate while streams leave. */
  subscriptions(): Subscription[] {
    return [...this.#subs];
  }

  /** `json`: the payload the stream was first sent. */
  add(subscriber: Subscriber, ip: string, json: string): Subscription {
    const current = json === this.json;
    const sub: Subscription = {
      subscriber,
      ip,
      sent: current ? this.version : -1,
      sentJson: current ? this.json : json,
      minRun: this.running ? this.runId + 1 : 0,
      closed: false,
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
   * stream's checks (SPEC §7: token expiry, row filter — they run on every re-run, changed or
   * not). Resolves when every check has settled, so the next run's payloads come after these.
   */
  async deliver(data: unknown, json: string): Promise<void> {
    const previous = this.version;
    if (json !== this.json) {
      this.json = json;
      this.version++;
    }
    let waits: Promise<void>[] | undefined;
    for (const sub of this.subscriptions()) {
      if (sub.closed || sub.minRun > this.runId) continue;
      const stale = !this.#current(sub, json, previous);
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

  /** Does the stream already hold `json`? Versions answer without comparing text in the common cases. */
  #current(sub: Subscription, json: string, previous: number): boolean {
    if (sub.sent === this.version) return true;
    if (sub.sent === previous && sub.sent !== -1) return false; // it holds the text just replaced
    if (sub.sentJson !== json) return false;
    sub.sent = this.version;
    sub.sentJson = this.json;
    return true;
  }

  #push(sub: Subscription, json: string): void {
    sub.sent = this.version;
    sub.sentJson = json;
    try {
      sub.subscriber.push(json);
    } catch (err) {
      this.#delivery.pushError(this, sub, err);
    }
  }
}

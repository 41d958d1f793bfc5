/**
 * An in-memory informer as a subscription sees it (the Feed: its event log and its cache), with
 * the same rules as the real one: sequence numbers from 1, each object remembering the position
 * of its last change, a head below which events are gone (retention). For fast, deterministic
 * unit tests of delivery; the integration tests use the real InformerObject.
 */
import type { LogEvent, LogEventType, ReadResult } from "../../src/cache/event-log.ts";
import type { Feed, SnapshotPage } from "../../src/delivery/feed.ts";

interface Cached {
  uid: string;
  rv: string;
  seq: number;
  body: string;
}

export class FakeFeed implements Feed {
  readonly events: LogEvent[] = [];
  readonly objects = new Map<string, Cached>();
  head = 1;
  #rv = 100;
  reads = 0;

  get tail(): number {
    return this.events.at(-1)?.seq ?? 0;
  }

  /** Creates or updates `key` ("ns/name"); returns the event's seq. */
  put(key: string, labels: Record<string, string> = {}, initialList = false): number {
    const previous = this.objects.get(key);
    const rv = String(++this.#rv);
    const [namespace, name] = key.includes("/") ? key.split("/") : ["", key];
    const uid = previous?.uid ?? `uid-${key}`;
    const body = JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace, uid, resourceVersion: rv, labels } });
    const seq = this.#append(previous ? "update" : "add", key, uid, rv, body, previous?.body ?? null, initialList, false);
    this.objects.set(key, { uid, rv, seq, body });
    return seq;
  }

  delete(key: string, finalStateUnknown = false): number {
    const previous = this.objects.get(key);
    if (!previous) throw new Error(`no ${key}`);
    this.objects.delete(key);
    return this.#append("delete", key, previous.uid, previous.rv, previous.body, null, false, finalStateUnknown);
  }

  /**
   * Appends `count` events of an object outside the cache (nothing else changes): the history a log
   * holds from before a subscription, which makes its position a recent one.
   */
  history(count: number): void {
    for (let i = 0; i < count; i++) this.#append("update", "history/h", "uid-history/h", "1", "{}", "{}", false, false);
  }

  /** Drops events before `head` (retention). */
  compact(head: number): void {
    this.head = head;
  }

  async read(after: number, limit: number): Promise<ReadResult> {
    this.reads++;
    const tail = this.tail;
    return {
      expired: after + 1 < this.head,
      bounds: { head: Math.min(this.head, tail + 1), tail },
      events: this.events.filter((e) => e.seq > after && e.seq >= this.head).slice(0, limit),
    };
  }

  async snapshot(at: number, after: string | null, limit: number, namespace?: string): Promise<SnapshotPage> {
    const keys = [...this.objects.keys()]
      .filter((key) => (after === null || key > after) && (namespace === undefined || key.startsWith(`${namespace}/`)))
      .sort();
    const page = keys.slice(0, limit);
    return {
      objects: page
        .filter((key) => this.objects.get(key)!.seq <= at)
        .map((key) => {
          const o = this.objects.get(key)!;
          return { key, uid: o.uid, resourceVersion: o.rv, body: o.body };
        }),
      skipped: page.filter((key) => this.objects.get(key)!.seq > at),
      last: page.at(-1) ?? after,
      done: page.length === keys.length,
    };
  }

  #append(
    type: LogEventType,
    key: string,
    uid: string,
    resourceVersion: string,
    object: string,
    oldObject: string | null,
    initialList: boolean,
    finalStateUnknown: boolean,
  ): number {
    const seq = this.tail + 1;
    this.events.push({ seq, type, key, uid, resourceVersion, object, oldObject, initialList, finalStateUnknown, at: 0 });
    return seq;
  }
}

/**
 * A scripted event log behind a WatchSource, for tests of the watch hub and its relays: ADDED pod
 * events appended by the test, every one a mark.
 */
import type { LogEvent } from "../../src/cache/event-log.ts";
import type { WatchSource } from "../../src/k8s/watch-source.ts";

/** A log of ADDED pod events, every one a mark; `bytesRead` counts the bodies the hub read. */
export function scriptedLog(incarnation = "log-1") {
  const events: LogEvent[] = [];
  let bytesRead = 0;
  const bounds = () => ({ head: 1, tail: events.length });
  const count = (read: LogEvent[]) => {
    for (const e of read) bytesRead += e.object?.length ?? 0;
    return read;
  };
  const source: WatchSource = {
    incarnation,
    read(after, limit, maxBytes = Infinity) {
      const read: LogEvent[] = [];
      let bytes = 0;
      for (const e of events) {
        if (e.seq <= after) continue;
        if (read.length >= limit || (read.length > 0 && bytes >= maxBytes)) break;
        read.push(e);
        bytes += e.object?.length ?? 0;
      }
      return { events: count(read), expired: false, bounds: bounds() };
    },
    boundaryAfter(after, span) {
      const last = Math.min(events.length, after + Math.max(span, 1));
      return last > after ? last : undefined;
    },
    readInOrder(after, end, skip, limit) {
      return { events: count(events.filter((e) => e.seq > after && e.seq <= end).slice(skip, skip + limit)), expired: false, bounds: bounds() };
    },
    bounds,
    cacheResourceVersion: () => String(100 + events.length),
    // Every event adds its own object: the list is all of them, at the tail, and says its RV.
    listAt: () => ({ expired: false, items: events.map((e) => e.object!), keys: events.map((e) => e.key), at: events.length, resourceVersion: String(100 + events.length) }),
    positionOf: () => ({ after: events.length }),
    fromEarlierServer: () => false,
  };
  return {
    source,
    get bytesRead() {
      return bytesRead;
    },
    append(name: string, padding = 0) {
      const seq = events.length + 1;
      const rv = String(100 + seq);
      const object = JSON.stringify({ kind: "Pod", apiVersion: "v1", metadata: { name, namespace: "ns", resourceVersion: rv }, data: "x".repeat(padding) });
      events.push({ seq, type: "add", key: `ns/${name}`, uid: name, resourceVersion: rv, object, oldObject: null, initialList: false, finalStateUnknown: false, at: 0 });
    },
  };
}

/**
 * What reading the event log keeps in memory (DESIGN invariant 11; issue 27 item 3; review N3, N4):
 * bodies handed out are copies, never views that keep a segment's whole text alive; a read stops
 * decoding where its budget is spent; a long run is sorted from entries decoded a piece at a time.
 * What V8 really keeps alive is measured by bench/memory.mjs (BENCHMARKS.md "Memory while catching up").
 */
import { beforeEach, describe, expect, it } from "vitest";
import { EventLog, type NewLogEvent } from "../../src/cache/event-log.ts";
import { SEGMENT_EVENTS, segmentMemory, type StateText } from "../../src/cache/log-segment.ts";
import { FeedHost } from "../../src/delivery/feed-host.ts";
import { WatchBatches } from "../../src/k8s/watch-batches.ts";
import type { WatchSource } from "../../src/k8s/watch-source.ts";
import type { Db } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";

function event(seq: number, key: string, rv: number, body: string, oldBody: StateText | null): NewLogEvent {
  return { seq, type: oldBody === null ? "add" : "update", key, uid: key, resourceVersion: String(rv), body, oldBody, initialList: false, finalStateUnknown: false, at: 0 };
}

/** Appends one transaction: `changes` as [key, body]; an update's old state refers to the key's last event. */
function appender(db: Db, log: EventLog) {
  const last = new Map<string, number>();
  let rv = 1_000;
  return (changes: [key: string, body: string][]) =>
    db.transaction(() => {
      let seq = log.nextSeq();
      const events = changes.map(([key, body]) => {
        const before = last.get(key);
        last.set(key, seq);
        return event(seq++, key, rv++, body, before === undefined ? null : { seq: before });
      });
      log.appendInTx(events);
      return seq - 1;
    });
}

const pad = (units: number) => "x".repeat(units);
/** A source over a real log whose runs all end at `marks`. */
function sourceOf(log: EventLog, marks: number[]): WatchSource {
  return {
    incarnation: log.incarnation(),
    read: (after, limit, maxBytes) => log.read(after, limit, maxBytes),
    bounds: () => log.bounds(),
    boundaryAfter: (after, span) => marks.filter((m) => m > after && m <= after + span).at(-1) ?? marks.find((m) => m > after),
    readInOrder: (after, end, skip, limit) => log.readInOrder(after, end, skip, limit),
    cacheResourceVersion: () => "0",
    listAt: () => ({ expired: false, items: [], keys: [], at: 0 }),
    positionOf: () => ({ after: 0 }),
    fromEarlierServer: () => false,
  };
}

beforeEach(() => segmentMemory.reset());

describe("event log memory", () => {
  it("copies each body out of its segment once, the old states from other segments too", () =>
    withDb((db) => {
      const log = new EventLog(db);
      const append = appender(db, log);
      // 40 segments of 40,000 units each, one object each; then one transaction updates all 40:
      // each update's old state is in another segment.
      const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
      const first = (key: string) => JSON.stringify({ key, filler: pad(40_000) });
      for (const key of keys) append([[key, first(key)]]);
      const updated = append(keys.map((key) => [key, JSON.stringify({ key })]));
      segmentMemory.reset();
      const read = log.read(updated - 40, 40, 4 * 1024 * 1024);
      expect(read.events.map((e) => e.key)).toEqual(keys);
      expect(read.events.map((e) => e.oldObject)).toEqual(keys.map(first));
      // Each body copied out once: slices of the segments' texts would keep all 41 alive for as long
      // as any body is held (what V8 keeps: bench/memory.mjs).
      expect(segmentMemory.bodyUnits).toBe(read.events.reduce((sum, e) => sum + e.object!.length + e.oldObject!.length, 0));
    }));

  it("stops decoding a segment's events where the read's budget is spent", () =>
    withDb((db) => {
      const log = new EventLog(db);
      const append = appender(db, log);
      // One segment of SEGMENT_EVENTS events of 1,000 units each.
      append(Array.from({ length: SEGMENT_EVENTS }, (_, i) => [`k${i}`, pad(1_000)]));
      segmentMemory.reset();
      const read = log.read(0, 1_000, 10_000);
      expect(read.events).toHaveLength(10);
      // Not every event of the segment materialised before the budget is checked.
      expect(segmentMemory.bodyUnits).toBeLessThanOrEqual(10_000);
    }));

  it("serves a watcher and a subscription catching up over many segments with copied bodies", () =>
    withDb(async (db) => {
      const log = new EventLog(db);
      const append = appender(db, log);
      const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);
      const marks: number[] = [];
      for (let round = 0; round < 6; round++) for (let i = 0; i < keys.length; i += 50) marks.push(append(keys.slice(i, i + 50).map((key) => [key, JSON.stringify({ key, round, filler: pad(3_000) })])));
      segmentMemory.reset();
      const batches = new WatchBatches(() => sourceOf(log, marks), { parsed: 0, framed: 0 });
      let cursor = { after: 200, skip: 0 };
      let watched = 0;
      for (let got = await batches.next(cursor, false); got !== undefined && got !== "expired"; got = await batches.next(cursor, false)) {
        watched += got.range.ordered.length;
        cursor = got.next;
      }
      expect(watched).toBe(1_000);
      const feed = new FeedHost({ subscribers: () => undefined as never, send: async () => {}, budget: () => ({ take: () => true, end: () => {} }), who: () => undefined, clock: { now: () => 0 } } as never);
      let fed = 0;
      for (let after = 200; after < log.bounds().tail; ) {
        const page = feed.readLog(log, after, 1_000);
        fed += page.events.length;
        after = page.events.at(-1)!.seq;
      }
      expect(fed).toBe(1_000);
      // Both paths' bodies came out of segments as copies (what V8 keeps: bench/memory.mjs).
      expect(segmentMemory.bodyUnits).toBeGreaterThan(2 * 1_000 * 3_000);
    }));

  it("sorts a long run from entries decoded a piece at a time", () =>
    withDb((db) => {
      const log = new EventLog(db);
      const append = appender(db, log);
      // One run of 5,000 events (a relist's: one mark at its end), RVs far from log order.
      const keys = Array.from({ length: 5_000 }, (_, i) => `k${String((i * 7_919) % 5_000).padStart(5, "0")}`);
      for (let i = 0; i < keys.length; i += 500) append(keys.slice(i, i + 500).map((key) => [key, "{}"]));
      segmentMemory.reset();
      const page = log.readInOrder(0, 5_000, 0, 100);
      expect(page.events).toHaveLength(100);
      // About one statement's segments at once, not the run's 5,000 entries.
      expect(segmentMemory.largestDecode).toBeLessThanOrEqual(4 * SEGMENT_EVENTS);
    }));
});

import { describe, expect, it } from "vitest";
import { EventLog, type NewLogEvent } from "../../src/cache/event-log.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { type Db, stmt } from "../../src/sql.ts";
import { withCountedDb, withDb } from "../helpers/db.ts";

const HOUR = 3_600_000;

function event(seq: number, key: string, rv: string, at: number, prevSeq: number | null = null): NewLogEvent {
  return {
    seq,
    type: prevSeq === null ? "add" : "update",
    key,
    uid: `uid-${key}`,
    resourceVersion: rv,
    body: JSON.stringify({ metadata: { name: key, resourceVersion: rv } }),
    prevSeq,
    initialList: false,
    finalStateUnknown: false,
    at,
  };
}

function setup(db: Db) {
  const log = new EventLog(db, Indexer.pinsEventSql);
  const indexer = new Indexer(db);
  /** Appends an event and makes it the cached state of its key. */
  const change = (key: string, rv: string, at: number) =>
    db.transaction(() => {
      const previous = indexer.getMetaMany([key]).get(key);
      const seq = log.nextSeq();
      log.appendInTx([event(seq, key, rv, at, previous?.seq ?? null)]);
      indexer.writeInTx([{ key, meta: { namespace: "", name: key, uid: "", resourceVersion: rv }, seq, object: () => ({ metadata: {} }) }], []);
      return seq;
    });
  const compact = (now: number, maxEvents: number, maxAgeSeconds = 86_400, keepFrom?: number) => {
    let continuing = false;
    while (db.transaction(() => log.compactInTx(now, { maxEvents, maxAgeSeconds }, 2, { ...(keepFrom === undefined ? {} : { keepFrom }), continuing }))) {
      continuing = true; // bounded batches
    }
  };
  return { log, change, compact };
}

describe("EventLog", () => {
  it("numbers events in order and reads after a cursor, with the old state of updates", () =>
    withDb((db) => {
      const s = setup(db);
      expect([s.change("a", "1", 0), s.change("b", "2", 0), s.change("a", "3", 0)]).toEqual([1, 2, 3]);
      const read = s.log.read(1, 10);
      expect(read.events.map((e) => [e.seq, e.type, e.key])).toEqual([
        [2, "add", "b"],
        [3, "update", "a"],
      ]);
      expect(JSON.parse(read.events[1]!.oldObject!).metadata.resourceVersion).toBe("1");
      expect(read.bounds).toEqual({ head: 1, tail: 3 });
      expect(read.expired).toBe(false);
    }));

  it("moves the head past events beyond the count bound and reports readers behind it as expired", () =>
    withDb((db) => {
      const s = setup(db);
      for (let i = 1; i <= 10; i++) s.change(`k${i}`, String(i), 0);
      s.compact(0, 4);
      expect(s.log.bounds()).toEqual({ head: 7, tail: 10 });
      expect(s.log.read(0, 100)).toMatchObject({ expired: true });
      expect(s.log.read(6, 100).expired).toBe(false);
      expect(s.log.read(6, 100).events.map((e) => e.seq)).toEqual([7, 8, 9, 10]);
    }));

  it("moves the head past events older than the age bound, but keeps the newest event", () =>
    withDb((db) => {
      const s = setup(db);
      s.change("a", "1", 0);
      s.change("b", "2", HOUR);
      s.change("c", "3", 2 * HOUR);
      // maxEvents 100: the head moves by single events (the step is a hundredth of it).
      s.compact(2 * HOUR + 1, 100, 3_600);
      expect(s.log.bounds().head).toBe(3);
      s.compact(10 * HOUR, 100, 3_600);
      expect(s.log.bounds()).toEqual({ head: 3, tail: 3 });
    }));

  it("never moves the head past `keepFrom` by age (the last transaction's events), only by count", () =>
    withDb((db) => {
      const s = setup(db);
      for (let i = 1; i <= 6; i++) s.change(`k${i}`, String(i), 0);
      s.compact(10 * HOUR, 100, 3_600, 4);
      expect(s.log.bounds()).toEqual({ head: 4, tail: 6 });
      expect(s.log.read(3, 10).events.map((e) => e.seq)).toEqual([4, 5, 6]);
      s.compact(10 * HOUR, 2, 3_600, 4);
      expect(s.log.bounds()).toEqual({ head: 5, tail: 6 });
    }));

  it("keeps the bodies the cache and retained updates still point at, and deletes the rest", () =>
    withDb((db) => {
      const s = setup(db);
      s.change("a", "1", 0); // 1: a's state until 4
      s.change("b", "2", 0); // 2: b's current state
      s.change("c", "3", 0); // 3: c's state until 5
      s.change("a", "4", 0); // 4: a's current state (old state: 1)
      s.change("c", "5", 0); // 5: c's current state (old state: 3)
      s.compact(0, 2); // head = 4: rows 1..3 are before it
      const stored = db.all<{ seq: number }>({ name: "test.seqs", text: "SELECT seq FROM event_log ORDER BY seq" });
      // 1 and 3 are the old states of retained updates 4 and 5; 2 is b's current state
      expect(stored.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
      s.change("a", "6", 0);
      s.change("c", "7", 0);
      s.compact(0, 2); // head = 6
      const after = db.all<{ seq: number }>({ name: "test.seqs", text: "SELECT seq FROM event_log ORDER BY seq" });
      // 1, 3 unreferenced now; 4 and 5 are old states of 6 and 7; 2 is still b's state
      expect(after.map((r) => r.seq)).toEqual([2, 4, 5, 6, 7]);
      expect(JSON.parse(s.log.read(5, 1).events[0]!.oldObject!).metadata.resourceVersion).toBe("4");
    }));

  it("moves the head in steps of a hundredth of maxEvents, so rows before it go in bulk", () =>
    withDb((db) => {
      const s = setup(db);
      for (let i = 1; i <= 1_015; i++) s.change(`k${i % 3}`, String(i), 0);
      s.compact(0, 1_000); // 15 past the count bound: a step of 10 goes, 5 stay until the step is full
      expect(s.log.bounds()).toEqual({ head: 16, tail: 1_015 });
      for (let i = 1_016; i <= 1_019; i++) s.change(`k${i % 3}`, String(i), 0);
      s.compact(0, 1_000);
      expect(s.log.bounds().head).toBe(16);
      for (let i = 1_020; i <= 1_025; i++) s.change(`k${i % 3}`, String(i), 0);
      s.compact(0, 1_000); // now 10 can go
      expect(s.log.bounds().head).toBe(26);
      // Before the head only the old states of retained updates 26–28 stay (three keys take turns).
      expect(db.all<{ seq: number }>({ name: "test.below", text: "SELECT seq FROM event_log WHERE seq < 26 ORDER BY seq" }).map((r) => r.seq)).toEqual([23, 24, 25]);
      expect(s.log.read(25, 2_000).events).toHaveLength(1_000);
    }));

  it("refuses an append that does not continue the sequence", () =>
    withDb((db) => {
      const s = setup(db);
      s.change("a", "1", 0);
      expect(() => db.transaction(() => s.log.appendInTx([event(5, "b", "2", 0)]))).toThrow(/out of sequence/);
    }));

  it("never reuses sequence numbers after retention deleted rows", () =>
    withDb((db) => {
      const s = setup(db);
      for (let i = 0; i < 5; i++) s.change("a", String(i), 0);
      s.compact(0, 1);
      expect(s.change("b", "9", 0)).toBe(6);
    }));
});

describe("EventLog incarnation", () => {
  it("names each log made anew differently and stays the same for one log", async () => {
    const first = await withDb((db) => [new EventLog(db, Indexer.pinsEventSql).incarnation(), new EventLog(db, Indexer.pinsEventSql).incarnation()]);
    const second = await withDb((db) => new EventLog(db, Indexer.pinsEventSql).incarnation());
    expect(first[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(first[1]).toBe(first[0]);
    expect(second).not.toBe(first[0]);
  });
});

describe("EventLog.readInOrder", () => {
  it("pages a span longer than a page in resourceVersion order, sorting it once, and expires it once the head passes", () =>
    withCountedDb((db, rowsRead) => {
      const { log, change } = setup(db);
      // 2,500 events whose RVs run backwards, and by length: RV order is far from log order.
      const rvs = Array.from({ length: 2_500 }, (_, i) => String(100_000 - i * 37));
      rvs.forEach((rv, i) => change(`k${i}`, rv, 0));
      const read: string[] = [];
      const before = rowsRead();
      for (let skip = 0; ; skip += 250) {
        const page = log.readInOrder(0, 2_500, skip, 250);
        expect(page.expired).toBe(false);
        read.push(...page.events.map((e) => e.resourceVersion));
        if (page.events.length < 250) break;
      }
      const inOrder = [...rvs].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
      expect(read).toEqual(inOrder);
      // The span is sorted once and each event read once by number (about five rows read per event,
      // counting the sort and json_each's), not a sort of the whole span for each of its eleven
      // pages (an OFFSET page over a sorting query read 55,012 here).
      expect(rowsRead() - before).toBeLessThan(6 * 2_500);
      // Another span in between, then the first again: each read as its own order says.
      expect(log.readInOrder(10, 12, 0, 10).events.map((e) => e.seq)).toEqual([12, 11]);
      expect(log.readInOrder(0, 2_500, 2_000, 1_000).events.map((e) => e.resourceVersion)).toEqual(inOrder.slice(2_000));
      db.run(stmt("test.head", "UPDATE event_log_state SET head = 5"));
      expect(log.readInOrder(0, 2_500, 1_000, 1_000)).toMatchObject({ expired: true, events: [] });
    }));
});

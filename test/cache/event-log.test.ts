import { describe, expect, it } from "vitest";
import { EventLog, type NewLogEvent } from "../../src/cache/event-log.ts";
import { SEGMENT_EVENTS, SEGMENT_TEXT, type StateText } from "../../src/cache/log-segment.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { type Db, stmt } from "../../src/sql.ts";
import { withCountedDb, withDb } from "../helpers/db.ts";

const HOUR = 3_600_000;

function event(seq: number, key: string, rv: string, at: number, oldBody: StateText | null = null): NewLogEvent {
  return {
    seq,
    type: oldBody === null ? "add" : "update",
    key,
    uid: `uid-${key}`,
    resourceVersion: rv,
    body: JSON.stringify({ metadata: { name: key, resourceVersion: rv } }),
    oldBody,
    initialList: false,
    finalStateUnknown: false,
    at,
  };
}

const segmentRows = (db: Db) =>
  db.all<{ first_seq: number; last_seq: number }>(stmt("test.segments", "SELECT first_seq, last_seq FROM event_segments ORDER BY first_seq")).map((r) => [r.first_seq, r.last_seq]);

function setup(db: Db) {
  const log = new EventLog(db);
  const indexer = new Indexer(db);
  /** Appends events (one transaction) and makes each the cached state of its key. */
  const changeAll = (changes: [key: string, rv: string][], at: number) =>
    db.transaction(() => {
      // As processDeltas records a replaced state: a reference while the log holds it, else a copy.
      const { head } = log.bounds();
      const cached = indexer.getMetaMany(changes.map(([key]) => key));
      let seq = log.nextSeq();
      const events: NewLogEvent[] = [];
      for (const [key, rv] of changes) {
        const before = cached.get(key);
        events.push(event(seq, key, rv, at, before === undefined ? null : before.seq >= head ? { seq: before.seq } : indexer.get(key)!.body));
        const body = events.at(-1)!.body as string;
        indexer.writeInTx([{ key, meta: { namespace: "", name: key, uid: "", resourceVersion: rv }, seq, body, object: () => ({ metadata: {} }) }], []);
        cached.set(key, { resourceVersion: rv, seq });
        seq++;
      }
      log.appendInTx(events);
      return seq - 1;
    });
  const change = (key: string, rv: string, at: number) => changeAll([[key, rv]], at);
  const compact = (now: number, maxEvents: number, maxAgeSeconds = 86_400, keepFrom?: number) => {
    let continuing = false;
    while (db.transaction(() => log.compactInTx(now, { maxEvents, maxAgeSeconds }, 2, { ...(keepFrom === undefined ? {} : { keepFrom }), continuing }))) {
      continuing = true; // bounded batches
    }
  };
  return { log, change, changeAll, compact };
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

  it("stores an append as one segment row, and deletes segments wholly before the head that no retained event refers to", () =>
    withDb((db) => {
      const s = setup(db);
      const written = db.rows.written;
      s.changeAll([["a", "1"], ["b", "2"], ["c", "3"]], 0); // 1–3
      s.changeAll([["a", "4"], ["c", "5"]], 0); // 4–5: updates, referring to the states they replaced (1, 3)
      expect(segmentRows(db)).toEqual([[1, 3], [4, 5]]);
      // Three objects added (a row and its key's index entry each), two updated (their row), a row per append.
      expect(db.rows.written - written).toBe(3 * 2 + 2 + 2);
      s.compact(0, 3); // head = 3: segment 1–3 still holds event 3
      expect(s.log.bounds().head).toBe(3);
      expect(s.log.read(0, 10)).toMatchObject({ expired: true });
      expect(s.log.read(2, 10).events.map((e) => e.seq)).toEqual([3, 4, 5]);
      s.compact(0, 2); // head = 4: segment 1–3 is before it, but 4 and 5 refer to 1 and 3
      expect(segmentRows(db)).toEqual([[1, 3], [4, 5]]);
      const [a, c] = s.log.read(3, 10).events;
      expect([JSON.parse(a!.oldObject!).metadata.resourceVersion, JSON.parse(c!.oldObject!).metadata.resourceVersion]).toEqual(["1", "3"]);
      // b last changed before the head: its update copies the state it replaced.
      s.change("b", "6", 0);
      s.compact(0, 1); // head = 6: nothing retained refers to 1–3 or 4–5 any more
      expect(segmentRows(db)).toEqual([[6, 6]]);
      expect(JSON.parse(s.log.read(5, 1).events[0]!.oldObject!).metadata.resourceVersion).toBe("2");
    }));

  it("keeps at most about a window more than maxEvents however old the states updates replace", () =>
    withDb((db) => {
      const s = setup(db);
      // 100 quiet keys, then a churn of 30 others; now and then a quiet key changes, its old state long gone.
      s.changeAll(Array.from({ length: 100 }, (_, i): [string, string] => [`quiet${i}`, String(i + 1)]), 0);
      let rv = 100;
      for (let round = 0; round < 60; round++) {
        s.changeAll(Array.from({ length: 10 }, (_, i): [string, string] => [`busy${(round * 10 + i) % 30}`, String(++rv)]), 0);
        if (round % 3 === 0) s.change(`quiet${round}`, String(++rv), 0);
        s.compact(0, 50);
        // A reference goes back at most a window (and a step) from an event that is retained at most a
        // window: two windows, a batch, and the segment the oldest target sits in (the quiet keys' 100).
        const [first] = segmentRows(db)[0]!;
        expect(s.log.bounds().tail - first!, `round ${round}`).toBeLessThanOrEqual(2 * (50 + 1) + 11 + 100);
      }
      expect(segmentRows(db)[0]![0]).toBeGreaterThan(s.log.bounds().tail - 2 * (50 + 1) - 11);
      // Every retained update still reads the state it replaced.
      for (const e of s.log.read(0, 1_000).events) if (e.type === "update") expect(JSON.parse(e.oldObject!).metadata.name).toBe(e.key);
    }));

  it("moves the head in steps of a hundredth of maxEvents, so segments before it go in bulk", () =>
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
      // Kept from 23 on: update 26 refers to 23, the state it replaced (three keys take turns).
      expect(segmentRows(db)[0]).toEqual([23, 23]);
      expect(s.log.read(25, 2_000).events).toHaveLength(1_000);
      expect(JSON.parse(s.log.read(25, 1).events[0]!.oldObject!).metadata.resourceVersion).toBe("23");
    }));

  it("splits an append into segments by event count and by text, and reads it back whole", () =>
    withDb((db) => {
      const s = setup(db);
      const many = Array.from({ length: SEGMENT_EVENTS + 10 }, (_, i): [string, string] => [`k${i}`, String(i + 1)]);
      s.changeAll(many, 0);
      expect(segmentRows(db)).toEqual([[1, SEGMENT_EVENTS], [SEGMENT_EVENTS + 1, SEGMENT_EVENTS + 10]]);
      expect(s.log.read(0, 1_000).events.map((e) => e.key)).toEqual(many.map(([key]) => key));
      // A read stops at its limit, inside a segment too, and goes on from there.
      expect(s.log.read(0, 3).events.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(s.log.read(SEGMENT_EVENTS - 1, 3).events.map((e) => e.seq)).toEqual([SEGMENT_EVENTS, SEGMENT_EVENTS + 1, SEGMENT_EVENTS + 2]);
    }));

  it("stops a read once its events' bodies reach the bound, with at least one event", () =>
    withDb((db) => {
      const s = setup(db);
      s.changeAll(Array.from({ length: 50 }, (_, i): [string, string] => [`k${i}`, String(i + 1)]), 0);
      const size = s.log.read(0, 1).events[0]!.object!.length;
      expect(s.log.read(0, 50, 10 * size).events).toHaveLength(10);
      expect(s.log.read(0, 50, 1).events.map((e) => e.seq)).toEqual([1]);
      expect(s.log.read(45, 50, 10 * size).events.map((e) => e.seq)).toEqual([46, 47, 48, 49, 50]);
    }));

  it("stores an event too big for one row over several, never cutting a surrogate pair, and reads it back whole", () =>
    withDb((db) => {
      const log = new EventLog(db);
      // A 1.9 MB-ish state (characters of 4 UTF-8 bytes each: surrogate pairs) replaced by another:
      // both together are far over a 2 MB row.
      const big = (tag: string) => JSON.stringify({ metadata: { name: "big", resourceVersion: tag }, data: { x: "😀".repeat(SEGMENT_TEXT / 2 + 1) } });
      const [before, after] = [big("1"), big("2")];
      db.transaction(() =>
        log.appendInTx([
          { ...event(1, "small", "1", 0), body: "{}" },
          { ...event(2, "big", "2", 0, before), body: after },
          { ...event(3, "small", "3", 0, "{}"), body: "{}" },
        ]),
      );
      expect(segmentRows(db)).toEqual([[1, 1], [2, 2], [3, 3]]);
      const parts = db.all<{ text: string }>(stmt("test.parts", "SELECT text FROM event_segment_parts WHERE first_seq = 2 ORDER BY part"));
      expect(parts.length).toBeGreaterThanOrEqual(2);
      for (const { text } of parts) expect(text.length).toBeLessThanOrEqual(SEGMENT_TEXT);
      const read = log.read(0, 10).events;
      expect(read.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(read[1]!.object).toBe(after);
      expect(read[1]!.oldObject).toBe(before);
      expect(log.readInOrder(1, 3, 0, 10).events.map((e) => e.object === after)).toEqual([true, false]);
      // Retention deletes the parts with their segment.
      let deletedBytes = 0;
      db.transaction(() => log.compactInTx(0, { maxEvents: 1, maxAgeSeconds: 3_600 }, 10, { deleted: (bytes) => (deletedBytes += bytes) }));
      expect(db.all(stmt("test.parts", "SELECT text FROM event_segment_parts"))).toEqual([]);
      expect(deletedBytes).toBeGreaterThan(4 * SEGMENT_TEXT);
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
    const first = await withDb((db) => [new EventLog(db).incarnation(), new EventLog(db).incarnation()]);
    const second = await withDb((db) => new EventLog(db).incarnation());
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

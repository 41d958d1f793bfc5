/**
 * CacheProgress (src/cache/cache-progress.ts) through a real informer: one row a watch chunk for
 * lastSyncRV, the newest mark and the object count; watch-only runs merged into marks at most
 * MARK_SPACING apart; a relist's run never merged with a watch run, so a watch from an RV of the
 * watch run before it still gets the relist's objects of older RVs; the count always the table's;
 * a watch start from an RV placed by a binary search, its rows read logarithmic in the marks kept.
 */
import { describe, expect, it } from "vitest";
import { type Mark, MARK_SPACING } from "../../src/cache/cache-progress.ts";
import { Informer } from "../../src/cache/informer.ts";
import { initialMemory } from "../../src/cache/reflector-memory.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import type { WatchEvent } from "../../src/kube/types.ts";
import type { Db } from "../../src/sql.ts";
import { withCountedDb, withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";

function informer(db: Db) {
  return new Informer(db, informerSettings(parseInformerSpec({ resource: "pods" }, "progress")), new FakeClock(), () => 0.5);
}

const storedMarks = (db: Db) => db.all<{ seq: number; rv: string }>({ name: "test.marks", text: "SELECT seq, rv FROM rv_marks ORDER BY seq" });
const objectRows = (db: Db) => db.first<{ n: number }>({ name: "test.count", text: "SELECT COUNT(*) AS n FROM objects" })!.n;
const modified = (name: string, rv: string): WatchEvent => ({ type: "MODIFIED", object: pod({ name, rv }) });

/** The events a watch from `rv` gets, as the hub reads them: after its position, those above `skipUpTo`. */
function eventsAfter(inf: Informer, rv: string): string[] {
  const position = inf.positionOf(rv);
  if (position === "expired") throw new Error(`expired: ${rv}`);
  const events = inf.log.read(position.after, 100_000).events.filter((e) => e.type !== "sync");
  return events.filter((e) => position.skipUpTo === undefined || BigInt(e.resourceVersion) > BigInt(position.skipUpTo)).map((e) => `${e.key}@${e.resourceVersion}`);
}

describe("CacheProgress", () => {
  it("writes one progress row a watch chunk and keeps a mark only every MARK_SPACING events of watching", () =>
    withDb((db) => {
      const inf = informer(db);
      inf.applyWatch([{ type: "ADDED", object: pod({ name: "a", rv: "1" }) }], "1");
      const CHUNKS = 2_500;
      for (let i = 2; i <= CHUNKS; i++) inf.applyWatch([modified("a", String(i))], String(i));
      // 2,500 marks before; now a kept one per ~MARK_SPACING events, and the newest in the state row.
      expect(storedMarks(db).length).toBeLessThanOrEqual(Math.ceil(CHUNKS / MARK_SPACING));
      expect(inf.lastSyncResourceVersion()).toBe(String(CHUNKS));
      expect(inf.boundaryAfter(CHUNKS - 1, 1_000)).toBe(CHUNKS);
      // A watch from any RV gets exactly the events after it.
      for (const from of [1, 2, 999, 1_000, 1_001, 1_777, 2_499]) {
        expect(eventsAfter(inf, String(from))).toEqual(Array.from({ length: CHUNKS - from }, (_, i) => `default/a@${from + i + 1}`));
      }
      // A bookmark moves the newest mark's RV on, its first RV stays: both start at the tail.
      inf.applyWatch([], "3000");
      expect(inf.positionOf("3000")).toEqual({ after: CHUNKS });
      expect(inf.positionOf(String(CHUNKS))).toEqual({ after: CHUNKS });
    }));

  it("never merges a relist's run with the watch run before it: a watch from the watch's RV gets the relist's older-RV objects", () =>
    withDb((db) => {
      const inf = informer(db);
      for (let i = 1; i <= 5; i++) inf.applyWatch([{ type: "ADDED", object: pod({ name: `p${i}`, rv: String(100 + i) }) }], String(100 + i));
      // A relist finds an object changed long ago (RV 50) that no watch event brought, and p1 gone.
      inf.beginList();
      inf.stage([2, 3, 4, 5].map((i) => pod({ name: `p${i}`, rv: String(100 + i) })).concat([pod({ name: "old", rv: "50" })]));
      inf.commitList("200", { state: { kind: "watching" }, memory: initialMemory });
      for (let i = 0; i < 3; i++) inf.applyWatch([modified("p2", String(201 + i))], String(201 + i));
      const fromWatch = eventsAfter(inf, "105");
      expect(fromWatch).toContain("default/old@50");
      expect(fromWatch.filter((e) => e.startsWith("default/p1@"))).toHaveLength(1); // its deletion
      expect(eventsAfter(inf, "202")).toEqual(["default/p2@203"]);
    }));

  it("keeps the object count equal to the objects table through adds, deletes, relists and replays", () =>
    withDb((db) => {
      const inf = informer(db);
      let rv = 1;
      const next = () => String(++rv);
      for (let round = 0; round < 20; round++) {
        const events: WatchEvent[] = [];
        for (let i = 0; i < 7; i++) {
          const name = `p${(round * 3 + i) % 13}`;
          events.push({ type: i % 3 === 2 ? "DELETED" : i % 3 === 1 ? "MODIFIED" : "ADDED", object: pod({ name, rv: next() }) });
        }
        inf.applyWatch(events, String(rv));
        if (round % 5 === 4) {
          inf.beginList();
          inf.stage(Array.from({ length: round }, (_, i) => pod({ name: `r${i}`, rv: next() })));
          inf.commitList(String(rv), { state: { kind: "watching" }, memory: initialMemory });
          void inf.processQueue();
        }
        expect(inf.progress().objects, `round ${round}`).toBe(objectRows(db));
      }
      expect(objectRows(db)).toBeGreaterThan(0);
    }));

  it("places a watch from any RV among 20,000 kept marks reading O(log n) rows, not every mark (issue 4/5 item 6, B8)", () =>
    withCountedDb((db, rowsRead) => {
      const inf = informer(db);
      const MARKS = 20_000;
      // Mark i at seq 3i covers RVs 1,000,000 + 2i - 1 .. 1,000,000 + 2i; the last one is the newest (state row).
      const marks = Array.from({ length: MARKS }, (_, k) => ({ seq: 3 * (k + 1), firstRv: String(1_000_000 + 2 * (k + 1) - 1), rv: String(1_000_000 + 2 * (k + 1)) }));
      db.run(
        { name: "test.fillMarks", text: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
          INSERT INTO rv_marks (seq, rv, first_rv) SELECT 3 * i, CAST(1000000 + 2 * i AS TEXT), CAST(1000000 + 2 * i - 1 AS TEXT) FROM n` },
        MARKS - 1,
      );
      const newest = marks.at(-1)!;
      db.run({ name: "test.newestMark", text: "UPDATE informer_state SET mark_seq = ?, mark_rv = ?, mark_first_rv = ?, cache_rv = ?, last_sync_rv = ? WHERE id = 1" }, newest.seq, newest.rv, newest.firstRv, newest.rv, newest.rv);
      // What positionOf's contract gives, from the marks in memory: after the last one first made at or below the RV.
      const expected = (rv: string) => {
        const found = marks.filter((m) => BigInt(m.firstRv) <= BigInt(rv)).at(-1);
        if (found === undefined) return "expired";
        return BigInt(rv) <= BigInt(found.rv) ? { after: found.seq } : { after: found.seq, skipUpTo: rv };
      };
      const rvs = ["999", "1000000", "1000001", "1000002", "1000003", "1012345", "1012346", "1024999", "1039999", "1040000", "1040001", "1040002", "1040005", "99999999"];
      for (const rv of rvs) {
        const before = rowsRead();
        expect(inf.positionOf(rv), rv).toEqual(expected(rv));
        expect(rowsRead() - before, `rows read for ${rv}`).toBeLessThanOrEqual(100);
      }
      // The other reads of the marks are lookups by primary key too.
      const rowsOf = (read: () => unknown) => {
        const before = rowsRead();
        read();
        return rowsRead() - before;
      };
      expect(rowsOf(() => expect(inf.boundaryAfter(30_000, 1_000)).toBe(30_999))).toBeLessThanOrEqual(10);
      expect(rowsOf(() => expect(inf.cacheProgress.lastMarkBelow(30_001)).toBe(30_000))).toBeLessThanOrEqual(10);
      expect(rowsOf(() => expect(inf.cacheProgress.highestRv()).toBe(newest.rv))).toBeLessThanOrEqual(10);
    }));

  it("places a watch from every RV where a scan of the marks would, through relists, bookmarks and compaction", () =>
    withDb(async (db) => {
      const inf = new Informer(
        db,
        informerSettings(parseInformerSpec({ resource: "pods", retention: { maxEvents: 3_000, maxAgeSeconds: 3600 } }, "progress")),
        new FakeClock(),
        () => 0.5,
      );
      // What positionOf did before the binary search: scan the marks in log order up to the first made
      // above the RV; at the RV of a relist's inferred deletes, from the mark before their run (N4).
      let replays = 0;
      const scanned = (rv: string) => {
        const head = inf.log.bounds().head;
        const all = inf.cacheProgress.marksFrom(0);
        const marks = all.filter((mark) => mark.seq >= head - 1);
        let found: Mark | undefined;
        for (const mark of marks) {
          if (BigInt(mark.firstRv) > BigInt(rv)) break;
          found = mark;
        }
        if (found === undefined || inf.fromEarlierServer(rv, marks.at(-1)!.rv)) return "expired";
        if (BigInt(rv) > BigInt(found.rv)) return { after: found.seq, skipUpTo: rv };
        const before = all.filter((mark) => mark.seq < found!.seq).at(-1)?.seq;
        if (found.inferredDeletes && rv === found.firstRv && before !== undefined && before > 0 && before + 1 >= head) {
          replays++;
          return { after: before, skipUpTo: rv };
        }
        return { after: found.seq };
      };
      let rv = 100;
      for (let round = 0; round < 60; round++) {
        const chunk = Array.from({ length: 1 + (round % 7) * 40 }, (_, i) => modified(`p${i % 50}`, String(++rv)));
        inf.applyWatch(chunk, String(rv));
        if (round % 4 === 1) inf.applyWatch([], String((rv += 3))); // a bookmark
        if (round % 3 === 2) {
          inf.beginList();
          inf.stage(Array.from({ length: 30 }, (_, i) => pod({ name: `p${i}`, rv: String(rv - i) })));
          inf.commitList(String((rv += 2)), { state: { kind: "watching" }, memory: initialMemory });
          await inf.processQueue();
        }
        inf.compactLog();
      }
      expect(inf.log.bounds().head).toBeGreaterThan(1); // compaction dropped marks too
      expect(storedMarks(db).length).toBeGreaterThan(5);
      for (let at = 90; at <= rv + 3; at++) expect(inf.positionOf(String(at)), String(at)).toEqual(scanned(String(at)));
      expect(replays).toBeGreaterThan(0); // relists that dropped p30…p49 ended their runs with inferred deletes
    }));
});

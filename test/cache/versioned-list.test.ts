/**
 * The cache as of a log position (versioned-list.ts): later pages of a list show what page 1's
 * snapshot held, whatever changed in between, and a position the log no longer covers expires.
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { listAt, listFirstPage, listInTurns, MAX_CONTINUE_LAG, type Position, SCAN_PER_TURN, type VersionedPage, type VersionedQuery } from "../../src/cache/versioned-list.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { parseFieldSelector, parseLabelSelector } from "../../src/kube/selectors.ts";
import type { KubeObject, WatchEvent } from "../../src/kube/types.ts";
import type { Db } from "../../src/sql.ts";
import { withCountedDb, withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";

function informer(db: Db, maxEvents = 1_000) {
  const settings = informerSettings(parseInformerSpec({ resource: "pods" }, "unit"));
  return new Informer(db, { ...settings, retention: { maxEvents, maxAgeSeconds: 3600 } }, new FakeClock(), () => 0.5);
}

const named = (page: VersionedPage) => {
  if (page.expired) throw new Error("expired");
  return page.items.map((text) => {
    const o = JSON.parse(text) as KubeObject;
    return `${o.metadata.name}@${o.metadata.resourceVersion}`;
  });
};
const ev = (type: WatchEvent["type"], name: string, rv: string, labels: Record<string, string> = {}): WatchEvent => ({
  type,
  object: pod({ name, rv, labels }),
});

describe("listAt", () => {
  it("serves every page at the first page's position, whatever changed in between", () =>
    withDb((db) => {
      const inf = informer(db);
      inf.applyWatch(["a", "b", "c", "d", "e"].map((n, i) => ev("ADDED", n, String(10 + i))), "14");
      const first = listAt(inf.indexer, inf.log, { limit: 2 });
      expect(named(first)).toEqual(["a@10", "b@11"]);
      if (first.expired || !first.next) throw new Error("expected a next page");
      // after page 1: c deleted, d updated twice, b updated (already listed), a new key between
      inf.applyWatch(
        [ev("DELETED", "c", "20"), ev("MODIFIED", "d", "21"), ev("MODIFIED", "d", "22"), ev("MODIFIED", "b", "23"), ev("ADDED", "cc", "24")],
        "24",
      );
      const second = listAt(inf.indexer, inf.log, { limit: 2 }, first.next);
      expect(named(second)).toEqual(["c@12", "d@13"]);
      if (second.expired || !second.next) throw new Error("expected a next page");
      inf.applyWatch([ev("DELETED", "e", "25"), ev("ADDED", "f", "26")], "26");
      const third = listAt(inf.indexer, inf.log, { limit: 2 }, second.next);
      expect(named(third)).toEqual(["e@14"]);
      expect(third).not.toHaveProperty("next");
      // a new list sees the present
      expect(named(listAt(inf.indexer, inf.log, { limit: 10 }))).toEqual(["a@10", "b@23", "cc@24", "d@22", "f@26"]);
    }));

  it("lists a key deleted and added again since the snapshot in its state at the snapshot", () =>
    withDb((db) => {
      const inf = informer(db);
      inf.applyWatch([ev("ADDED", "a", "1"), ev("ADDED", "b", "2")], "2");
      const first = listAt(inf.indexer, inf.log, { limit: 1 });
      if (first.expired || !first.next) throw new Error("expected a next page");
      inf.applyWatch([ev("DELETED", "b", "3"), ev("ADDED", "b", "4")], "4");
      expect(named(listAt(inf.indexer, inf.log, { limit: 5 }, first.next))).toEqual(["b@2"]);
    }));

  it("filters by namespace and selectors on the states at the snapshot", () =>
    withDb((db) => {
      const inf = informer(db);
      inf.applyWatch([ev("ADDED", "a", "1", { app: "web" }), ev("ADDED", "b", "2", { app: "web" }), ev("ADDED", "c", "3", { app: "db" })], "3");
      const query = { limit: 1, labelSelector: parseLabelSelector("app=web") };
      const first = listAt(inf.indexer, inf.log, query);
      expect(named(first)).toEqual(["a@1"]);
      if (first.expired || !first.next) throw new Error("expected a next page");
      inf.applyWatch([ev("MODIFIED", "b", "4", { app: "db" }), ev("MODIFIED", "c", "5", { app: "web" })], "5");
      const second = listAt(inf.indexer, inf.log, query, first.next);
      expect(named(second)).toEqual(["b@2"]); // b was web at the snapshot; c was not
      expect(named(listAt(inf.indexer, inf.log, { limit: 5, namespace: "other" }))).toEqual([]);
    }));

  it("expires a position the log no longer covers, or one too far behind", () =>
    withDb((db) => {
      const inf = informer(db, 3);
      inf.applyWatch([ev("ADDED", "a", "1"), ev("ADDED", "b", "2")], "2");
      const first = listAt(inf.indexer, inf.log, { limit: 1 });
      if (first.expired || !first.next) throw new Error("expected a next page");
      inf.applyWatch(["c", "d", "e", "f"].map((n, i) => ev("ADDED", n, String(3 + i))), "6");
      inf.compactLog();
      expect(listAt(inf.indexer, inf.log, { limit: 1 }, first.next)).toEqual({ expired: true });
      expect(listAt(inf.indexer, inf.log, { limit: 1 }, { at: inf.log.bounds().tail - MAX_CONTINUE_LAG - 1, after: "" })).toEqual({
        expired: true,
      });
      // Beyond the tail, or of another incarnation of the log (the informer re-created): another log's.
      expect(listAt(inf.indexer, inf.log, { limit: 1 }, { at: 10_000, after: "" })).toEqual({ expired: true });
      const current = listAt(inf.indexer, inf.log, { limit: 1 });
      if (current.expired || !current.next) throw new Error("expected a next page");
      expect(current.next.log).toBe(inf.log.incarnation());
      expect(listAt(inf.indexer, inf.log, { limit: 1 }, { ...current.next, log: "another" })).toEqual({ expired: true });
      expect(listAt(inf.indexer, inf.log, { limit: 1 }, current.next)).toMatchObject({ expired: false });
    }));

  it("lists a fixed name in a namespace by its key, reading a few rows instead of the namespace (F12)", () =>
    withCountedDb((db, rowsRead) => {
      const inf = informer(db, 5_000);
      const events = Array.from({ length: 2_000 }, (_, i) => ({ type: "ADDED" as const, object: pod({ name: `p${i}`, namespace: "shop", rv: String(10 + i) }) }));
      inf.applyWatch(events, "2009");
      const byName = (name: string, from?: Position) => {
        const before = rowsRead();
        const page = listAt(inf.indexer, inf.log, { namespace: "shop", fieldSelector: parseFieldSelector(`metadata.name=${name}`), limit: 500 }, from);
        return { page, rows: rowsRead() - before };
      };
      const found = byName("p1234");
      expect(named(found.page)).toEqual(["p1234@1244"]);
      expect(found.rows).toBeLessThan(20); // a scan of the namespace reads its 2,000 rows
      expect(named(byName("absent").page)).toEqual([]);
      // At a snapshot: the key's state then, whatever changed since.
      const snapshot = listAt(inf.indexer, inf.log, { namespace: "shop", limit: 1 });
      if (snapshot.expired || !snapshot.next) throw new Error("expected a next page");
      inf.applyWatch([{ type: "MODIFIED", object: pod({ name: "p1234", namespace: "shop", rv: "3000" }) }], "3000");
      expect(named(byName("p1234", snapshot.next).page)).toEqual(["p1234@1244"]);
      expect(named(byName("p1234").page)).toEqual(["p1234@3000"]);
      // A cluster-wide fixed name still finds it in any namespace, skipping other keys unparsed.
      expect(named(listAt(inf.indexer, inf.log, { fieldSelector: parseFieldSelector("metadata.name=p7"), limit: 500 }))).toEqual(["p7@17"]);
    }));
});

describe("listInTurns", () => {
  it("scans in parts of SCAN_PER_TURN keys with other work between them, and answers the page one call makes at its snapshot (B3)", () =>
    withDb(async (db) => {
      const inf = informer(db, 20_000);
      const names = Array.from({ length: 5_000 }, (_, i) => `p${String(i).padStart(5, "0")}`);
      inf.applyWatch(names.map((n, i) => ev("ADDED", n, String(10 + i), { app: i % 2 ? "web" : "db" })), "5009");
      const query: VersionedQuery = { labelSelector: parseLabelSelector("app=web"), limit: 5_000 };
      const read = (q: VersionedQuery, from?: Position) => (from ? listAt(inf.indexer, inf.log, q, from) : listFirstPage(inf.indexer, inf.log, q, undefined));
      const whole = named(listAt(inf.indexer, inf.log, query));
      let pauses = 0;
      const page = await listInTurns(read, query, undefined, async () => {
        // Ingest runs between parts: the page still shows the snapshot's state of what it lists later.
        if (pauses++ === 0) inf.applyWatch([ev("DELETED", "p04999", "6000"), ev("MODIFIED", "p04997", "6001", { app: "web" })], "6001");
      });
      expect(pauses).toBe(Math.ceil(5_000 / SCAN_PER_TURN) - 1);
      expect(named(page)).toEqual(whole);
      expect(whole).toHaveLength(2_500);
    }));
});

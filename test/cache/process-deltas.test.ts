import { describe, expect, it } from "vitest";
import type { Delta } from "../../src/cache/delta-fifo.ts";
import { EventLog } from "../../src/cache/event-log.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { processDeltasInTx } from "../../src/cache/process-deltas.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import type { Db } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";

function delta(type: Delta["type"], object: KubeObject | null, options: { tombstone?: boolean; rv?: string } = {}): Delta {
  return {
    type,
    body: object && JSON.stringify(object),
    tombstone: options.tombstone ?? false,
    resourceVersion: options.rv ?? object?.metadata.resourceVersion ?? "",
    uid: object?.metadata.uid ?? "",
  };
}

function setup(db: Db) {
  const indexer = new Indexer(db, { byNode: "spec.nodeName" });
  const log = new EventLog(db);
  const deps = { indexer, log, clock: new FakeClock() };
  return {
    indexer,
    log,
    apply(key: string, deltas: Delta[], initial = false) {
      db.transaction(() => processDeltasInTx([{ key, deltas, isInInitialList: initial }], deps));
    },
    /** The log as [type, rv, flags] rows, with old RVs for updates. */
    events() {
      return log.read(0, 100).events.map((e) => {
        const row: (string | boolean)[] = [e.type, e.resourceVersion];
        if (e.oldObject) row.push(`old@${JSON.parse(e.oldObject).metadata.resourceVersion}`);
        if (e.initialList) row.push("initialList");
        if (e.finalStateUnknown) row.push("finalStateUnknown");
        return row;
      });
    },
  };
}

const a = (rv: string, nodeName = "node-1") => pod({ name: "a", rv, nodeName });

describe("processDeltas", () => {
  it("decides add or update by cache membership, not by delta type", () =>
    withDb((db) => {
      const s = setup(db);
      s.apply("default/a", [delta("Updated", a("1"))]); // MODIFIED for an unknown object → add
      s.apply("default/a", [delta("Added", a("2"))]); // ADDED for a cached object → update
      expect(s.events()).toEqual([
        ["add", "1"],
        ["update", "2", "old@1"],
      ]);
    }));

  it("updates the indexer before the event is logged, in the same transaction", () =>
    withDb((db) => {
      const s = setup(db);
      s.apply("default/a", [delta("Added", a("1")), delta("Updated", a("2", "node-2"))]);
      expect(s.indexer.get("default/a")?.resourceVersion).toBe("2");
      expect(s.indexer.indexKeys("byNode", "node-2")).toEqual(["default/a"]);
      expect(s.indexer.indexKeys("byNode", "node-1")).toEqual([]);
      expect(s.log.read(0, 10).events.at(-1)!.seq).toBe(s.indexer.get("default/a")!.seq);
    }));

  it("marks adds of the initial list", () =>
    withDb((db) => {
      const s = setup(db);
      s.apply("default/a", [delta("Replaced", a("1"))], true);
      expect(s.events()).toEqual([["add", "1", "initialList"]]);
    }));

  it.each(["Replaced", "Added", "Updated"] as const)(
    "logs nothing for a %s delta with the cached resourceVersion (invariant 5)",
    (type) =>
      withDb((db) => {
        const s = setup(db);
        s.apply("default/a", [delta("Added", a("1"))]);
        s.apply("default/a", [delta(type, a("1"))]);
        expect(s.events()).toEqual([["add", "1"]]);
      }),
  );

  it("compares objects without a resourceVersion by content", () =>
    withDb((db) => {
      const s = setup(db);
      const v1 = { ...pod({ name: "a" }), metadata: { name: "a", namespace: "default" } };
      const v2 = { ...v1, spec: { nodeName: "elsewhere" } };
      s.apply("default/a", [delta("Added", v1), delta("Replaced", v1), delta("Replaced", v2)]);
      expect(s.events().map((e) => e[0])).toEqual(["add", "update"]);
    }));

  it("logs a tombstone as a delete with finalStateUnknown and the last known state, at the relist's resourceVersion (N4)", () =>
    withDb((db) => {
      const s = setup(db);
      s.apply("default/a", [delta("Added", a("1", "node-7"))]);
      // The tombstone's delta is at the relist's RV (delta-fifo-replace.ts); its body the state at 1.
      s.apply("default/a", [delta("Deleted", a("1", "node-7"), { tombstone: true, rv: "9" })]);
      expect(s.events()).toEqual([
        ["add", "1"],
        ["delete", "9", "finalStateUnknown"],
      ]);
      expect(s.indexer.get("default/a")).toBeUndefined();
      expect(s.indexer.listIndexFuncValues("byNode")).toEqual([]);
      const logged = JSON.parse(s.log.read(1, 1).events[0]!.object!) as KubeObject;
      expect([logged.metadata.resourceVersion, logged.spec]).toEqual(["9", { nodeName: "node-7" }]);
    }));

  it("logs a delete even for a key that was not cached (as client-go's OnDelete fires)", () =>
    withDb((db) => {
      const s = setup(db);
      s.apply("default/a", [delta("Deleted", a("4"))]);
      expect(s.events()).toEqual([["delete", "4"]]);
    }));

  it("logs a sync with the cached state as both old and new", () =>
    withDb((db) => {
      const s = setup(db);
      s.apply("default/a", [delta("Added", a("1"))]);
      s.apply("default/a", [delta("Sync", a("1"))]);
      const sync = s.log.read(1, 1).events[0]!;
      expect([sync.type, sync.object, sync.oldObject]).toEqual(["sync", sync.oldObject, s.indexer.get("default/a")!.body]);
    }));
});

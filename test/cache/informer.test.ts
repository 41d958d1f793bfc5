/**
 * The informer controller on real Durable Object SQLite with a scripted ListerWatcher: a whole
 * slice (list → watch) without the network, and the atomicity of invariants 1 and 2 tested where
 * they would break.
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { initialMemory, type ReflectorMemory } from "../../src/cache/reflector.ts";
import { informerSettings, parseInformerSpec } from "../../src/config.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { type Db, stmt } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";
import { FakeListerWatcher } from "../helpers/fake-lister-watcher.ts";

function informer(db: Db, indexers: Record<string, string> = {}) {
  const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 5, indexers }, "unit");
  return new Informer(db, informerSettings(spec), new FakeClock(), () => 0.5);
}

const nameless: KubeObject = { metadata: { namespace: "default", resourceVersion: "8" } };

describe("Informer", () => {
  it("runs a slice: lists into the cache, then a watch session applies events", () =>
    withDb(async (db) => {
      const inf = informer(db);
      const lw = new FakeListerWatcher({
        lists: [{ items: [pod({ name: "a", rv: "5" }), pod({ name: "b", rv: "6" })], resourceVersion: "7" }],
        watches: [{ batches: [[{ type: "MODIFIED", object: pod({ name: "a", rv: "8" }) }]] }],
      });
      await inf.tick(lw, Date.now() + 60_000); // ends after the list completes
      expect(inf.progress()).toMatchObject({ synced: true, objects: 2, lastSyncResourceVersion: "7" });
      await inf.tick(lw, Date.now() + 60_000); // one watch session
      expect(inf.progress()).toMatchObject({ objects: 2, lastSyncResourceVersion: "8", queueDepth: 0 });
      expect(inf.log.read(0, 10).events.map((e) => [e.type, e.key, e.resourceVersion])).toEqual([
        ["add", "default/a", "5"],
        ["add", "default/b", "6"],
        ["update", "default/a", "8"],
      ]);
    }));

  it("writes a watch chunk's deltas and its resourceVersion together or not at all (invariant 1)", () =>
    withDb((db) => {
      const inf = informer(db);
      expect(() =>
        inf.applyWatch([{ type: "ADDED", object: pod({ name: "a", rv: "7" }) }, { type: "ADDED", object: nameless }], "8"),
      ).toThrow(/metadata.name/);
      expect(inf.lastSyncResourceVersion()).toBe("");
      expect(inf.fifo.length()).toBe(0);
      expect(inf.log.bounds().tail).toBe(0);
    }));

  it("pops, indexes and logs a batch together or not at all (invariant 2)", () =>
    withDb(async (db) => {
      const inf = informer(db, { byNode: "spec.nodeName" });
      db.transaction(() => {
        inf.fifo.addInTx(pod({ name: "a", rv: "1" }));
        inf.fifo.addInTx(pod({ name: "b", rv: "2" }));
      });
      // corrupt b's delta so processing fails after a was already indexed and logged
      db.run(stmt("test.corrupt", "UPDATE fifo_deltas SET body = '{' WHERE key = 'default/b'"));
      await expect(inf.processQueue()).rejects.toThrow(SyntaxError);
      expect(inf.fifo.length()).toBe(2);
      expect(inf.indexer.count()).toBe(0);
      expect(inf.indexer.listIndexFuncValues("byNode")).toEqual([]);
      expect(inf.log.bounds().tail).toBe(0);
    }));

  it("commits a relist's Replace, its resourceVersion and the reflector's next state together", () =>
    withDb((db) => {
      const inf = informer(db);
      inf.applyWatch([{ type: "ADDED", object: pod({ name: "old", rv: "1" }) }], ""); // not the initial list: staged
      inf.beginList();
      inf.stage([pod({ name: "a", rv: "3" })]);
      // persisting the next state fails after the Replace and the RV were written: all must roll back
      const unserializable = { ...initialMemory, relists: 1n } as unknown as ReflectorMemory;
      expect(() => inf.commitList("9", { state: { kind: "watching" }, memory: unserializable })).toThrow(/BigInt/);
      expect(inf.lastSyncResourceVersion()).toBe("");
      expect(inf.fifo.length()).toBe(0);
      expect(inf.progress().watch.state).toBe("idle");
      inf.commitList("9", { state: { kind: "watching" }, memory: initialMemory }); // the staged list is intact
      expect(inf.fifo.length()).toBe(2); // a Replaced, and old's tombstone
    }));

  it("applies the initial list page by page, synced only once the list is committed", () =>
    withDb((db) => {
      const inf = informer(db);
      inf.beginList();
      inf.stage([pod({ name: "a", rv: "1" })]);
      expect(inf.progress()).toMatchObject({ objects: 1, queueDepth: 0, synced: false });
      inf.stage([pod({ name: "a", rv: "1" }), pod({ name: "b", rv: "2" })]); // a page again, after an eviction
      inf.commitList("5", { state: { kind: "watching" }, memory: initialMemory });
      expect(inf.progress()).toMatchObject({ objects: 2, synced: true, lastSyncResourceVersion: "5" });
      expect(inf.log.read(0, 10).events.map((e) => [e.type, e.key, e.initialList])).toEqual([
        ["add", "default/a", true],
        ["add", "default/b", true],
      ]);
    }));
});

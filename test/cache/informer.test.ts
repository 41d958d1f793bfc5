/**
 * The informer controller on real Durable Object SQLite with a scripted ListerWatcher: a whole
 * slice (list → watch) without the network, and the atomicity of invariants 1 and 2 tested where
 * they would break.
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { POP_BATCH } from "../../src/cache/process-loop.ts";
import { listFirstPage } from "../../src/cache/versioned-list.ts";
import { initialMemory, type ReflectorMemory } from "../../src/cache/reflector-memory.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { type Db, stmt } from "../../src/sql.ts";
import { MAX_OBJECT_BYTES } from "../../src/cache/admission.ts";
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
      const unserializable = { ...pod({ name: "b", rv: "8" }), spec: { size: 1n } } as unknown as KubeObject;
      expect(() =>
        inf.applyWatch([{ type: "ADDED", object: pod({ name: "a", rv: "7" }) }, { type: "ADDED", object: unserializable }], "8"),
      ).toThrow(/BigInt/);
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

  describe("hardening (issue 7)", () => {
    const huge = () => ({ ...pod({ name: "huge", rv: "9" }), data: { blob: "x".repeat(MAX_OBJECT_BYTES) } }) as KubeObject;
    const status: KubeObject = { kind: "Status", metadata: {} } as KubeObject;

    it("skips a watch event it cannot key or store, applies the rest and counts it (item 3)", () =>
      withDb((db) => {
        const inf = informer(db);
        inf.applyWatch(
          [
            { type: "ADDED", object: pod({ name: "a", rv: "7" }) },
            { type: "ADDED", object: nameless },
            { type: "MODIFIED", object: status },
            { type: "ADDED", object: huge() },
            { type: "DELETED", object: nameless },
            { type: "ADDED", object: pod({ name: "b", rv: "10" }) },
          ],
          "10",
        );
        expect(inf.progress()).toMatchObject({ objects: 2, lastSyncResourceVersion: "10", skippedObjects: 4 });
        expect(inf.progress().lastSkipped).toMatch(/metadata.name/);
        expect(inf.log.read(0, 10).events.map((e) => e.key)).toEqual(["default/a", "default/b"]);
      }));

    it("skips a listed object it cannot key or store, in the initial list and in a relist (item 3)", () =>
      withDb((db) => {
        const inf = informer(db);
        inf.beginList();
        inf.stage([pod({ name: "a", rv: "1" }), nameless, huge()]);
        inf.commitList("5", { state: { kind: "watching" }, memory: initialMemory });
        expect(inf.progress()).toMatchObject({ objects: 1, synced: true, skippedObjects: 2 });
        expect(inf.progress().lastSkipped).toMatch(/default\/huge: \d+ bytes/);
        inf.beginList();
        inf.stage([status, pod({ name: "a", rv: "1" }), pod({ name: "b", rv: "2" })]);
        inf.commitList("6", { state: { kind: "watching" }, memory: initialMemory });
        return inf.processQueue().then(() => {
          expect(inf.progress()).toMatchObject({ objects: 2, skippedObjects: 3, queueDepth: 0 });
          expect(inf.progress().lastSkipped).toMatch(/a Status object/);
        });
      }));

    it("backs off and reports a failure outside the reflector's step instead of re-arming at once (item 4)", () =>
      withDb(async (db) => {
        const clock = new FakeClock();
        const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 5, indexers: { byNode: "spec.nodeName" } }, "unit");
        const inf = new Informer(db, informerSettings(spec), clock, () => 0.5);
        db.transaction(() => inf.fifo.addInTx(pod({ name: "a", rv: "1" })));
        db.run(stmt("test.corrupt", "UPDATE fifo_deltas SET body = '{' WHERE key = 'default/a'"));
        const lw = new FakeListerWatcher({});
        await expect(inf.tick(lw, clock.now() + 60_000)).rejects.toThrow(SyntaxError);
        const first = inf.progress();
        expect(first.lastError).toMatch(/internal error/);
        expect(first.wakeAt).toBeGreaterThanOrEqual(clock.now() + 800);
        await expect(inf.tick(lw, clock.now() + 60_000)).rejects.toThrow(SyntaxError);
        // the next failure waits longer, as the reflector's backoff does
        expect(inf.progress().wakeAt - clock.now()).toBeGreaterThan(first.wakeAt - clock.now());
      }));

    it("reports the RV the cache holds, not the one a committed Replace still being popped brings (item 6)", () =>
      withDb(async (db) => {
        const inf = informer(db);
        inf.applyWatch([{ type: "ADDED", object: pod({ name: "a", rv: "1" }) }], "2");
        expect(inf.queryView()).toEqual({ resourceVersion: "2", synced: true }); // populated by a watch, as client-go's
        inf.beginList();
        inf.stage([pod({ name: "a", rv: "3" }), pod({ name: "b", rv: "4" })]);
        inf.commitList("5", { state: { kind: "watching" }, memory: initialMemory });
        expect(inf.lastSyncResourceVersion()).toBe("5");
        expect(inf.queryView().resourceVersion).toBe("2"); // the Replace is queued, not yet in the cache
        await inf.processQueue();
        expect(inf.queryView()).toEqual({ resourceVersion: "5", synced: true });
      }));

    it("lists the last complete state while a committed Replace is half applied, never a mix of before and after (F18)", () =>
      withDb(async (db) => {
        const clock = new FakeClock();
        const spec = parseInformerSpec({ resource: "pods" }, "unit");
        const inf = new Informer(db, informerSettings(spec), clock, () => 0.5);
        inf.beginList();
        inf.stage([pod({ name: "a", rv: "1" }), pod({ name: "b", rv: "2" })]);
        inf.commitList("2", { state: { kind: "watching" }, memory: initialMemory });
        await inf.processQueue();
        // A relist: a deleted upstream, b changed, and more than one pop batch of new objects.
        inf.beginList();
        const added = Array.from({ length: POP_BATCH + 100 }, (_, i) => pod({ name: `n-${String(i).padStart(4, "0")}`, rv: String(10 + i) }));
        inf.stage([pod({ name: "b", rv: "5" }), ...added]);
        inf.commitList("900", { state: { kind: "watching" }, memory: initialMemory });
        expect(await inf.processQueue(clock.now())).toBe(false); // one batch popped, the rest queued
        const names = (page: ReturnType<typeof listFirstPage>) => (page.expired ? [] : page.items.map((item) => (JSON.parse(item) as KubeObject).metadata.name));
        const during = listFirstPage(inf.indexer, inf.log, { limit: 10_000 }, inf.snapshotPosition());
        expect([names(during), inf.queryView().resourceVersion]).toEqual([["a", "b"], "2"]);
        await inf.processQueue();
        const after = listFirstPage(inf.indexer, inf.log, { limit: 10_000 }, inf.snapshotPosition());
        expect(names(after)).toEqual(["b", ...added.map((p) => p.metadata.name)]);
      }));

    it("lists a state at the RV it reports right after a Replace's last pop (issue 27 checker, C1)", () =>
      withDb(async (db) => {
        const clock = new FakeClock();
        const inf = new Informer(db, informerSettings(parseInformerSpec({ resource: "pods" }, "unit")), clock, () => 0.5);
        inf.beginList();
        inf.stage([pod({ name: "a", rv: "1" }), pod({ name: "b", rv: "2" })]);
        inf.commitList("2", { state: { kind: "watching" }, memory: initialMemory });
        await inf.processQueue();
        // A relist: a deleted upstream, b changed. Its one pop empties the queue, and the drain stops
        // there (its deadline): the mark (the cache at RV 6) was written a transaction later, after a
        // turn of the event loop, and a list read the relist's state under RV 2.
        inf.beginList();
        inf.stage([pod({ name: "b", rv: "5" })]);
        inf.commitList("6", { state: { kind: "watching" }, memory: initialMemory });
        expect(await inf.processQueue(clock.now())).toBe(true); // popped
        const versions = (page: ReturnType<typeof listFirstPage>) =>
          page.expired ? [] : page.items.map((item) => `${(JSON.parse(item) as KubeObject).metadata.name}@${(JSON.parse(item) as KubeObject).metadata.resourceVersion}`);
        const between = listFirstPage(inf.indexer, inf.log, { limit: 10_000 }, inf.snapshotPosition());
        // The items are the state at the RV the answer reports: before the relist, or after it.
        expect([
          [["a@1", "b@2"], "2"],
          [["b@5"], "6"],
        ]).toContainEqual([versions(between), inf.queryView().resourceVersion]);
        await inf.processQueue();
        const after = listFirstPage(inf.indexer, inf.log, { limit: 10_000 }, inf.snapshotPosition());
        expect([versions(after), inf.queryView().resourceVersion]).toEqual([["b@5"], "6"]);
      }));

    it("is neither synced nor at an RV after a restart until the relist is applied (item 6)", () =>
      withDb(async (db) => {
        const inf = informer(db);
        const lw = new FakeListerWatcher({
          lists: [
            { items: [pod({ name: "a", rv: "1" })], resourceVersion: "3" },
            { items: [pod({ name: "b", rv: "4" })], resourceVersion: "5" },
          ],
        });
        await inf.tick(lw, Date.now() + 60_000);
        expect(inf.queryView()).toEqual({ resourceVersion: "3", synced: true });
        inf.restart(); // e.g. the label selector changed: the cache holds the old selection
        expect(inf.queryView()).toEqual({ resourceVersion: "", synced: false });
        await inf.tick(lw, Date.now() + 60_000);
        expect(lw.lists.map((l) => l.resourceVersion)).toEqual(["0", ""]); // quorum over a populated cache (item 2)
        expect(inf.queryView()).toEqual({ resourceVersion: "5", synced: true });
        expect(inf.log.read(0, 10).events.map((e) => [e.type, e.key])).toEqual([
          ["add", "default/a"],
          ["add", "default/b"],
          ["delete", "default/a"],
        ]);
      }));

    it("expires resourceVersions from before the cluster moved to another API server (issue 18, F16)", () =>
      withDb(async (db) => {
        const inf = informer(db);
        inf.beginList();
        inf.stage([pod({ name: "a", rv: "4990" })]);
        inf.commitList("5000", { state: { kind: "watching" }, memory: initialMemory });
        inf.applyWatch([{ type: "MODIFIED", object: pod({ name: "a", rv: "5010" }) }], "5010");
        expect(inf.positionOf("5005")).toMatchObject({ skipUpTo: "5005" });
        // PUT /clusters/x with another server: its etcd's revisions are lower, and unrelated.
        inf.restart({ serverMoved: true });
        inf.beginList();
        inf.stage([pod({ name: "b", rv: "90" })]);
        inf.commitList("100", { state: { kind: "watching" }, memory: initialMemory });
        await inf.processQueue();
        inf.applyWatch([{ type: "ADDED", object: pod({ name: "c", rv: "110" }) }], "120");
        // A client that watched the old server re-watches from its last RV: 410, so it relists.
        for (const before of ["5005", "5010", "5000", "4000"]) expect(inf.positionOf(before), before).toBe("expired");
        // A list's check: beyond the cache and at most the old server's highest RV.
        expect(["5010", "121", "120", "6000"].map((rv) => inf.fromEarlierServer(rv))).toEqual([true, true, false, false]);
        // The new server's RVs are served as usual.
        expect(inf.positionOf("100")).toEqual({ after: expect.any(Number) });
        expect(inf.positionOf("110")).toMatchObject({ skipUpTo: "110" });
        // An RV no server of ours gave out yet is a future one, as for any watch: served when reached.
        expect(inf.positionOf("6000")).toMatchObject({ skipUpTo: "6000" });
      }));

    it("applies a transform change to cached objects whose resourceVersion did not change (item 8)", () =>
      withDb(async (db) => {
        const keep = informer(db);
        const a = () => pod({ name: "a", rv: "5" });
        await keep.tick(new FakeListerWatcher({ lists: [{ items: [a()], resourceVersion: "6" }] }), Date.now() + 60_000);
        expect(JSON.parse(keep.indexer.get("default/a")!.body).spec.nodeName).toBe("node-1");
        const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 5, transform: { dropFields: ["spec.nodeName"] } }, "unit");
        const drop = new Informer(db, informerSettings(spec), new FakeClock(), () => 0.5);
        drop.restart({ transformChanged: true });
        const lw = new FakeListerWatcher({ lists: [{ items: [a()], resourceVersion: "7" }] });
        await drop.tick(lw, Date.now() + 60_000);
        expect(JSON.parse(drop.indexer.get("default/a")!.body).spec.nodeName).toBeUndefined();
        expect(drop.log.read(0, 10).events.map((e) => [e.type, e.resourceVersion])).toEqual([
          ["add", "5"],
          ["update", "5"],
        ]);
        // once applied, a relist at the same RV is quiet again (invariant 5)
        drop.restart();
        await drop.tick(new FakeListerWatcher({ lists: [{ items: [a()], resourceVersion: "8" }] }), Date.now() + 60_000);
        expect(drop.log.bounds().tail).toBe(2);
      }));
  });

  it("stages no body for a relisted object whose resourceVersion the cache already holds (issue 9)", () =>
    withDb(async (db) => {
      const inf = informer(db);
      await inf.tick(new FakeListerWatcher({ lists: [{ items: [pod({ name: "a", rv: "5" }), pod({ name: "b", rv: "6" })], resourceVersion: "7" }] }), Date.now() + 60_000);
      inf.beginList();
      inf.stage([pod({ name: "a", rv: "5" }), pod({ name: "b", rv: "8" }), pod({ name: "c", rv: "9" })]);
      const staged = db.all<{ key: string; bytes: number }>(stmt("test.staged", "SELECT key, length(body) AS bytes FROM fifo_staging ORDER BY key"));
      expect(staged.map((r) => [r.key, r.bytes > 0])).toEqual([
        ["default/a", false], // unchanged: the cached body stands
        ["default/b", true],
        ["default/c", true],
      ]);
      inf.commitList("10", { state: { kind: "watching" }, memory: initialMemory });
      await inf.processQueue();
      expect(inf.log.read(0, 10).events.map((e) => [e.type, e.key, e.resourceVersion])).toEqual([
        ["add", "default/a", "5"],
        ["add", "default/b", "6"],
        ["update", "default/b", "8"],
        ["add", "default/c", "9"],
      ]);
      expect(JSON.parse(inf.indexer.get("default/a")!.body)).toMatchObject({ metadata: { name: "a", resourceVersion: "5" }, spec: { nodeName: "node-1" } });
    }));

  it("stages every body while a transform change is pending, so unchanged objects are rewritten", () =>
    withDb(async (db) => {
      const inf = informer(db);
      await inf.tick(new FakeListerWatcher({ lists: [{ items: [pod({ name: "a", rv: "5" })], resourceVersion: "7" }] }), Date.now() + 60_000);
      inf.restart({ transformChanged: true });
      inf.beginList();
      inf.stage([pod({ name: "a", rv: "5" })]);
      const staged = db.all<{ bytes: number }>(stmt("test.staged", "SELECT length(body) AS bytes FROM fifo_staging"));
      expect(staged[0]!.bytes).toBeGreaterThan(0);
    }));
});

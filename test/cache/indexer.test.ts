import { describe, expect, it } from "vitest";
import { EventLog } from "../../src/cache/event-log.ts";
import { Indexer, INDEXER_MIGRATIONS } from "../../src/cache/indexer.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { type Db, migrate } from "../../src/sql.ts";
import { withCountedDb, withDb } from "../helpers/db.ts";
import { pod } from "../helpers/fakes.ts";

const INDEXERS = { byNode: "spec.nodeName", byApp: "metadata.labels.app", byFinalizer: "metadata.finalizers" };

function store(db: Db, indexers: Record<string, string> = INDEXERS) {
  const indexer = new Indexer(db, indexers);
  const log = new EventLog(db);
  const put = (object: KubeObject) =>
    db.transaction(() => {
      const { namespace = "", name = "", uid = "", resourceVersion = "" } = object.metadata;
      const key = namespace ? `${namespace}/${name}` : name;
      const seq = log.nextSeq();
      log.appendInTx([{
        seq,
        type: "add",
        key,
        uid,
        resourceVersion,
        body: JSON.stringify(object),
        oldBody: null,
        initialList: false,
        finalStateUnknown: false,
        at: 0,
      }]);
      indexer.writeInTx([{ key, meta: { namespace, name, uid, resourceVersion }, seq, body: JSON.stringify(object), object: () => object }], []);
    });
  const remove = (key: string) => db.transaction(() => indexer.writeInTx([], [key]));
  return { indexer, put, remove };
}

const keys = (objects: { key: string }[]) => objects.map((o) => o.key);

describe("Indexer", () => {
  it("gets, lists in key order and lists one namespace", () =>
    withDb((db) => {
      const s = store(db);
      s.put(pod({ name: "b", namespace: "x" }));
      s.put(pod({ name: "a", namespace: "y" }));
      s.put(pod({ name: "a", namespace: "x" }));
      s.put({ metadata: { name: "node-1", resourceVersion: "3" } }); // cluster-scoped: key is the name
      expect(keys(s.indexer.list({ limit: 10 }))).toEqual(["node-1", "x/a", "x/b", "y/a"]);
      expect(keys(s.indexer.list({ limit: 10, namespace: "x" }))).toEqual(["x/a", "x/b"]);
      expect(keys(s.indexer.list({ limit: 2, after: "x/a" }))).toEqual(["x/b", "y/a"]);
      expect(JSON.parse(s.indexer.get("y/a")!.body).metadata.namespace).toBe("y");
      expect(s.indexer.get("z/z")).toBeUndefined();
      expect(s.indexer.count()).toBe(4);
    }));

  it("serves the namespace index for every object, with '' for cluster-scoped ones", () =>
    withDb((db) => {
      const s = store(db);
      s.put(pod({ name: "a", namespace: "x" }));
      s.put({ metadata: { name: "n1" } });
      expect(s.indexer.listIndexFuncValues("namespace")).toEqual(["", "x"]);
      expect(s.indexer.indexKeys("namespace", "x")).toEqual(["x/a"]);
      expect(keys(s.indexer.byIndex("namespace", "", { limit: 10 }))).toEqual(["n1"]);
    }));

  it("lists namespaces by key range, in namespace order although keys order 'a-b/' before 'a/'", () =>
    withCountedDb((db, rowsRead) => {
      const s = store(db);
      for (const ns of ["a", "a-b", "b", "ab"]) for (let i = 0; i < 50; i++) s.put(pod({ name: `p${i}`, namespace: ns }));
      const before = rowsRead();
      expect(s.indexer.listIndexFuncValues("namespace")).toEqual(["a", "a-b", "ab", "b"]);
      expect(rowsRead() - before).toBeLessThan(10); // one key per namespace, not 200 rows
      expect(s.indexer.indexValuesPage("namespace", { after: "a", limit: 2 })).toEqual(["a-b", "ab"]);
      const listed = rowsRead();
      expect(keys(s.indexer.list({ namespace: "a", limit: 100 }))).toHaveLength(50);
      expect(rowsRead() - listed).toBeLessThanOrEqual(101); // its 50 rows and their bodies: a range, not a scan of 200
      expect(keys(s.indexer.list({ namespace: "a", after: "a/p8", limit: 100 }))).toEqual(["a/p9"]); // key order: p8 < p9, the last
      expect(s.indexer.indexKeys("namespace", "a-b")).toHaveLength(50);
    }));

  it("carries index entries into the object rows when upgraded from a release that kept them apart", () =>
    withDb((db) => {
      // The tables as the first migration made them, with an entry, then the migrations since.
      const sql = (text: string, ...values: unknown[]) => db.run({ name: "test.sql", text }, ...values);
      sql("DROP TABLE objects");
      sql("DROP TABLE index_entries");
      sql("DELETE FROM schema_migrations WHERE module = 'indexer'");
      migrate(db, "indexer", INDEXER_MIGRATIONS.slice(0, 1));
      const s = store(db, { byNode: "spec.nodeName" });
      sql("INSERT INTO objects (key, namespace, name, uid, rv, seq) VALUES ('default/a', 'default', 'a', 'u', '1', 1)");
      sql("INSERT INTO index_entries (index_name, value, key) VALUES ('byNode', 'n1', 'default/a')");
      migrate(db, "indexer", INDEXER_MIGRATIONS);
      s.put(pod({ name: "a", nodeName: "n2", rv: "2" }));
      expect(s.indexer.indexKeys("byNode", "n1")).toEqual([]);
      expect(s.indexer.indexKeys("byNode", "n2")).toEqual(["default/a"]);
    }));

  it("indexes field paths with zero, one or many values", () =>
    withDb((db) => {
      const s = store(db);
      s.put({ ...pod({ name: "a", nodeName: "n1", labels: { app: "web" } }), metadata: { ...pod({ name: "a" }).metadata, labels: { app: "web" }, finalizers: ["f1", "f2"] } });
      s.put(pod({ name: "b", nodeName: "n1" }));
      expect(s.indexer.indexKeys("byNode", "n1")).toEqual(["default/a", "default/b"]);
      expect(s.indexer.listIndexFuncValues("byApp")).toEqual(["web"]);
      expect(s.indexer.listIndexFuncValues("byFinalizer")).toEqual(["f1", "f2"]);
      expect(keys(s.indexer.byIndex("byFinalizer", "f2", { limit: 10 }))).toEqual(["default/a"]);
    }));

  it("moves index entries when an object's value changes and drops them when it is deleted", () =>
    withDb((db) => {
      const s = store(db);
      s.put(pod({ name: "a", nodeName: "n1", rv: "1" }));
      s.put(pod({ name: "a", nodeName: "n2", rv: "2" }));
      expect(s.indexer.listIndexFuncValues("byNode")).toEqual(["n2"]);
      s.remove("default/a");
      expect(s.indexer.listIndexFuncValues("byNode")).toEqual([]);
      expect(s.indexer.count()).toBe(0);
    }));

  it("refuses ByIndex and IndexKeys on an unknown index, and lists no values for it", () =>
    withDb((db) => {
      const s = store(db);
      expect(() => s.indexer.byIndex("nope", "x", { limit: 1 })).toThrow(/index 'nope' does not exist/);
      expect(() => s.indexer.indexKeys("nope", "x")).toThrow(/does not exist/);
      expect(s.indexer.listIndexFuncValues("nope")).toEqual([]);
    }));

  it("rebuilds every entry for new indexers", () =>
    withDb((db) => {
      const before = store(db, {});
      for (let i = 0; i < 7; i++) before.put(pod({ name: `p${i}`, nodeName: `n${i % 2}` }));
      const after = store(db, { byNode: "spec.nodeName" });
      let cursor: string | undefined;
      let first = true;
      while (first || cursor !== undefined) {
        const from = first ? undefined : cursor;
        cursor = db.transaction(() => after.indexer.rebuildInTx(from, 3));
        first = false;
      }
      expect(after.indexer.indexKeys("byNode", "n1")).toEqual(["default/p1", "default/p3", "default/p5"]);
    }));
});

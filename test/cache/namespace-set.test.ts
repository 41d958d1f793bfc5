/**
 * Reading only a set of namespaces (cache/namespace-set.ts; issue 31 item 3: what a caller's RBAC
 * lets it list): Indexer.listIn walks the set's key ranges in key order — "a-b/" sorts before "a/"
 * — skipping namespaces of the set that hold nothing with one-key reads, never a statement per
 * object; the lister, the versioned list (pages at a snapshot) and index values honour the set,
 * and cluster-scoped objects are never in one.
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { listIndexValues, listObjects } from "../../src/cache/lister.ts";
import { NamespaceSet } from "../../src/cache/namespace-set.ts";
import { listAt } from "../../src/cache/versioned-list.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { parseFieldSelector } from "../../src/kube/selectors.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import type { Db } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";

function informer(db: Db) {
  const settings = informerSettings(parseInformerSpec({ resource: "pods", indexers: { byNode: "spec.nodeName" } }, "unit"));
  return new Informer(db, { ...settings, retention: { maxEvents: 1_000, maxAgeSeconds: 3600 } }, new FakeClock(), () => 0.5);
}

const keyOf = (text: string) => {
  const { metadata } = JSON.parse(text) as KubeObject;
  return metadata.namespace ? `${metadata.namespace}/${metadata.name}` : metadata.name;
};

/** Pods in namespaces whose key ranges do not sort as their names ("a-b/" < "a/"), and cluster-scoped keys between them. */
function seeded(db: Db) {
  const inf = informer(db);
  const objects: KubeObject[] = [];
  let rv = 10;
  for (const namespace of ["a", "a-b", "a0", "b", "c", "zz"]) {
    for (const name of ["p1", "p2"]) objects.push(pod({ name, namespace, rv: String(rv++), nodeName: "n1" }));
  }
  for (const name of ["a-x", "b0", "cluster-wide"]) objects.push({ ...pod({ name, rv: String(rv++) }), metadata: { name, resourceVersion: String(rv), uid: name } });
  inf.applyWatch(objects.map((object) => ({ type: "ADDED" as const, object })), String(rv));
  return inf;
}

describe("Indexer.listIn", () => {
  it("lists the set's namespaces in key order, pages through them, and leaves out every other key", () =>
    withDb((db) => {
      const inf = seeded(db);
      const set = new NamespaceSet(["a", "a-b", "c", "absent"]);
      const all = inf.indexer.listIn(set, { limit: 100 }).map((o) => o.key);
      expect(all).toEqual(["a-b/p1", "a-b/p2", "a/p1", "a/p2", "c/p1", "c/p2"]);
      expect(all).toEqual([...all].sort());
      const paged: string[] = [];
      for (let after: string | undefined; ; ) {
        const page = inf.indexer.listIn(set, { limit: 1, ...(after === undefined ? {} : { after }) });
        if (page.length === 0) break;
        paged.push(page[0]!.key);
        after = page[0]!.key;
      }
      expect(paged).toEqual(all);
      expect(inf.indexer.listIn(new NamespaceSet([]), { limit: 100 })).toEqual([]);
      expect(inf.indexer.listIn(new NamespaceSet(["", "nowhere"]), { limit: 100 })).toEqual([]);
    }));

  it("reads a few statements per namespace the cache holds, however large the set (no statement per object)", () =>
    withDb((db) => {
      const inf = seeded(db);
      db.rows.keepStatements();
      const set = new NamespaceSet([...Array.from({ length: 5_000 }, (_, i) => `ns-${i}`), "zz", "b"]);
      expect(inf.indexer.listIn(set, { limit: 1_000 }).map((o) => o.key)).toEqual(["b/p1", "b/p2", "zz/p1", "zz/p2"]);
      const runs = [...db.rows.statements().values()].reduce((sum, s) => sum + s.runs, 0);
      // Six namespaces and three cluster-scoped keys in the cache: the set's 5,002 names cost no statement each.
      expect(runs).toBeLessThanOrEqual(2 * 9 + 2);
    }));
});

describe("lists restricted to a set of namespaces", () => {
  it("listObjects: by key ranges, with selectors, by index, with a namespace outside the set", () =>
    withDb((db) => {
      const inf = seeded(db);
      const namespaces = new NamespaceSet(["a", "zz"]);
      const keys = (page: { items: string[] }) => page.items.map(keyOf);
      expect(keys(listObjects(inf.indexer, { namespaces, limit: 100 }))).toEqual(["a/p1", "a/p2", "zz/p1", "zz/p2"]);
      const first = listObjects(inf.indexer, { namespaces, limit: 3 });
      expect(keys(first)).toEqual(["a/p1", "a/p2", "zz/p1"]);
      expect(keys(listObjects(inf.indexer, { namespaces, limit: 3, continue: first.continue! }))).toEqual(["zz/p2"]);
      const byName = parseFieldSelector("metadata.name=p2");
      expect(keys(listObjects(inf.indexer, { namespaces, fieldSelector: byName, limit: 100 }))).toEqual(["a/p2", "zz/p2"]);
      expect(keys(listObjects(inf.indexer, { namespaces, index: { name: "byNode", value: "n1" }, limit: 100 }))).toEqual(["a/p1", "a/p2", "zz/p1", "zz/p2"]);
      expect(keys(listObjects(inf.indexer, { namespaces, namespace: "b", limit: 100 }))).toEqual([]);
      expect(keys(listObjects(inf.indexer, { namespaces, namespace: "zz", limit: 100 }))).toEqual(["zz/p1", "zz/p2"]);
    }));

  it("listAt: later pages at the snapshot, in the set only, whatever changed in or out of it", () =>
    withDb((db) => {
      const inf = seeded(db);
      const namespaces = new NamespaceSet(["a", "c"]);
      const first = listAt(inf.indexer, inf.log, { namespaces, limit: 2 });
      if (first.expired || !first.next) throw new Error("expected a next page");
      expect(first.keys).toEqual(["a/p1", "a/p2"]);
      inf.applyWatch(
        [
          { type: "DELETED", object: pod({ name: "p1", namespace: "c", rv: "100" }) },
          { type: "ADDED", object: pod({ name: "p3", namespace: "b", rv: "101" }) },
          { type: "ADDED", object: pod({ name: "p3", namespace: "c", rv: "102", nodeName: "n1" }) },
        ],
        "102",
      );
      const second = listAt(inf.indexer, inf.log, { namespaces, limit: 10 }, first.next);
      if (second.expired) throw new Error("expired");
      expect(second.keys).toEqual(["c/p1", "c/p2"]);
      expect(listAt(inf.indexer, inf.log, { namespaces, fieldSelector: parseFieldSelector("spec.nodeName=n1"), limit: 10 })).toMatchObject({
        keys: ["a/p1", "a/p2", "c/p2", "c/p3"],
      });
    }));

  it("listIndexValues keeps only the values asked for, and pages over them", () =>
    withDb((db) => {
      const inf = seeded(db);
      const set = new NamespaceSet(["a-b", "c", "nowhere"]);
      const keep = (value: string) => set.has(value);
      expect(listIndexValues(inf.indexer, "namespace", { limit: 100 }, keep)).toEqual({ values: ["a-b", "c"] });
      const first = listIndexValues(inf.indexer, "namespace", { limit: 1 }, keep);
      expect(first.values).toEqual(["a-b"]);
      expect(listIndexValues(inf.indexer, "namespace", { limit: 1, continue: first.continue! }, keep)).toEqual({ values: ["c"] });
    }));
});

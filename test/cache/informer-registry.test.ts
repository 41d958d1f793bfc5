/**
 * The registry and the informer's spec row across the upgrade to clusters (issue 12): what a
 * deployment stored before clusters existed belongs to the default cluster, keeps its names and
 * its API server URL, and nothing is relisted for it.
 */
import { describe, expect, it } from "vitest";
import { InformerRegistry } from "../../src/config/informer-registry.ts";
import { SpecStore } from "../../src/config/spec-store.ts";
import { parseInformerSpec, sameSpec } from "../../src/config/informer-spec.ts";
import { Db, stmt } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";

/** The tables and migration marks as the previous release left them. */
function previousRelease(db: Db, ddl: string, module: string, insert: string, ...values: unknown[]): void {
  db.run(stmt("test.migrations", "CREATE TABLE IF NOT EXISTS schema_migrations (module TEXT PRIMARY KEY, version INTEGER NOT NULL)"));
  db.run(stmt("test.ddl", ddl));
  db.run(stmt("test.mark", "INSERT OR REPLACE INTO schema_migrations (module, version) VALUES (?, 1)"), module);
  db.run(stmt("test.insert", insert), ...values);
}

describe("upgrading to clusters", () => {
  it("puts informers registered before clusters in the default cluster, with their specs unchanged", async () => {
    await withDb((db) => {
      const declaration = { resource: "pods", labelSelector: "app=web" };
      // As the previous release stored it: parsed and defaulted, without `cluster`.
      const { cluster: _, ...old } = parseInformerSpec(declaration, "web-pods");
      previousRelease(
        db,
        `CREATE TABLE informers (name TEXT PRIMARY KEY, spec TEXT NOT NULL, source TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
        "informer_registry",
        "INSERT INTO informers VALUES (?, ?, 'config', 1, 2)",
        "web-pods",
        JSON.stringify(old),
      );
      const registry = new InformerRegistry(db);
      const [entry] = registry.list();
      expect(entry).toMatchObject({ cluster: "default", name: "web-pods", source: "config", createdAt: 1, updatedAt: 2 });
      expect(entry!.spec.cluster).toBe("default");
      // The same declaration parsed today is the same spec: no update, no restart.
      expect(sameSpec(entry!.spec, parseInformerSpec(declaration, "web-pods"))).toBe(true);
      // Names are unique per cluster now: the same name in another cluster is another informer.
      registry.put(parseInformerSpec({ resource: "pods", cluster: "prod" }, "web-pods"), "api", 3);
      expect(registry.list().map((i) => [i.cluster, i.name])).toEqual([["default", "web-pods"], ["prod", "web-pods"]]);
      expect(registry.list("prod")).toHaveLength(1);
    });
  });

  it("turns an informer's API server URL into a connection", async () => {
    await withDb((db) => {
      db.run(stmt("test.drop", "DROP TABLE informer_spec"));
      db.run(stmt("test.unmark", "DELETE FROM schema_migrations WHERE module = 'spec_store'"));
      previousRelease(
        db,
        `CREATE TABLE informer_spec (id INTEGER PRIMARY KEY CHECK (id = 1), spec TEXT NOT NULL, api_url TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
        "spec_store",
        "INSERT INTO informer_spec VALUES (1, ?, ?, 1, 1)",
        JSON.stringify({ resource: "pods", name: "p" }),
        "http://127.0.0.1:9/clusters/x",
      );
      const stored = new SpecStore(db).get();
      expect(stored).toMatchObject({ spec: { cluster: "default", name: "p" }, connection: { server: "http://127.0.0.1:9/clusters/x" } });
    });
  });
});

/**
 * The informer object's durable copy of what its custom resource's CRD says (k8s/resource-
 * description.ts), so `/k8s` discovery can list the resource with its kind, scope, names and
 * printer columns without an object in the cache and without asking the API server again after a
 * restart. One row, keyed by the resource it describes: a spec that names another resource or
 * version finds nothing and reads its CRD anew.
 */
import type { ResourceDescription } from "../kube/resource-description.ts";
import { type Db, migrate, stmt } from "../sql.ts";

const MIGRATIONS = [
  `CREATE TABLE resource_description (
     id INTEGER PRIMARY KEY CHECK (id = 1), resource TEXT NOT NULL, description TEXT NOT NULL, fetched_at INTEGER NOT NULL)`,
] as const;

const GET = stmt("resourceDescription.get", "SELECT resource, description FROM resource_description WHERE id = 1");
const PUT = stmt(
  "resourceDescription.put",
  `INSERT INTO resource_description (id, resource, description, fetched_at) VALUES (1, ?, ?, ?)
   ON CONFLICT (id) DO UPDATE SET resource = excluded.resource, description = excluded.description, fetched_at = excluded.fetched_at`,
);

/** Creates or updates the table; the informer object runs it as it migrates its schema. */
export function migrateResourceDescriptions(db: Db): void {
  migrate(db, "resource_description", MIGRATIONS);
}

/** The stored description of `resource` (`plural.group/version`), if one was stored for it. */
export function storedDescription(db: Db, resource: string): ResourceDescription | undefined {
  const row = db.first<{ resource: string; description: string }>(GET);
  if (row?.resource !== resource) return undefined;
  return JSON.parse(row.description) as ResourceDescription;
}

export function storeDescription(db: Db, resource: string, description: ResourceDescription, at: number): void {
  db.run(PUT, resource, JSON.stringify(description), at);
}

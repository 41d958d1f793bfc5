/**
 * The informer object's own configuration row: its validated spec and how to reach its cluster's API
 * server (none: the default cluster, read from the environment each time). Kept apart from the
 * informer's working state so that deleting or re-pointing an informer is one clear step. A
 * run-time cluster token lives here too, and nothing reads it but the connection (never a status).
 */
import type { ClusterConnection } from "../clusters/cluster.ts";
import type { InformerSpec } from "./informer-spec.ts";
import { type Db, migrate, stmt } from "../sql.ts";
import { specOf } from "./informer-registry.ts";
import { TRANSFORM_VERSION } from "../cache/transform.ts";

export interface StoredSpec {
  spec: InformerSpec;
  /** Null: the default cluster, as the environment describes it now. */
  connection: ClusterConnection | null;
  createdAt: number;
  updatedAt: number;
  /** The TRANSFORM_VERSION the cached objects were made by (0: before versions were kept). */
  transformVersion: number;
}

const MIGRATIONS = [
  `CREATE TABLE informer_spec (
     id INTEGER PRIMARY KEY CHECK (id = 1), spec TEXT NOT NULL, api_url TEXT,
     created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
  // Issue 12: a URL alone became a connection (URL and credentials); api_url is no longer written.
  `ALTER TABLE informer_spec ADD COLUMN connection TEXT;
   UPDATE informer_spec SET connection = json_object('server', api_url) WHERE api_url IS NOT NULL`,
  // Issue 17: which version of the transform code made the cache (cache/transform.ts).
  `ALTER TABLE informer_spec ADD COLUMN transform_version INTEGER NOT NULL DEFAULT 0`,
] as const;

const GET = stmt("specStore.get", "SELECT spec, connection, created_at, updated_at, transform_version FROM informer_spec WHERE id = 1");
/**
 * A new or changed spec: its cache is (re)made by today's transform, so the version is current (a
 * transform change relists with a rewrite, InformerObject.configure).
 */
const PUT = stmt(
  "specStore.put",
  `INSERT INTO informer_spec (id, spec, connection, created_at, updated_at, transform_version) VALUES (1, ?, ?, ?, ?, ${TRANSFORM_VERSION})
   ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, connection = excluded.connection, updated_at = excluded.updated_at,
     transform_version = excluded.transform_version`,
);
const TRANSFORM_CURRENT = stmt("specStore.transformCurrent", `UPDATE informer_spec SET transform_version = ${TRANSFORM_VERSION} WHERE id = 1`);

export class SpecStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    migrate(db, "spec_store", MIGRATIONS);
  }

  get(): StoredSpec | undefined {
    const row = this.#db.first<{ spec: string; connection: string | null; created_at: number; updated_at: number; transform_version: number }>(GET);
    return (
      row && {
        spec: specOf(row.spec),
        connection: row.connection === null ? null : JSON.parse(row.connection),
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        transformVersion: row.transform_version,
      }
    );
  }

  put(spec: InformerSpec, connection: ClusterConnection | null, now: number): void {
    this.#db.run(PUT, JSON.stringify(spec), connection === null ? null : JSON.stringify(connection), now, now);
  }

  /** The cache is made by today's transform (after a re-transform was started, or found needless). */
  markTransformCurrent(): void {
    this.#db.run(TRANSFORM_CURRENT);
  }
}

/**
 * The registry of one deployment (client-go SharedInformerFactory's map of informers, one map per
 * cluster): which informers exist in which cluster, their specs, and whether each was declared in
 * `INFORMERS` (wrangler.toml) or created through the admin API; and the clusters added at run time
 * or declared in `CLUSTERS`. Declared entries follow their variable: the factory adds, updates and
 * removes them as it changes; API-created ones are left alone.
 *
 * The default cluster (`KUBE_API_URL`) is not stored: it always exists (clusters/cluster.ts).
 */
import { type ClusterConnection, DEFAULT_CLUSTER, type InformerAddress } from "../clusters/cluster.ts";
import type { InformerSpec } from "./informer-spec.ts";
import { type Db, migrate, stmt } from "../sql.ts";

/** `internal`: made by the factory itself (objects/factory-rbac-informers.ts), changed only by it. */
export type InformerSource = "config" | "api" | "internal";

export interface RegisteredInformer {
  cluster: string;
  name: string;
  spec: InformerSpec;
  source: InformerSource;
  createdAt: number;
  updatedAt: number;
}

export interface RegisteredCluster {
  name: string;
  /** Holds a run-time token: never leaves the Worker (`publicConnection` is what answers show). */
  connection: ClusterConnection;
  source: InformerSource;
  createdAt: number;
  updatedAt: number;
}

const MIGRATIONS = [
  `CREATE TABLE informers (
     name TEXT PRIMARY KEY, spec TEXT NOT NULL, source TEXT NOT NULL,
     created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
  // Issue 12: names are unique within a cluster. Rows from before clusters belong to the default one.
  `CREATE TABLE informers_by_cluster (
     cluster TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL, source TEXT NOT NULL,
     created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (cluster, name));
   INSERT INTO informers_by_cluster (cluster, name, spec, source, created_at, updated_at)
     SELECT '${DEFAULT_CLUSTER}', name, spec, source, created_at, updated_at FROM informers;
   DROP TABLE informers;
   CREATE TABLE clusters (
     name TEXT PRIMARY KEY, connection TEXT NOT NULL, source TEXT NOT NULL,
     created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
  // The jurisdiction the default cluster's objects were made in (KUBE_API_JURISDICTION, "" for none),
  // while it has informers: objects cannot move, so a changed setting is refused, not followed.
  `CREATE TABLE default_jurisdiction (id INTEGER PRIMARY KEY CHECK (id = 1), jurisdiction TEXT NOT NULL)`,
] as const;

const INFORMER_COLUMNS = "cluster, name, spec, source, created_at, updated_at";
const GET = stmt("registry.get", `SELECT ${INFORMER_COLUMNS} FROM informers_by_cluster WHERE cluster = ? AND name = ?`);
const LIST = stmt("registry.list", `SELECT ${INFORMER_COLUMNS} FROM informers_by_cluster ORDER BY cluster, name`);
const LIST_IN = stmt("registry.listIn", `SELECT ${INFORMER_COLUMNS} FROM informers_by_cluster WHERE cluster = ? ORDER BY name`);
const PUT = stmt(
  "registry.put",
  `INSERT INTO informers_by_cluster (${INFORMER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)
   ON CONFLICT (cluster, name) DO UPDATE SET spec = excluded.spec, source = excluded.source, updated_at = excluded.updated_at`,
);
const DELETE = stmt("registry.delete", "DELETE FROM informers_by_cluster WHERE cluster = ? AND name = ?");
const HAS_IN = stmt("registry.hasIn", "SELECT 1 AS present FROM informers_by_cluster WHERE cluster = ? LIMIT 1");

const CLUSTER_COLUMNS = "name, connection, source, created_at, updated_at";
const GET_CLUSTER = stmt("registry.getCluster", `SELECT ${CLUSTER_COLUMNS} FROM clusters WHERE name = ?`);
const LIST_CLUSTERS = stmt("registry.listClusters", `SELECT ${CLUSTER_COLUMNS} FROM clusters ORDER BY name`);
const PUT_CLUSTER = stmt(
  "registry.putCluster",
  `INSERT INTO clusters (${CLUSTER_COLUMNS}) VALUES (?, ?, ?, ?, ?)
   ON CONFLICT (name) DO UPDATE SET connection = excluded.connection, source = excluded.source, updated_at = excluded.updated_at`,
);
/** The connection alone, re-sealed: the row's source and times stay. */
const SET_CLUSTER_CONNECTION = stmt("registry.setClusterConnection", "UPDATE clusters SET connection = ? WHERE name = ?");
const DELETE_CLUSTER = stmt("registry.deleteCluster", "DELETE FROM clusters WHERE name = ?");
const GET_DEFAULT_JURISDICTION = stmt("registry.defaultJurisdiction", "SELECT jurisdiction FROM default_jurisdiction WHERE id = 1");
const SET_DEFAULT_JURISDICTION = stmt(
  "registry.setDefaultJurisdiction",
  "INSERT INTO default_jurisdiction (id, jurisdiction) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET jurisdiction = excluded.jurisdiction",
);
const CLEAR_DEFAULT_JURISDICTION = stmt("registry.clearDefaultJurisdiction", "DELETE FROM default_jurisdiction");

type InformerRow = { cluster: string; name: string; spec: string; source: InformerSource; created_at: number; updated_at: number };
type ClusterRow = { name: string; connection: string; source: InformerSource; created_at: number; updated_at: number };

/** A spec stored before clusters has no `cluster`: it is the default one's. */
export function specOf(text: string): InformerSpec {
  return { cluster: DEFAULT_CLUSTER, ...(JSON.parse(text) as Omit<InformerSpec, "cluster">) } as InformerSpec;
}

function toRegistered(row: InformerRow): RegisteredInformer {
  return { cluster: row.cluster, name: row.name, spec: specOf(row.spec), source: row.source, createdAt: row.created_at, updatedAt: row.updated_at };
}

function toCluster(row: ClusterRow): RegisteredCluster {
  return { name: row.name, connection: JSON.parse(row.connection), source: row.source, createdAt: row.created_at, updatedAt: row.updated_at };
}

export class InformerRegistry {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    migrate(db, "informer_registry", MIGRATIONS);
  }

  get(address: InformerAddress): RegisteredInformer | undefined {
    const row = this.#db.first<InformerRow>(GET, address.cluster, address.name);
    return row && toRegistered(row);
  }

  /** Every informer, or those of one cluster. */
  list(cluster?: string): RegisteredInformer[] {
    return (cluster === undefined ? this.#db.all<InformerRow>(LIST) : this.#db.all<InformerRow>(LIST_IN, cluster)).map(toRegistered);
  }

  /** Whether `cluster` has any informer: one row read, no spec parsed. */
  hasInformers(cluster: string): boolean {
    return this.#db.first<{ present: number }>(HAS_IN, cluster) !== undefined;
  }

  put(spec: InformerSpec, source: InformerSource, now: number): void {
    this.#db.run(PUT, spec.cluster, spec.name, JSON.stringify(spec), source, now, now);
  }

  delete(address: InformerAddress): boolean {
    return this.#db.run(DELETE, address.cluster, address.name) > 0;
  }

  getCluster(name: string): RegisteredCluster | undefined {
    const row = this.#db.first<ClusterRow>(GET_CLUSTER, name);
    return row && toCluster(row);
  }

  listClusters(): RegisteredCluster[] {
    return this.#db.all<ClusterRow>(LIST_CLUSTERS).map(toCluster);
  }

  putCluster(name: string, connection: ClusterConnection, source: InformerSource, now: number): void {
    this.#db.run(PUT_CLUSTER, name, JSON.stringify(connection), source, now, now);
  }

  /** Replaces a cluster's stored connection with the same one sealed anew (secrets/secret-sealer.ts `reseal`). */
  setClusterConnection(name: string, connection: ClusterConnection): void {
    this.#db.run(SET_CLUSTER_CONNECTION, JSON.stringify(connection), name);
  }

  deleteCluster(name: string): boolean {
    return this.#db.run(DELETE_CLUSTER, name) > 0;
  }

  /** The jurisdiction recorded for the default cluster's objects ("" for none), or undefined when none is recorded. */
  defaultJurisdiction(): string | undefined {
    return this.#db.first<{ jurisdiction: string }>(GET_DEFAULT_JURISDICTION)?.jurisdiction;
  }

  /** Records it (a string), or forgets it (undefined: the default cluster has no informers left). */
  setDefaultJurisdiction(jurisdiction: string | undefined): void {
    if (jurisdiction === undefined) this.#db.run(CLEAR_DEFAULT_JURISDICTION);
    else this.#db.run(SET_DEFAULT_JURISDICTION, jurisdiction);
  }
}

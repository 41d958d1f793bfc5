/**
 * The indexer: the informer's cache of objects by key, with secondary indexes (client-go index.go,
 * thread_safe_store.go; reference §4).
 *
 * Guarantees:
 * - Keys are `namespace/name` or `name` (keys.ts). Add and update are one upsert; delete by key.
 * - The `namespace` index always exists (client-go `MetaNamespaceIndexFunc`); it is served from the
 *   objects table's own column, so it costs no extra rows. Configured indexers map an index name to
 *   a field path (`spec.nodeName`, `metadata.labels.app`); a path yields zero, one or many values.
 * - Index entries change with their object in the same transaction; an entry whose value no longer
 *   applies is removed, so no index holds a stale or empty value set (kubernetes#84959).
 * - ByIndex / IndexKeys on an unknown index are an error; ListIndexFuncValues on one is empty, as
 *   in client-go.
 * - Each object's state is the body of the event-log event that last changed it (`seq`): bodies
 *   are stored once (event-log.ts), and `seq` is the object's log position for marker expansion.
 */
import { ApiError } from "../errors.ts";
import type { KubeObject } from "../kube/types.ts";
import { type Db, stmt } from "../sql.ts";
import { indexValuesAt, parseFieldPath } from "./field-path.ts";
import type { KnownObjects } from "./delta-fifo.ts";

export const NAMESPACE_INDEX = "namespace";

export interface CachedObject {
  key: string;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** Event-log position of the object's last change. */
  seq: number;
  /** JSON text. */
  body: string;
}

export interface ObjectMetaFields {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
}

export interface ListOptions {
  /** Only keys after this one (pagination cursor). */
  after?: string;
  limit: number;
}

export const INDEXER_MIGRATIONS = [
  `CREATE TABLE objects (
     key TEXT PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,
     rv TEXT NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
   CREATE INDEX objects_by_namespace ON objects (namespace, key);
   CREATE TABLE index_entries (
     index_name TEXT NOT NULL, value TEXT NOT NULL, key TEXT NOT NULL,
     PRIMARY KEY (index_name, value, key)) WITHOUT ROWID;
   CREATE INDEX index_entries_by_key ON index_entries (key, index_name)`,
] as const;

const COLUMNS = `o.key AS key, o.namespace AS namespace, o.name AS name, o.uid AS uid, o.rv AS rv, o.seq AS seq, e.body AS body`;
const FROM = "FROM objects o JOIN event_log e ON e.seq = o.seq";

const GET = stmt("indexer.get", `SELECT ${COLUMNS} ${FROM} WHERE o.key = ?`);
const GET_META = stmt("indexer.getMeta", "SELECT rv, seq FROM objects WHERE key = ?");
const HAS = stmt("indexer.has", "SELECT 1 AS present FROM objects WHERE key = ?");
const COUNT = stmt("indexer.count", "SELECT COUNT(*) AS n FROM objects");
const LIST = stmt("indexer.list", `SELECT ${COLUMNS} ${FROM} WHERE o.key > ? ORDER BY o.key LIMIT ?`);
const LIST_NAMESPACE = stmt(
  "indexer.listNamespace",
  `SELECT ${COLUMNS} ${FROM} WHERE o.namespace = ? AND o.key > ? ORDER BY o.key LIMIT ?`,
);
const BY_INDEX = stmt(
  "indexer.byIndex",
  `SELECT ${COLUMNS} FROM index_entries i JOIN objects o ON o.key = i.key JOIN event_log e ON e.seq = o.seq
   WHERE i.index_name = ? AND i.value = ? AND i.key > ? ORDER BY i.key LIMIT ?`,
);
const INDEX_KEYS = stmt(
  "indexer.indexKeys",
  "SELECT key FROM index_entries WHERE index_name = ? AND value = ? ORDER BY key",
);
const NAMESPACE_KEYS = stmt("indexer.namespaceKeys", "SELECT key FROM objects WHERE namespace = ? ORDER BY key");
const INDEX_VALUES = stmt(
  "indexer.indexValues",
  "SELECT DISTINCT value FROM index_entries WHERE index_name = ? ORDER BY value",
);
const NAMESPACE_VALUES = stmt("indexer.namespaceValues", "SELECT DISTINCT namespace AS value FROM objects ORDER BY namespace");
const UPSERT = stmt(
  "indexer.upsert",
  `INSERT INTO objects (key, namespace, name, uid, rv, seq) VALUES (?, ?, ?, ?, ?, ?)
   ON CONFLICT (key) DO UPDATE SET uid = excluded.uid, rv = excluded.rv, seq = excluded.seq`,
);
const DELETE = stmt("indexer.delete", "DELETE FROM objects WHERE key = ?");
const ENTRIES_OF_KEY = stmt("indexer.entriesOfKey", "SELECT index_name, value FROM index_entries WHERE key = ?");
const ADD_ENTRY = stmt("indexer.addEntry", "INSERT OR IGNORE INTO index_entries (index_name, value, key) VALUES (?, ?, ?)");
const REMOVE_ENTRY = stmt("indexer.removeEntry", "DELETE FROM index_entries WHERE index_name = ? AND value = ? AND key = ?");
const REMOVE_KEY_ENTRIES = stmt("indexer.removeKeyEntries", "DELETE FROM index_entries WHERE key = ?");
const CLEAR_ENTRIES = stmt("indexer.clearEntries", "DELETE FROM index_entries");
const ALL_AFTER = stmt("indexer.allAfter", `SELECT ${COLUMNS} ${FROM} WHERE o.key > ? ORDER BY o.key LIMIT ?`);

type ObjectRow = { key: string; namespace: string; name: string; uid: string; rv: string; seq: number; body: string };

function toCached(row: ObjectRow): CachedObject {
  return {
    key: row.key,
    namespace: row.namespace,
    name: row.name,
    uid: row.uid,
    resourceVersion: row.rv,
    seq: row.seq,
    body: row.body,
  };
}

export class Indexer implements KnownObjects {
  readonly #db: Db;
  /** Configured indexers: name → parsed field path. */
  readonly #indexers: ReadonlyMap<string, string[]>;

  /** `key, body, rv, uid` of every cached object, for the FIFO's Replace and Resync. */
  readonly selectAll = `SELECT o.key AS key, e.body AS body, o.rv AS rv, o.uid AS uid ${FROM}`;
  /** Correlated check for the event log's retention: event row `e` is some object's current state. */
  static readonly pinsEventSql = "SELECT 1 FROM objects o WHERE o.key = e.key AND o.seq = e.seq";

  constructor(db: Db, indexers: Record<string, string> = {}) {
    this.#db = db;
    this.#indexers = new Map(Object.entries(indexers).map(([name, path]) => [name, parseFieldPath(path)]));
  }

  /** Whether objects need parsing to maintain indexes (the namespace index needs no parsing). */
  get hasFieldIndexes(): boolean {
    return this.#indexers.size > 0;
  }

  get(key: string): CachedObject | undefined {
    const row = this.#db.first<ObjectRow>(GET, key);
    return row && toCached(row);
  }

  /** The resourceVersion and log position of a cached key, without its body. */
  getMeta(key: string): { resourceVersion: string; seq: number } | undefined {
    const row = this.#db.first<{ rv: string; seq: number }>(GET_META, key);
    return row && { resourceVersion: row.rv, seq: row.seq };
  }

  has(key: string): boolean {
    return this.#db.first(HAS, key) !== undefined;
  }

  count(): number {
    return this.#db.first<{ n: number }>(COUNT)!.n;
  }

  /** Objects in key order, optionally one namespace's. */
  list(options: ListOptions & { namespace?: string }): CachedObject[] {
    const after = options.after ?? "";
    const rows =
      options.namespace === undefined
        ? this.#db.all<ObjectRow>(LIST, after, options.limit)
        : this.#db.all<ObjectRow>(LIST_NAMESPACE, options.namespace, after, options.limit);
    return rows.map(toCached);
  }

  byIndex(index: string, value: string, options: ListOptions): CachedObject[] {
    if (index === NAMESPACE_INDEX) return this.list({ ...options, namespace: value });
    this.#requireIndex(index);
    return this.#db.all<ObjectRow>(BY_INDEX, index, value, options.after ?? "", options.limit).map(toCached);
  }

  indexKeys(index: string, value: string): string[] {
    if (index === NAMESPACE_INDEX) return this.#db.all<{ key: string }>(NAMESPACE_KEYS, value).map((r) => r.key);
    this.#requireIndex(index);
    return this.#db.all<{ key: string }>(INDEX_KEYS, index, value).map((r) => r.key);
  }

  /** Every value an index currently holds; empty for an unknown index (client-go ListIndexFuncValues). */
  listIndexFuncValues(index: string): string[] {
    const statement = index === NAMESPACE_INDEX ? NAMESPACE_VALUES : INDEX_VALUES;
    const args = index === NAMESPACE_INDEX ? [] : [index];
    return this.#db.all<{ value: string }>(statement, ...args).map((r) => r.value);
  }

  indexNames(): string[] {
    return [NAMESPACE_INDEX, ...this.#indexers.keys()];
  }

  /**
   * Stores `key` as changed by log event `seq`. `object` is parsed lazily: only field indexes need it.
   */
  upsertInTx(key: string, meta: ObjectMetaFields, seq: number, object: () => KubeObject): void {
    this.#db.run(UPSERT, key, meta.namespace, meta.name, meta.uid, meta.resourceVersion, seq);
    if (this.#indexers.size > 0) this.#updateEntriesInTx(key, this.#valuesOf(object()));
  }

  deleteInTx(key: string): void {
    this.#db.run(DELETE, key);
    if (this.#indexers.size > 0) this.#db.run(REMOVE_KEY_ENTRIES, key);
  }

  /**
   * Recomputes every index entry from the cached objects, `batch` objects per call starting after
   * key `after`; returns the last key done, or undefined when finished. Used when the configured
   * indexers change (client-go AddIndexers indexes existing items).
   */
  rebuildInTx(after: string | undefined, batch: number): string | undefined {
    if (after === undefined) this.#db.run(CLEAR_ENTRIES);
    const rows = this.#db.all<ObjectRow>(ALL_AFTER, after ?? "", batch);
    for (const row of rows) {
      const object = JSON.parse(row.body) as KubeObject;
      for (const [index, values] of this.#valuesOf(object)) {
        for (const value of values) this.#db.run(ADD_ENTRY, index, value, row.key);
      }
    }
    return rows.length === batch ? rows[rows.length - 1]!.key : undefined;
  }

  #valuesOf(object: KubeObject): Map<string, string[]> {
    const values = new Map<string, string[]>();
    for (const [index, path] of this.#indexers) values.set(index, indexValuesAt(object, path));
    return values;
  }

  /** client-go updateSingleIndex: remove values that no longer apply, add the new ones. */
  #updateEntriesInTx(key: string, next: Map<string, string[]>): void {
    const current = new Map<string, Set<string>>();
    for (const row of this.#db.all<{ index_name: string; value: string }>(ENTRIES_OF_KEY, key)) {
      let set = current.get(row.index_name);
      if (!set) current.set(row.index_name, (set = new Set()));
      set.add(row.value);
    }
    for (const [index, values] of next) {
      const old = current.get(index) ?? new Set<string>();
      const wanted = new Set(values);
      for (const value of old) if (!wanted.has(value)) this.#db.run(REMOVE_ENTRY, index, value, key);
      for (const value of wanted) if (!old.has(value)) this.#db.run(ADD_ENTRY, index, value, key);
      current.delete(index);
    }
    // entries of indexes no longer configured
    for (const [index, old] of current) for (const value of old) this.#db.run(REMOVE_ENTRY, index, value, key);
  }

  #requireIndex(index: string): void {
    if (!this.#indexers.has(index)) {
      throw new ApiError("NotFound", `index '${index}' does not exist (indexes: ${this.indexNames().join(", ")})`);
    }
  }
}

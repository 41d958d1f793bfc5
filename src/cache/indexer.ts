/**
 * The indexer: the informer's cache of objects by key, with secondary indexes (client-go index.go,
 * thread_safe_store.go; reference §4).
 *
 * Guarantees:
 * - Keys are `namespace/name` or `name` (keys.ts). Add and update are one upsert; delete by key.
 * - The `namespace` index always exists (client-go `MetaNamespaceIndexFunc`); it is served from the
 *   key order (a namespace's keys are the range `ns/` to `ns0`), so it costs no rows at all. Configured indexers map an index name to
 *   a field path (`spec.nodeName`, `metadata.labels.app`); a path yields zero, one or many values.
 * - Index entries change with their object in the same transaction; an entry whose value no longer
 *   applies is removed, so no index holds a stale or empty value set (kubernetes#84959). Only
 *   entries whose values changed are written: most updates (a pod's status) leave every indexed
 *   value as it was, and a row rewritten unchanged is still a row billed (issue 19).
 * - Writes come in batches (one popped batch of keys at a time) as multi-row statements: statement
 *   count, not rows, is what costs time and memory in a Durable Object.
 * - ByIndex / IndexKeys on an unknown index are an error; ListIndexFuncValues on one is empty, as
 *   in client-go.
 * - Each object row holds its state (`body`) and the log position of its last change (`seq`, for
 *   marker expansion): the log's segments carry their own copies, so neither keeps the other's rows.
 */
import { ApiError } from "../errors.ts";
import type { KubeObject } from "../kube/types.ts";
import { chunks, type Db, list, MAX_BOUND_PARAMETERS, type Migration, placeholders, type Row, type Statement, stmt, tableExists } from "../sql.ts";
import { indexValuesAt, parseFieldPath } from "./field-path.ts";
import type { KnownObjects } from "./delta-fifo.ts";
import type { NamespaceSet } from "./namespace-set.ts";

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

/** An object to store as changed by log event `seq`; `object` is parsed lazily (only field indexes need it). */
export interface ObjectWrite {
  key: string;
  meta: ObjectMetaFields;
  seq: number;
  /** JSON text. */
  body: string;
  object: () => KubeObject;
}

export interface ListOptions {
  /** Only keys after this one (pagination cursor). */
  after?: string;
  limit: number;
}

export const INDEXER_MIGRATIONS: readonly Migration[] = [
  `CREATE TABLE objects (
     key TEXT PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,
     rv TEXT NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
   CREATE INDEX objects_by_namespace ON objects (namespace, key);
   CREATE TABLE index_entries (
     index_name TEXT NOT NULL, value TEXT NOT NULL, key TEXT NOT NULL,
     PRIMARY KEY (index_name, value, key)) WITHOUT ROWID;
   CREATE INDEX index_entries_by_key ON index_entries (key, index_name)`,
  // Every index entry (of a secondary index too) is a row billed (issue 19): an object row keeps its
  // own entries (index_values: JSON [[index, value], …], NULL for none), so a change finds them by
  // key without an index on the entries' keys, and namespaces are key ranges.
  `ALTER TABLE objects ADD COLUMN index_values TEXT;
   UPDATE objects SET index_values = (SELECT json_group_array(json_array(i.index_name, i.value)) FROM index_entries i WHERE i.key = objects.key)
     WHERE EXISTS (SELECT 1 FROM index_entries i WHERE i.key = objects.key);
   DROP INDEX IF EXISTS index_entries_by_key;
   DROP INDEX IF EXISTS objects_by_namespace`,
  // An object row holds its body (issue 19: the event log became segments, event-log.ts), taken
  // from the per-event log before that is moved (informer.ts migrates the indexer first). The table
  // becomes a rowid table: a row of a few KB is rewritten by every update, and in a WITHOUT ROWID
  // table (an index b-tree, whose cells keep ~1 KB before overflowing) that cost ingest ~30% of its
  // speed; the key's index is written when a key is added, not when its object changes.
  (db) => {
    db.run(stmt("indexer.migration3.create", `CREATE TABLE objects_with_bodies (
      key TEXT PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,
      rv TEXT NOT NULL, seq INTEGER NOT NULL, index_values TEXT, body TEXT NOT NULL)`));
    const body = tableExists(db, "event_log") ? "(SELECT e.body FROM event_log e WHERE e.seq = o.seq)" : "''";
    db.run(stmt("indexer.migration3.copy", `INSERT INTO objects_with_bodies SELECT o.key, o.namespace, o.name, o.uid, o.rv, o.seq, o.index_values, ${body} FROM objects o`));
    db.run(stmt("indexer.migration3.drop", "DROP TABLE objects"));
    db.run(stmt("indexer.migration3.rename", "ALTER TABLE objects_with_bodies RENAME TO objects"));
  },
];

const COLUMNS = `o.key AS key, o.namespace AS namespace, o.name AS name, o.uid AS uid, o.rv AS rv, o.seq AS seq, o.body AS body`;
const FROM = "FROM objects o";

const GET = stmt("indexer.get", `SELECT ${COLUMNS} ${FROM} WHERE o.key = ?`);
const getMetaOf = (n: number) => stmt("indexer.getMetaOf", `SELECT key, rv, seq FROM objects WHERE key IN (${list(n)})`);
const getBodiesOf = (n: number) => stmt("indexer.getBodiesOf", `SELECT key, body FROM objects WHERE key IN (${list(n)})`);
const HAS = stmt("indexer.has", "SELECT 1 AS present FROM objects WHERE key = ?");
const COUNT = stmt("indexer.count", "SELECT COUNT(*) AS n FROM objects");
const ANY = stmt("indexer.any", "SELECT 1 AS present FROM objects LIMIT 1");
const LIST = stmt("indexer.list", `SELECT ${COLUMNS} ${FROM} WHERE o.key > ? ORDER BY o.key LIMIT ?`);
/** A namespace's objects after a key: the key range (?1 || '/', ?1 || '0'), '0' being the character after '/'. */
const LIST_NAMESPACE = stmt(
  "indexer.listNamespace",
  `SELECT ${COLUMNS} ${FROM} WHERE o.key > max(?1 || '/', ?2) AND o.key < ?1 || '0' ORDER BY o.key LIMIT ?3`,
);
/** Cluster-scoped objects (namespace ""), whose keys have no '/': a scan, as no range holds them apart. */
const LIST_NO_NAMESPACE = stmt("indexer.listNoNamespace", `SELECT ${COLUMNS} ${FROM} WHERE o.namespace = '' AND o.key > ? ORDER BY o.key LIMIT ?`);
const BY_INDEX = stmt(
  "indexer.byIndex",
  `SELECT ${COLUMNS} FROM index_entries i JOIN objects o ON o.key = i.key
   WHERE i.index_name = ? AND i.value = ? AND i.key > ? ORDER BY i.key LIMIT ?`,
);
const INDEX_KEYS = stmt(
  "indexer.indexKeys",
  "SELECT key FROM index_entries WHERE index_name = ? AND value = ? ORDER BY key",
);
const NAMESPACE_KEYS = stmt(
  "indexer.namespaceKeys",
  "SELECT key FROM objects WHERE (?1 <> '' AND key > ?1 || '/' AND key < ?1 || '0') OR (?1 = '' AND namespace = '') ORDER BY key",
);
/** The first key after ?: namespaces are found by skipping from one key range to the next. */
const NEXT_KEY = stmt("indexer.nextKey", "SELECT key, namespace FROM objects WHERE key >= ? ORDER BY key LIMIT 1");
const INDEX_VALUES = stmt(
  "indexer.indexValues",
  "SELECT DISTINCT value FROM index_entries WHERE index_name = ? ORDER BY value",
);
// `after` NULL is the first page: "" is a value like any other (a cluster-scoped object's namespace).
const INDEX_VALUES_PAGE = stmt(
  "indexer.indexValuesPage",
  "SELECT DISTINCT value FROM index_entries WHERE index_name = ?1 AND (?2 IS NULL OR value > ?2) ORDER BY value LIMIT ?3",
);
const OBJECT_COLUMNS = 8;
const upsertRows = (rows: number) =>
  stmt(
    "indexer.upsert",
    `INSERT INTO objects (key, namespace, name, uid, rv, seq, index_values, body) VALUES ${placeholders(rows, OBJECT_COLUMNS)}
     ON CONFLICT (key) DO UPDATE SET uid = excluded.uid, rv = excluded.rv, seq = excluded.seq, index_values = excluded.index_values, body = excluded.body`,
  );
const deleteKeys = (n: number) => stmt("indexer.delete", `DELETE FROM objects WHERE key IN (${list(n)})`);
const entriesOf = (n: number) => stmt("indexer.entriesOf", `SELECT key, index_values FROM objects WHERE key IN (${list(n)}) AND index_values IS NOT NULL`);
const removeEntryRows = (rows: number) =>
  stmt("indexer.removeEntries", `DELETE FROM index_entries WHERE (index_name, value, key) IN (VALUES ${placeholders(rows, 3)})`);
const addEntryRows = (rows: number) =>
  stmt("indexer.addEntries", `INSERT OR IGNORE INTO index_entries (index_name, value, key) VALUES ${placeholders(rows, 3)}`);
const SET_INDEX_VALUES = stmt("indexer.setIndexValues", "UPDATE objects SET index_values = ? WHERE key = ?");
const CLEAR_ENTRIES = stmt("indexer.clearEntries", "DELETE FROM index_entries");
const ALL_AFTER = stmt("indexer.allAfter", `SELECT ${COLUMNS} ${FROM} WHERE o.key > ? ORDER BY o.key LIMIT ?`);

type ObjectRow = { key: string; namespace: string; name: string; uid: string; rv: string; seq: number; body: string };

/** The first of `ranges` from `from` on whose key range ends after `key` (`ns0` is just past `ns/…`). */
function firstRangeEndingAfter(ranges: readonly string[], key: string, from: number): number {
  let i = from;
  while (i < ranges.length && `${ranges[i]}0` <= key) i++;
  return i;
}

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
  readonly selectAll = `SELECT o.key AS key, o.body AS body, o.rv AS rv, o.uid AS uid ${FROM}`;

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

  /** The resourceVersion and log position of each cached key among `keys`, without bodies. */
  getMetaMany(keys: readonly string[]): Map<string, { resourceVersion: string; seq: number }> {
    const rows = this.#rowsOf<{ key: string; rv: string; seq: number }>(keys, getMetaOf);
    return new Map(rows.map((row) => [row.key, { resourceVersion: row.rv, seq: row.seq }]));
  }

  /** The body of each cached key among `keys`. */
  getBodies(keys: readonly string[]): Map<string, string> {
    return new Map(this.#rowsOf<{ key: string; body: string }>(keys, getBodiesOf).map((row) => [row.key, row.body]));
  }

  /** Rows of a `key IN (…)` statement over `keys`, a bound-parameter limit's worth at a time. */
  #rowsOf<T extends Row>(keys: readonly string[], statement: (n: number) => Statement): T[] {
    return chunks(keys, MAX_BOUND_PARAMETERS).flatMap((chunk) => this.#db.all<T>(statement(chunk.length), ...chunk));
  }

  has(key: string): boolean {
    return this.#db.first(HAS, key) !== undefined;
  }

  isEmpty(): boolean {
    return this.#db.first(ANY) === undefined;
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
        : options.namespace === ""
          ? this.#db.all<ObjectRow>(LIST_NO_NAMESPACE, after, options.limit)
          : this.#db.all<ObjectRow>(LIST_NAMESPACE, options.namespace, after, options.limit);
    return rows.map(toCached);
  }

  /**
   * Objects of the namespaces in `namespaces`, in key order after `options.after`: their key ranges
   * one after another, with a one-key read past each range to skip the set's namespaces that hold
   * nothing up to the next key. Statements: at most two per namespace of the set, and no more than
   * about two per namespace the cache holds in between — never one per object.
   */
  listIn(namespaces: NamespaceSet, options: ListOptions): CachedObject[] {
    const after = options.after ?? "";
    const ranges = namespaces.ranges;
    const found: CachedObject[] = [];
    for (let i = firstRangeEndingAfter(ranges, after, 0); i < ranges.length && found.length < options.limit; ) {
      const namespace = ranges[i]!;
      found.push(...this.#db.all<ObjectRow>(LIST_NAMESPACE, namespace, after, options.limit - found.length).map(toCached));
      if (found.length === options.limit) break;
      const next = this.#db.first<{ key: string }>(NEXT_KEY, `${namespace}0`);
      if (!next) break;
      i = firstRangeEndingAfter(ranges, next.key, i + 1);
    }
    return found;
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
    if (index === NAMESPACE_INDEX) return this.#namespaces();
    return this.#db.all<{ value: string }>(INDEX_VALUES, index).map((r) => r.value);
  }

  /** A page of an index's values in order, after `options.after` (exclusive); paged ListIndexFuncValues. */
  indexValuesPage(index: string, options: ListOptions): string[] {
    const after = options.after ?? null;
    if (index === NAMESPACE_INDEX) return this.#namespaces().filter((ns) => after === null || ns > after).slice(0, options.limit);
    return this.#db.all<{ value: string }>(INDEX_VALUES_PAGE, index, after, options.limit).map((r) => r.value);
  }

  /**
   * Every namespace holding an object, in order: one key read per namespace, skipping each one's
   * key range (keys order a namespace's range apart from the others', not by namespace name: "a-b/"
   * sorts before "a/", hence the sort), and one per cluster-scoped key.
   */
  #namespaces(): string[] {
    const found = new Set<string>();
    for (let from = ""; ; ) {
      const row = this.#db.first<{ key: string; namespace: string }>(NEXT_KEY, from);
      if (!row) break;
      found.add(row.namespace);
      // A cluster-scoped key (namespace "") holds no '/' and has no range: on to the next key.
      from = row.namespace === "" ? `${row.key}\u0000` : `${row.namespace}0`;
    }
    return [...found].sort();
  }

  /** The configured index whose field path is `path` (as a field selector names it), if any. */
  indexOfPath(path: string): string | undefined {
    const segments = path.split(".");
    for (const [index, indexed] of this.#indexers) if (indexed.length === segments.length && indexed.every((s, i) => s === segments[i])) return index;
    return undefined;
  }

  indexNames(): string[] {
    return [NAMESPACE_INDEX, ...this.#indexers.keys()];
  }

  /** Stores `upserts` and removes `deletes` (no key in both), with their index entries. */
  writeInTx(upserts: readonly ObjectWrite[], deletes: readonly string[]): void {
    // The entries the touched keys had, from their rows (read before they are written), against
    // those they must have: only the difference is written, one statement each way per chunk.
    const had = this.#indexers.size === 0 ? new Map<string, string>() : this.#entriesOfKeys([...upserts.map((w) => w.key), ...deletes]);
    const entriesHad = (key: string): string[][] => JSON.parse(had.get(key) ?? "[]") as string[][];
    const added: string[][] = [];
    const removed: string[][] = [];
    const rows: unknown[][] = [];
    for (const w of upserts) {
      const entries = this.#indexers.size === 0 ? [] : [...this.#entriesOf(w.object())];
      const text = entries.length === 0 ? null : JSON.stringify(entries);
      // Most updates leave every indexed value as it was: the same text, nothing to parse or write.
      if (text !== (had.get(w.key) ?? null)) {
        const before = new Set(entriesHad(w.key).map(([index, value]) => entryId(index!, value!)));
        const after = new Set(entries.map(([index, value]) => entryId(index, value)));
        for (const [index, value] of entries) if (!before.has(entryId(index, value))) added.push([index, value, w.key]);
        for (const [index, value] of entriesHad(w.key)) if (!after.has(entryId(index!, value!))) removed.push([index!, value!, w.key]);
      }
      rows.push([w.key, w.meta.namespace, w.meta.name, w.meta.uid, w.meta.resourceVersion, w.seq, text, w.body]);
    }
    for (const key of deletes) for (const [index, value] of entriesHad(key)) removed.push([index!, value!, key]);
    for (const chunk of chunks(rows, Math.floor(MAX_BOUND_PARAMETERS / OBJECT_COLUMNS))) this.#db.run(upsertRows(chunk.length), ...chunk.flat());
    for (const chunk of chunks(deletes, MAX_BOUND_PARAMETERS)) this.#db.run(deleteKeys(chunk.length), ...chunk);
    for (const chunk of chunks(removed, Math.floor(MAX_BOUND_PARAMETERS / 3))) this.#db.run(removeEntryRows(chunk.length), ...chunk.flat());
    this.#insertEntriesInTx(added);
  }

  /** The [index, value] entries each of `keys` holds now, as stored (JSON; keys without any are absent). */
  #entriesOfKeys(keys: readonly string[]): Map<string, string> {
    const rows = this.#rowsOf<{ key: string; index_values: string }>(keys, entriesOf);
    return new Map(rows.map((row) => [row.key, row.index_values]));
  }

  /**
   * Recomputes every index entry from the cached objects, `batch` objects per call starting after
   * key `after`; returns the last key done, or undefined when finished. Used when the configured
   * indexers change (client-go AddIndexers indexes existing items).
   */
  rebuildInTx(after: string | undefined, batch: number): string | undefined {
    if (after === undefined) this.#db.run(CLEAR_ENTRIES);
    const rows = this.#db.all<ObjectRow>(ALL_AFTER, after ?? "", batch);
    const entries: string[][] = [];
    for (const row of rows) {
      const own = [...this.#entriesOf(JSON.parse(row.body) as KubeObject)];
      this.#db.run(SET_INDEX_VALUES, own.length === 0 ? null : JSON.stringify(own), row.key);
      for (const [index, value] of own) entries.push([index, value, row.key]);
    }
    this.#insertEntriesInTx(entries);
    return rows.length === batch ? rows[rows.length - 1]!.key : undefined;
  }

  /** [index, value] of every entry `object` has. */
  *#entriesOf(object: KubeObject): Generator<[string, string]> {
    for (const [index, path] of this.#indexers) for (const value of indexValuesAt(object, path)) yield [index, value];
  }

  #insertEntriesInTx(entries: readonly string[][]): void {
    for (const chunk of chunks(entries, Math.floor(MAX_BOUND_PARAMETERS / 3))) {
      this.#db.run(addEntryRows(chunk.length), ...chunk.flat());
    }
  }

  #requireIndex(index: string): void {
    if (!this.#indexers.has(index)) {
      throw new ApiError("NotFound", `index '${index}' does not exist (indexes: ${this.indexNames().join(", ")})`);
    }
  }
}

/** An index entry of one key, as a set member: index names hold no NUL. */
function entryId(index: string, value: string): string {
  return `${index}\u0000${value}`;
}


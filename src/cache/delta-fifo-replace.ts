/**
 * The DeltaFIFO's whole-list operations, Replace (client-go delta_fifo.go Replace; reference §3.6)
 * and Resync (§3.8), run in SQL over the indexer (`KnownObjects.selectAll`), so neither loads the
 * cache nor holds the list in memory (DESIGN invariant 6). delta-fifo.ts owns the queue, admission
 * and HasSynced, and calls these inside its transaction; the tables are its (DELTA_FIFO_MIGRATIONS).
 *
 * Guarantees:
 * - A Replace is staged page by page (`stageInTx`, idempotent per key, so a page may be staged
 *   again) and committed at once (`commitInTx`): Replaced for every listed object in list order
 *   (but for unchanged ones, below),
 *   then Deleted(tombstone) for queued keys absent from the list (last queued state, unless the
 *   newest queued delta already is a deletion) and for known, unqueued keys absent from the list
 *   (indexer state). Until the commit, queries answer from the last complete state.
 * - A tombstone's delta is at the list's resourceVersion, its body the last known state: the
 *   deletion happened after that state and by the list at the latest, and only the list's RV is
 *   known not to go back on a watch stream (review N4). client-go's DeletedFinalStateUnknown has no
 *   RV of its own; a `/k8s` watch must carry one.
 * - Staged Replaced deltas carry no body: it stays in `fifo_staging` until the committed Replace is
 *   fully popped (`releaseInTx`); a new Replace first gives pending deltas their bodies back.
 * - A listed object the cache holds at the same resourceVersion is staged without its body
 *   (UNCHANGED_BODY), unless the caller keeps bodies (a transform change rewrites them). Such an
 *   object gets no Replaced delta when its key has nothing queued: that delta would change nothing
 *   and log nothing (invariant 5), and skipping it spares a relist of an unchanged resource its
 *   queue, its pops and their deletes (client-go queues one for every listed object).
 * - Resync queues Sync, with the indexer's state, only for known keys that have nothing queued.
 */
import { type Db, placeholders, stmt } from "../sql.ts";

/**
 * The indexer as the FIFO sees it (client-go `KeyListerGetter`). `selectAll` is a SQL query over
 * the same database yielding `key, body, rv, uid` of every known object, so Replace and Resync run
 * in SQL without loading the cache.
 */
export interface KnownObjects {
  has(key: string): boolean;
  isEmpty(): boolean;
  /** The resourceVersion of each known key among `keys`. */
  getMetaMany(keys: readonly string[]): Map<string, { resourceVersion: string }>;
  readonly selectAll: string;
}

/**
 * The body staged for a listed object whose resourceVersion the cache already holds: none. Its
 * Replaced delta changes nothing (invariant 5), so the cached body stands and a quiet relist does
 * not write the whole list a second time. Never a real body: an object's JSON is at least "{}".
 */
export const UNCHANGED_BODY = "";

export interface StagedObject {
  key: string;
  body: string;
  resourceVersion: string;
  uid: string;
}

/**
 * The Replace in progress: "staging" pages, "committed" (staged bodies still read by queued
 * deltas), "direct" (the initial list, applied page by page), or "none".
 */
export type ReplacePhase = "none" | "staging" | "committed" | "direct";

const MAX_DELTA_ID = stmt("fifo.maxDeltaId", "SELECT COALESCE(MAX(id), 0) AS id FROM fifo_deltas");
const MATERIALIZE_STAGED = stmt(
  "fifo.materializeStaged",
  `UPDATE fifo_deltas SET body = (SELECT s.body FROM fifo_staging s WHERE s.key = fifo_deltas.key), staged = 0
   WHERE staged = 1`,
);
const CLEAR_STAGING = stmt("fifo.clearStaging", "DELETE FROM fifo_staging");
const stageRows = (rows: number) =>
  stmt(
    "fifo.stage",
    `INSERT INTO fifo_staging (key, body, rv, uid) VALUES ${placeholders(rows, 4)}
     ON CONFLICT (key) DO UPDATE SET body = excluded.body, rv = excluded.rv, uid = excluded.uid`,
  );
const STAGE_ROWS_PER_STATEMENT = 25; // 4 parameters a row, at most 100 per statement
// A listed object staged unchanged (UNCHANGED_BODY) whose key has nothing queued gets no delta: its
// Replaced would pop as a no-op (invariant 5; process-deltas.ts). A relist of an unchanged resource
// then writes its staging rows and nothing else (rows per object: test/cache/relist-rows.test.ts).
const QUEUE_REPLACED = stmt(
  "fifo.queueReplaced",
  `INSERT INTO fifo_deltas (key, type, body, tombstone, rv, uid, staged)
   SELECT s.key, 'Replaced', NULL, 0, s.rv, s.uid, 1 FROM fifo_staging s
   WHERE s.body <> ? OR EXISTS (SELECT 1 FROM fifo_queue q WHERE q.key = s.key)
   ORDER BY s.rowid`,
);
// Queued keys missing from the list: a tombstone with the newest queued state, unless the newest
// delta is already a deletion (dedup would drop the new one, or keep an identical tombstone).
const TOMBSTONE_QUEUED_MISSING = stmt(
  "fifo.tombstoneQueuedMissing",
  `INSERT INTO fifo_deltas (key, type, body, tombstone, rv, uid)
   SELECT q.key, 'Deleted', n.body, 1, ?, n.uid
   FROM fifo_queue q JOIN fifo_deltas n ON n.id = (SELECT MAX(id) FROM fifo_deltas d WHERE d.key = q.key)
   WHERE n.type <> 'Deleted' AND NOT EXISTS (SELECT 1 FROM fifo_staging s WHERE s.key = q.key)
   ORDER BY q.pos`,
);
const tombstoneKnownMissing = (known: KnownObjects) =>
  stmt(
    "fifo.tombstoneKnownMissing",
    `INSERT INTO fifo_deltas (key, type, body, tombstone, rv, uid)
     SELECT k.key, 'Deleted', k.body, 1, ?, k.uid FROM (${known.selectAll}) k
     WHERE NOT EXISTS (SELECT 1 FROM fifo_staging s WHERE s.key = k.key)
       AND NOT EXISTS (SELECT 1 FROM fifo_queue q WHERE q.key = k.key)`,
  );
const queueSync = (known: KnownObjects) =>
  stmt(
    "fifo.queueSync",
    `INSERT INTO fifo_deltas (key, type, body, tombstone, rv, uid)
     SELECT k.key, 'Sync', k.body, 0, k.rv, k.uid FROM (${known.selectAll}) k
     WHERE NOT EXISTS (SELECT 1 FROM fifo_queue q WHERE q.key = k.key)`,
  );
const ENQUEUE_NEW_DELTAS = stmt(
  "fifo.enqueueNewDeltas",
  "INSERT OR IGNORE INTO fifo_queue (key, pos) SELECT key, MIN(id) FROM fifo_deltas WHERE id > ? GROUP BY key",
);
const COUNT_NEW_DELTAS = stmt(
  "fifo.countNewDeltas",
  "SELECT COALESCE(SUM(type = 'Replaced'), 0) AS replaced, COALESCE(SUM(type = 'Deleted'), 0) AS deletions FROM fifo_deltas WHERE id > ?",
);
const REPLACE_PHASE = stmt("fifo.replaceState", "SELECT replace_state FROM fifo_state WHERE id = 1");
const SET_REPLACE_PHASE = stmt("fifo.setReplaceState", "UPDATE fifo_state SET replace_state = ? WHERE id = 1");

/** The id of the newest delta ever queued (0 before the first): what follows it is new. */
export function lastDeltaId(db: Db): number {
  return db.first<{ id: number }>(MAX_DELTA_ID)!.id;
}

/** The Replace and Resync of one DeltaFIFO, over its database and the indexer. */
export class FifoReplace {
  readonly #db: Db;
  readonly #known: KnownObjects;

  constructor(db: Db, known: KnownObjects) {
    this.#db = db;
    this.#known = known;
  }

  /** Starts a Replace in `phase` ("direct" or "staging"), forgetting what an uncommitted one staged. */
  beginInTx(phase: "direct" | "staging"): void {
    // Deltas of an earlier committed Replace still pending keep their bodies before staging is reused.
    this.#db.run(MATERIALIZE_STAGED);
    this.#db.run(CLEAR_STAGING);
    this.#db.run(SET_REPLACE_PHASE, phase);
  }

  phase(): ReplacePhase {
    return this.#db.first<{ replace_state: ReplacePhase }>(REPLACE_PHASE)!.replace_state;
  }

  /** Stages admitted listed objects; an unchanged one loses its body unless `keepBodies`. */
  stageInTx(rows: StagedObject[], keepBodies: boolean): void {
    if (!keepBodies) {
      const cached = this.#known.getMetaMany(rows.map((r) => r.key));
      for (const row of rows) {
        // Objects without a resourceVersion are compared by content: they keep their bodies.
        if (row.resourceVersion !== "" && cached.get(row.key)?.resourceVersion === row.resourceVersion) row.body = UNCHANGED_BODY;
      }
    }
    for (let i = 0; i < rows.length; i += STAGE_ROWS_PER_STATEMENT) {
      const chunk = rows.slice(i, i + STAGE_ROWS_PER_STATEMENT);
      this.#db.run(stageRows(chunk.length), ...chunk.flatMap((r) => [r.key, r.body, r.resourceVersion, r.uid]));
    }
  }

  /**
   * Queues the staged list as client-go's Replace; returns the Replaced deltas (`listed`: listed
   * objects, less those staged unchanged with nothing queued) and the deletions it queued.
   * `resourceVersion` is the list's: its tombstones are at it (see the contract).
   */
  commitInTx(resourceVersion: string): { listed: number; deletions: number } {
    const before = lastDeltaId(this.#db);
    this.#db.run(QUEUE_REPLACED, UNCHANGED_BODY);
    this.#db.run(TOMBSTONE_QUEUED_MISSING, resourceVersion);
    this.#db.run(tombstoneKnownMissing(this.#known), resourceVersion);
    this.#db.run(ENQUEUE_NEW_DELTAS, before);
    this.#db.run(SET_REPLACE_PHASE, "committed");
    const { replaced, deletions } = this.#db.first<{ replaced: number; deletions: number }>(COUNT_NEW_DELTAS, before)!;
    return { listed: replaced, deletions };
  }

  /** A direct Replace is over: its pages were popped as they came, nothing is staged. */
  endDirectInTx(): void {
    this.#db.run(SET_REPLACE_PHASE, "none");
  }

  /** Frees the staged bodies of a committed Replace; only once none of its deltas is queued. */
  releaseInTx(): void {
    this.#db.run(CLEAR_STAGING);
    this.#db.run(SET_REPLACE_PHASE, "none");
  }

  /** Queues Sync for every known object with nothing queued. */
  resyncInTx(): void {
    const before = lastDeltaId(this.#db);
    this.#db.run(queueSync(this.#known));
    this.#db.run(ENQUEUE_NEW_DELTAS, before);
  }
}

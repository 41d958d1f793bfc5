/**
 * DeltaFIFO, durable (client-go tools/cache/delta_fifo.go; reference §3).
 *
 * Guarantees, as client-go's:
 * - Per key, deltas are kept oldest first and popped together; keys pop in the order of their
 *   first pending delta (an already-queued key keeps its place). A key is in `fifo_queue` iff it
 *   has committed deltas (`delta_fifo.go:120-127`).
 * - Only deletions are deduplicated: two consecutive Deleted collapse into the older one, unless
 *   the older is a tombstone, in which case the newer is kept (§3.4).
 * - `Delete` of a key that is neither known to the indexer nor queued is ignored (§3.5).
 * - Replace (§3.6) and Resync (§3.8) run in SQL: delta-fifo-replace.ts states what they queue.
 *   The first Replace sets the initial population count.
 * - HasSynced: populated and the initial population has been popped (§3.7.4); the count drops in
 *   the same transaction as the processing of the popped key, so "synced" is never claimed
 *   before the last initial object is in the indexer.
 *
 * The initial list (nothing known, nothing queued, never populated) skips staging: its pages are
 * queued and popped as they arrive (`replaceDirectInTx`), which yields the same events (adds of
 * the initial list, in list order) and the same HasSynced (true once the commit is popped), while
 * writing each body once. A later relist is always staged, so queries answer from the last
 * complete state until its Replace is committed.
 *
 * Durable differences: every operation runs inside the caller's transaction (methods ending in
 * `InTx`), so a delta is never half-queued, and the queue survives eviction. `bufferedInTx` lets a
 * caller that queues and pops within one transaction (a watch chunk) keep the deltas in memory
 * while the stored queue is empty (delta-buffer.ts). Requeue on error is not implemented
 * (removed from client-go master: requeueing at the tail moves the informer back in time).
 * Objects are transformed once, when queued; Sync deltas and tombstones are not transformed again.
 * An object the cache cannot hold (no name, too large: admission.ts) is not queued: it is handed to
 * `onRejected`, inside the same transaction, and the rest of the batch goes on.
 */
import { type Db, stmt } from "../sql.ts";
import type { KubeObject } from "../kube/types.ts";
import { admit } from "./admission.ts";
import { type DeltaBuffer, flushBufferInTx, takeBuffered } from "./delta-buffer.ts";
import { FifoReplace, type KnownObjects, type StagedObject } from "./delta-fifo-replace.ts";
import type { Delta, DeltaType } from "./delta.ts";
import type { Transform } from "./transform.ts";

export type { Delta, DeltaType, KnownObjects };

/** One popped key: all its deltas, oldest first. */
export interface PoppedKey {
  key: string;
  deltas: Delta[];
  isInInitialList: boolean;
}

/** The consumer side: handles popped keys, in queue order, inside the pop's transaction; must not touch the FIFO. */
export type PopProcessor = (batch: PoppedKey[]) => void;

export const DELTA_FIFO_MIGRATIONS = [
  `CREATE TABLE fifo_deltas (
     id INTEGER PRIMARY KEY, key TEXT NOT NULL, type TEXT NOT NULL, body TEXT,
     tombstone INTEGER NOT NULL DEFAULT 0, rv TEXT NOT NULL DEFAULT '', uid TEXT NOT NULL DEFAULT '',
     staged INTEGER NOT NULL DEFAULT 0);
   CREATE INDEX fifo_deltas_by_key ON fifo_deltas (key, id);
   CREATE TABLE fifo_queue (key TEXT PRIMARY KEY, pos INTEGER NOT NULL) WITHOUT ROWID;
   CREATE INDEX fifo_queue_by_pos ON fifo_queue (pos);
   CREATE TABLE fifo_staging (key TEXT PRIMARY KEY, body TEXT NOT NULL, rv TEXT NOT NULL, uid TEXT NOT NULL);
   CREATE TABLE fifo_state (
     id INTEGER PRIMARY KEY CHECK (id = 1), populated INTEGER NOT NULL, initial_count INTEGER NOT NULL,
     replace_state TEXT NOT NULL);
   INSERT INTO fifo_state (id, populated, initial_count, replace_state) VALUES (1, 0, 0, 'none')`,
] as const;

const NEWEST_DELTA = stmt(
  "fifo.newestDelta",
  "SELECT id, type, tombstone FROM fifo_deltas WHERE key = ? ORDER BY id DESC LIMIT 1",
);
const INSERT_DELTA = stmt(
  "fifo.insertDelta",
  "INSERT INTO fifo_deltas (key, type, body, tombstone, rv, uid) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
);
const REPLACE_NEWEST_TOMBSTONE = stmt(
  "fifo.replaceNewestTombstone",
  "UPDATE fifo_deltas SET body = ?, tombstone = ?, rv = ?, uid = ? WHERE id = ?",
);
const ENQUEUE_KEY = stmt("fifo.enqueueKey", "INSERT OR IGNORE INTO fifo_queue (key, pos) VALUES (?, ?)");
const IS_QUEUED = stmt("fifo.isQueued", "SELECT 1 AS queued FROM fifo_queue WHERE key = ?");
const STATE = stmt("fifo.state", "SELECT populated, initial_count FROM fifo_state WHERE id = 1");
const SET_STATE = stmt("fifo.setState", "UPDATE fifo_state SET populated = ?, initial_count = ? WHERE id = 1");
const MARK_POPULATED = stmt("fifo.markPopulated", "UPDATE fifo_state SET populated = 1 WHERE id = 1 AND populated = 0");
const QUEUE_LENGTH = stmt("fifo.queueLength", "SELECT COUNT(*) AS n FROM fifo_queue");
const ANY_QUEUED = stmt("fifo.anyQueued", "SELECT 1 AS queued FROM fifo_queue LIMIT 1");

// Pop: the head keys with all their deltas, bodies of staged deltas from fifo_staging.
const HEAD_DELTAS = stmt(
  "fifo.headDeltas",
  `SELECT q.key AS key, d.type AS type, CASE WHEN d.staged = 1 THEN s.body ELSE d.body END AS body,
          d.tombstone AS tombstone, d.rv AS rv, d.uid AS uid, d.staged AS staged
   FROM (SELECT key, pos FROM fifo_queue ORDER BY pos LIMIT ?) q
   JOIN fifo_deltas d ON d.key = q.key
   LEFT JOIN fifo_staging s ON d.staged = 1 AND s.key = d.key
   ORDER BY q.pos, d.id`,
);
const HEAD_KEYS = "SELECT key FROM fifo_queue ORDER BY pos LIMIT ?";
const DELETE_HEAD_DELTAS = stmt("fifo.deleteHeadDeltas", `DELETE FROM fifo_deltas WHERE key IN (${HEAD_KEYS})`);
const DELETE_HEAD_KEYS = stmt("fifo.deleteHeadKeys", `DELETE FROM fifo_queue WHERE key IN (${HEAD_KEYS})`);

interface FifoState {
  populated: boolean;
  initialCount: number;
}

export class DeltaFIFO {
  readonly #db: Db;
  readonly #known: KnownObjects;
  readonly #replace: FifoReplace;
  readonly #transform: Transform;
  readonly #onRejected: (reason: string) => void;
  #buffer: DeltaBuffer | undefined;
  /** Whether this buffered transaction already marked the queue populated (spares a statement per delta). */
  #markedInBuffer = false;

  constructor(db: Db, known: KnownObjects, transform: Transform, onRejected: (reason: string) => void = () => {}) {
    this.#db = db;
    this.#known = known;
    this.#replace = new FifoReplace(db, known);
    this.#transform = transform;
    this.#onRejected = onRejected;
  }

  addInTx(object: KubeObject): void {
    this.#queueObjectInTx("Added", object);
  }

  updateInTx(object: KubeObject): void {
    this.#queueObjectInTx("Updated", object);
  }

  /** Queues the deletion of `object` (its final state as the watch reported it). */
  deleteInTx(object: KubeObject): void {
    this.#markPopulatedInTx();
    const admitted = this.#admit(object);
    if (!admitted) return;
    if (!this.#known.has(admitted.key) && !this.#isQueued(admitted.key)) return;
    this.#queueInTx(admitted.key, "Deleted", admitted.body, false, admitted.object);
  }

  /**
   * Runs `fn` with queued deltas held in memory while nothing is queued in storage, then writes out
   * whatever `fn` left unpopped. Inside a transaction; on a throw the buffer is dropped with it.
   */
  bufferedInTx<T>(fn: () => T): T {
    if (this.#buffer || !this.isEmpty()) return fn();
    this.#buffer = new Map();
    this.#markedInBuffer = false;
    try {
      const result = fn();
      flushBufferInTx(this.#db, this.#buffer);
      return result;
    } finally {
      this.#buffer = undefined;
    }
  }

  /**
   * Starts a Replace: forgets what an earlier, uncommitted Replace staged. With `allowDirect`, the
   * initial list is applied directly: the caller then hands pages to `replaceDirectInTx` and pops
   * them in the same transaction, instead of `stageInTx`.
   */
  beginReplaceInTx(options: { allowDirect?: boolean } = {}): void {
    this.#requireUnbuffered("Replace");
    // The very first list, with nothing cached or queued, has no earlier state to keep answering
    // from and nothing to tombstone: its pages can be applied as they come (see `replaceDirectInTx`).
    const direct = options.allowDirect === true && !this.#state().populated && this.isEmpty() && this.#known.isEmpty();
    this.#replace.beginInTx(direct ? "direct" : "staging");
  }

  /** Whether the Replace in progress applies its pages directly (the initial list). */
  isDirectReplace(): boolean {
    return this.#replace.phase() === "direct";
  }

  /**
   * Queues listed objects of a direct Replace as Replaced deltas, for the caller to pop in the same
   * transaction (inside `bufferedInTx`). They pop as the initial list: the queue is not populated
   * until the commit. Applying a page twice (after an eviction) is harmless: the second is a no-op.
   */
  replaceDirectInTx(objects: readonly KubeObject[]): void {
    if (this.#replace.phase() !== "direct") throw new Error("DeltaFIFO: replaceDirectInTx outside a direct Replace");
    for (const object of objects) {
      const admitted = this.#admit(object);
      if (admitted) this.#queueInTx(admitted.key, "Replaced", admitted.body, false, admitted.object);
    }
  }

  /**
   * Stages listed objects (one list page, or part of one). Idempotent per key, so a page may be
   * staged again. An object the cache holds at the same resourceVersion is staged without its body
   * (UNCHANGED_BODY) unless `keepBodies` (a transform change must rewrite unchanged objects).
   */
  stageInTx(objects: readonly KubeObject[], options: { keepBodies?: boolean } = {}): void {
    if (this.#replace.phase() === "direct") throw new Error("DeltaFIFO: stageInTx during a direct Replace (use replaceDirectInTx)");
    const rows: StagedObject[] = [];
    for (const object of objects) {
      const admitted = this.#admit(object);
      if (!admitted) continue;
      const { metadata } = admitted.object;
      rows.push({ key: admitted.key, body: admitted.body, resourceVersion: metadata.resourceVersion ?? "", uid: metadata.uid ?? "" });
    }
    this.#replace.stageInTx(rows, options.keepBodies === true);
  }

  /**
   * Commits the staged list, listed at `resourceVersion`, as client-go's Replace (§3.6); its
   * tombstones are at that RV (delta-fifo-replace.ts). Returns the number of keys queued by it.
   */
  commitReplaceInTx(resourceVersion: string): number {
    if (this.#replace.phase() === "direct") {
      // Every listed object is already popped, as the initial list: the queue is now synced.
      this.#setState({ populated: true, initialCount: 0 });
      this.#replace.endDirectInTx();
      return 0;
    }
    const { listed, deletions } = this.#replace.commitInTx(resourceVersion);
    const state = this.#state();
    if (!state.populated) this.#setState({ populated: true, initialCount: listed + deletions });
    return listed + deletions;
  }

  /** Queues Sync for every known object with nothing queued (§3.8). */
  resyncInTx(): void {
    this.#requireUnbuffered("Resync");
    this.#replace.resyncInTx();
  }

  /**
   * Pops up to `max` keys in queue order and hands them, with all their deltas, to `process`,
   * inside the caller's transaction (DESIGN invariant 2: pop, index and log append are one
   * transaction). Returns the number of keys popped.
   */
  popInTx(max: number, process: PopProcessor): number {
    const popped = this.#buffer ? takeBuffered(this.#buffer, max) : this.#takeStored(max);
    if (popped.length === 0) return 0;
    const state = this.#state();
    const initialBefore = state.initialCount;
    const batch = popped.map(({ key, deltas }): PoppedKey => {
      const isInInitialList = !(state.populated && state.initialCount === 0);
      if (state.initialCount > 0) state.initialCount--;
      return { key, deltas, isInInitialList };
    });
    process(batch);
    if (!this.#buffer) {
      this.#db.run(DELETE_HEAD_DELTAS, max);
      this.#db.run(DELETE_HEAD_KEYS, max);
    }
    // Only while the initial population drains does a pop change the state: a row rewritten
    // unchanged is still a row billed (issue 19).
    if (state.initialCount !== initialBefore) this.#setState(state);
    return batch.length;
  }

  #takeStored(max: number): { key: string; deltas: Delta[] }[] {
    const rows = this.#db.all<{
      key: string;
      type: DeltaType;
      body: string | null;
      tombstone: number;
      rv: string;
      uid: string;
    }>(HEAD_DELTAS, max);
    const popped: { key: string; deltas: Delta[] }[] = [];
    for (const row of rows) {
      if (popped.at(-1)?.key !== row.key) popped.push({ key: row.key, deltas: [] });
      popped.at(-1)!.deltas.push({
        type: row.type,
        body: row.body,
        tombstone: row.tombstone === 1,
        resourceVersion: row.rv,
        uid: row.uid,
      });
    }
    return popped;
  }

  /**
   * Frees the bodies a committed Replace staged once all its deltas are popped (an unfinished
   * list's staging is kept: it is still being filled). Call when the queue is empty. Answers whether
   * a committed Replace was thereby completed.
   */
  releaseStagingInTx(): boolean {
    if (this.#replace.phase() !== "committed") return false;
    if (!this.isEmpty()) return false; // staged deltas may still be queued
    this.#replace.releaseInTx();
    return true;
  }

  /**
   * Not synced again until the next Replace is committed and popped: what is listed changed, so the
   * cache no longer holds the whole list (client-go builds a new informer; ours keeps its cache).
   */
  resetSyncedInTx(): void {
    this.#setState({ populated: false, initialCount: 0 });
  }

  hasSynced(): boolean {
    const state = this.#state();
    return state.populated && state.initialCount === 0;
  }

  /** Whether nothing is queued; unlike `length`, it stops at the first row (runs every batch). */
  isEmpty(): boolean {
    return this.#db.first(ANY_QUEUED) === undefined;
  }

  /** Number of queued keys. */
  length(): number {
    return this.#db.first<{ n: number }>(QUEUE_LENGTH)!.n;
  }

  #queueObjectInTx(type: "Added" | "Updated", object: KubeObject): void {
    this.#markPopulatedInTx();
    const admitted = this.#admit(object);
    if (admitted) this.#queueInTx(admitted.key, type, admitted.body, false, admitted.object);
  }

  #admit(object: KubeObject) {
    const admission = admit(object, this.#transform);
    if (admission.ok) return admission;
    this.#onRejected(admission.reason);
    return undefined;
  }

  #queueInTx(key: string, type: DeltaType, body: string | null, tombstone: boolean, object: KubeObject): void {
    const delta: Delta = {
      type,
      body,
      tombstone,
      resourceVersion: object.metadata.resourceVersion ?? "",
      uid: object.metadata.uid ?? "",
      object,
    };
    const buffered = this.#buffer?.get(key);
    if (type === "Deleted") {
      // dedupDeltas: of two consecutive deletions keep the older, unless it is a tombstone and this one is not.
      const newest = this.#buffer ? buffered?.at(-1) : this.#newestStored(key);
      if (newest?.type === "Deleted") {
        if (newest.tombstone && !tombstone) this.#replaceNewest(key, newest, delta);
        return;
      }
    }
    if (this.#buffer) {
      if (buffered) buffered.push(delta);
      else this.#buffer.set(key, [delta]);
      return;
    }
    const { id } = this.#db.first<{ id: number }>(
      INSERT_DELTA,
      key,
      type,
      body,
      tombstone ? 1 : 0,
      delta.resourceVersion,
      delta.uid,
    )!;
    this.#db.run(ENQUEUE_KEY, key, id);
  }

  #newestStored(key: string): (Delta & { id: number }) | undefined {
    const row = this.#db.first<{ id: number; type: DeltaType; tombstone: number }>(NEWEST_DELTA, key);
    return row && { id: row.id, type: row.type, tombstone: row.tombstone === 1, body: null, resourceVersion: "", uid: "" };
  }

  #replaceNewest(key: string, newest: Delta & { id?: number }, next: Delta): void {
    if (this.#buffer) {
      const deltas = this.#buffer.get(key)!;
      deltas[deltas.length - 1] = next;
    } else {
      this.#db.run(REPLACE_NEWEST_TOMBSTONE, next.body, 0, next.resourceVersion, next.uid, newest.id);
    }
  }

  #isQueued(key: string): boolean {
    return this.#buffer ? this.#buffer.has(key) : this.#db.first(IS_QUEUED, key) !== undefined;
  }

  #requireUnbuffered(operation: string): void {
    if (this.#buffer) throw new Error(`DeltaFIFO: ${operation} is not allowed inside bufferedInTx`);
  }

  #markPopulatedInTx(): void {
    if (this.#buffer && this.#markedInBuffer) return;
    this.#db.run(MARK_POPULATED);
    if (this.#buffer) this.#markedInBuffer = true;
  }

  #state(): FifoState {
    const row = this.#db.first<{ populated: number; initial_count: number }>(STATE)!;
    return { populated: row.populated === 1, initialCount: row.initial_count };
  }

  #setState(state: FifoState): void {
    this.#db.run(SET_STATE, state.populated ? 1 : 0, state.initialCount);
  }
}

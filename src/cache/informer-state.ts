/**
 * The informer's durable row (`informer_state`): where the reflector stands (its state, memory and
 * when its next step is due), the objects the cache refused, a pending retransform, and the newest
 * resourceVersion of the API server the cluster moved away from. informer.ts decides when each
 * changes; this module only reads and writes them (its statements are the row's only SQL).
 *
 * Guarantees:
 * - The reflector's state, memory and wakeAt are written together (`saveInTx`), inside the caller's
 *   transaction when it has one, so a step's outcome is never half stored (DESIGN invariant 1).
 * - `restartInTx` forgets the position (RVs, state, wake time) in one statement, and keeps what is
 *   not about the position (skipped objects, the earlier server's RV).
 * - The migrations are the informer's whole history, `rv_marks` (cache-progress.ts) included:
 *   migrations already applied are never reordered or split.
 */
import { type Db, stmt } from "../sql.ts";
import type { ReflectorState } from "./reflector.ts";
import { initialMemory, type ReflectorMemory } from "./reflector-memory.ts";

export const INFORMER_MIGRATIONS = [
  `CREATE TABLE informer_state (
     id INTEGER PRIMARY KEY CHECK (id = 1), last_sync_rv TEXT NOT NULL, reflector TEXT NOT NULL,
     memory TEXT NOT NULL, wake_at INTEGER NOT NULL);
   INSERT INTO informer_state (id, last_sync_rv, reflector, memory, wake_at) VALUES (1, '', '{"kind":"idle"}', '${JSON.stringify(initialMemory)}', 0)`,
  // cache_rv: the RV up to which the indexer is complete (lastSyncRV once the queue is drained);
  // skipped_*: objects the cache could not admit; retransform: see Retransform.
  `ALTER TABLE informer_state ADD COLUMN cache_rv TEXT NOT NULL DEFAULT '';
   ALTER TABLE informer_state ADD COLUMN skipped_objects INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE informer_state ADD COLUMN last_skipped TEXT;
   ALTER TABLE informer_state ADD COLUMN retransform INTEGER NOT NULL DEFAULT 0;
   UPDATE informer_state SET cache_rv = last_sync_rv`,
  // rv_marks: where in the log the cache was complete at a resourceVersion (see RV_MARK).
  `CREATE TABLE rv_marks (seq INTEGER PRIMARY KEY, rv TEXT NOT NULL)`,
  // earlier_server_rv: the highest resourceVersion handed out before the cluster last moved to
  // another API server (see positionOf).
  `ALTER TABLE informer_state ADD COLUMN earlier_server_rv TEXT NOT NULL DEFAULT ''`,
  // first_rv: the RV a position was first marked at (see RV_MARK); NULL in older rows: `rv`.
  `ALTER TABLE rv_marks ADD COLUMN first_rv TEXT`,
] as const;

/**
 * After a transform change the cached bodies were made by the old transform, and a relist finds
 * most objects at the same resourceVersion, which invariant 5 would leave alone. While a retransform
 * is pending, an unchanged RV with a different body is an update. `Pending`: the next committed list
 * must rewrite; `Committed`: its Replace is being popped; done when that Replace is fully popped.
 * (An older Replace drained meanwhile does not end it: only one committed after the change does.)
 */
const Retransform = { None: 0, Pending: 1, Committed: 2 } as const;

const EARLIER_SERVER_RV = stmt("informer.earlierServerRv", "SELECT earlier_server_rv FROM informer_state WHERE id = 1");
const SET_EARLIER_SERVER_RV = stmt("informer.setEarlierServerRv", "UPDATE informer_state SET earlier_server_rv = ? WHERE id = 1");
const LOAD = stmt("informer.load", "SELECT reflector, memory, wake_at FROM informer_state WHERE id = 1");
const SAVE_MEMORY = stmt("informer.saveMemory", "UPDATE informer_state SET memory = ? WHERE id = 1");
const SAVE = stmt("informer.save", "UPDATE informer_state SET reflector = ?, memory = ?, wake_at = ? WHERE id = 1");
const RESTART = stmt(
  "informer.restart",
  `UPDATE informer_state SET last_sync_rv = '', cache_rv = '', reflector = '{"kind":"idle"}', memory = ?, wake_at = 0,
     retransform = CASE WHEN ? THEN ${Retransform.Pending} ELSE retransform END WHERE id = 1`,
);
const RECORD_SKIP = stmt(
  "informer.recordSkip",
  "UPDATE informer_state SET skipped_objects = skipped_objects + 1, last_skipped = ? WHERE id = 1",
);
const SKIPPED = stmt("informer.skipped", "SELECT skipped_objects, last_skipped FROM informer_state WHERE id = 1");
const RETRANSFORM = stmt("informer.retransform", "SELECT retransform FROM informer_state WHERE id = 1");
/** At a commit, a pending retransform rides on the committed Replace (or ends, if nothing is queued). */
const RETRANSFORM_COMMITTED = stmt(
  "informer.retransformCommitted",
  `UPDATE informer_state SET retransform = CASE WHEN EXISTS (SELECT 1 FROM fifo_queue) THEN ${Retransform.Committed} ELSE ${Retransform.None} END
   WHERE id = 1 AND retransform = ${Retransform.Pending}`,
);
const RETRANSFORM_DONE = stmt(
  "informer.retransformDone",
  `UPDATE informer_state SET retransform = ${Retransform.None} WHERE id = 1 AND retransform = ${Retransform.Committed}`,
);

/** What the reflector's step left: persisted after every step. */
export interface Persisted {
  state: ReflectorState;
  memory: ReflectorMemory;
  wakeAt: number;
}

export class InformerState {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  load(): Persisted {
    const row = this.#db.first<{ reflector: string; memory: string; wake_at: number }>(LOAD)!;
    return { state: JSON.parse(row.reflector), memory: JSON.parse(row.memory), wakeAt: row.wake_at };
  }

  save(persisted: Persisted): void {
    this.#db.transaction(() => this.saveInTx(persisted));
  }

  saveInTx(persisted: Persisted): void {
    this.#db.run(SAVE, JSON.stringify(persisted.state), JSON.stringify(persisted.memory), persisted.wakeAt);
  }

  /** Saves the memory alone (a watch opened: the state and wake time stand). */
  saveMemory(memory: ReflectorMemory): void {
    this.#db.run(SAVE_MEMORY, JSON.stringify(memory));
  }

  /** Back to idle with `memory`, no RV, due at once; `transformChanged` makes a retransform pending. */
  restartInTx(memory: ReflectorMemory, transformChanged: boolean): void {
    this.#db.run(RESTART, JSON.stringify(memory), transformChanged ? 1 : 0);
  }

  recordSkipInTx(reason: string): void {
    this.#db.run(RECORD_SKIP, reason);
  }

  /** Objects the cache refused, and why the last one was. */
  skipped(): { count: number; last: string | null } {
    const row = this.#db.first<{ skipped_objects: number; last_skipped: string | null }>(SKIPPED)!;
    return { count: row.skipped_objects, last: row.last_skipped };
  }

  /** Whether cached bodies may have been made by an older transform (see Retransform). */
  retransforming(): boolean {
    return this.#db.first<{ retransform: number }>(RETRANSFORM)!.retransform !== Retransform.None;
  }

  /** A list was committed: a pending retransform rides on its Replace. */
  retransformCommittedInTx(): void {
    this.#db.run(RETRANSFORM_COMMITTED);
  }

  /** A committed Replace was fully popped: a retransform riding on it is done. */
  retransformDoneInTx(): void {
    this.#db.run(RETRANSFORM_DONE);
  }

  /** The highest RV handed out before the cluster last moved to another API server ("" if never). */
  earlierServerRv(): string {
    return this.#db.first<{ earlier_server_rv: string }>(EARLIER_SERVER_RV)!.earlier_server_rv;
  }

  setEarlierServerRvInTx(resourceVersion: string): void {
    this.#db.run(SET_EARLIER_SERVER_RV, resourceVersion);
  }
}

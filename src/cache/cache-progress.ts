/**
 * The informer's progress: the resourceVersion it last synced to (lastSyncRV), the one the cache
 * is complete at (what queries read), the number of cached objects, and the marks — log positions
 * after which the cache was complete at a resourceVersion — that place a watch from an RV in the
 * log (positionOf) and bound the runs a watch sorts (boundaryAfter).
 *
 * Guarantees:
 * - A transaction that advances any of it writes one row (the state row): lastSyncRV, the cache's
 *   RV, the newest mark and the object count together (issue 19: they were four rows a batch).
 * - The newest mark lives in the state row; older marks in `rv_marks`. A new mark moves the newest
 *   one to `rv_marks`, except where the two runs they end can be one: both only watch events
 *   (applied in resourceVersion order, nothing relisted), the second right after the first, and
 *   the merged run under MARK_SPACING events. A watch from an RV inside a merged run starts after
 *   the mark before it and skips what it saw by RV, which watch-only runs make exact; a relist's
 *   events (old RVs of objects the client never saw change) always start a run of their own.
 * - A later RV at the newest mark's position (an upstream bookmark: nothing happened in between)
 *   moves its `rv` on and keeps `first_rv`: the cache there is complete at every RV between.
 * - A mark says whether the run it ends closes with deletes a relist inferred, at its first RV
 *   (`inferredDeletes`): they share that RV (process-deltas.ts), so a watch from it may have seen
 *   some of them and not the others, and must be given them again (rv-positions.ts, review N4).
 * - The object count changes in the transaction that adds or deletes objects, so it always equals
 *   the objects table's size: status and metrics read one row, not every object.
 * - Marks' RVs (first and last) grow with their position, within one API server (a move to another
 *   forgets them, forgetMarksInTx; a relist over a populated cache is a quorum read, reflector.ts),
 *   so a watch from an RV is placed by a binary search over positions (`markForWatch`): a lookup by
 *   primary key a probe, O(log n) rows read and no index to write (review B8: it read every mark).
 */
import { compareResourceVersions } from "../kube/resource-version.ts";
import { type Db, type Statement, stmt } from "../sql.ts";
import type { LogBounds } from "./event-log.ts";

/** What an informer reports of its progress (Informer.progress): status, /metrics and the status page read it. */
export type WatchStateName = "idle" | "listing" | "watching" | "sleeping" | "backoff";

export interface InformerProgress {
  synced: boolean;
  lastSyncResourceVersion: string;
  /** The RV the cache is complete up to (what queries read); behind lastSyncRV while the queue drains. */
  cacheResourceVersion: string;
  /** Objects the cache could not admit (admission.ts), and why the last one was refused. */
  skippedObjects: number;
  lastSkipped: string | null;
  objects: number;
  queueDepth: number;
  watch: { state: WatchStateName; since: string | null; restarts: number };
  relists: number;
  lastError: string | null;
  eventLog: LogBounds;
  wakeAt: number;
}

/** Events a run of watch-only transactions spans before its end is kept as a mark of its own. */
export const MARK_SPACING = 1_000;

export const CACHE_PROGRESS_MIGRATIONS = [
  // The newest mark (mark_*; mark_seq NULL: none yet, or all in rv_marks) and the object count.
  `ALTER TABLE informer_state ADD COLUMN mark_seq INTEGER;
   ALTER TABLE informer_state ADD COLUMN mark_rv TEXT;
   ALTER TABLE informer_state ADD COLUMN mark_first_rv TEXT;
   ALTER TABLE informer_state ADD COLUMN mark_watch_only INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE informer_state ADD COLUMN object_count INTEGER NOT NULL DEFAULT 0;
   UPDATE informer_state SET object_count = (SELECT COUNT(*) FROM objects)`,
  // Whether the run a mark ends closes with a relist's inferred deletes at its first RV (review N4).
  `ALTER TABLE informer_state ADD COLUMN mark_inferred_deletes INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE rv_marks ADD COLUMN inferred_deletes INTEGER NOT NULL DEFAULT 0`,
] as const;

export interface Mark {
  seq: number;
  rv: string;
  firstRv: string;
  /** The run it ends closes with deletes a relist inferred, at `firstRv` (see the contract). */
  inferredDeletes: boolean;
}

interface NewestMark extends Mark {
  /** The run it ends holds watch events only (see the contract). */
  watchOnly: boolean;
}

const STATE = stmt(
  "progress.state",
  "SELECT last_sync_rv, cache_rv, mark_seq, mark_rv, mark_first_rv, mark_watch_only, mark_inferred_deletes, object_count FROM informer_state WHERE id = 1",
);
const SAVE = stmt(
  "progress.save",
  `UPDATE informer_state SET last_sync_rv = ?, cache_rv = ?, mark_seq = ?, mark_rv = ?, mark_first_rv = ?, mark_watch_only = ?,
     mark_inferred_deletes = ?, object_count = object_count + ? WHERE id = 1`,
);
const ADD_OBJECTS = stmt("progress.addObjects", "UPDATE informer_state SET object_count = object_count + ? WHERE id = 1");
const KEEP_MARK = stmt("progress.keepMark", "INSERT OR REPLACE INTO rv_marks (seq, rv, first_rv, inferred_deletes) VALUES (?, ?, ?, ?)");
const STORED_AROUND = stmt(
  "progress.storedAround",
  `SELECT (SELECT MAX(seq) FROM rv_marks WHERE seq > ?1 AND seq <= ?1 + ?2) AS within,
          (SELECT MIN(seq) FROM rv_marks WHERE seq > ?1) AS first_after`,
);
const LAST_STORED_BELOW = stmt("progress.lastStoredBelow", "SELECT MAX(seq) AS seq FROM rv_marks WHERE seq < ?");
const STORED_AT_OR_AFTER = stmt(
  "progress.storedAtOrAfter",
  "SELECT seq, rv, COALESCE(first_rv, rv) AS first_rv, inferred_deletes FROM rv_marks WHERE seq >= ? ORDER BY seq LIMIT 1",
);
const LAST_STORED = stmt("progress.lastStored", "SELECT seq, rv, COALESCE(first_rv, rv) AS first_rv, inferred_deletes FROM rv_marks ORDER BY seq DESC LIMIT 1");
const STORED_FROM = stmt("progress.storedFrom", "SELECT seq, rv, COALESCE(first_rv, rv) AS first_rv, inferred_deletes FROM rv_marks WHERE seq >= ? ORDER BY seq");
const DROP_STORED_BELOW = stmt("progress.dropStoredBelow", "DELETE FROM rv_marks WHERE seq < ?");
const FORGET_STORED = stmt("progress.forgetStored", "DELETE FROM rv_marks");

type StateRow = {
  last_sync_rv: string;
  cache_rv: string;
  mark_seq: number | null;
  mark_rv: string | null;
  mark_first_rv: string | null;
  mark_watch_only: number;
  mark_inferred_deletes: number;
  object_count: number;
};

/** What a transaction did, for `advanceInTx`. */
export interface Advance {
  /** The new lastSyncRV (a watch chunk's or a committed list's RV); absent: unchanged. */
  lastSyncRv?: string;
  /** Objects added minus objects deleted by the transaction's pops. */
  objectDelta: number;
  /** Set by a watch chunk: the log's tail before it appended anything. */
  watchFrom?: number;
  /** Set when the transaction's last event is a delete a relist inferred: its resourceVersion. */
  inferredDeleteAt?: string;
}

export class CacheProgress {
  readonly #db: Db;
  readonly #tail: () => number;
  readonly #queueEmpty: () => boolean;

  constructor(db: Db, tail: () => number, queueEmpty: () => boolean) {
    this.#db = db;
    this.#tail = tail;
    this.#queueEmpty = queueEmpty;
  }

  lastSyncResourceVersion(): string {
    return this.#state().last_sync_rv;
  }

  /** The RV the cache is complete up to (what queries read). */
  cacheResourceVersion(): string {
    return this.#state().cache_rv;
  }

  objectCount(): number {
    return this.#state().object_count;
  }

  /**
   * After a transaction's pops: lastSyncRV as given; the cache complete at it when nothing is
   * left queued, and the log's tail marked with that RV. One row, and now and then a mark kept.
   */
  advanceInTx(advance: Advance): void {
    const state = this.#state();
    const lastSync = advance.lastSyncRv ?? state.last_sync_rv;
    const queueEmpty = this.#queueEmpty();
    const cacheRv = queueEmpty ? lastSync : state.cache_rv;
    const before = newestOf(state);
    const newest = queueEmpty && cacheRv !== "" ? this.#markInTx(before, this.#tail(), cacheRv, advance) : before;
    // Nothing moved (the loop checks an empty queue at every step): a row rewritten unchanged is still billed.
    const unchanged =
      advance.objectDelta === 0 &&
      lastSync === state.last_sync_rv &&
      cacheRv === state.cache_rv &&
      newest?.seq === before?.seq &&
      newest?.rv === before?.rv &&
      newest?.watchOnly === before?.watchOnly &&
      newest?.inferredDeletes === before?.inferredDeletes;
    if (unchanged) return;
    this.#db.run(
      SAVE,
      lastSync,
      cacheRv,
      newest?.seq ?? null,
      newest?.rv ?? null,
      newest?.firstRv ?? null,
      newest?.watchOnly ? 1 : 0,
      newest?.inferredDeletes ? 1 : 0,
      advance.objectDelta,
    );
  }

  /** The object count after pops that do not advance the RV (a Replace being drained). */
  addObjectsInTx(delta: number): void {
    if (delta !== 0) this.#db.run(ADD_OBJECTS, delta);
  }

  /** The newest mark once `tail` is marked at `rv` (the one it replaces kept in rv_marks if it must be). */
  #markInTx(newest: NewestMark | undefined, tail: number, rv: string, advance: Advance): NewestMark {
    const { watchFrom } = advance;
    // The run ends with a relist's inferred deletes at the RV it is marked with (see the contract).
    const inferredDeletes = advance.inferredDeleteAt === rv;
    if (newest === undefined) {
      // None in the state row (a new informer, or marks kept by an earlier release): the last kept
      // one, if it is at the tail, is moved on rather than replaced (its first_rv stands).
      const last = this.marksFrom(tail).at(-1);
      if (last !== undefined) return { ...last, rv, watchOnly: false };
      const previous = this.lastMarkBelow(tail);
      return { seq: tail, rv, firstRv: rv, watchOnly: watchFrom !== undefined && watchFrom === previous, inferredDeletes };
    }
    if (newest.seq === tail) return { ...newest, rv };
    // This transaction's events are all that follow the newest mark, and all of them a watch's.
    const onlyWatchSince = watchFrom !== undefined && newest.seq === watchFrom;
    // A merged run starts at a kept mark: a watch from an RV inside it starts there.
    const runStart = this.#db.first<{ seq: number | null }>(LAST_STORED_BELOW, newest.seq)!.seq;
    if (onlyWatchSince && newest.watchOnly && runStart !== null && tail - runStart <= MARK_SPACING) return { seq: tail, rv, firstRv: rv, watchOnly: true, inferredDeletes: false };
    this.#db.run(KEEP_MARK, newest.seq, newest.rv, newest.firstRv, newest.inferredDeletes ? 1 : 0);
    return { seq: tail, rv, firstRv: rv, watchOnly: onlyWatchSince, inferredDeletes };
  }

  /** The last mark (undefined before any). */
  lastMark(): number | undefined {
    return this.#lastMarkOf(this.#state());
  }

  /** The last mark and the cache's RV, from one read of the state row (what the loop announces). */
  announced(): { mark: number | undefined; cacheResourceVersion: string } {
    const state = this.#state();
    return { mark: this.#lastMarkOf(state), cacheResourceVersion: state.cache_rv };
  }

  #lastMarkOf(state: StateRow): number | undefined {
    return newestOf(state)?.seq ?? this.#db.first<{ seq: number | null }>(LAST_STORED_BELOW, Number.MAX_SAFE_INTEGER)!.seq ?? undefined;
  }

  /** The last mark below `seq`, or 0. */
  lastMarkBelow(seq: number): number {
    const newest = newestOf(this.#state());
    if (newest !== undefined && newest.seq < seq) return newest.seq;
    return this.#db.first<{ seq: number | null }>(LAST_STORED_BELOW, seq)!.seq ?? 0;
  }

  /** The last mark within `span` events after `after`, else the first after it; undefined when none follows. */
  boundaryAfter(after: number, span: number): number | undefined {
    const newest = newestOf(this.#state());
    const stored = this.#db.first<{ within: number | null; first_after: number | null }>(STORED_AROUND, after, span)!;
    const newestAfter = newest !== undefined && newest.seq > after ? newest.seq : undefined;
    if (newestAfter !== undefined && newestAfter <= after + span) return newestAfter; // the newest is the last of all
    if (stored.within !== null) return stored.within;
    return stored.first_after ?? newestAfter;
  }

  /** Every mark at or after `seq`, in log order. */
  marksFrom(seq: number): Mark[] {
    const stored = this.#db.all<StoredMarkRow>(STORED_FROM, seq).map(markOf);
    const newest = newestOf(this.#state());
    return newest !== undefined && newest.seq >= seq ? [...stored, markOfNewest(newest)] : stored;
  }

  /**
   * For a watch from `resourceVersion`: the last mark at or after `from` first made at or below it
   * (undefined when none is), and the last mark at or after `from`. What a scan of `marksFrom(from)`
   * up to the first mark first made above the RV finds, given that marks' RVs grow with position.
   */
  markForWatch(resourceVersion: string, from: number): { found: Mark | undefined; last: Mark | undefined } {
    const newest = newestOf(this.#state());
    const lastStored = this.#storedMark(LAST_STORED);
    const inRange = (m: Mark | undefined) => (m !== undefined && m.seq >= from ? m : undefined);
    const last = inRange(newest === undefined ? lastStored : markOfNewest(newest));
    if (last === undefined) return { found: undefined, last: undefined };
    const atOrBelow = (m: Mark) => compareResourceVersions(m.firstRv, resourceVersion) <= 0;
    if (atOrBelow(last)) return { found: last, last };
    // Binary search over positions [lo, hi] for the last kept mark first made at or below the RV:
    // each probe reads the first kept mark at or after the middle (one row, by primary key).
    let found: Mark | undefined;
    let lo = from;
    let hi = inRange(lastStored)?.seq ?? from - 1;
    while (lo <= hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const mark = this.#storedMark(STORED_AT_OR_AFTER, mid)!; // hi is a kept mark's position
      if (atOrBelow(mark)) {
        found = mark;
        lo = mark.seq + 1;
      } else {
        hi = mid - 1; // none between mid and mark.seq
      }
    }
    return { found, last };
  }

  #storedMark(s: Statement, ...bindings: unknown[]): Mark | undefined {
    const row = this.#db.first<StoredMarkRow>(s, ...bindings);
    return row === undefined ? undefined : markOf(row);
  }

  /** Drops the marks before the last one below `head` (a watch from that one starts at the head). */
  compactInTx(head: number): void {
    const keep = this.lastMarkBelow(head);
    if (keep > 0) this.#db.run(DROP_STORED_BELOW, keep);
  }

  /** The highest RV any mark holds ("" when none): the last kept one's or the newest's (see the contract). */
  highestRv(): string {
    const stored = this.#storedMark(LAST_STORED)?.rv ?? "";
    const newest = newestOf(this.#state())?.rv ?? "";
    return compareResourceVersions(stored, newest) >= 0 ? stored : newest;
  }

  /** Forgets every mark (the cluster moved to another API server: its RVs are another etcd's). */
  forgetMarksInTx(): void {
    this.#db.run(FORGET_STORED);
    const state = this.#state();
    this.#db.run(SAVE, state.last_sync_rv, state.cache_rv, null, null, null, 0, 0, 0);
  }

  #state(): StateRow {
    return this.#db.first<StateRow>(STATE)!;
  }
}

type StoredMarkRow = { seq: number; rv: string; first_rv: string; inferred_deletes: number };

function markOf(row: StoredMarkRow): Mark {
  return { seq: row.seq, rv: row.rv, firstRv: row.first_rv, inferredDeletes: row.inferred_deletes === 1 };
}

function markOfNewest({ watchOnly: _, ...mark }: NewestMark): Mark {
  return mark;
}

function newestOf(row: StateRow): NewestMark | undefined {
  if (row.mark_seq === null) return undefined;
  return {
    seq: row.mark_seq,
    rv: row.mark_rv!,
    firstRv: row.mark_first_rv ?? row.mark_rv!,
    watchOnly: row.mark_watch_only === 1,
    inferredDeletes: row.mark_inferred_deletes === 1,
  };
}

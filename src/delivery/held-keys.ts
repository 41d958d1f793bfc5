/**
 * The keys a subscription's receiver holds, as last sent to it: key → uid, resourceVersion, and
 * the generation of the replay that last sent or kept it. A replay reads them (its sweep retracts
 * the keys it did not touch; a later pass skips what it sent already, markers.ts); every
 * acknowledged event changes them.
 *
 * Stored for what rows cost (issue 19): the changes of acknowledged events are first kept in the
 * subscription row (`held_changes`, a key's last change only), written by the statement that moves
 * the position (subscription-row.ts); past HELD_CHANGES_MAX keys, and before the keys are read or
 * marked, they go to `held_keys` in bulk. That table holds the keys in segments by key range, up
 * to SEGMENT_KEYS keys a row, so a thousand changed keys rewrite the segments they fall in, not a
 * row each.
 *
 * Guarantees:
 * - Reads see every change applied, in order (the last change of a key decides).
 * - Segments cover all keys: the first starts at '', each holds the keys from its `lo` up to the
 *   next one's, sorted; one that grows past SEGMENT_KEYS splits, one left empty (but the first) goes.
 * - Written inside the caller's transaction. The memory copy of `held_changes` is forgotten when
 *   that transaction throws (`forget`).
 */
import { type Db, stmt } from "../sql.ts";
import type { LogEventType } from "../cache/event-log.ts";

/** The changes kept in the subscription row go to held_keys when they would name more keys than this. */
export const HELD_CHANGES_MAX = 1_000;
/**
 * A segment of held_keys splits past this many keys (about 100 KB of text): writing the held
 * changes rewrites at most every segment, so at 100,000 keys a fold of HELD_CHANGES_MAX keys writes
 * ~150 rows (0.15 a delivery), and at 10,000 ~15.
 */
export const SEGMENT_KEYS = 1_000;

/** A key the receiver holds, as last sent to it. */
export interface DeliveredKey {
  key: string;
  uid: string;
  resourceVersion: string;
}

/** An event that changes what the receiver holds. */
export interface HeldEvent {
  type: LogEventType;
  key: string;
  uid: string;
  resourceVersion: string;
}

/** How a change left its key: `[uid, rv, gen]` held, or null deleted. */
type Change = [string, string, number] | null;
/** A key as a segment stores it. */
type Entry = [key: string, uid: string, rv: string, gen: number];

export const HELD_KEYS_MIGRATIONS = [
  // The keys of the first layout (a row each, subscription-store.ts), cut into segments in key order.
  `ALTER TABLE subscription ADD COLUMN held_changes TEXT NOT NULL DEFAULT '{}';
   CREATE TABLE held_keys (lo TEXT PRIMARY KEY, keys TEXT NOT NULL) WITHOUT ROWID;
   INSERT INTO held_keys (lo, keys)
     SELECT CASE WHEN segment = 0 THEN '' ELSE min(key) END, json_group_array(json_array(key, uid, rv, gen))
     FROM (SELECT key, uid, rv, gen, (row_number() OVER (ORDER BY key) - 1) / ${SEGMENT_KEYS} AS segment FROM delivered_keys)
     GROUP BY segment;
   DROP TABLE delivered_keys`,
] as const;

const GET_CHANGES = stmt("heldKeys.getChanges", "SELECT held_changes FROM subscription WHERE id = 1");
const SET_CHANGES = stmt("heldKeys.setChanges", "UPDATE subscription SET held_changes = ? WHERE id = 1");
const SEGMENT_LOS = stmt("heldKeys.los", "SELECT lo FROM held_keys ORDER BY lo");
const GET_SEGMENT = stmt("heldKeys.get", "SELECT keys FROM held_keys WHERE lo = ?");
const PUT_SEGMENT = stmt("heldKeys.put", "INSERT INTO held_keys (lo, keys) VALUES (?, ?) ON CONFLICT (lo) DO UPDATE SET keys = excluded.keys");
const DELETE_SEGMENT = stmt("heldKeys.delete", "DELETE FROM held_keys WHERE lo = ?");

export class HeldKeys {
  readonly #db: Db;
  /** `held_changes` as stored, parsed (undefined: read it). */
  #changes: Map<string, Change> | undefined;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Forgets the memory copy of `held_changes`: a transaction that changed it rolled back. */
  forget(): void {
    this.#changes = undefined;
  }

  /**
   * Applies acknowledged events in order, with generation `gen`; inside a transaction. Answers
   * `held_changes`' new text, for the caller to write with its own UPDATE of the subscription row.
   */
  applyInTx(events: readonly HeldEvent[], gen: number): string {
    const changes = this.#pendingChanges();
    for (const event of events) {
      changes.delete(event.key); // a key's place is its last change's: the text stays in delivery order
      changes.set(event.key, event.type === "delete" ? null : [event.uid, event.resourceVersion, gen]);
    }
    if (changes.size > HELD_CHANGES_MAX) this.#writeChanges(changes);
    return JSON.stringify(Object.fromEntries(changes));
  }

  /** Applies events and writes `held_changes`; inside a transaction (for a caller with no UPDATE of its own). */
  recordInTx(events: readonly HeldEvent[], gen: number): void {
    this.#db.run(SET_CHANGES, this.applyInTx(events, gen));
  }

  /** Keys a replay skips because their newer events follow: still held (those held), not to be swept. */
  touch(keys: readonly string[], gen: number): void {
    this.#flush();
    this.#update(keys, (entries) => {
      let changed = false;
      for (const key of keys) {
        const entry = entries.get(key);
        if (entry && entry[3] !== gen) {
          entries.set(key, [key, entry[1], entry[2], gen]);
          changed = true;
        }
      }
      return changed;
    });
  }

  /** The keys of `objects` the receiver was sent in generation `since` or later, in that very state. */
  heldSince(objects: readonly DeliveredKey[], since: number): Set<string> {
    this.#flush();
    const held = new Set<string>();
    const wanted = new Map(objects.map((o) => [o.key, o]));
    for (const [lo, group] of groupBySegment(this.#segments(), [...wanted.keys()])) {
      const entries = this.#load(lo);
      for (const key of group) {
        const entry = entries.get(key);
        const object = wanted.get(key)!;
        if (entry && entry[3] >= since && entry[1] === object.uid && entry[2] === object.resourceVersion) held.add(key);
      }
    }
    return held;
  }

  /** Keys sent before generation `gen` and not touched since, in key order after `after`: at most `limit`. */
  stale(gen: number, after: string | null, limit: number): DeliveredKey[] {
    this.#flush();
    const segments = this.#segments();
    const stale: DeliveredKey[] = [];
    for (let i = after === null ? 0 : segmentOf(segments, after); i < segments.length && stale.length < limit; i++) {
      for (const [key, uid, rv, keyGen] of this.#load(segments[i]!).values()) {
        if ((after === null || key > after) && keyGen < gen) stale.push({ key, uid, resourceVersion: rv });
        if (stale.length === limit) break;
      }
    }
    return stale;
  }

  #pendingChanges(): Map<string, Change> {
    this.#changes ??= new Map(Object.entries(JSON.parse(this.#db.first<{ held_changes: string }>(GET_CHANGES)!.held_changes) as Record<string, Change>));
    return this.#changes;
  }

  /** Brings held_keys up to date before it is read or marked; inside a transaction. */
  #flush(): void {
    const changes = this.#pendingChanges();
    if (changes.size === 0) return;
    this.#writeChanges(changes);
    this.#db.run(SET_CHANGES, "{}");
  }

  /** Writes the changes to the segments they fall in, and empties them (the caller stores them empty). */
  #writeChanges(changes: Map<string, Change>): void {
    this.#update([...changes.keys()], (entries, keys) => {
      for (const key of keys) {
        const change = changes.get(key)!;
        if (change === null) entries.delete(key);
        else entries.set(key, [key, ...change]);
      }
      return true;
    });
    changes.clear();
  }

  /**
   * Changes the segments `keys` fall in: `change` edits a segment's entries (of the keys given)
   * and says whether it changed them; a changed segment is written, split or removed as it needs.
   */
  #update(keys: readonly string[], change: (entries: Map<string, Entry>, keys: readonly string[]) => boolean): void {
    const segments = this.#segments();
    for (const [lo, group] of groupBySegment(segments, keys)) {
      const entries = this.#load(lo);
      if (!change(entries, group)) continue;
      const sorted = inKeyOrder(entries.values());
      if (sorted.length === 0 && lo !== "") {
        this.#db.run(DELETE_SEGMENT, lo);
        continue;
      }
      // Past SEGMENT_KEYS, halves of SEGMENT_KEYS / 2: the segment's `lo` keeps the first.
      const parts = sorted.length > SEGMENT_KEYS ? Math.ceil(sorted.length / (SEGMENT_KEYS / 2)) : 1;
      const size = Math.ceil(sorted.length / parts);
      for (let part = 0; part < parts; part++) {
        const slice = sorted.slice(part * size, (part + 1) * size);
        this.#db.run(PUT_SEGMENT, part === 0 ? lo : slice[0]![0], JSON.stringify(slice));
      }
    }
  }

  /** The segments' first keys, in order; the first is '' (made on the first write). */
  #segments(): string[] {
    const los = this.#db.all<{ lo: string }>(SEGMENT_LOS).map((row) => row.lo);
    return los[0] === "" ? los : ["", ...los];
  }

  /** A segment's entries by key, in key order (none for the first before it is written). */
  #load(lo: string): Map<string, Entry> {
    const text = this.#db.first<{ keys: string }>(GET_SEGMENT, lo)?.keys ?? "[]";
    return new Map(inKeyOrder(JSON.parse(text) as Entry[]).map((entry) => [entry[0], entry]));
  }
}

/** The index of the segment `key` falls in: the last whose first key is not after it. */
function segmentOf(segments: readonly string[], key: string): number {
  let low = 0;
  let high = segments.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (segments[middle]! <= key) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** `keys` grouped by the segment they fall in (by its first key). */
function groupBySegment(segments: readonly string[], keys: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const key of keys) {
    const lo = segments[segmentOf(segments, key)]!;
    const group = groups.get(lo);
    if (group) group.push(key);
    else groups.set(lo, [key]);
  }
  return groups;
}

/** Entries sorted by key, as SQLite compares text (by code unit, as `<` does). */
function inKeyOrder(entries: Iterable<Entry>): Entry[] {
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

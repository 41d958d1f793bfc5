/**
 * Where a subscription is in its informer's event log: the cursor, and the replay or resync marker
 * pending or being expanded there (DESIGN "Resync and replay as log markers"; markers.ts expands
 * them). Stored as JSON in the subscription row (subscription-row.ts) and moved only by the
 * statement that records what a delivery did, so it never gets ahead of an acknowledgement.
 */

/**
 * A replay (every cached object as an `add` with `initialList`) or a resync (every cached object
 * as a `sync`) anchored at log position `at`; `after` is the last key already expanded. A replay
 * then sweeps: keys the receiver was sent before the replay (`gen` older than the replay's) that
 * the replay did not touch are gone, and are sent as deletes with `finalStateUnknown`.
 */
export interface Marker {
  kind: "replay" | "sync";
  at: number;
  after: string | null;
  /** Replays: the generation the replay marks the receiver's keys with. */
  gen?: number;
  /** Replays: expanding done, sweeping the keys it did not touch. */
  sweep?: boolean;
  /**
   * Replays after the first pass (the replay outlived the log's retention): the generation the
   * replay began in. Keys this replay already sent (gen ≥ since) in their current state are skipped.
   */
  since?: number;
  /** Replays: 1 for the first pass (absent), 2 and up for later passes. */
  pass?: number;
}

/** Where the subscription is: events up to `cursor` are handled; `marker` is pending or expanding. */
export interface Position {
  cursor: number;
  marker: Marker | null;
  /**
   * A replay just ended at `cursor`, its anchor: kept until a log event after it is handled, so a
   * read that finds those events gone knows the replay itself outlived retention (#7.15).
   */
  replayed?: { since: number; pass: number };
}

/** A page of a list: `after` is where the next page starts (undefined: this was the last). */
export interface Page<T> {
  items: T[];
  after?: number;
}

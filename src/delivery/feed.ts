/**
 * The informer as a subscription reads it (an RPC to its Durable Object): its event log, and its
 * cache split at a log position for a replay's or resync's marker (markers.ts).
 *
 * Guarantees:
 * - A feed read that does not answer within `feedTimeoutMs` fails (`withTimeout`), so a hung
 *   informer cannot hold the alarm; the step that read it is retried later.
 * - A snapshot page is split at the marker's position: objects last changed at or before it are in
 *   `objects`, the keys changed after it in `skipped` (their newer events follow in the log).
 */
import type { LogEvent, ReadResult } from "../cache/event-log.ts";
import type { Position } from "./position.ts";

/** How many log events or cached objects one read brings in. */
export const FEED_PAGE = 200;
/** A feed read (an RPC to the informer) that takes longer has failed: a healthy one takes milliseconds. */
export const FEED_TIMEOUT_MS = 30_000;

export interface SnapshotObject {
  key: string;
  uid: string;
  resourceVersion: string;
  body: string;
}

export interface SnapshotPage {
  /** Objects last changed at or before the marker, in key order. */
  objects: SnapshotObject[];
  /** Keys in the same range changed after the marker (their newer events follow in the log). */
  skipped: string[];
  /** The last key of the range this page covered (the next page starts after it). */
  last: string | null;
  /** True when no key follows `last`. */
  done: boolean;
}

/** The informer, as a subscription reads it (RPC to its Durable Object). */
export interface Feed {
  read(after: number, limit: number): Promise<ReadResult>;
  /** A page of the cache in key order after `after`, split at log position `at` (SnapshotPage). */
  snapshot(at: number, after: string | null, limit: number, namespace?: string): Promise<SnapshotPage>;
}

/** One log event or marker object, with the position reached once it is handled. */
export type Candidate = Omit<LogEvent, "seq" | "at"> & {
  advance: Position;
  /** A log event's `at`; absent for a marker's objects. */
  at?: number;
  /** A delete inferred by a replay's sweep, not read from the log. */
  inferred?: boolean;
};

/** A feed call that fails after `timeoutMs` without an answer (a hung informer RPC). */
export async function withTimeout<T>(call: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * The event log's retention (event-log.ts): which events stay readable, and which segments may go.
 *
 * Guarantees:
 * - The head moves past events beyond `maxEvents` or older than `maxAgeSeconds`, never past the
 *   newest event, and by age never past `keepFrom` (the caller's last transaction run, which a
 *   watch resuming from one of its RVs needs however old it is, as the watch cache keeps its last
 *   events).
 * - It moves in steps (retentionStep: a hundredth of `maxEvents`, at most 1,024 events) and deletes
 *   the segments wholly before it that no retained event refers to. A reference is made only to an
 *   event at or after the head of its time, so the log stores at most about twice `maxEvents` (and
 *   a step and a segment).
 * - A call deletes at most `limit` segments, inside the caller's transaction, and says whether more
 *   may be left, so retention never makes one long transaction.
 */
import { type Db, stmt } from "../sql.ts";
import { decodeEntries, type LogBounds } from "./log-segment.ts";

export interface Retention {
  maxEvents: number;
  maxAgeSeconds: number;
}

export interface CompactOptions {
  /** Retention never moves the head past this by age (the caller's last transaction run). */
  keepFrom?: number;
  /** A previous call deleted a full batch: delete on although the head stays. */
  continuing?: boolean;
  /** Called in the transaction before rows are deleted (metrics count the events first). */
  beforeDelete?: () => void;
  /** The bytes of segments the call deleted. */
  deleted?: (bytes: number) => void;
}

const SET_HEAD = stmt("eventLog.setHead", "UPDATE event_log_state SET head = ? WHERE id = 1");
/** The smallest reference of the segments from the one holding ?1 on: what retention keeps besides the head's. */
const MIN_REF_FROM = stmt(
  "eventLog.minRef",
  `SELECT MIN(min_ref) AS min_ref FROM event_segments
   WHERE first_seq >= COALESCE((SELECT first_seq FROM event_segments WHERE first_seq <= ?1 ORDER BY first_seq DESC LIMIT 1), 0)`,
);
/** The first segment from ?1 on with an event at ?2 or later (segments' times only grow). */
const FIRST_RECENT = stmt(
  "eventLog.firstRecent",
  `SELECT first_seq, events FROM event_segments
   WHERE first_seq >= COALESCE((SELECT first_seq FROM event_segments WHERE first_seq <= ?1 ORDER BY first_seq DESC LIMIT 1), 0)
     AND last_at >= ?2 ORDER BY first_seq LIMIT 1`,
);
/** Up to ?2 segments wholly before ?1 (the head, or an older event retained ones refer to), with the bytes they stored. */
const DELETE_BEFORE = stmt(
  "eventLog.compact",
  `DELETE FROM event_segments WHERE first_seq IN (SELECT first_seq FROM event_segments WHERE last_seq < ?1 ORDER BY first_seq LIMIT ?2)
   RETURNING first_seq, octet_length(bodies) AS bytes`,
);
const DELETE_PARTS = stmt(
  "eventLog.compactParts",
  "DELETE FROM event_segment_parts WHERE first_seq IN (SELECT value FROM json_each(?)) RETURNING octet_length(text) AS bytes",
);

/** Events the head moves by at least (a hundredth of maxEvents, within 1 and 1,024); see the contract. */
export function retentionStep(maxEvents: number): number {
  return Math.min(1_024, Math.max(1, Math.floor(maxEvents / 100)));
}

/**
 * Applies retention (see the contract) to a log within `bounds`: moves the head once it can move by
 * a step, then deletes up to `limit` segments wholly before it. Returns whether more may be left
 * to delete: call again (in a new transaction) with `continuing` while it does.
 */
export function compactLogInTx(
  db: Db,
  bounds: LogBounds,
  now: number,
  retention: Retention,
  limit: number,
  options: CompactOptions = {},
): boolean {
  const { head, tail } = bounds;
  if (tail === 0) return false;
  const keepFrom = options.keepFrom ?? tail;
  const byCount = Math.max(head, tail - retention.maxEvents + 1);
  const newHead = Math.max(byCount, Math.min(firstSince(db, byCount, now - retention.maxAgeSeconds * 1000) ?? tail, tail, keepFrom));
  const moved = newHead >= head + retentionStep(retention.maxEvents);
  if (!moved && !options.continuing) return false;
  options.beforeDelete?.();
  if (moved) db.run(SET_HEAD, newHead);
  const keepHead = moved ? newHead : head;
  // The retained events' references hold older segments back (never more than a window: log-segment.ts).
  const minRef = db.first<{ min_ref: number | null }>(MIN_REF_FROM, keepHead)?.min_ref ?? null;
  const deleted = db.all<{ first_seq: number; bytes: number }>(DELETE_BEFORE, Math.min(keepHead, minRef ?? keepHead), limit);
  const split = deleted.length === 0 ? [] : db.all<{ bytes: number }>(DELETE_PARTS, JSON.stringify(deleted.map((row) => row.first_seq)));
  options.deleted?.([...deleted, ...split].reduce((sum, row) => sum + row.bytes, 0));
  return deleted.length >= limit;
}

/** The first event from `from` on appended at `since` or later. */
export function firstSince(db: Db, from: number, since: number): number | undefined {
  const row = db.first<{ first_seq: number; events: string }>(FIRST_RECENT, from, since);
  return row && decodeEntries(row.first_seq, row.events).find((entry) => entry.seq >= from && entry.at >= since)?.seq;
}

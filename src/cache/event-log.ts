/**
 * The event log: a durable, append-only, sequence-numbered record of what the informer's handlers
 * would have been told (add / update / delete / sync), the feed webhook subscriptions read.
 *
 * Guarantees:
 * - Sequence numbers only grow and are never reused, even after retention: the newest event is
 *   never deleted, so the tail is the largest stored `seq` (`next_seq` in the state row only counts
 *   before the first event: writing it per append cost a row per transaction, issue 19); a log made
 *   anew (its tables deleted and created again) has a new `incarnation()`.
 * - Appends are multi-row statements with sequence numbers assigned up front (`nextSeq`), so a
 *   batch that refers to its own earlier events (an add then an update of one key) needs no reads.
 * - An event is appended in the same transaction that updates the indexer (DESIGN invariant 2),
 *   so an event in the log means the indexer already reflects it.
 * - Every event at or after `head` is readable; reading from before `head` means the reader fell
 *   behind retention and must rebuild (`read` reports it, never silently skips).
 * - Bodies are stored once: an update stores the new state and points at the event that holds the
 *   old one (`prev_seq`); a sync points at the current state. The indexer's rows point at the event
 *   of each object's last change, so retention keeps rows the cache or a retained event still needs.
 * - Retention moves the head in steps (RETENTION_STEP: a hundredth of `maxEvents`, at most 1,024
 *   events), so the rows before it are deleted in bulk: finding which of them retained events still
 *   point at reads the retained events once per step, where an index on `prev_seq` cost a row
 *   written with every update (issue 19). The log holds at most a step more than `maxEvents`.
 */
import { type Db, MAX_BOUND_PARAMETERS, placeholders, stmt } from "../sql.ts";

export type LogEventType = "add" | "update" | "delete" | "sync";

export interface NewLogEvent {
  /** Assigned by the caller from `nextSeq()`: consecutive within an append. */
  seq: number;
  type: LogEventType;
  key: string;
  uid: string;
  resourceVersion: string;
  /** The new (or, for a delete, last known) state's JSON; null for a sync, whose state is `prevSeq`'s. */
  body: string | null;
  /** The event holding the previous state (updates, syncs). */
  prevSeq: number | null;
  initialList: boolean;
  finalStateUnknown: boolean;
  at: number;
}

export interface LogEvent {
  seq: number;
  type: LogEventType;
  key: string;
  uid: string;
  resourceVersion: string;
  /** JSON text of the object (kept as text: subscribers forward it without re-encoding). */
  object: string | null;
  /** JSON text of the previous state, for updates and syncs. */
  oldObject: string | null;
  initialList: boolean;
  finalStateUnknown: boolean;
  at: number;
}

/** An event without its bodies. */
export interface LogChange {
  seq: number;
  type: LogEventType;
  key: string;
  prevSeq: number | null;
}

export interface Retention {
  maxEvents: number;
  maxAgeSeconds: number;
}

export interface LogBounds {
  /** The oldest sequence number guaranteed readable (tail + 1 when the log is empty). */
  head: number;
  /** The newest sequence number, 0 before the first event. */
  tail: number;
}

export interface ReadResult {
  events: LogEvent[];
  /** True when `after` is older than retention: events between it and `head` are gone. */
  expired: boolean;
  bounds: LogBounds;
}

const FLAG_INITIAL_LIST = 1;
const FLAG_FINAL_STATE_UNKNOWN = 2;

export const EVENT_LOG_MIGRATIONS = [
  `CREATE TABLE event_log (
     seq INTEGER PRIMARY KEY, type TEXT NOT NULL, key TEXT NOT NULL, uid TEXT NOT NULL,
     rv TEXT NOT NULL, body TEXT, prev_seq INTEGER, flags INTEGER NOT NULL, at INTEGER NOT NULL);
   CREATE INDEX event_log_by_prev ON event_log (prev_seq) WHERE prev_seq IS NOT NULL;
   CREATE TABLE event_log_state (id INTEGER PRIMARY KEY CHECK (id = 1), head INTEGER NOT NULL, next_seq INTEGER NOT NULL);
   INSERT INTO event_log_state (id, head, next_seq) VALUES (1, 1, 1)`,
  // incarnation: see EventLog.incarnation.
  `ALTER TABLE event_log_state ADD COLUMN incarnation TEXT NOT NULL DEFAULT '';
   UPDATE event_log_state SET incarnation = lower(hex(randomblob(8)))`,
  // Retention finds referenced rows by a scan per step instead (see the contract above); next_seq is
  // no longer written per append: the stored one stays right for a log that has no event yet.
  `DROP INDEX IF EXISTS event_log_by_prev;
   UPDATE event_log_state SET next_seq = COALESCE((SELECT MAX(seq) + 1 FROM event_log), next_seq)`,
] as const;

/** The next sequence number, from the state row `s`: past the newest event, or the stored one before any. */
const NEXT_SEQ_SQL = "COALESCE((SELECT MAX(seq) + 1 FROM event_log), s.next_seq)";

const COLUMNS_PER_EVENT = 9;
const EVENTS_PER_STATEMENT = Math.floor(MAX_BOUND_PARAMETERS / COLUMNS_PER_EVENT);
const appendRows = (rows: number) =>
  stmt(
    "eventLog.append",
    `INSERT INTO event_log (seq, type, key, uid, rv, body, prev_seq, flags, at) VALUES ${placeholders(rows, COLUMNS_PER_EVENT)}`,
  );
const NEXT_SEQ = stmt("eventLog.nextSeq", `SELECT ${NEXT_SEQ_SQL} AS next_seq FROM event_log_state s WHERE s.id = 1`);
const BOUNDS = stmt("eventLog.bounds", `SELECT s.head AS head, ${NEXT_SEQ_SQL} AS next_seq FROM event_log_state s WHERE s.id = 1`);
const INCARNATION = stmt("eventLog.incarnation", "SELECT incarnation FROM event_log_state WHERE id = 1");
const SET_HEAD = stmt("eventLog.setHead", "UPDATE event_log_state SET head = ? WHERE id = 1");
/** The bounds and the events after `?1` from the head on, in one statement: one row with no event when none follows. */
const READ = stmt(
  "eventLog.read",
  `SELECT s.head AS head, ${NEXT_SEQ_SQL} AS next_seq, e.seq AS seq, e.type AS type, e.key AS key, e.uid AS uid, e.rv AS rv,
          COALESCE(e.body, p.body) AS body, p.body AS old_body, e.flags AS flags, e.at AS at
   FROM event_log_state s
   LEFT JOIN event_log e ON e.seq > ?1 AND e.seq >= s.head
   LEFT JOIN event_log p ON p.seq = e.prev_seq
   WHERE s.id = 1 ORDER BY e.seq LIMIT ?2`,
);
/**
 * The sequence numbers of (?1, ?2] from the head on, in resourceVersion order (length, then text:
 * how resourceVersions compare, resource-version.ts; ties in log order). Only numbers: a span is
 * sorted once (readInOrder), however many pages it is read in.
 */
const SPAN_ORDER = stmt(
  "eventLog.spanOrder",
  `SELECT e.seq AS seq FROM event_log_state s JOIN event_log e ON e.seq > ?1 AND e.seq <= ?2 AND e.seq >= s.head
   WHERE s.id = 1 ORDER BY length(e.rv), e.rv, e.seq`,
);
/** The events whose sequence numbers ?1 (a JSON array) lists, in that order. */
const READ_LISTED = stmt(
  "eventLog.readListed",
  `SELECT e.seq AS seq, e.type AS type, e.key AS key, e.uid AS uid, e.rv AS rv,
          COALESCE(e.body, p.body) AS body, p.body AS old_body, e.flags AS flags, e.at AS at
   FROM json_each(?1) j JOIN event_log e ON e.seq = j.value
   LEFT JOIN event_log p ON p.seq = e.prev_seq
   ORDER BY j.key`,
);
const FIRST_RECENT = stmt(
  "eventLog.firstRecent",
  "SELECT seq FROM event_log WHERE seq >= ? AND at >= ? ORDER BY seq LIMIT 1",
);
const BODY = stmt("eventLog.body", "SELECT body FROM event_log WHERE seq = ?");
const CHANGES_AFTER = stmt(
  "eventLog.changesAfter",
  "SELECT seq, type, key, prev_seq FROM event_log WHERE seq > ? ORDER BY seq LIMIT ?",
);

/**
 * Deletes up to `limit` rows before the head that nothing references any more. The retained
 * events' references below the head are gathered once per statement (a subquery SQLite evaluates
 * once), not looked up per row: there is no index on prev_seq to look them up by.
 */
const compactBelowHead = (pinnedSql: string) =>
  stmt(
    "eventLog.compact",
    `DELETE FROM event_log WHERE seq IN (
       SELECT e.seq FROM event_log e
       WHERE e.seq < ?1
         AND NOT EXISTS (${pinnedSql})
         AND e.seq NOT IN (SELECT r.prev_seq FROM event_log r WHERE r.seq >= ?1 AND r.prev_seq < ?1)
       ORDER BY e.seq LIMIT ?2)
     RETURNING coalesce(octet_length(body), 0) AS bytes`,
  );

/** Events the head moves by at least (a hundredth of maxEvents, within 1 and 1,024); see the contract. */
export function retentionStep(maxEvents: number): number {
  return Math.min(1_024, Math.max(1, Math.floor(maxEvents / 100)));
}

/** A row of READ (the log's bounds, and an event: all null when none follows) or of READ_LISTED (an event). */
type EventRow = {
  head: number;
  next_seq: number;
  seq: number | null;
  type: LogEventType;
  key: string;
  uid: string;
  rv: string;
  body: string | null;
  old_body: string | null;
  flags: number;
  at: number;
};

function toLogEvent(row: EventRow & { seq: number }): LogEvent {
  return {
    seq: row.seq,
    type: row.type,
    key: row.key,
    uid: row.uid,
    resourceVersion: row.rv,
    object: row.body,
    oldObject: row.type === "add" || row.type === "delete" ? null : row.old_body,
    initialList: (row.flags & FLAG_INITIAL_LIST) !== 0,
    finalStateUnknown: (row.flags & FLAG_FINAL_STATE_UNKNOWN) !== 0,
    at: row.at,
  };
}

/** `head` is at most the tail + 1 (an empty log's head is where its next event goes). */
const logBounds = (head: number, nextSeq: number): LogBounds => ({ head: Math.min(head, nextSeq), tail: nextSeq - 1 });

function eventValues(event: NewLogEvent): unknown[] {
  const flags = (event.initialList ? FLAG_INITIAL_LIST : 0) | (event.finalStateUnknown ? FLAG_FINAL_STATE_UNKNOWN : 0);
  return [event.seq, event.type, event.key, event.uid, event.resourceVersion, event.body, event.prevSeq, flags, event.at];
}

export interface CompactOptions {
  /** Retention never moves the head past this by age (the caller's last transaction run). */
  keepFrom?: number;
  /** A previous call deleted a full batch: delete on although the head stays. */
  continuing?: boolean;
  /** Called in the transaction before rows are deleted (metrics count the events first). */
  beforeDelete?: () => void;
  /** The bytes of bodies the call deleted. */
  deleted?: (bytes: number) => void;
}

export class EventLog {
  readonly #db: Db;
  readonly #compact;
  #incarnation: string | undefined;
  /**
   * The span readInOrder sorted last, as sequence numbers (8 bytes each: a span of a million events
   * holds 8 MB): a watch pages through one span, and the watchers at one position share it.
   */
  #sorted: { after: number; end: number; seqs: number[] } | undefined;

  /**
   * @param pinnedSql a correlated `SELECT 1 …` that is non-empty when row `e` (its `e.key`, `e.seq`)
   *   still holds an object's current state — the indexer owns that SQL.
   */
  constructor(db: Db, pinnedSql: string) {
    this.#db = db;
    this.#compact = compactBelowHead(pinnedSql);
  }

  /** The sequence number the next appended event must carry. */
  nextSeq(): number {
    return this.#db.first<{ next_seq: number }>(NEXT_SEQ)!.next_seq;
  }

  /** Appends events numbered consecutively from `nextSeq()`, in multi-row statements. */
  appendInTx(events: readonly NewLogEvent[]): void {
    if (events.length === 0) return;
    const first = this.nextSeq();
    events.forEach((event, i) => {
      if (event.seq !== first + i) throw new Error(`event log append out of sequence: ${event.seq}, expected ${first + i}`);
    });
    for (let i = 0; i < events.length; i += EVENTS_PER_STATEMENT) {
      const chunk = events.slice(i, i + EVENTS_PER_STATEMENT);
      this.#db.run(appendRows(chunk.length), ...chunk.flatMap(eventValues));
    }
  }

  /**
   * Which log this is: made at random with the log's tables, so a log deleted and created again
   * (an informer deleted and re-created under the same object name) has another. Sequence numbers
   * only mean something within one incarnation: whatever holds one across requests (a watcher, a
   * continue token) holds the incarnation too.
   */
  incarnation(): string {
    return (this.#incarnation ??= this.#db.first<{ incarnation: string }>(INCARNATION)!.incarnation);
  }

  /** The stored body of event `seq` (the indexer reads object states through this). */
  body(seq: number): string | null {
    return this.#db.first<{ body: string | null }>(BODY, seq)?.body ?? null;
  }

  /** What happened after `after`, without bodies: at most `limit` events, oldest first. */
  changesAfter(after: number, limit: number): LogChange[] {
    return this.#db
      .all<{ seq: number; type: LogEventType; key: string; prev_seq: number | null }>(CHANGES_AFTER, after, limit)
      .map((row) => ({ seq: row.seq, type: row.type, key: row.key, prevSeq: row.prev_seq }));
  }

  bounds(): LogBounds {
    const { head, next_seq } = this.#db.first<{ head: number; next_seq: number }>(BOUNDS)!;
    return logBounds(head, next_seq);
  }

  /** Events after `after`, oldest first, at most `limit`. */
  read(after: number, limit: number): ReadResult {
    const all = this.#db.all<EventRow>(READ, after, limit);
    const bounds = logBounds(all[0]!.head, all[0]!.next_seq);
    const rows = all[0]!.seq === null ? [] : (all as (EventRow & { seq: number })[]);
    return { expired: after + 1 < bounds.head, bounds, events: rows.map(toLogEvent) };
  }

  /**
   * The events of (after, end] in resourceVersion order, skipping the first `skip` of that order, at
   * most `limit`: one page of a span a watch delivers sorted (the log is not in resourceVersion
   * order within a transaction, k8s/watch-hub.ts).
   */
  readInOrder(after: number, end: number, skip: number, limit: number): ReadResult {
    const bounds = this.bounds();
    if (after + 1 < bounds.head) return { expired: true, bounds, events: [] };
    // Sorted once per span, then read a page at a time by sequence number: an OFFSET page of a
    // sorting query would sort (and read) the whole span again for every page.
    if (this.#sorted?.after !== after || this.#sorted.end !== end) {
      this.#sorted = { after, end, seqs: this.#db.all<{ seq: number }>(SPAN_ORDER, after, end).map((row) => row.seq) };
    }
    const page = this.#sorted.seqs.slice(skip, skip + limit);
    const rows = page.length === 0 ? [] : this.#db.all<EventRow & { seq: number }>(READ_LISTED, JSON.stringify(page));
    return { expired: false, bounds, events: rows.map(toLogEvent) };
  }

  /**
   * Applies retention: moves `head` past events beyond `maxEvents` or older than `maxAgeSeconds`
   * (always keeping the newest event readable, and by age never `keepFrom` and after: the caller's
   * last transaction, which a watch resuming from one of its RVs needs however old it is, as the
   * watch cache keeps its last events), once it can move by a step (retentionStep), then deletes up
   * to `limit` unreferenced rows before it. Returns whether more may be left to delete: call again
   * (in a new transaction) with `continuing` while it does.
   */
  compactInTx(now: number, retention: Retention, limit: number, options: CompactOptions = {}): boolean {
    const { head, tail } = this.bounds();
    if (tail === 0) return false;
    const keepFrom = options.keepFrom ?? tail;
    const byCount = Math.max(head, tail - retention.maxEvents + 1);
    const firstRecent = this.#db.first<{ seq: number }>(FIRST_RECENT, byCount, now - retention.maxAgeSeconds * 1000);
    const newHead = Math.max(byCount, Math.min(firstRecent?.seq ?? tail, tail, keepFrom));
    const moved = newHead >= head + retentionStep(retention.maxEvents);
    if (!moved && !options.continuing) return false;
    options.beforeDelete?.();
    if (moved) this.#db.run(SET_HEAD, newHead);
    const deleted = this.#db.all<{ bytes: number }>(this.#compact, moved ? newHead : head, limit);
    options.deleted?.(deleted.reduce((sum, row) => sum + row.bytes, 0));
    return deleted.length >= limit;
  }
}

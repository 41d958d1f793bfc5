/**
 * The event log: a durable, append-only, sequence-numbered record of what the informer's handlers
 * would have been told (add / update / delete / sync), the feed webhook subscriptions read.
 *
 * Guarantees:
 * - Sequence numbers only grow and are never reused, even after retention: the newest event is
 *   never deleted, so the tail is the last segment's `last_seq` (`next_seq` in the state row only
 *   counts before the first event); a log made anew (its tables deleted and created again) has a
 *   new `incarnation()`.
 * - Events are stored in segments (log-segment.ts): an append is one row per SEGMENT_EVENTS events
 *   or so, not a row per event (issue 19: rows written are what the platform bills). Objects keep
 *   their own bodies (indexer.ts), so the cache needs no segment; an event refers to the event
 *   holding the state it replaced, which retention keeps while the event is retained.
 * - Appends carry sequence numbers assigned up front (`nextSeq`), consecutive.
 * - An event is appended in the same transaction that updates the indexer (DESIGN invariant 2),
 *   so an event in the log means the indexer already reflects it.
 * - Every event at or after `head` is readable; reading from before `head` means the reader fell
 *   behind retention and must rebuild (`read` reports it, never silently skips). Events before the
 *   head that share a segment with one after it stay stored but are never returned.
 * - Retention (log-retention.ts) moves the head in steps and deletes only segments wholly before
 *   it that no retained event refers to: the log stores at most about twice `maxEvents`.
 * - Reads decode a segment once: the decoded ones are kept within DECODED_UNITS (they never change).
 *   What a read returns holds nothing of them (bodies are copies, log-segment.ts), so a reader's
 *   caps on bodies' lengths are the bytes it keeps (DESIGN invariant 11), and a long run is sorted
 *   from entries decoded a few segments at a time (readInOrder).
 */
import { type Db, stmt } from "../sql.ts";
import { compareResourceVersions } from "../kube/resource-version.ts";
import { moveRowsToSegments } from "./log-segment-migration.ts";
import { type CompactOptions, compactLogInTx, type Retention } from "./log-retention.ts";
import { decodeEntries, type LogBounds, type LogEvent, type LogEventType, type Resolve, type SegmentEntry, type SegmentEvent, segmentMemory, StoredSegment, writeSegmentsInTx } from "./log-segment.ts";

export type { LogBounds, LogEvent, LogEventType };

/**
 * An event to append: `seq` assigned by the caller from `nextSeq()` (consecutive within an append),
 * `body` its new (for a delete, last known) state, `oldBody` the cached state it replaced (null for an
 * add, and for a delete of a key that was only queued); a sync's body is the cached state.
 */
export type NewLogEvent = SegmentEvent;


/** An event without its bodies. */
export interface LogChange {
  seq: number;
  type: LogEventType;
  key: string;
}


export interface ReadResult {
  events: LogEvent[];
  /** True when `after` is older than retention: events between it and `head` are gone. */
  expired: boolean;
  bounds: LogBounds;
}

/** Entries (no bodies) of the segments after a position, and the bytes those segments store. */
export interface EntriesRead {
  entries: SegmentEntry[];
  bytes: number;
}

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
  `DROP INDEX IF EXISTS event_log_by_prev;
   UPDATE event_log_state SET next_seq = COALESCE((SELECT MAX(seq) + 1 FROM event_log), next_seq)`,
  // Segments (issue 19): the readable events move over, with the state each replaced; the indexer
  // took its objects' bodies from event_log first (informer.ts runs its migrations before these).
  `CREATE TABLE event_segments (
     first_seq INTEGER PRIMARY KEY, last_seq INTEGER NOT NULL, last_at INTEGER NOT NULL, min_ref INTEGER,
     events TEXT NOT NULL, bodies TEXT NOT NULL);
   CREATE TABLE event_segment_parts (
     first_seq INTEGER NOT NULL, part INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (first_seq, part)) WITHOUT ROWID`,
  (db: Db) => moveRowsToSegments(db),
  "DROP TABLE event_log",
] as const;

const TAIL_SQL = "(SELECT last_seq FROM event_segments ORDER BY first_seq DESC LIMIT 1)";
const NEXT_SEQ = stmt("eventLog.nextSeq", `SELECT COALESCE(${TAIL_SQL} + 1, next_seq) AS next_seq FROM event_log_state WHERE id = 1`);
const BOUNDS = stmt("eventLog.bounds", `SELECT head, COALESCE(${TAIL_SQL} + 1, next_seq) AS next_seq FROM event_log_state WHERE id = 1`);
const INCARNATION = stmt("eventLog.incarnation", "SELECT incarnation FROM event_log_state WHERE id = 1");
/** The first segment holding an event after ?1: the one holding ?1 + 1, or the next. */
const START_SQL = "COALESCE((SELECT first_seq FROM event_segments WHERE first_seq <= ?1 + 1 ORDER BY first_seq DESC LIMIT 1), 0)";
/** Whole segments from the one holding ?1 + 1 on, ?2 at most, bodies and all. */
const SEGMENTS_AFTER = stmt(
  "eventLog.read",
  `SELECT first_seq, last_seq, events, bodies, EXISTS (SELECT 1 FROM event_segment_parts p WHERE p.first_seq = s.first_seq) AS split
   FROM event_segments s WHERE s.first_seq >= ${START_SQL} AND s.last_seq > ?1 ORDER BY s.first_seq LIMIT ?2`,
);
/** The entries (no bodies) of up to ?3 segments holding events of (?1, ?2]. */
const ENTRIES_BETWEEN = stmt(
  "eventLog.entries",
  `SELECT first_seq, last_seq, events FROM event_segments WHERE first_seq >= ${START_SQL} AND last_seq > ?1 AND first_seq <= ?2 ORDER BY first_seq LIMIT ?3`,
);
/** The entries of up to ?2 segments from the one holding ?1 + 1 on, with the bytes each stores. */
const ENTRIES_AFTER = stmt(
  "eventLog.entriesAfter",
  `SELECT first_seq, events, octet_length(bodies) + (SELECT coalesce(sum(octet_length(text)), 0) FROM event_segment_parts p WHERE p.first_seq = s.first_seq) AS bytes
   FROM event_segments s WHERE s.first_seq >= ${START_SQL} AND s.last_seq > ?1 ORDER BY s.first_seq LIMIT ?2`,
);
/** The segment holding ?, by its entries. */
const HOLDING = stmt("eventLog.holding", "SELECT first_seq, events FROM event_segments WHERE first_seq <= ? ORDER BY first_seq DESC LIMIT 1");
/** The segment holding ?, bodies and all (a reference followed). */
const HOLDING_WHOLE = stmt(
  "eventLog.follow",
  `SELECT first_seq, last_seq, events, bodies, EXISTS (SELECT 1 FROM event_segment_parts p WHERE p.first_seq = s.first_seq) AS split
   FROM event_segments s WHERE first_seq <= ?1 ORDER BY first_seq DESC LIMIT 1`,
);
const PARTS = stmt("eventLog.parts", "SELECT text FROM event_segment_parts WHERE first_seq = ? ORDER BY part");
const LAST_AT = stmt("eventLog.lastAt", "SELECT last_at FROM event_segments ORDER BY first_seq DESC LIMIT 1");

/** Segments read per statement while reading events: a segment holds up to SEGMENT_EVENTS. */
const SEGMENTS_PER_READ = 4;
/**
 * UTF-16 units of decoded segments a log keeps (4 MB): references followed while reading point
 * back a little (the state an update replaced), and readers at one position read the same segments.
 */
const DECODED_UNITS = 2_000_000;

/** A resourceVersion that is a decimal number without leading zeros, exactly representable as a double. */
const DECIMAL_RV = /^(?:0|[1-9]\d{0,14})$/;

/** `head` is at most the tail + 1 (an empty log's head is where its next event goes). */
const logBounds = (head: number, nextSeq: number): LogBounds => ({ head: Math.min(head, nextSeq), tail: nextSeq - 1 });

type SegmentRow = { first_seq: number; last_seq: number; events: string; bodies: string; split: number };

export class EventLog {
  readonly #db: Db;
  #incarnation: string | undefined;
  /**
   * The span readInOrder sorted last, as sequence numbers (8 bytes each: a span of a million events
   * holds 8 MB): a watch pages through one span, and the watchers at one position share it.
   */
  #sorted: { after: number; end: number; seqs: number[] } | undefined;
  /** Segments decoded lately, oldest first, within DECODED_UNITS: segments never change once written. */
  readonly #decoded = new Map<number, StoredSegment>();
  #decodedUnits = 0;
  readonly #resolve: Resolve = (seq) => this.#holding(seq)?.state(seq, this.#resolve) ?? null;

  constructor(db: Db) {
    this.#db = db;
  }

  /** The sequence number the next appended event must carry. */
  nextSeq(): number {
    return this.#db.first<{ next_seq: number }>(NEXT_SEQ)!.next_seq;
  }

  /** Appends events numbered consecutively from `nextSeq()`, as segments. */
  appendInTx(events: readonly NewLogEvent[]): void {
    if (events.length === 0) return;
    const first = this.nextSeq();
    events.forEach((event, i) => {
      if (event.seq !== first + i) throw new Error(`event log append out of sequence: ${event.seq}, expected ${first + i}`);
    });
    writeSegmentsInTx(this.#db, events);
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

  bounds(): LogBounds {
    const { head, next_seq } = this.#db.first<{ head: number; next_seq: number }>(BOUNDS)!;
    return logBounds(head, next_seq);
  }

  /**
   * Events after `after`, oldest first, at most `limit`, and no more once their bodies reach
   * `maxUnits` UTF-16 units (at least one event): a read holds about that and a segment, however big
   * the objects (issue 20: memory is shared by the objects of an isolate).
   */
  read(after: number, limit: number, maxUnits = Number.POSITIVE_INFINITY): ReadResult {
    const bounds = this.bounds();
    const from = Math.max(after, bounds.head - 1);
    const events: LogEvent[] = [];
    let units = 0;
    const full = () => events.length >= limit || units >= maxUnits;
    for (const row of this.#segmentsAfter(from)) {
      if (full()) break;
      // Events are copied out one at a time: none past the one that fills the read.
      for (const event of this.#segment(row).events((seq) => seq > from, this.#resolve)) {
        units += (event.object?.length ?? 0) + (event.oldObject?.length ?? 0);
        events.push(event);
        if (full()) break;
      }
    }
    return { expired: after + 1 < bounds.head, bounds, events };
  }

  /** What happened after `after` (from the head on), without bodies: at most `limit` events, oldest first. */
  changesAfter(after: number, limit: number): LogChange[] {
    const from = Math.max(after, this.bounds().head - 1);
    const changes: LogChange[] = [];
    for (let at = from; changes.length < limit; ) {
      const { entries } = this.entriesAfter(at, SEGMENTS_PER_READ);
      if (entries.length === 0) break;
      for (const entry of entries) if (entry.seq > from) changes.push({ seq: entry.seq, type: entry.type, key: entry.key });
      at = entries.at(-1)!.seq;
    }
    return changes.slice(0, limit);
  }

  /** The state each of `seqs` replaced (null: the key was absent before it), for those still stored. */
  replacedStates(seqs: readonly number[]): Map<number, string | null> {
    const wanted = new Set(seqs);
    const states = new Map<number, string | null>();
    this.#forSegmentsOf(seqs, (segment) => {
      for (let seq = segment.firstSeq; seq <= segment.lastSeq; seq++) if (wanted.has(seq)) states.set(seq, segment.replaced(seq, this.#resolve));
    });
    return states;
  }

  /**
   * The events of (after, end] in resourceVersion order, skipping the first `skip` of that order, at
   * most `limit`: one page of a span a watch delivers sorted (the log is not in resourceVersion
   * order within a transaction, k8s/watch-hub.ts).
   */
  readInOrder(after: number, end: number, skip: number, limit: number): ReadResult {
    const bounds = this.bounds();
    if (after + 1 < bounds.head) return { expired: true, bounds, events: [] };
    // Sorted once per span, from the entries alone, then read a page at a time by sequence number.
    if (this.#sorted?.after !== after || this.#sorted.end !== end) this.#sorted = { after, end, seqs: this.#sortSpan(after, end) };
    const page = this.#sorted.seqs.slice(skip, skip + limit);
    return { expired: false, bounds, events: this.#eventsListed(page) };
  }

  /**
   * The entries (no bodies) after `after` in up to `segments` segments, and the bytes those segments
   * store: what metrics count (a segment's bytes once its last event is counted).
   */
  entriesAfter(after: number, segments: number): EntriesRead {
    const rows = this.#db.all<{ first_seq: number; events: string; bytes: number }>(ENTRIES_AFTER, after, segments);
    const entries = rows.flatMap((row) => decodeEntries(row.first_seq, row.events)).filter((entry) => entry.seq > after);
    return { entries, bytes: rows.reduce((sum, row) => sum + row.bytes, 0) };
  }

  /**
   * Applies retention (log-retention.ts): moves the head, then deletes up to `limit` segments wholly
   * before it. Returns whether more may be left: call again (in a new transaction) with `continuing`.
   */
  compactInTx(now: number, retention: Retention, limit: number, options: CompactOptions = {}): boolean {
    return compactLogInTx(this.#db, this.bounds(), now, retention, limit, options);
  }

  /** When the newest event was appended; null before the first. */
  lastEventAt(): number | null {
    return this.#db.first<{ last_at: number }>(LAST_AT)?.last_at ?? null;
  }

  /** When each of `seqs` was appended, for those still stored. */
  timesOf(seqs: readonly number[]): Map<number, number> {
    const times = new Map<number, number>();
    for (const seq of seqs) {
      if (times.has(seq)) continue;
      const row = this.#db.first<{ first_seq: number; events: string }>(HOLDING, seq);
      if (row) for (const entry of decodeEntries(row.first_seq, row.events)) times.set(entry.seq, entry.at);
    }
    return new Map(seqs.filter((seq) => times.has(seq)).map((seq) => [seq, times.get(seq)!]));
  }

  /** Whole segments from the one holding `after + 1` on, a few per statement, until the caller stops. */
  *#segmentsAfter(after: number): Generator<SegmentRow> {
    for (let from = after; ; ) {
      const rows = this.#db.all<SegmentRow>(SEGMENTS_AFTER, from, SEGMENTS_PER_READ);
      yield* rows;
      if (rows.length < SEGMENTS_PER_READ) return;
      from = rows.at(-1)!.last_seq;
    }
  }

  /** The whole text of a segment: its row's bodies and, for an event too big for one row, its parts. */
  #text(row: { first_seq: number; bodies: string; split: number }): string {
    if (!row.split) return row.bodies;
    return row.bodies + this.#db.all<{ text: string }>(PARTS, row.first_seq).map((part) => part.text).join("");
  }

  /** A stored segment decoded, from the decoded ones if it is there. */
  #segment(row: SegmentRow): StoredSegment {
    const known = this.#decoded.get(row.first_seq);
    if (known) return known;
    const segment = new StoredSegment(row.first_seq, row.events, this.#text(row));
    this.#decoded.set(row.first_seq, segment);
    this.#decodedUnits += segment.units;
    for (const [first, old] of this.#decoded) {
      if (this.#decodedUnits <= DECODED_UNITS || old === segment) break;
      this.#decoded.delete(first);
      this.#decodedUnits -= old.units;
    }
    return segment;
  }

  /** The stored segment holding `seq` (a reference's target), if any. */
  #holding(seq: number): StoredSegment | undefined {
    for (const segment of this.#decoded.values()) if (segment.holds(seq)) return segment;
    const row = this.#db.first<SegmentRow>(HOLDING_WHOLE, seq);
    return row && row.last_seq >= seq ? this.#segment(row) : undefined;
  }

  /**
   * The sequence numbers of (after, end] in resourceVersion order (then log order). A span can be a
   * relist's whole run, 100k events and more (review N4: its entries decoded at once were tens to
   * hundreds of MB on the informer's thread), so entries are decoded a statement's segments at a
   * time and only each event's RV and number kept: as numbers when RVs are decimal (etcd's), about
   * 16 bytes an event while sorting and the 8 of its number after; as strings otherwise.
   */
  #sortSpan(after: number, end: number): number[] {
    const seqs: number[] = [];
    const numeric: number[] = [];
    let texts: string[] | undefined;
    for (let at = after; at < end; ) {
      const rows = this.#db.all<{ first_seq: number; last_seq: number; events: string }>(ENTRIES_BETWEEN, at, end, SEGMENTS_PER_READ);
      let decoded = 0;
      for (const row of rows) {
        const entries = decodeEntries(row.first_seq, row.events);
        decoded += entries.length;
        for (const { seq, resourceVersion: rv } of entries) {
          if (seq <= after || seq > end) continue;
          if (texts === undefined && !DECIMAL_RV.test(rv)) texts = numeric.map(String);
          seqs.push(seq);
          if (texts) texts.push(rv);
          else numeric.push(Number(rv));
        }
      }
      segmentMemory.decoded(decoded);
      if (rows.length < SEGMENTS_PER_READ) break;
      at = rows.at(-1)!.last_seq;
    }
    const order = Uint32Array.from(seqs.keys());
    // A decimal RV without leading zeros compares as its number does (compareResourceVersions: by length, then by text).
    order.sort(texts ? (a, b) => compareResourceVersions(texts[a]!, texts[b]!) || seqs[a]! - seqs[b]! : (a, b) => numeric[a]! - numeric[b]! || seqs[a]! - seqs[b]!);
    return Array.from(order, (i) => seqs[i]!);
  }

  /** The events `seqs` lists, in that order. */
  #eventsListed(seqs: readonly number[]): LogEvent[] {
    const wanted = new Set(seqs);
    const found = new Map<number, LogEvent>();
    this.#forSegmentsOf(seqs, (segment) => {
      for (const event of segment.events((seq) => wanted.has(seq), this.#resolve)) found.set(event.seq, event);
    });
    return seqs.flatMap((seq) => found.get(seq) ?? []);
  }

  /** Calls `fn` with each stored segment holding one of `seqs` (those between them are read too: pages are near each other). */
  #forSegmentsOf(seqs: readonly number[], fn: (segment: StoredSegment) => void): void {
    if (seqs.length === 0) return;
    const sorted = [...seqs].sort((a, b) => a - b);
    let next = 0;
    for (const row of this.#segmentsAfter(sorted[0]! - 1)) {
      if (row.first_seq > sorted.at(-1)!) break;
      while (next < sorted.length && sorted[next]! < row.first_seq) next++;
      if (next < sorted.length && sorted[next]! <= row.last_seq) fn(this.#segment(row));
    }
  }
}

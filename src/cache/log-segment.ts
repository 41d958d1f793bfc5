/**
 * A segment of the event log: consecutive events of one append stored as one row (issue 19: a row
 * per event was a row billed per event; a row per segment is a row per transaction or so).
 *
 * Guarantees:
 * - Events stay whole and in order: a segment holds the events `first_seq`..`last_seq` with no gap,
 *   all from one append, so a reader that read up to a segment's end reads whole segments after it.
 * - An add, update or delete carries its new state. The state an event replaced (an update's old
 *   object, a delete's, a sync's: the cached state) is a reference to the event that holds it
 *   (`ref`) while that event is readable, and a copy otherwise: a body is written once while the
 *   log holds it (issue 19: bytes written cost ingest time as rows cost money). A segment records
 *   its smallest reference (`min_ref`): retention keeps what the retained events refer to, which is
 *   never older than the head was when they were appended, so at most one retention window more.
 * - Rows stay under the platform's 2 MB per row (cloudflare-platform.md §1.11): a segment ends at
 *   SEGMENT_EVENTS events or SEGMENT_TEXT UTF-16 units of bodies (at most 3 UTF-8 bytes each), and an
 *   event too big for one row is a segment of its own whose text goes on in `event_segment_parts`
 *   rows, split where no surrogate pair is cut.
 * - The row's `events` column (small: per event type, key, uid, RV, flags, time and two lengths)
 *   comes before `bodies`, so reading the entries alone (RV order, times) does not read the bodies.
 */
import { type Db, stmt } from "../sql.ts";

/** The readable range of a log (EventLog.bounds). */
export interface LogBounds {
  /** The oldest sequence number guaranteed readable (tail + 1 when the log is empty). */
  head: number;
  /** The newest sequence number, 0 before the first event. */
  tail: number;
}

export type LogEventType = "add" | "update" | "delete" | "sync";

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

/** Events a segment holds at most: bounds its entries' text (a key is at most ~320 characters). */
export const SEGMENT_EVENTS = 256;
/** UTF-16 units of bodies a segment row holds at most: ≤ 1.5 MB of UTF-8, with room for the entries. */
export const SEGMENT_TEXT = 500_000;

const FLAG_INITIAL_LIST = 1;
const FLAG_FINAL_STATE_UNKNOWN = 2;
/** An entry's length for a state the event does not have (an add's old state). */
const NONE = -1;
/** An old state that is the event's own state (a sync's, copied). */
const SAME = -2;
/** A state held by another event, whose sequence number the entry's `ref` gives. */
const REF = -3;

/** A state an event refers to: the event that holds it, or its text. */
export type StateText = string | { seq: number };

/** An event as appended. */
export interface SegmentEvent {
  seq: number;
  type: LogEventType;
  key: string;
  uid: string;
  resourceVersion: string;
  /** Its state (a delete's: the last known one); a sync's is the cached state, by reference. */
  body: StateText | null;
  /** The cached state it replaced (null: none, as for an add). */
  oldBody: StateText | null;
  initialList: boolean;
  finalStateUnknown: boolean;
  at: number;
}

/** [type, key, uid, rv, flags, at, body length, old length, ref] */
type Entry = [LogEventType, string, string, string, number, number, number, number, number?];

/** One segment ready to store: its row and, for an event too big for one row, the rest of its text. */
export interface EncodedSegment {
  firstSeq: number;
  lastSeq: number;
  lastAt: number;
  /** The smallest sequence number its events refer to; null when none. */
  minRef: number | null;
  entries: string;
  bodies: string;
  parts: string[];
}

/** The entry and text of one event (a state and its old state refer to one event at most: the cached state's). */
function encodeEvent(event: SegmentEvent): { entry: Entry; text: string; ref: number | undefined } {
  const flags = (event.initialList ? FLAG_INITIAL_LIST : 0) | (event.finalStateUnknown ? FLAG_FINAL_STATE_UNKNOWN : 0);
  const { body, oldBody } = event;
  const ref = typeof body === "object" && body !== null ? body.seq : typeof oldBody === "object" && oldBody !== null ? oldBody.seq : undefined;
  const length = (state: StateText | null) => (state === null ? NONE : typeof state === "string" ? state.length : REF);
  const same = oldBody !== null && (oldBody === body || (typeof oldBody === "object" && typeof body === "object" && body?.seq === oldBody.seq));
  const oldLength = same ? SAME : length(oldBody);
  const text = (typeof body === "string" ? body : "") + (oldLength >= 0 ? (oldBody as string) : "");
  const entry: Entry = [event.type, event.key, event.uid, event.resourceVersion, flags, event.at, length(body), oldLength];
  if (ref !== undefined) entry.push(ref);
  return { entry, text, ref };
}

/** Splits `text` into pieces of at most `size` UTF-16 units, never between the halves of a surrogate pair. */
function split(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + size);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/** Packs consecutive events (one append) into segments. */
export function encodeSegments(events: readonly SegmentEvent[]): EncodedSegment[] {
  const segments: EncodedSegment[] = [];
  let entries: Entry[] = [];
  let texts: string[] = [];
  let size = 0;
  let minRef: number | null = null;
  let first: SegmentEvent | undefined;
  let last: SegmentEvent | undefined;
  const flush = () => {
    if (first === undefined || last === undefined) return;
    const [bodies = "", ...parts] = size > SEGMENT_TEXT ? split(texts.join(""), SEGMENT_TEXT) : [texts.join("")];
    segments.push({ firstSeq: first.seq, lastSeq: last.seq, lastAt: last.at, minRef, entries: JSON.stringify(entries), bodies, parts });
    [entries, texts, size, minRef, first] = [[], [], 0, null, undefined];
  };
  for (const event of events) {
    const { entry, text, ref } = encodeEvent(event);
    if (first !== undefined && (entries.length >= SEGMENT_EVENTS || size + text.length > SEGMENT_TEXT)) flush();
    entries.push(entry);
    texts.push(text);
    size += text.length;
    if (ref !== undefined) minRef = Math.min(minRef ?? ref, ref);
    first ??= event;
    last = event;
  }
  flush();
  return segments;
}

/** A stored segment's entry, without its bodies. */
export interface SegmentEntry {
  seq: number;
  type: LogEventType;
  key: string;
  resourceVersion: string;
  at: number;
}

export function decodeEntries(firstSeq: number, entries: string): SegmentEntry[] {
  return (JSON.parse(entries) as Entry[]).map(([type, key, , rv, , at], i) => ({ seq: firstSeq + i, type, key, resourceVersion: rv, at }));
}

/**
 * What reading segments makes, summed since `reset()` (tests: DESIGN invariant 11, bytes are bounded
 * by what survives a collection, not by string lengths). Bodies are copies (StoredSegment#body), so
 * what they keep alive is their length; that V8 really copies is measured by bench/memory.mjs.
 * - `bodyUnits`: UTF-16 units of bodies copied out of segments;
 * - `largestDecode`: the most entries a reader held decoded at once.
 */
export const segmentMemory = {
  bodyUnits: 0,
  largestDecode: 0,
  reset(): void {
    this.bodyUnits = this.largestDecode = 0;
  },
  decoded(entries: number): void {
    this.largestDecode = Math.max(this.largestDecode, entries);
  },
};

/** Finds the state another event holds (EventLog: from its segment). */
export type Resolve = (seq: number) => string | null;

/**
 * A stored segment decoded: its entries parsed once and its text whole, so events are sliced out
 * on demand. `units` is what it holds in memory (UTF-16 units), for a reader's byte-bounded cache.
 */
export class StoredSegment {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly units: number;
  readonly #entries: Entry[];
  readonly #offsets: number[];
  readonly #text: string;

  constructor(firstSeq: number, entries: string, text: string) {
    this.firstSeq = firstSeq;
    this.#entries = JSON.parse(entries) as Entry[];
    this.lastSeq = firstSeq + this.#entries.length - 1;
    this.#text = text;
    this.units = text.length + entries.length;
    let offset = 0;
    this.#offsets = this.#entries.map(([, , , , , , bodyLength, oldLength]) => {
      const start = offset;
      offset += Math.max(bodyLength, 0) + Math.max(oldLength, 0);
      return start;
    });
  }

  holds(seq: number): boolean {
    return seq >= this.firstSeq && seq <= this.lastSeq;
  }

  /** The state event `seq` (in this segment) carries, its references followed with `resolve`. */
  state(seq: number, resolve: Resolve): string | null {
    const i = seq - this.firstSeq;
    const [, , , , , , bodyLength, , ref] = this.#entries[i]!;
    if (bodyLength === REF) return this.#follow(ref!, resolve);
    return bodyLength === NONE ? null : this.#body(this.#offsets[i]!, bodyLength);
  }

  /** The state event `seq` replaced (null: its key was absent before it). */
  replaced(seq: number, resolve: Resolve): string | null {
    const i = seq - this.firstSeq;
    const [, , , , , , bodyLength, oldLength, ref] = this.#entries[i]!;
    if (oldLength === NONE) return null;
    if (oldLength === SAME) return this.state(seq, resolve);
    if (oldLength === REF) return this.#follow(ref!, resolve);
    return this.#body(this.#offsets[i]! + Math.max(bodyLength, 0), oldLength);
  }

  /**
   * A body leaving the segment, as a copy: a slice would be a V8 sliced string that keeps the
   * segment's whole text (up to SEGMENT_TEXT units, more for a split event) alive as long as the
   * body lives, in a watcher's buffer or a feed's answer, while every cap counts the body's length
   * (review N3). Concatenating and slicing again flattens into a new string of the body alone: what
   * V8 does here, measured by bench/memory.mjs (String.prototype.concat or a join return the slice).
   */
  #body(from: number, length: number): string {
    segmentMemory.bodyUnits += length;
    return (this.#text.slice(from, from + length) + " ").slice(0, -1);
  }

  /**
   * The events `wanted` accepts, in order, as subscribers and watchers see them: one at a time, so a
   * reader whose budget is spent stops before the rest are copied out (review N3).
   */
  *events(wanted: (seq: number) => boolean, resolve: Resolve): Generator<LogEvent> {
    for (const [i, [type, key, uid, rv, flags, at]] of this.#entries.entries()) {
      const seq = this.firstSeq + i;
      if (!wanted(seq)) continue;
      yield {
        seq,
        type,
        key,
        uid,
        resourceVersion: rv,
        object: this.state(seq, resolve),
        // A delete's replaced state is kept for lists at earlier positions (`replaced`), not sent.
        oldObject: type === "update" || type === "sync" ? this.replaced(seq, resolve) : null,
        initialList: (flags & FLAG_INITIAL_LIST) !== 0,
        finalStateUnknown: (flags & FLAG_FINAL_STATE_UNKNOWN) !== 0,
        at,
      };
    }
  }

  /** A reference into this segment is read here; another is resolved. */
  #follow(ref: number, resolve: Resolve): string | null {
    return this.holds(ref) ? this.state(ref, resolve) : resolve(ref);
  }
}

/** A segment's row; an event too big for one row goes on in parts (numbered from 1). */
const INSERT_SEGMENT = stmt(
  "eventLog.append",
  "INSERT INTO event_segments (first_seq, last_seq, last_at, min_ref, events, bodies) VALUES (?, ?, ?, ?, ?, ?)",
);
const INSERT_PART = stmt("eventLog.appendPart", "INSERT INTO event_segment_parts (first_seq, part, text) VALUES (?, ?, ?)");
/** Stores `events` (consecutive, from the log's next sequence number) as segments. */
export function writeSegmentsInTx(db: Db, events: readonly SegmentEvent[]): void {
  for (const segment of encodeSegments(events)) {
    db.run(INSERT_SEGMENT, segment.firstSeq, segment.lastSeq, segment.lastAt, segment.minRef, segment.entries, segment.bodies);
    segment.parts.forEach((text, i) => db.run(INSERT_PART, segment.firstSeq, i + 1, text));
  }
}

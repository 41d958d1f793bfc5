/**
 * The batches of log events the watch hub's watchers read (watch-hub.ts): where each watcher's
 * next events come from, shared between watchers wherever they stand at the same place.
 *
 * Guarantees:
 * - Only whole runs of transactions ending at a mark are handed out, each sorted by resourceVersion
 *   as a whole (the log is in that order only between marks), so a stream that ends anywhere and
 *   resumes from its last resourceVersion misses nothing and repeats nothing.
 * - A run near the tail comes from the shared buffer of recent events (recent-events.ts, bounded by
 *   bytes), read once for all watchers; a longer or older run is read for the watcher, a sorted page
 *   at a time, each page sized by the largest event read so far to about RECENT_BYTES. A few recent ranges, with their parsed states and frames (event-range.ts), and the run
 *   ends found, are kept for the watchers that reach the same position.
 * - What is held belongs to one log incarnation: a log made anew (the informer re-created) clears it.
 * - The source may answer later (a relay asks the informer's object, watch-relay.ts): one refresh
 *   runs at a time for all watchers, and a run end or a range being read is asked for once, however
 *   many watchers wait on it.
 */
import type { LogEvent } from "../cache/event-log.ts";
import { compareResourceVersions } from "../kube/resource-version.ts";
import { EventRange, type FrameCounters } from "./event-range.ts";
import { eventBytes, READ_BATCH, RECENT_BYTES, RecentEvents } from "./recent-events.ts";
import type { WatchSource } from "./watch-source.ts";

/** A watcher's next events and where it stands after them (WatchBatches.next). */
export type Batch = { range: EventRange; next: Cursor } | "expired" | undefined;
/** `#known`: the answer needs a read or a wait. */
const UNKNOWN = Symbol("unknown");

/** Ranges of events whose shared frames are kept (watchers at the tail ask for the same few). */
const RANGES_KEPT = 4;
/** Run ends kept (#boundaryAfter): watchers cluster at a few positions. */
const BOUNDARIES_KEPT = 64;
/** Events of a watcher's own read before the sizes of this log's events are known. */
const FIRST_ORDERED_READ = 16;

/**
 * A watcher's place in the log: everything up to position `after` was delivered (or precedes its
 * start); of the run (after, end] being read a page at a time, sorted, the first `skip` were too.
 */
export interface Cursor {
  after: number;
  end?: number;
  skip: number;
}

export class WatchBatches {
  readonly #source: () => WatchSource | undefined;
  readonly #counters: FrameCounters;
  /** The log incarnation the buffer and ranges below were read from. */
  #incarnation: string | undefined;
  /** Recent events, read once for all watchers at the tail. */
  readonly #recent = new RecentEvents();
  /** Run ends found after a position (#boundaryAfter), by position and span. */
  readonly #boundaries = new Map<string, number>();
  /** Recent ranges of events with their shared frames (#keep). */
  readonly #ranges = new Map<string, EventRange>();
  /** The refresh running now, which every watcher that asks meanwhile awaits. */
  #refreshing: Promise<void> | undefined;
  /** Reads being answered, by their key: a watcher asking for the same awaits the same answer. */
  readonly #pending = new Map<string, Promise<unknown>>();
  /** Bodies of the largest event a watcher's own read returned: sizes the next such read. */
  #largest = 0;
  /** How often a watcher's next batch needed a read or a wait of its own (tests and benchmarks). */
  awaited = 0;

  constructor(source: () => WatchSource | undefined, counters: FrameCounters) {
    this.#source = source;
    this.#counters = counters;
  }

  /** Bytes of bodies in the shared buffer now. */
  get bufferedBytes(): number {
    return this.#recent.bytes;
  }

  /** Nobody watches: what is buffered would only be read again, all of it, by the next watcher (F8). */
  forget(): void {
    this.#recent.forget();
  }

  /** Keeps a range under `key`, shared by every watcher that reaches it (watchers at the tail all do); a few recent ranges are kept. */
  #keep(key: string, ordered: LogEvent[]): EventRange {
    const range = new EventRange(ordered, this.#counters);
    this.#ranges.set(key, range);
    if (this.#ranges.size > RANGES_KEPT) this.#ranges.delete(this.#ranges.keys().next().value!);
    return range;
  }

  /**
   * A watcher's next events, in resourceVersion order, and where it is after them. The log is in
   * that order only between runs of transactions that end at a mark (WatchSource.boundaryAfter), so
   * only whole runs are delivered, each sorted as a whole: from the shared buffer when it holds
   * them (up to READ_BATCH events of whole runs), else read for this watcher, a longer run a sorted
   * page at a time. A stream that ends anywhere has then delivered every event up to the client's
   * last resourceVersion, and none after it, of the run it ended in. Undefined while no complete
   * run follows (a Replace still being popped); `firstRunOnly` keeps to the run the cursor is in.
   */
  next(cursor: Cursor, firstRunOnly: boolean): Batch | Promise<Batch> {
    const known = this.#known(cursor, firstRunOnly);
    return known === UNKNOWN ? this.#next(cursor, firstRunOnly) : known;
  }

  /**
   * Reads what the log gained, and finds the run and its range that follow where the buffer ended
   * (where the watchers at the tail stand), so that each of them then takes it without a read or a
   * wait (`#known`). The hub calls it before it wakes them.
   */
  async prepare(): Promise<void> {
    const source = this.#source();
    if (!source) return;
    const at = source.incarnation === this.#incarnation ? this.#recent.end : -1;
    await this.#refresh(source);
    // Nothing new since the buffer's end (the log's bounds were just read by the refresh).
    if (at < 0 || this.#source()?.incarnation !== source.incarnation || this.#recent.end <= at) return;
    const end = await this.#boundaryAfter(source, at, READ_BATCH);
    if (end !== undefined && end - at <= READ_BATCH) this.#bufferedRange(at, end);
  }

  /**
   * `next`'s answer where it needs no read and no wait: a watcher at the tail, or at a range the
   * watchers before it at the same position found. This is every watcher's case at every batch
   * but the first's, and answering it without an await saves 1,000 watchers a chain of promises
   * each per batch (issue 28).
   */
  #known(cursor: Cursor, firstRunOnly: boolean): Batch | typeof UNKNOWN {
    const source = this.#source();
    if (!source) return undefined;
    // Nothing buffered yet (a new watcher's first look): the read decides; the log's bounds are a
    // read of their own in the informer's object, not asked twice.
    if (this.#refreshing || source.incarnation !== this.#incarnation || this.#recent.end < 0) return UNKNOWN;
    const { tail } = source.bounds();
    if (this.#recent.end < tail) return UNKNOWN;
    const { after, skip } = cursor;
    if (cursor.end === undefined && after >= tail) return undefined;
    if (skip !== 0 || firstRunOnly) return UNKNOWN;
    const end = cursor.end ?? this.#boundaries.get(`${after}:${READ_BATCH}`);
    if (end === undefined || end - after > READ_BATCH) return UNKNOWN;
    const range = this.#bufferedRange(after, end);
    return range ? { range, next: { after: end, skip: 0 } } : UNKNOWN;
  }

  /** The events (after, end] as a range shared under its key, from the buffer; undefined when it does not hold them all. */
  #bufferedRange(after: number, end: number): EventRange | undefined {
    const key = `${after}:${end}`;
    const kept = this.#ranges.get(key);
    if (kept) return kept;
    const buffered = this.#recent.slice(after, end);
    return buffered && this.#keep(key, inResourceVersionOrder(buffered));
  }

  async #next(cursor: Cursor, firstRunOnly: boolean): Promise<Batch> {
    this.awaited++;
    const source = this.#source();
    if (!source) return undefined;
    await this.#refresh(source);
    if (this.#source()?.incarnation !== source.incarnation) return undefined; // a new log meanwhile: the caller sees it
    const { after, skip } = cursor;
    // At the tail nothing follows: not asked (a relay's watchers would ask the informer after every batch).
    if (cursor.end === undefined && after >= source.bounds().tail) return undefined;
    // The run a start RV fell in is asked of the source itself, after the watcher's positionOf: runs
    // of watch events merge (cache-progress.ts), and a run end found before they did cuts the run
    // positionOf placed the start in short, ending the skip early (events at or below the start RV
    // sent again). Any other end, kept or shared, still ends a complete, sorted run.
    const end = cursor.end ?? (firstRunOnly ? await source.boundaryAfter(after, 0) : await this.#boundaryAfter(source, after, READ_BATCH));
    if (end === undefined) return undefined;
    const buffered = skip === 0 && end - after <= READ_BATCH ? this.#bufferedRange(after, end) : undefined;
    if (buffered) return { range: buffered, next: { after: end, skip: 0 } };
    // Sized by the largest event read so far, so a page of large objects stays about RECENT_BYTES (F8).
    const limit = this.#largest === 0 ? FIRST_ORDERED_READ : Math.max(1, Math.min(READ_BATCH, Math.floor(RECENT_BYTES / this.#largest)));
    const key = `${after}:${end}:${skip}:${limit}`;
    let range = this.#ranges.get(key);
    if (!range) {
      const read = await this.#once(`read:${source.incarnation}:${key}`, () => source.readInOrder(after, end, skip, limit));
      if (read.expired) return "expired";
      for (const event of read.events) this.#largest = Math.max(this.#largest, eventBytes(event));
      range = this.#ranges.get(key) ?? this.#keep(key, read.events);
    }
    const delivered = skip + range.ordered.length;
    const runDone = range.ordered.length < limit || delivered >= end - after;
    return { range, next: runDone ? { after: end, skip: 0 } : { after, end, skip: delivered } };
  }

  /**
   * WatchSource.boundaryAfter, asked once for all the watchers at one position. A run end once
   * found stays the end of complete runs (the log up to it was complete; merging runs, retention or
   * a server move drops marks, never events within retention), so it is kept; a later answer could
   * reach further, and the watchers at the tail, all given the same end, share that range's frames.
   * Not for the run a start RV fell in (`next`): a mark merged away no longer ends that run.
   */
  async #boundaryAfter(source: WatchSource, after: number, span: number): Promise<number | undefined> {
    const key = `${after}:${span}`;
    const known = this.#boundaries.get(key);
    if (known !== undefined) return known;
    const end = await this.#once(`end:${source.incarnation}:${key}`, () => source.boundaryAfter(after, span));
    if (end === undefined || source.incarnation !== this.#incarnation) return end;
    this.#boundaries.set(key, end);
    if (this.#boundaries.size > BOUNDARIES_KEPT) this.#boundaries.delete(this.#boundaries.keys().next().value!);
    return end;
  }

  /** Reads what the log gained since the last refresh into the buffer (once for all watchers). */
  async #refresh(source: WatchSource): Promise<void> {
    while (this.#refreshing) await this.#refreshing;
    if (source.incarnation !== this.#incarnation) {
      // A new log (the informer was re-created): nothing read from the old one may be served.
      this.#incarnation = source.incarnation;
      this.#recent.forget();
      this.#ranges.clear();
      this.#boundaries.clear();
    }
    // A relay's read may run past the snapshot's tail: nothing to read then either.
    if (this.#recent.end >= source.bounds().tail) return;
    this.#refreshing = this.#recent.refresh(source).finally(() => (this.#refreshing = undefined));
    await this.#refreshing;
  }

  /** `read()`'s answer, asked once while it is pending however many watchers ask for `key`. */
  async #once<T>(key: string, read: () => T | Promise<T>): Promise<T> {
    const pending = this.#pending.get(key) as Promise<T> | undefined;
    if (pending) return pending;
    const answer = Promise.resolve().then(read);
    this.#pending.set(key, answer);
    try {
      return await answer;
    } finally {
      this.#pending.delete(key);
    }
  }
}

/**
 * The DeltaFIFO pops a batch key by key (each key's deltas together), and a Replace in key order,
 * so within a run of transactions the log's order is not the order of the changes; a watch
 * promises resourceVersion order. What is sorted here is whole runs (WatchBatches.next), and one key's
 * events keep their order (their RVs grow), so a stable sort restores it.
 */
function inResourceVersionOrder(events: readonly LogEvent[]): LogEvent[] {
  return [...events].sort((a, b) => compareResourceVersions(a.resourceVersion, b.resourceVersion));
}

/**
 * The watch hub's shared buffer of recent log events (watch-hub.ts): read once per appended batch
 * for every watcher at the tail, so N watchers cost one log read, not N.
 *
 * Guarantees (review F8, B5):
 * - It holds consecutive events ending at `end`, at most MAX_EVENTS of them and at most about
 *   MAX_BYTES of bodies (the newest event always stays). Co-located Durable Objects share one
 *   isolate's 128 MB, so the bound is per object and small. Bodies are copies, not views of the
 *   log's segments (log-segment.ts), so their length is what they keep alive.
 * - A refresh never reads what it would trim: it starts no earlier than the newest MAX_EVENTS, each
 *   read is bounded by bytes as well as by count, and it trims after every read. What it holds at
 *   any time is the bound plus one read.
 * - `forget` (the last watcher left) drops it all: the next watcher's first refresh starts at the
 *   tail instead of reading everything appended while nobody watched.
 * - What it holds is of one log incarnation; the hub clears it when the log is made anew.
 *
 * A watcher behind the buffer reads for itself (watch-hub.ts #nextBatch).
 */
import type { LogBounds, LogEvent, ReadResult } from "../cache/event-log.ts";
import type { Awaitable } from "./watch-source.ts";

/** Events kept, and bytes of bodies kept (was 16 MiB per object: B5). */
export const RECENT_EVENTS = 10_000;
export const RECENT_BYTES = 4 * 1024 * 1024;
/** Events one read of the log returns at most; reads are bounded by RECENT_BYTES too. */
export const READ_BATCH = 1_000;

/** What a refresh reads of the log. */
export interface RecentSource {
  read(after: number, limit: number, maxBytes?: number): Awaitable<ReadResult>;
  bounds(): LogBounds;
}

export class RecentEvents {
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  #events: LogEvent[] = [];
  /** The last seq read into the buffer; -1: nothing yet, the next refresh starts at the tail. */
  #end = -1;
  #bytes = 0;

  constructor(limits: { events?: number; bytes?: number } = {}) {
    this.#maxEvents = limits.events ?? RECENT_EVENTS;
    this.#maxBytes = limits.bytes ?? RECENT_BYTES;
  }

  /** Bytes of bodies held now. */
  get bytes(): number {
    return this.#bytes;
  }

  get end(): number {
    return this.#end;
  }

  /** The events of (after, end], if all are held. */
  slice(after: number, end: number): LogEvent[] | undefined {
    const first = this.#events[0];
    if (first === undefined || after < first.seq - 1 || end > this.#end) return undefined;
    const from = after - first.seq + 1;
    return this.#events.slice(from, from + end - after);
  }

  /** Drops everything; the next refresh starts at the log's tail. */
  forget(): void {
    this.#events = [];
    this.#bytes = 0;
    this.#end = -1;
  }

  /**
   * Reads what the log gained since the last refresh (once for all watchers). Callers must not
   * refresh concurrently (WatchBatches runs one refresh at a time): a read may be awaited.
   */
  async refresh(source: RecentSource): Promise<void> {
    const { tail } = source.bounds();
    if (this.#end === -1) this.#end = tail; // nothing older is buffered: watchers behind read for themselves
    if (tail - this.#end > this.#maxEvents) {
      // All of what is held, and what came before the newest maxEvents, would be trimmed: not read.
      this.#events = [];
      this.#bytes = 0;
      this.#end = tail - this.#maxEvents;
    }
    while (this.#end < tail) {
      const read = await source.read(this.#end, READ_BATCH, this.#maxBytes);
      if (read.expired || read.events.length === 0) {
        this.forget();
        this.#end = tail;
        return;
      }
      this.#events.push(...read.events);
      for (const event of read.events) this.#bytes += eventBytes(event);
      this.#end = read.events.at(-1)!.seq;
      this.#trim();
    }
  }

  /** Bounded by count and bytes; the newest event always stays. */
  #trim(): void {
    let drop = 0;
    while (drop < this.#events.length - 1 && (this.#events.length - drop > this.#maxEvents || this.#bytes > this.#maxBytes)) {
      this.#bytes -= eventBytes(this.#events[drop]!);
      drop++;
    }
    if (drop > 0) this.#events.splice(0, drop);
  }
}

export function eventBytes(event: LogEvent): number {
  return (event.object?.length ?? 0) + (event.oldObject?.length ?? 0);
}

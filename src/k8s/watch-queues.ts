/**
 * The outgoing queues of one informer object's `/k8s` watchers, and the byte budget they share
 * (review A7, B5): bytes written for a watcher stay in memory until its client reads them.
 *
 * Guarantees:
 * - Each queue counts the bytes written to it and not yet taken by its client's reads; a sender
 *   that finds no room (about HIGH_WATER_BYTES queued) waits for it (`room`) before writing more.
 *   One write may still be large (a chunk of frames, a page of initial events).
 * - The total counts each chunk once, however many queues hold it: the hub writes one encoded chunk
 *   to every watcher of a format at a position (event-range.ts), and it is in memory once. (Counted
 *   per queue, a burst of 500 events to 100 watchers passed the budget and closed healthy watchers.)
 * - Across all queues at most MAX_QUEUED_BYTES stay queued after any write: past it, the largest
 *   queues are closed first until the total is within it — the clients that read least, holding
 *   most (counted in HIGH_WATER_BYTES; of two holding as much, the one waiting longer) — as kube-apiserver closes watchers whose
 *   buffers are full rather than grow them. A closed queue's unsent bytes are dropped at once, and
 *   its stream ends after what its client already took (issue 27 item 4): the object's stream breaks
 *   off there and the Worker ends the client's body normally (watch-body.ts; over HTTP/2 a body
 *   that breaks off has client-go relist instead, review N5). The client re-watches from the last
 *   resourceVersion it received, as after any ended watch, and misses nothing.
 * - A queue leaves the count when its stream is done (read to the end, closed here, or cancelled:
 *   the runtime's stream tells its writer of a cancel at its next write).
 * - No JavaScript runs per chunk between a write and the client's read (issue 28): the queue is the
 *   runtime's own stream, whose writes resolve as their chunks are read.
 *
 * Co-located Durable Objects share one isolate's 128 MB: the budget is per object, and small.
 */

/** Bytes queued for one watcher before its sender waits for the client to read. */
export const HIGH_WATER_BYTES = 64 * 1024;
/** Bytes queued over all the watchers of one informer object at most. */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;

/** One watcher's queue: its client reads `readable`; the hub writes with `write`. */
export interface WatchQueue {
  readonly readable: ReadableStream<Uint8Array>;
  readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  /** Queues `bytes`; resolves once they are taken (the hub does not wait for it: see `hasRoom`). */
  write(bytes: Uint8Array): Promise<void>;
  /** Whether less than HIGH_WATER_BYTES is queued: the sender may write. */
  hasRoom(): boolean;
  /**
   * Resolves true once the queue has room, false if it ends first. (Not the writer's `ready`: the
   * runtime's stream may replace a pending `ready` promise without resolving it.)
   */
  room(): Promise<boolean>;
  /**
   * Ends the client's stream now, after the frames it already took (the stream errors; the Worker
   * ends its client's body normally: watch-body.ts); what is queued is dropped (and leaves the
   * count) at once. A `writer.close()` instead delivers everything queued first.
   */
  end(): void;
}

interface Entry {
  queued: number;
  /** The chunks written and not yet taken, oldest first (a stream is read in order). */
  chunks: Uint8Array[];
  /** When each was written (a count over all queues): of two queues holding as much, the one waiting longer is closed first. */
  written: number[];
  writer: WritableStreamDefaultWriter<Uint8Array>;
  shed: () => void;
  /** Senders waiting for room (`room`). */
  waiting: ((room: boolean) => void)[];
}

export class WatchQueues {
  readonly #maxBytes: number;
  readonly #entries = new Set<Entry>();
  /** How many queues hold each chunk: the total counts a chunk while any does. */
  readonly #holders = new Map<Uint8Array, number>();
  #total = 0;
  #writes = 0;

  constructor(maxBytes = MAX_QUEUED_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes queued over all watchers now. */
  get totalBytes(): number {
    return this.#total;
  }

  /** A queue for a new watcher; `shed` is called if the budget closes it. */
  create(shed: () => void): WatchQueue {
    const entries = this.#entries;
    // The runtime's own stream, no JavaScript per chunk (issue 28): its writer's desiredSize counts
    // the bytes written and not yet read, and a write resolves when its chunk is read. A JavaScript
    // TransformStream here cost ~12% of the runtime's CPU under 1,000 watchers (its transform
    // callback, two queues and a read promise per chunk).
    const { readable, writable } = new IdentityTransformStream({ highWaterMark: HIGH_WATER_BYTES });
    const writer = writable.getWriter();
    const entry: Entry = { queued: 0, chunks: [], written: [], writer, shed, waiting: [] };
    const taken = (chunk: Uint8Array) => {
      if (!entries.has(entry)) return;
      entry.queued -= chunk.byteLength;
      entry.chunks.shift();
      entry.written.shift();
      this.#release(chunk);
      if (entry.queued < HIGH_WATER_BYTES) wake(entry, true);
    };
    entries.add(entry);
    const done = () => this.#remove(entry);
    // An errored writer's `ready` rejects too, and the runtime reports it unless it is observed.
    writer.closed.then(done, () => (done(), writer.ready.catch(() => {})));
    return {
      // Ended early (`end`, the budget), the runtime's stream errors; the Worker ends its client's
      // body normally all the same (watch-body.ts): a stream of the runtime cannot be piped into
      // another in the same isolate.
      readable,
      writer,
      end: () => this.#end(entry),
      hasRoom: () => entry.queued < HIGH_WATER_BYTES,
      room: () => {
        if (!entries.has(entry)) return Promise.resolve(false);
        if (entry.queued < HIGH_WATER_BYTES) return Promise.resolve(true);
        return new Promise<boolean>((resolve) => entry.waiting.push(resolve));
      },
      write: (bytes) => {
        if (!entries.has(entry)) return Promise.reject(new Error("the watch was closed"));
        entry.queued += bytes.byteLength;
        entry.chunks.push(bytes);
        entry.written.push(this.#writes++);
        const holders = this.#holders.get(bytes) ?? 0;
        if (holders === 0) this.#total += bytes.byteLength;
        this.#holders.set(bytes, holders + 1);
        const written = writer.write(bytes);
        written.then(() => taken(bytes), () => {});
        if (this.#total > this.#maxBytes) this.#shed();
        return written;
      },
    };
  }

  /** Ends a queue now: what is queued is dropped at once (its writes fail), its client's stream ends after what it took. */
  #end(entry: Entry): void {
    this.#remove(entry);
    entry.writer.abort(new Error("the watch was closed")).catch(() => {});
  }

  #remove(entry: Entry): void {
    if (!this.#entries.delete(entry)) return;
    for (const chunk of entry.chunks) this.#release(chunk);
    entry.chunks = [];
    entry.written = [];
    entry.queued = 0;
    wake(entry, false);
  }

  /** One queue no longer holds `chunk`. */
  #release(chunk: Uint8Array): void {
    const holders = (this.#holders.get(chunk) ?? 1) - 1;
    if (holders > 0) this.#holders.set(chunk, holders);
    else {
      this.#holders.delete(chunk);
      this.#total -= chunk.byteLength;
    }
  }

  /** Closes the largest queues until the total is within the budget. */
  #shed(): void {
    while (this.#total > this.#maxBytes && this.#entries.size > 0) {
      let largest: Entry | undefined;
      for (const entry of this.#entries) if (!largest || holdsMore(entry, largest)) largest = entry;
      // Ended, not closed: a close would keep the queue until the client read it all.
      this.#end(largest!);
      largest!.shed();
    }
  }
}

/**
 * Whether `a` holds more unread bytes than `b` (in units of HIGH_WATER_BYTES: a client reading a
 * large chunk holds all of it until its last byte is read), or as many and has waited longer.
 */
function holdsMore(a: Entry, b: Entry): boolean {
  const units = (entry: Entry) => Math.floor(entry.queued / HIGH_WATER_BYTES);
  return units(a) > units(b) || (units(a) === units(b) && (a.written[0] ?? Infinity) < (b.written[0] ?? Infinity));
}

function wake(entry: Entry, room: boolean): void {
  const waiting = entry.waiting;
  if (waiting.length === 0) return;
  entry.waiting = [];
  for (const resolve of waiting) resolve(room);
}

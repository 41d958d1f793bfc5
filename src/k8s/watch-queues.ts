/**
 * The outgoing queues of one informer object's `/k8s` watchers, and the byte budget they share
 * (review A7, B5): bytes written for a watcher stay in memory until its client reads them.
 *
 * Guarantees:
 * - Each queue counts the bytes written to it and not yet taken by its client's reads; a writer
 *   that sees `desiredSize <= 0` (about HIGH_WATER_BYTES queued) waits before writing more. One
 *   write may still be large (a chunk of frames, a page of initial events).
 * - The total counts each chunk once, however many queues hold it: the hub writes one encoded chunk
 *   to every watcher of a format at a position (event-range.ts), and it is in memory once. (Counted
 *   per queue, a burst of 500 events to 100 watchers passed the budget and closed healthy watchers.)
 * - Across all queues at most MAX_QUEUED_BYTES stay queued after any write: past it, the largest
 *   queues are closed first until the total is within it — the clients that read least, holding
 *   most — as kube-apiserver closes watchers whose buffers are full rather than grow them. A closed
 *   queue's unsent bytes are dropped at once, and its stream ends normally after the whole frames its
 *   client already took (issue 27 item 4): the client re-watches from the last resourceVersion it
 *   received, as after any ended watch, and misses nothing. Never an aborted stream: over HTTP/2 a
 *   body that breaks off has client-go relist instead (review N5).
 * - A queue leaves the count when its stream is done (read to the end, cancelled, or closed here).
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
  /** Queues `bytes`; resolves once they are taken (the hub does not wait for it: see `writer.desiredSize`). */
  write(bytes: Uint8Array): Promise<void>;
  /**
   * Ends the client's stream now, normally, after the frames it already took; what is queued is
   * dropped (and leaves the count) at once. A `writer.close()` instead delivers everything queued first.
   */
  end(): void;
}

interface Entry {
  queued: number;
  /** The chunks written and not yet taken, oldest first. */
  chunks: Uint8Array[];
  writer: WritableStreamDefaultWriter<Uint8Array>;
  shed: () => void;
  /** Ends the client's stream after what it already took, and drops what is queued (the writer errors). */
  end: () => void;
}

export class WatchQueues {
  readonly #maxBytes: number;
  readonly #entries = new Set<Entry>();
  /** How many queues hold each chunk: the total counts a chunk while any does. */
  readonly #holders = new Map<Uint8Array, number>();
  #total = 0;

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
    const entry: Entry = { queued: 0, chunks: [], writer: undefined!, shed, end: undefined! };
    const taken = (chunk: Uint8Array) => {
      if (!entries.has(entry)) return;
      entry.queued -= chunk.byteLength;
      entry.chunks.splice(entry.chunks.indexOf(chunk), 1);
      this.#release(chunk);
    };
    // The transform runs as the client pulls a chunk: that chunk has left the queue.
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>(
      {
        start(controller) {
          entry.end = () => controller.terminate();
        },
        transform(chunk, controller) {
          taken(chunk);
          controller.enqueue(chunk);
        },
      },
      new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_BYTES }),
    );
    const writer = writable.getWriter();
    entry.writer = writer;
    entries.add(entry);
    const done = () => this.#remove(entry);
    writer.closed.then(done, done);
    return {
      readable,
      writer,
      end: () => {
        this.#remove(entry);
        entry.end();
      },
      write: (bytes) => {
        if (!entries.has(entry)) return Promise.reject(new Error("the watch was closed"));
        entry.queued += bytes.byteLength;
        entry.chunks.push(bytes);
        const holders = this.#holders.get(bytes) ?? 0;
        if (holders === 0) this.#total += bytes.byteLength;
        this.#holders.set(bytes, holders + 1);
        const written = writer.write(bytes);
        if (this.#total > this.#maxBytes) this.#shed();
        return written;
      },
    };
  }

  #remove(entry: Entry): void {
    if (!this.#entries.delete(entry)) return;
    for (const chunk of entry.chunks) this.#release(chunk);
    entry.chunks = [];
    entry.queued = 0;
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
      for (const entry of this.#entries) if (!largest || entry.queued > largest.queued) largest = entry;
      this.#remove(largest!);
      largest!.shed();
      // Terminate, not close (a close would keep the queue until the client read it all) nor abort
      // (the client's body would break off): the stream ends after what the client took; what is
      // queued is dropped as the writer errors.
      largest!.end();
    }
  }
}

/**
 * Reads a watch stream in batches for the reflector (reflector.ts `watch`), so that a busy watch is
 * applied in a few transactions rather than one per network chunk.
 *
 * Guarantees: events come out in stream order; a read still in flight when a window closes is kept
 * for the next batch, never dropped, so no event is lost between batches; a clean end or an error
 * that follows events already read is reported with the next call, after those events.
 */
import type { Clock } from "../clock.ts";
import type { WatchStream } from "../kube/client.ts";
import type { WatchEvent } from "../kube/types.ts";

/**
 * Watch events are applied in batches: each transaction commit costs a storage flush, and a busy
 * server often puts one event in each network chunk. After the first event of a batch arrives,
 * reading goes on for up to this long, or until WATCH_BATCH_MAX events, before they are applied.
 */
export const WATCH_BATCH_WINDOW_MS = 20;
export const WATCH_BATCH_MAX = 1_000;

/** One watch stream read in batches of at most WATCH_BATCH_MAX events (see the contract above). */
export class WatchBatchReader {
  readonly #stream: WatchStream;
  readonly #clock: Clock;
  #inflight: Promise<WatchEvent[] | null> | undefined;

  constructor(stream: WatchStream, clock: Clock) {
    this.#stream = stream;
    this.#clock = clock;
  }

  /** The next batch; null at a clean end; "deadline" if nothing arrives before `end`. */
  async next(end: number): Promise<WatchEvent[] | null | "deadline"> {
    const session = deadlineAt(end, this.#clock);
    let first: WatchEvent[] | null | "deadline";
    try {
      first = await this.#read(session);
    } finally {
      session.clear();
    }
    if (first === "deadline" || first === null) return first;
    const batch = [...first];
    // One timer for the whole window: a timer per read costs more than the read on a busy stream.
    const window = deadlineAt(Math.min(end, this.#clock.now() + WATCH_BATCH_WINDOW_MS), this.#clock);
    try {
      while (batch.length < WATCH_BATCH_MAX) {
        let more: WatchEvent[] | null | "deadline";
        try {
          more = await this.#read(window);
        } catch (error) {
          // Apply what was read; the failure comes back with the next read.
          this.#inflight = Promise.reject(error);
          this.#inflight.catch(() => {});
          break;
        }
        if (more === "deadline") break;
        if (more === null) {
          this.#inflight = Promise.resolve(null);
          break;
        }
        batch.push(...more);
      }
    } finally {
      window.clear();
    }
    return batch;
  }

  async #read(deadline: Deadline): Promise<WatchEvent[] | null | "deadline"> {
    const pending = this.#inflight ?? this.#stream.next();
    this.#inflight = undefined;
    const result = await Promise.race([pending, deadline.reached]);
    if (result === "deadline") this.#inflight = pending;
    return result;
  }
}

interface Deadline {
  reached: Promise<"deadline">;
  clear(): void;
}

function deadlineAt(end: number, clock: Clock): Deadline {
  let clear = () => {};
  const reached = new Promise<"deadline">((resolve) => {
    const remaining = end - clock.now();
    if (remaining <= 0) resolve("deadline");
    else clear = clock.setTimer ? clock.setTimer(remaining, () => resolve("deadline")) : realTimer(remaining, () => resolve("deadline"));
  });
  return { reached, clear: () => clear() };
}

function realTimer(ms: number, fire: () => void): () => void {
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
}

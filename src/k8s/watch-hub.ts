/**
 * `/k8s` watches of one informer, served from its event log as kube-apiserver's watch cache serves
 * them from etcd's history (kubernetes-api-server-facts.md §4, §6).
 *
 * Guarantees:
 * - Each watcher gets the log's changes in resourceVersion order, whatever the log's batching: only
 *   whole runs of transactions up to a mark, each sorted as a whole (watch-batches.ts), so a stream that
 *   ends anywhere and resumes from its last resourceVersion misses nothing and repeats nothing.
 *   Changes are translated by its selectors' enter/leave rule (watch-events.ts), starting after its
 *   resourceVersion (Informer.positionOf) or, when it asks for initial events (a watch-list,
 *   list-options.ts), with a synthetic ADDED for every object of one consistent list
 *   (versioned-list.ts) at a state at least as new as its resourceVersion and the changes after it,
 *   closed by the `k8s.io/initial-events-end` bookmark at the list's RV when bookmarks were asked
 *   (watch-start.ts).
 * - One read of the log per appended batch serves every watcher at the tail: new events are read
 *   once into a shared buffer of recent events; a watcher behind the buffer reads for itself.
 *   What watchers derive from an event is computed once for all of them (event-range.ts): its
 *   parsed states, and its frame per encoding (JSON, metadata, Table within the second).
 *   Namespaces and fixed names are checked on the event's key, without parsing (key-scope.ts).
 * - A start RV or a position the log no longer covers ends the stream with an ERROR 410 Expired
 *   event, as the watch cache does; the client relists. So does a log made anew under the watcher
 *   (the informer deleted and re-created): what the hub holds is bound to one log incarnation.
 * - A failure inside a watcher's loop ends its stream with an ERROR event carrying a 500
 *   InternalError Status, never a clean end.
 * - Every stream ends with a normal end of body, after an ERROR event where the API server sends one
 *   (410, 500), never aborted (issue 27 item 4): client-go over HTTP/2 relists after a broken body
 *   but resumes after a normal end, and any prefix of a stream resumes exactly. (When the object
 *   running this hub goes away, the Worker ends its client's body normally: watch-body.ts.)
 * - `timeoutSeconds` ends the stream cleanly (default: random in [30, 60) min, as the server's); a
 *   client's value counts up to MAX_WATCH_TIMEOUT_SECONDS (list-options.ts).
 *   Bookmarks, when asked for, come to each watcher about once a minute while nothing was sent to
 *   it (whatever its selectors filtered out), and once about 2 s before its deadline, as the watch
 *   cache's per-watcher schedule sends them (cache_watcher.go nextBookmarkTime).
 * - Each watcher holds at most about HIGH_WATER_BYTES queued: sending waits for its client to read.
 *   One that reads nothing for UNRESPONSIVE_MS is closed, as the API server closes unresponsive
 *   watchers: what it did not take is dropped at once and its stream ends normally; its client
 *   re-watches from its last resourceVersion. Others are not held back. All
 *   watchers together hold at most MAX_QUEUED_BYTES queued; past it the largest are closed
 *   (watch-queues.ts). The shared buffer is bounded by bytes (recent-events.ts).
 * - Places and heavy work are admitted before any stream starts (`tryOpen`): at most
 *   MAX_WATCHERS_PER_OBJECT watchers, MAX_WATCHERS_PER_PRINCIPAL of one credential
 *   (watcher-caps.ts), and a watch that starts with initial events (a full listing) takes a slot of
 *   the object's heavy-read admission (admission.ts) for its listing only, waiting its turn in the
 *   queue, or is refused when the queue is full. A refusal is a 429 with Retry-After (the route's).
 */
import { makeFilter } from "../cache/lister.ts";
import { keyScope } from "../cache/key-scope.ts";
import { compareResourceVersions } from "../kube/resource-version.ts";
import { statusErrors } from "./status.ts";
import { errorFrame, translate, WatchFramer } from "./watch-events.ts";
import { expiredFrame, needsListing, watchStart } from "./watch-start.ts";
import { CHUNK_CHARS, type FrameCounters } from "./event-range.ts";
import { errorText, logger } from "../log.ts";
import { ANONYMOUS_OWNER, HEAVY_READ_RETRY_AFTER_SECONDS, HEAVY_READ_SHED_MESSAGE, ListingTurns, ReadAdmission } from "./admission.ts";
import { MAX_WATCH_TIMEOUT_SECONDS } from "./list-options.ts";
import { type Cursor, WatchBatches } from "./watch-batches.ts";
import { isRefusal, type Refusal, WatcherCaps } from "./watcher-caps.ts";
import { type WatchQueue, WatchQueues } from "./watch-queues.ts";
import { WatchWakeups } from "./watch-wakeups.ts";
import type { LogEvent } from "../cache/event-log.ts";
import type { AdmittedListing, WatchOpened, WatchRequest, WatchSource } from "./watch-source.ts";
export type { WatchOpened, WatchRequest, WatchSource };
export { needsListing };

export const BOOKMARK_INTERVAL_MS = 60_000;
/** The last bookmark comes this long before the deadline, so the client resumes from a fresh RV. */
export const BOOKMARK_BEFORE_DEADLINE_MS = 2_000;
/** How long a watch-list or a list waits for the cache to reach its resourceVersion (the watch cache's 3 s). */
export const FRESHNESS_WAIT_MS = 3_000;
/** A client that reads nothing for this long is closed, as the API server closes unresponsive watchers. */
export const UNRESPONSIVE_MS = 10_000;

interface Watcher {
  closed: boolean;
}

export class WatchHub {
  readonly #source: () => WatchSource | undefined;
  readonly #now: () => number;
  readonly #random: () => number;
  /** Where watchers' events come from: the shared buffer, ranges and run ends (watch-batches.ts). */
  readonly #batches: WatchBatches;
  readonly #queues: WatchQueues;
  readonly #caps: WatcherCaps;
  readonly #admission: ReadAdmission;
  #watchers = new Set<Watcher>();
  /** Idle watchers wait here for the next change or their own bookmark or deadline. */
  readonly #wakeups: WatchWakeups;
  /** The read ahead for the watchers a notify wakes (WatchBatches.prepare), one at a time. */
  #preparing: Promise<void> = Promise.resolve();
  /** When the idle watchers were last woken for a change, and whether a wake is due (coalesceMs). */
  #lastWakeAt = Number.NEGATIVE_INFINITY;
  #wakeDue = false;
  #changed!: Promise<void>;
  #wake!: () => void;

  readonly #unresponsiveMs: number;
  /** Events parsed and frames encoded, over every watcher: the work F12 shares, for tests and benchmarks. */
  readonly counters: FrameCounters = { parsed: 0, framed: 0 };
  #writes = 0;
  /** Watchers this hub closed itself, by why (each also logged): for operators, tests and benchmarks. */
  readonly closed = { unresponsive: 0, overBudget: 0 };

  constructor(
    source: () => WatchSource | undefined,
    options: {
      now?: () => number;
      random?: () => number;
      unresponsiveMs?: number;
      /** The informer object's heavy-read admission, shared with its lists. */
      admission?: ReadAdmission;
      caps?: WatcherCaps;
      queues?: WatchQueues;
    } = {},
  ) {
    this.#source = source;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#unresponsiveMs = options.unresponsiveMs ?? UNRESPONSIVE_MS;
    this.#admission = options.admission ?? new ReadAdmission();
    this.#caps = options.caps ?? new WatcherCaps();
    this.#queues = options.queues ?? new WatchQueues();
    this.#batches = new WatchBatches(source, this.counters);
    this.#wakeups = new WatchWakeups(this.#now);
    this.#renew();
  }

  get watchers(): number {
    return this.#watchers.size;
  }

  /** Bytes of bodies in the shared buffer now. */
  get bufferedBytes(): number {
    return this.#batches.bufferedBytes;
  }

  /**
   * What fanning out cost, over every watcher (tests assert it: issue 28): chunks written to their
   * queues, and next batches that needed a read or a wait of the watcher's own.
   */
  get fanout(): { writes: number; awaited: number } {
    return { writes: this.#writes, awaited: this.#batches.awaited };
  }

  /** Bytes queued for all watchers' clients now. */
  get queuedBytes(): number {
    return this.#queues.totalBytes;
  }

  /** The log grew (or the cache advanced): wake the watchers. */
  notify(): void {
    this.#wake();
    this.#renew();
    // The idle watchers wake once what they will all read is read (one log read, one run end, one
    // range for all), so each takes it without a wait of its own. Nobody watching, nothing is read.
    if (this.#watchers.size === 0 || this.#wakeDue) return;
    // Changes that come faster than the watchers' wakes are fanned out together (coalesceMs).
    this.#wakeDue = true;
    const wait = this.#lastWakeAt + coalesceMs(this.#watchers.size) - this.#now();
    if (wait <= 0) this.#wakeWatchers();
    else setTimeout(() => this.#wakeWatchers(), wait);
  }

  #wakeWatchers(): void {
    this.#wakeDue = false;
    this.#lastWakeAt = this.#now();
    this.#preparing = this.#preparing
      .then(() => this.#batches.prepare())
      .catch((error: unknown) => logger.warn("watch hub could not read ahead for its watchers: each reads for itself", { error: errorText(error) }))
      .then(() => this.#wakeups.notify());
  }

  /** Resolves at the next `notify` (the log grew, the cache advanced), or after `waitMs`. */
  async changed(waitMs: number): Promise<void> {
    await within(this.#changed, waitMs, undefined);
  }

  /** Ends every stream (the informer is going away or being reconfigured). */
  closeAll(): void {
    for (const watcher of this.#watchers) watcher.closed = true;
    this.notify();
    this.#wakeups.notify(); // at once: they read nothing more
  }

  /** Opens a watch (tryOpen) or throws its refusal. */
  open(request: WatchRequest): ReadableStream<Uint8Array> {
    const opened = this.tryOpen(request);
    if (isRefusal(opened)) throw new Error(opened.message);
    return opened.stream;
  }

  /** Why a watch of `request` would be refused by this hub's caps now (none: it would open), taking nothing. */
  refusal(request: WatchRequest): Refusal | undefined {
    return this.#caps.refusal(request.principal ?? ANONYMOUS_OWNER);
  }

  /**
   * Opens a watch, or refuses it at once when its credential or this object has too many open, or
   * when it needs a listing and the heavy-read queue is full: nothing is streamed then. `admitted`:
   * the listing as admitted elsewhere (a relay's, by its informer's admission: watch-relay.ts).
   */
  tryOpen(request: WatchRequest, admitted?: AdmittedListing): WatchOpened {
    const owner = request.principal ?? ANONYMOUS_OWNER;
    const place = this.#caps.take(owner);
    if (isRefusal(place)) {
      admitted?.end();
      return place;
    }
    let listing = admitted;
    if (!listing && needsListing(request)) {
      const slot = this.#admission.enter(owner);
      if (!slot) {
        place.release();
        return { refused: true, message: HEAVY_READ_SHED_MESSAGE, retryAfterSeconds: HEAVY_READ_RETRY_AFTER_SECONDS };
      }
      const turns = new ListingTurns(this.#admission, owner, slot);
      listing = {
        listAt: (query, from) => turns.page(async () => (await this.#source()?.listAt(query, from)) ?? { expired: true }),
        end: () => turns.end(),
      };
    }
    const watcher: Watcher = { closed: false };
    this.#watchers.add(watcher);
    const queue = this.#queues.create(() => {
      watcher.closed = true; // over the byte budget (watch-queues.ts)
      this.#closedBy("overBudget", request);
      this.notify();
    });
    const writer = queue.writer;
    writer.closed.catch(() => {
      watcher.closed = true; // the client went away
      this.notify();
    });
    void this.#run(watcher, request, queue, listing)
      // After the 200 an error can only be told in the stream: one ERROR event with a 500 Status, as
      // the API server ends a watch that fails (a clean end would have the client re-watch into the
      // same failure, unaware).
      .catch((error: unknown) => {
        logger.error("watch failed", { resource: request.info.plural, error: errorText(error) });
        if (!watcher.closed) writer.write(new TextEncoder().encode(errorFrame(statusErrors.internal(errorText(error)).status))).catch(() => {});
      })
      .finally(() => {
        place.release();
        // A turn still held (the stream ended before its listing): the next waiter's.
        listing?.end();
        this.#watchers.delete(watcher);
        if (this.#watchers.size === 0) this.#batches.forget();
        writer.close().catch(() => {});
      });
    return { stream: queue.readable };
  }

  /** Counts and logs a watcher this hub closes (a client sees only its stream end). */
  #closedBy(reason: keyof WatchHub["closed"], request: WatchRequest): void {
    this.closed[reason]++;
    logger.info("watch closed", { resource: request.info.plural, reason, credential: request.principal ?? "anonymous", watchers: this.#watchers.size });
  }

  #renew(): void {
    this.#changed = new Promise<void>((resolve) => (this.#wake = resolve));
  }

  async #run(watcher: Watcher, request: WatchRequest, queue: WatchQueue, listing: AdmittedListing | undefined): Promise<void> {
    const writer = queue.writer;
    const encoder = new TextEncoder();
    const framer = new WatchFramer(request.info, request.format, request.includeObject);
    // Log events are not scoped: the namespace (and a fixed name) are checked on each event's key,
    // the selectors on its body.
    const inScope = keyScope(request.namespace, request.fieldSelector);
    const filter = makeFilter({ ...request, namespace: undefined });
    // The server's default keeps its jitter (watches opened together do not all re-watch together);
    // a client's own value is bounded.
    const timeoutSeconds = request.timeoutSeconds === undefined ? 1800 * (1 + this.#random()) : Math.min(request.timeoutSeconds, MAX_WATCH_TIMEOUT_SECONDS);
    const timeoutMs = timeoutSeconds * 1000;
    const deadline = this.#now() + timeoutMs;
    /** When a frame was last queued for this watcher: bookmarks come after a quiet minute. */
    let lastSent = this.#now();
    /** The bookmark before the deadline, if the deadline leaves room for one and it is still to come. */
    let lastBookmarkAt = request.bookmarks && deadline - BOOKMARK_BEFORE_DEADLINE_MS > lastSent ? deadline - BOOKMARK_BEFORE_DEADLINE_MS : undefined;
    /** Queues frames once the stream has room; false when the watcher is gone or unresponsive. */
    const send = async (frames: string | Uint8Array): Promise<boolean> => {
      if (watcher.closed) return false;
      if (writer.desiredSize !== null && writer.desiredSize <= 0) {
        const ready = await within(writer.ready.then(() => true, () => false), this.#unresponsiveMs, false);
        if (!ready || watcher.closed) {
          // Unresponsive: end its stream now, normally, dropping what it did not take, as the API
          // server closes such a watcher (facts §6); the client re-watches from its last RV.
          if (!watcher.closed) {
            this.#closedBy("unresponsive", request);
            queue.end();
          }
          watcher.closed = true;
          return false;
        }
      }
      this.#writes++;
      queue.write(typeof frames === "string" ? encoder.encode(frames) : frames).catch(() => (watcher.closed = true));
      lastSent = this.#now();
      return true;
    };
    const incarnation = this.#source()?.incarnation;
    const start = await watchStart({ source: this.#source, reaches: (rv) => this.reaches(rv), now: this.#now }, request, framer, send, listing);
    if (start === undefined) return;
    let { skipUpTo } = start;
    let cursor: Cursor = { after: start.next, skip: 0 };
    // The resourceVersion this watcher stands at, for the message of a 410 (it names RVs, never log positions).
    let standsAt = request.resourceVersion ?? "";
    /**
     * The highest RV the client holds from this stream: its start RV or listing's, then each run's
     * last (runs are sorted; a filtered-out change counts, the client is complete up to it). No
     * bookmark goes below it (review N3): in a relay the cache RV is its snapshot's, which may trail
     * the run ends and the start position read from the informer live.
     */
    let shown = start.shown ?? "";

    while (!watcher.closed) {
      const now = this.#now();
      if (now >= deadline) return;
      // The informer was deleted and re-created under this name: this watcher's position is in a log
      // that is gone. Expired, so its client relists from the new one.
      const current = this.#source();
      if (current?.incarnation !== incarnation) return void (await send(await expiredFrame(this.#source(), standsAt)));
      // While skipping, the first run alone: the client may have seen part of it, never of a later one.
      const next = this.#batches.next(cursor, skipUpTo !== undefined);
      const batch = next instanceof Promise ? await next : next;
      if (watcher.closed) return;
      if (batch === "expired") return void (await send(await expiredFrame(this.#source(), standsAt)));
      if (batch === undefined) {
        // Caught up with the log: the cache's RV is where this watcher stands, whatever it filtered
        // out — or what it was shown, where a relay's snapshot trails that.
        const lastBookmarkDue = lastBookmarkAt !== undefined && now >= lastBookmarkAt;
        if (request.bookmarks && (now - lastSent >= BOOKMARK_INTERVAL_MS || lastBookmarkDue)) {
          if (lastBookmarkDue) lastBookmarkAt = undefined;
          if (current && !(await send(framer.bookmark(laterOf(current.cacheResourceVersion(), shown))))) return;
        }
        const nextBookmark = request.bookmarks ? Math.min(lastSent + BOOKMARK_INTERVAL_MS, lastBookmarkAt ?? deadline) : deadline;
        await this.#wakeups.until(Math.min(deadline, nextBookmark));
        continue;
      }
      const { range } = batch;
      cursor = batch.next;
      standsAt = range.ordered.at(-1)?.resourceVersion ?? standsAt;
      shown = laterOf(shown, standsAt);
      if (framer.plain && !filter && !inScope && skipUpTo === undefined) {
        // The common case: every such watcher at this position gets the same bytes, encoded once.
        for (const chunk of range.chunks()) if (!(await send(chunk))) return;
      } else {
        let frames = "";
        // One encoding for the batch (`now` is the batch's): not an object per event per watcher.
        let shared = framer.sharedEncoding(now);
        for (let i = 0; i < range.ordered.length; i++) {
          const event = range.ordered[i]!;
          if (inScope && !inScope(event.key)) continue;
          if (skipUpTo !== undefined && seenBefore(event, skipUpTo)) continue;
          const shown = translate(event, filter, range.parsed(i));
          if (!shown) continue;
          if (shown.own && shared) frames += range.frame(i, shown.type, shared);
          else {
            this.counters.framed++;
            frames += framer.frame(shown.type, shown.object, now, shown.own ? () => range.parsed(i).object() : undefined);
            shared ??= framer.sharedEncoding(now); // a Table watcher's frames are shared after its first
          }
          if (frames.length >= CHUNK_CHARS) {
            if (!(await send(frames))) return;
            frames = "";
          }
        }
        if (frames !== "" && !(await send(frames))) return;
      }
      // Past the run the start RV fell in, the client saw nothing: the skip (and its per-watcher path)
      // ends, whatever resourceVersions follow (a relist may add objects last changed long ago).
      if (cursor.end === undefined) skipUpTo = undefined;
    }
  }

  /**
   * Whether the cache reaches `rv` within `waitMs` (the log's growth wakes the wait): a watch-list's
   * start, and a `/k8s` list ahead of the cache (InformerObject.awaitResourceVersion).
   */
  async reaches(rv: string, waitMs = FRESHNESS_WAIT_MS): Promise<boolean> {
    const until = this.#now() + waitMs;
    for (;;) {
      const current = this.#source()?.cacheResourceVersion();
      if (current !== undefined && compareResourceVersions(current, rv) >= 0) return true;
      const left = until - this.#now();
      if (left <= 0) return false;
      await within(this.#changed, left, undefined);
    }
  }
}

/** A hub's watchers are woken for changes at most this often, at most (coalesceMs). */
export const MAX_COALESCE_MS = 200;
/** Watchers a hub wakes for each change however fast changes come (coalesceMs). */
const WAKE_EVERY_CHANGE_UP_TO = 32;

/**
 * How long after its last wake a hub's watchers are woken again for a change: 0 for a few
 * watchers, then 1 ms per watcher beyond WAKE_EVERY_CHANGE_UP_TO, at most MAX_COALESCE_MS. Why: a
 * chunk written to a watcher costs the runtime ~100 µs of CPU whatever it holds (the stream, the
 * RPC to the Worker, the response write: `npm run bench -- --only k8s`, BENCHMARKS.md issue 28),
 * so one event per chunk at 20 changes/s is 2 cores at 1,000 watchers. Woken at most every 1 ms
 * per watcher, the fan-out takes at most ~10% of a hub's thread, whatever the rate of changes: what
 * came meanwhile goes out in one chunk, one range of runs (WatchBatches.next). A change waits
 * MAX_COALESCE_MS at most. kube-apiserver sends each event at once, but encodes it once and its
 * per-watcher cost is a channel send (facts §6); ours is a stream write.
 */
export function coalesceMs(watchers: number): number {
  return Math.min(MAX_COALESCE_MS, Math.max(0, watchers - WAKE_EVERY_CHANGE_UP_TO));
}

/** The later of two resourceVersions ("" is before any). */
function laterOf(a: string, b: string): string {
  return compareResourceVersions(a, b) >= 0 ? a : b;
}

/** `promise`'s value, or `fallback` after `ms`; the timer is cleared either way (watchers wait often). */
async function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer!: ReturnType<typeof setTimeout>;
  const expired = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether a client that stands at `skipUpTo` saw `event` already: anything below it, and at it
 * anything but a relist's inferred deletes, which share that RV (process-deltas.ts): of those it
 * may have seen only some, so all are sent again (rv-positions.ts; a repeated delete is a no-op).
 */
function seenBefore(event: Pick<LogEvent, "resourceVersion" | "finalStateUnknown">, skipUpTo: string): boolean {
  const order = compareResourceVersions(event.resourceVersion, skipUpTo);
  return order < 0 || (order === 0 && !event.finalStateUnknown);
}

/**
 * The Reflector as an explicit state machine (client-go reflector.go ListAndWatch; kube-rs
 * watcher.rs `step`). Each call of `step` makes one transition and says when the next is due; the
 * caller persists the returned state and memory and sleeps in the alarm, never here.
 *
 *   idle ──(choose RV and page size)──▶ listing{page 1}
 *   listing{page 1} ──(clear staging: every page 1 starts the Replace over)──▶ fetch page 1
 *   listing ──page with continue──▶ listing{next page}
 *   listing ──last page──▶ commit Replace + lastSyncRV atomically ──▶ watching
 *   listing ──410 on a continue page──▶ listing{page 1, no limit}         (pager full-list fallback)
 *   listing ──other error on a continue page──▶ listing{same page} after backoff / Retry-After
 *   listing ──410 / too-large RV on page 1──▶ idle at RV "" now, once; then with backoff
 *   listing ──other error on page 1──▶ idle after backoff
 *   watching ──events──▶ apply deltas + lastSyncRV atomically, stay watching
 *   watching ──clean close──▶ watching now (re-watch from lastSyncRV, no relist)
 *   watching ──close < 1 s with no events or bookmarks──▶ idle after backoff (VeryShortWatch)
 *   watching ──ERROR 410 / other ERROR / failed request / malformed line──▶ idle after backoff
 *                                                                          (relist at lastSyncRV)
 *   watching ──refused / 429 / stream broke / idle timer──▶ watching after backoff
 *   watching ──first bookmark, nothing keeps it awake──▶ sleeping until maxLagSeconds later
 *   watching ──clean close of a watch that delivered nothing, nothing keeps it awake──▶ sleeping
 *   sleeping ──its time: the next window, a watch from lastSyncRV (no relist)──▶ as watching does
 *
 * The sleeping transitions exist only with `maxLagSeconds` > 0; when a window ends, and what keeps
 * an informer awake, is watch-windows.ts's to decide. What the reflector remembers besides its
 * state (errors, counters, backoff) is reflector-memory.ts's, the wait itself backoff.ts's, and a
 * watch stream is read in batches by watch-batch-reader.ts.
 *
 * With `listInPages` (set once slices were killed while listing, objects/slice-kills.ts) every list
 * is at RV "" with the page size, page 1 of a persisted listing state and the expired-continue
 * fallback included: a list at RV "0" is one answer from the watch cache (which ignores `limit`)
 * and a list at an RV without limit is one answer too, so a slice killed during either starts it
 * over; a paged list persists each page's token and a killed slice resumes at its page.
 *
 * Guarantees: no RV exists before a list (a state carries only the data valid in it); bookmarks
 * advance the RV and are never stored; events and the RV they bring are handed to the sink in one
 * call, which writes them in one transaction (DESIGN invariant 1); each relist is preceded by a
 * backoff wait, as client-go's Run loop does (reference §2.2.3). Page 1 is never resumed: a state
 * persisted as listing{page 1} (an eviction, a crash or a reconfiguration mid-page) fetches a new
 * snapshot, so what the old one staged or applied is discarded or tombstoned by the new Replace.
 * Only API-server answers and transport failures are handled here; a failure of the sink (our
 * storage) is thrown to the caller, which backs off without mistaking it for a watch problem.
 *
 * Where we differ from client-go:
 * - A stream cut mid-event re-watches from the last applied RV after a backoff instead of
 *   relisting: the RV is still valid (only the transport broke), the server replays everything
 *   after it, and a relist of a large resource costs far more. A malformed line relists, as in
 *   client-go: the server (or a proxy) sent something we cannot read, and re-watching from the
 *   same RV would read it again forever.
 * - Our cache outlives the process. A fresh reflector (or a resumed page 1) over a populated cache
 *   lists at RV "" (quorum) instead of "0": a lagging watch cache answering "0" could hand back
 *   states older than the cached ones (updates back in time, tombstones followed by re-adds).
 * - A failed continuation page is retried with its token (client-go's pager starts over); the
 *   token stays valid until it expires, and then the 410 fallback applies.
 */
import type { Clock, Random } from "../clock.ts";
import type { ListerWatcher, WatchStream } from "../kube/client.ts";
import {
  KubeApiError,
  isExpired,
  isTooLargeResourceVersion,
  isTooManyRequests,
  isWatchErrorRetriable,
} from "../kube/errors.ts";
import type { KubeObject, Status, WatchEvent } from "../kube/types.ts";
import { WatchDecodeError } from "../kube/watch-decoder.ts";
import { nextBackoff } from "./backoff.ts";
import { endsAtBookmark, nextWindowAt, sleepsAfterClose, type WindowOptions, windowTimeoutSeconds } from "./watch-windows.ts";
import { relistCauseOf, VeryShortWatchError, WatchSilentError } from "./reflector-counters.ts";
import { count, countRelist, dropped, type ReflectorMemory, withError } from "./reflector-memory.ts";
import { WatchBatchReader } from "./watch-batch-reader.ts";

export type ReflectorState =
  | { kind: "idle" }
  | {
      kind: "listing";
      /** The RV asked for on page 1 (continuation pages carry none). */
      listRv: string;
      limit: number | undefined;
      /** Token of the next page; absent for page 1. */
      continue?: string;
      /** The RV of page 1, which every later page shares (consistent snapshot). */
      snapshotRv?: string;
    }
  | { kind: "watching" }
  /** Between watch windows (watch-windows.ts): no watch open, the cache current up to lastSyncRV. */
  | { kind: "sleeping" };

/** Where listed objects and watch events go (the DeltaFIFO, through the informer). */
export interface ReflectorSink {
  lastSyncResourceVersion(): string;
  /** Whether the cache (or the queue) holds objects: a relist over it must not go back in time. */
  hasCachedObjects(): boolean;
  /** A list is starting: forget anything staged by an unfinished one. */
  beginList(): void;
  /** Stages listed objects (idempotent per key). */
  stage(objects: KubeObject[]): void;
  /** Commits the staged list as a Replace, sets lastSyncRV and persists `next`, in one transaction. */
  commitList(resourceVersion: string, next: { state: ReflectorState; memory: ReflectorMemory }): void;
  /** Queues watch events and sets lastSyncRV, in one transaction (`events` may be empty: a bookmark). */
  applyWatch(events: WatchEvent[], resourceVersion: string): void;
  /** A watch opened: persists `memory` (when it started, restarts) so status shows the live watch. */
  watchOpened(memory: ReflectorMemory): void;
}

export interface ReflectorOptions extends WindowOptions {
  /** Page size of paginated lists (client-go pager default 500). */
  pageSize: number;
  /** Every list in pages at RV "" (see the header): less work per alarm, resumable page by page. */
  listInPages?: boolean;
  /** Fixed server watch timeout; by default random in [300, 600) s (reference §2.1.2). */
  watchTimeoutSeconds?: number;
}

export interface StepContext {
  lw: ListerWatcher;
  sink: ReflectorSink;
  clock: Clock;
  random: Random;
  options: ReflectorOptions;
  /** The end of this alarm's slice: a watch stops here and resumes at the next alarm. */
  deadline: number;
  signal?: AbortSignal;
}

export interface StepResult {
  state: ReflectorState;
  memory: ReflectorMemory;
  /** When the next step is due (ms since epoch); now or earlier means at once. */
  wakeAt: number;
}

export const MIN_WATCH_TIMEOUT_SECONDS = 300;
/** A watch closing sooner than this with no events is an error (client-go VeryShortWatchError). */
export const VERY_SHORT_WATCH_MS = 1_000;
/** Past the server's own timeout, a silent watch is a dead connection (reference §6.6; kube-rs uses 5 s). */
export const WATCH_IDLE_MARGIN_MS = 15_000;
/** A server's Retry-After is honoured up to this; a larger one is a misconfiguration, not a plan. */
export const MAX_RETRY_AFTER_SECONDS = 600;

export async function step(state: ReflectorState, memory: ReflectorMemory, ctx: StepContext): Promise<StepResult> {
  switch (state.kind) {
    case "idle":
      return startList(memory, ctx);
    case "listing":
      return listPage(state, memory, ctx);
    case "watching":
    case "sleeping": // its time came: the next window, a watch like any other
      return watch(memory, ctx);
    default: {
      const unknown: never = state;
      throw new Error(`unknown reflector state ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * client-go relistResourceVersion: "" after an expired/too-large RV, "0" before any sync, else the
 * last RV — except that "0" over a populated cache becomes "" (see the header: our cache outlives
 * the reflector's RV).
 */
export function relistResourceVersion(memory: ReflectorMemory, lastSyncResourceVersion: string, cachePopulated: boolean): string {
  if (memory.rvUnavailable) return "";
  if (lastSyncResourceVersion === "") return cachePopulated ? "" : "0";
  return lastSyncResourceVersion;
}

/**
 * Page size for a list at `rv` (reflector.go list): keep paging once the server showed it pages RV
 * "0" lists; no `limit` at a specific RV, so the watch cache serves it not-older-than instead of as
 * an exact (compactable) snapshot (reference §1.2.4); else the configured page size.
 */
export function listLimit(memory: ReflectorMemory, rv: string, pageSize: number): number | undefined {
  if (memory.paginatedResult) return pageSize;
  if (rv !== "" && rv !== "0") return undefined;
  return pageSize;
}

function startList(memory: ReflectorMemory, ctx: StepContext): StepResult {
  const lastSync = ctx.sink.lastSyncResourceVersion();
  const listRv = ctx.options.listInPages ? "" : relistResourceVersion(memory, lastSync, ctx.sink.hasCachedObjects());
  return {
    state: { kind: "listing", listRv, limit: ctx.options.listInPages ? ctx.options.pageSize : listLimit(memory, listRv, ctx.options.pageSize) },
    memory: lastSync === "" ? memory : countRelist(memory),
    wakeAt: ctx.clock.now(),
  };
}

async function listPage(
  state: Extract<ReflectorState, { kind: "listing" }>,
  memory: ReflectorMemory,
  ctx: StepContext,
): Promise<StepResult> {
  const now = () => ctx.clock.now();
  if (state.continue === undefined) {
    // Page 1, first try or not: a new snapshot, so whatever an interrupted attempt staged (or, for
    // the initial list, applied) must be replaced by this list as a whole, never mixed into it.
    ctx.sink.beginList();
    if (state.listRv === "0" && ctx.sink.hasCachedObjects()) state = { ...state, listRv: "" };
    // A state persisted before the shrink, or the expired-continue fallback: in pages too.
    if (ctx.options.listInPages) state = { ...state, listRv: "", limit: ctx.options.pageSize };
  }
  let page;
  try {
    page = await ctx.lw.listPage(
      state.continue === undefined
        ? { resourceVersion: state.listRv, ...(state.limit === undefined ? {} : { limit: state.limit }) }
        : { continue: state.continue, ...(state.limit === undefined ? {} : { limit: state.limit }) },
      (objects) => ctx.sink.stage(objects),
      ctx.signal,
    );
  } catch (error) {
    if (!isApiFailure(error)) throw error;
    if (state.continue !== undefined && isExpired(error)) {
      // The continue token outlived compaction: one full list at the original RV, without limit
      // (pager FullListIfExpired). Page 1 drops the staged pages; the new list restages everything.
      return {
        state: { kind: "listing", listRv: state.listRv, limit: undefined },
        memory: withError(memory, error, now()),
        wakeAt: now(),
      };
    }
    // Any other failure of page N: the snapshot is still there behind the token, so retry page N.
    if (state.continue !== undefined) return backoff(state, memory, error, ctx);
    if ((isExpired(error) || isTooLargeResourceVersion(error)) && !memory.rvUnavailable) {
      // Our RV is gone or ahead of this server: retry at once with RV "" (a consistent read).
      return {
        state: { kind: "idle" },
        memory: { ...withError(memory, error, now()), rvUnavailable: true, relistCause: relistCauseOf(error) },
        wakeAt: now(),
      };
    }
    return backoff({ kind: "idle" }, memory, error, ctx);
  }
  const snapshotRv = state.snapshotRv ?? page.resourceVersion;
  memory = count(memory, (c) => ({ ...c, listPages: c.listPages + 1 }));
  if (page.continue !== undefined) {
    return {
      state: { kind: "listing", listRv: state.listRv, limit: state.limit, continue: page.continue, snapshotRv },
      memory,
      wakeAt: now(),
    };
  }
  const paginated = state.snapshotRv !== undefined;
  const next = {
    state: { kind: "watching" } as const,
    memory: {
      ...memory,
      rvUnavailable: false,
      paginatedResult: memory.paginatedResult || (state.listRv === "0" && paginated),
      lastError: null,
    },
  };
  ctx.sink.commitList(snapshotRv, next);
  return { ...next, wakeAt: now() };
}

async function watch(memory: ReflectorMemory, ctx: StepContext): Promise<StepResult> {
  const { clock, sink } = ctx;
  const startRv = sink.lastSyncResourceVersion();
  const timeoutSeconds = windowTimeoutSeconds(
    ctx.options,
    ctx.options.watchTimeoutSeconds ?? Math.floor(MIN_WATCH_TIMEOUT_SECONDS + ctx.random() * MIN_WATCH_TIMEOUT_SECONDS),
  );
  const started = clock.now();
  let stream: WatchStream;
  try {
    stream = await ctx.lw.watch({ resourceVersion: startRv, timeoutSeconds }, ctx.signal);
  } catch (error) {
    if (isWatchErrorRetriable(error)) return backoff({ kind: "watching" }, memory, error, ctx);
    return backoff({ kind: "idle" }, memory, error, ctx);
  }
  // The API server answered and the watch is open: an earlier failure to reach it no longer stands.
  // (A list clears it too; a watch resumed after an outage must, or it would be reported until the
  // next relist, which a healthy watch may never need.)
  memory = count(
    {
      ...memory,
      watchSince: started,
      watchRestarts: memory.watchRestarts + (memory.watchSince === null ? 0 : 1),
      lastError: null,
      lastErrorReason: null,
      lastErrorAt: null,
    },
    (c) => ({ ...c, watchStarts: c.watchStarts + 1 }),
  );
  sink.watchOpened(memory);
  const sessionEnd = Math.min(ctx.deadline, started + timeoutSeconds * 1000 + WATCH_IDLE_MARGIN_MS);
  // Synthetic ADDED events of a watch from RV "" or "0" are not in RV order: advance the RV only
  // once a non-ADDED event arrives (client-go commit ef73fc020, reference §2.6.5).
  let rvOrdered = startRv !== "" && startRv !== "0";
  let rv = startRv;
  /** Events received, bookmarks included (client-go's very-short-watch check counts them too). */
  let received = 0;
  /** Events delivered to the sink, bookmarks not included. */
  let delivered = 0;
  const reader = new WatchBatchReader(stream, clock);
  try {
    for (;;) {
      const batch = await reader.next(sessionEnd);
      if (batch === "deadline") {
        stream.cancel();
        if (sessionEnd >= ctx.deadline) return { state: { kind: "watching" }, memory, wakeAt: clock.now() };
        return backoff({ kind: "watching" }, dropped(memory), new WatchSilentError("watch went silent past its timeout (dead connection)"), ctx);
      }
      if (batch === null) {
        if (received === 0 && clock.now() - started < VERY_SHORT_WATCH_MS) {
          return backoff({ kind: "idle" }, dropped(memory), new VeryShortWatchError("very short watch: the watch closed at once without events"), ctx);
        }
        return sleepsAfterClose(ctx.options, delivered) ? asleep(memory, ctx) : { state: { kind: "watching" }, memory, wakeAt: clock.now() };
      }
      const apply: WatchEvent[] = [];
      let failure: KubeApiError | undefined;
      let bookmarked = false;
      for (const event of batch) {
        if (event.type === "ERROR") {
          failure = KubeApiError.fromStatus(event.object as unknown as Status);
          break;
        }
        if (event.type !== "ADDED") rvOrdered = true;
        if (event.type !== "BOOKMARK") apply.push(event);
        else bookmarked = true;
        received++;
        const eventRv = event.object.metadata?.resourceVersion;
        if (rvOrdered && typeof eventRv === "string" && eventRv !== "") rv = eventRv;
      }
      if (apply.length > 0 || rv !== sink.lastSyncResourceVersion()) sink.applyWatch(apply, rv);
      delivered += apply.length;
      if (failure) {
        stream.cancel();
        // 429: slow down and re-watch; 410 and anything else: relist at lastSyncRV (not at "":
        // a list at an RV is not-older-than, so it never goes back in time, reference §2.4.3).
        const next = isTooManyRequests(failure) ? "watching" : "idle";
        return backoff({ kind: next }, dropped(memory), failure, ctx);
      }
      if (bookmarked && endsAtBookmark(ctx.options)) {
        stream.cancel();
        return asleep(memory, ctx);
      }
    }
  } catch (error) {
    stream.cancel();
    if (!isApiFailure(error)) throw error;
    // A line we cannot read would be read again from the same RV: relist instead (client-go too).
    const next = error instanceof WatchDecodeError ? "idle" : "watching";
    return backoff({ kind: next }, dropped(memory), error, ctx);
  }
}

/** The window ended: no watch open until the next (watch-windows.ts). */
function asleep(memory: ReflectorMemory, ctx: StepContext): StepResult {
  return { state: { kind: "sleeping" }, memory, wakeAt: nextWindowAt(ctx.options, ctx.clock.now()) };
}

/** An answer of the API server or a failure to reach it, as opposed to a failure of our own storage. */
function isApiFailure(error: unknown): boolean {
  return error instanceof KubeApiError || error instanceof WatchDecodeError;
}

/** Waits as the backoff says, or as long as the server asked (Retry-After), whichever is longer. */
function backoff(state: ReflectorState, memory: ReflectorMemory, error: unknown, ctx: StepContext): StepResult {
  const now = ctx.clock.now();
  const { waitMs, state: backoffState } = nextBackoff(memory.backoff, now, ctx.random);
  const retryAfterMs =
    error instanceof KubeApiError && error.retryAfterSeconds !== undefined
      ? Math.min(error.retryAfterSeconds, MAX_RETRY_AFTER_SECONDS) * 1000
      : 0;
  const cause = state.kind === "idle" ? { relistCause: relistCauseOf(error) } : {};
  return {
    state,
    memory: { ...withError(memory, error, now), ...cause, backoff: backoffState },
    wakeAt: now + Math.max(waitMs, retryAfterMs),
  };
}

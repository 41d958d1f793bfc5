/**
 * Where a `/k8s` watcher's stream starts (watch-hub.ts): after its resourceVersion, or — a
 * watch-list — after the synthetic ADDED events of one consistent list, as the watch cache starts
 * its watchers (kubernetes-api-server-facts.md §4, §6).
 *
 * Guarantees:
 * - A start RV the log no longer covers, or of the cluster's earlier API server, is one ERROR 410
 *   Expired event naming the oldest RV still held, as the watch cache words it.
 * - Initial events come from one consistent list (cache/versioned-list.ts) at least as new as the
 *   requested RV (waited for up to FRESHNESS_WAIT_MS, else the 504-like error event), a page at a
 *   time with the event loop yielded between pages, closed by the initial-events-end bookmark at the
 *   list's RV when bookmarks were asked. A listing of many objects reads each page in its turn of
 *   the informer's heavy-read admission (`AdmittedListing`: the slot is parked while the page is
 *   written to a slow client, review N1), and gives its turn back when the listing ends.
 *   The list's RV is the one its first page was read at (WatchSource.listAt), never the RV of a
 *   relay's snapshot taken earlier (review N2): the bookmark is at or after every listed object's RV.
 * - The start says the RV the stream stands at once started (`shown`: the start RV, or the listing's),
 *   below which no later bookmark may go (watch-hub.ts).
 */
import { SCAN_PER_TURN, type VersionedQuery } from "../cache/versioned-list.ts";
import { exactKey } from "../cache/key-scope.ts";
import { yieldToEventLoop } from "../clock.ts";
import { statusErrors } from "./status.ts";
import { errorFrame, type WatchFramer } from "./watch-events.ts";
import type { AdmittedListing, ListedPage, WatchRequest, WatchSource } from "./watch-source.ts";

const INITIAL_PAGE = 500;

/** What a start reads of the hub. */
export interface StartingHub {
  source(): WatchSource | undefined;
  /** Whether the cache reaches `rv` within the freshness wait (WatchHub.reaches). */
  reaches(rv: string): Promise<boolean>;
  now(): number;
}

/**
 * Where a watcher's changes start: after its resourceVersion, or — for initial events — after the
 * synthetic ADDED events of one consistent list at least as new as its resourceVersion (sent here,
 * with the initial-events-end bookmark at the list's RV when asked). Undefined when the stream
 * already ended (an ERROR event, or the client left).
 */
export async function watchStart(
  hub: StartingHub,
  request: WatchRequest,
  framer: WatchFramer,
  send: (frames: string) => Promise<boolean>,
  listing: AdmittedListing | undefined,
): Promise<WatchStarted | undefined> {
  const rv = request.resourceVersion === "" || request.resourceVersion === "0" ? undefined : request.resourceVersion;
  // Another etcd's revision: no wait makes it comparable; expired, as a plain watch from it is (F16).
  if (request.initialEvents && rv !== undefined && (await hub.source()?.fromEarlierServer(rv))) return void (await send(await expiredFrame(hub.source(), rv)));
  if (request.initialEvents && rv !== undefined && !(await hub.reaches(rv))) {
    // As the watch cache does after waiting: the error as the stream's one event (facts §3 504).
    return void (await send(errorFrame(statusErrors.tooLargeResourceVersion(rv, hub.source()?.cacheResourceVersion() ?? "").status)));
  }
  const source = hub.source();
  if (!source) return void (await send(errorFrame(statusErrors.noSuchResource().status)));
  if (request.initialEvents) {
    // Each page waits its turn among the object's heavy reads (admission.ts); the last frees it.
    try {
      return await sendInitialEvents(hub, request, framer, send, listing);
    } finally {
      listing?.end();
    }
  }
  if (rv === undefined) return { next: source.bounds().tail };
  const position = await source.positionOf(rv);
  if (position === "expired") return void (await send(await expiredFrame(hub.source(), rv)));
  return { next: position.after, shown: rv, ...(position.skipUpTo === undefined ? {} : { skipUpTo: position.skipUpTo }) };
}

/** Where a started watcher's changes start, what of its first run it saw, and the RV it stands at. */
export interface WatchStarted {
  next: number;
  /** Events of the first run at or below it were seen (a start RV inside a run). */
  skipUpTo?: string;
  /** The RV the client holds once started (its start RV, or its listing's); absent: none ("" or "0"). */
  shown?: string;
}

/**
 * The ERROR 410 of a watch the log no longer covers, worded as the watch cache words it: the
 * resourceVersion asked for (or last sent) and the oldest one still held.
 */
export async function expiredFrame(source: WatchSource | undefined, requested: string): Promise<string> {
  const head = source?.bounds().head;
  const oldest = head === undefined ? "" : ((await source!.read(head - 1, 1)).events[0]?.resourceVersion ?? source!.cacheResourceVersion());
  return errorFrame(statusErrors.expiredWatch(requested, oldest).status);
}


/** ADDED for every object of one consistent list, then the initial-events-end bookmark when asked. */
async function sendInitialEvents(
  hub: StartingHub,
  request: WatchRequest,
  framer: WatchFramer,
  send: (frames: string) => Promise<boolean>,
  listing: AdmittedListing | undefined,
): Promise<WatchStarted | undefined> {
  const query: VersionedQuery = {
    ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
    ...(request.labelSelector ? { labelSelector: request.labelSelector } : {}),
    ...(request.fieldSelector ? { fieldSelector: request.fieldSelector } : {}),
    limit: INITIAL_PAGE,
    // A selector scan yields between parts too: a page ends after this many keys (B3).
    maxScan: SCAN_PER_TURN,
  };
  const source = hub.source();
  if (!source) return void (await send(errorFrame(statusErrors.noSuchResource().status)));
  // The RV read before the listing is the fallback of a source whose pages do not say theirs.
  const before = source.cacheResourceVersion();
  const listAt = async (from?: { at: number; after: string }): Promise<ListedPage> =>
    (await (listing ? listing.listAt(query, from) : hub.source()?.listAt(query, from))) ?? { expired: true };
  let page = await listAt();
  const at = page.expired ? 0 : page.at;
  const listRv = page.resourceVersion ?? before;
  for (;;) {
    if (page.expired) return void (await send(await expiredFrame(hub.source(), request.resourceVersion ?? "")));
    const frames = page.items.map((item) => framer.frame("ADDED", item, hub.now())).join("");
    if (frames !== "" && !(await send(frames))) return undefined;
    if (!page.next) break;
    // A page at a time, letting ingest and other reads run between pages (B3).
    await yieldToEventLoop();
    page = await listAt(page.next);
  }
  if (request.bookmarks && !(await send(framer.bookmark(listRv, true)))) return undefined;
  return { next: at, shown: listRv };
}

/**
 * Whether a watch starts with a listing of many objects, a heavy read (admission.ts). One object's
 * initial event (`kubectl get pod x -w`, `kubectl wait`) reads one key: not heavy.
 */
export function needsListing(request: Pick<WatchRequest, "initialEvents" | "namespace" | "fieldSelector">): boolean {
  return request.initialEvents && exactKey(request.namespace, request.fieldSelector) === undefined;
}

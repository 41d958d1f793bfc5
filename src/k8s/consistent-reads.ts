/**
 * Consistent reads: a `/k8s` list or get with no resourceVersion is the most recent data, as
 * kube-apiserver 1.31+ serves it from its watch cache (ConsistentListFromCache: the cache is
 * brought up to etcd's current revision first, so a client reads its own writes). Here the
 * informer's cache is brought up to its upstream API server's current resourceVersion, which one
 * `limit=1` list tells (the apiserver's `getCurrentResourceVersionFromStorage`), before the read.
 *
 * Guarantees:
 * - An informer sleeping between watch windows (maxLagSeconds) is woken by any such read.
 * - A burst of reads shares upstream requests: a read joins the next `limit=1` list that starts
 *   after it arrived (so the RV it waits for is at least the upstream's when it arrived: read-your-
 *   writes holds), and at most one runs per informer, one more queued behind it.
 * - The cache is waited for while it is behind that RV: up to FRESHNESS_WAIT_MS (the watch cache's
 *   3 s), or LIVE_WATCH_GRACE_MS when the informer's watch was already live (a change upstream
 *   reaches a live watch well within it; a resource with no change since only advances at a
 *   bookmark, about a minute apart, so its RV may stay behind a busy cluster's). Still behind with
 *   no live watch after the wait: `behind` (the route's 504 Too large resource version).
 * - An upstream that does not answer the list within CONSISTENT_READ_TIMEOUT_MS (unreachable,
 *   refusing) leaves the cache as it is: the read is answered from it, as before.
 */
import { compareResourceVersions } from "../kube/resource-version.ts";
import { FRESHNESS_WAIT_MS } from "./watch-hub.ts";

/** How long the upstream's `limit=1` list may take before the read goes on without it. */
export const CONSISTENT_READ_TIMEOUT_MS = 3_000;
/** How long a live watch is given to bring a change the cache has not seen yet. */
export const LIVE_WATCH_GRACE_MS = 500;

/** What a consistent read may go on with: the cache's RV; or how far behind the upstream it stayed. */
export type Consistency = { current: string } | { behind: { target: string; current: string } };

/**
 * The upstream's current resourceVersion, read for bursts of callers (the guarantee above):
 * `load` answers undefined when the upstream could not say.
 */
export class UpstreamRevision {
  readonly #load: () => Promise<string | undefined>;
  #running: Promise<string | undefined> | undefined;
  #queued: Promise<string | undefined> | undefined;

  constructor(load: () => Promise<string | undefined>) {
    this.#load = load;
  }

  /** The upstream's resourceVersion from a request that started after this call. */
  current(): Promise<string | undefined> {
    if (this.#queued) return this.#queued;
    if (!this.#running) return this.#run();
    const queued = this.#running.then(() => {
      this.#queued = undefined;
      return this.#run();
    });
    this.#queued = queued;
    return queued;
  }

  #run(): Promise<string | undefined> {
    const running: Promise<string | undefined> = this.#load()
      .catch(() => undefined)
      .finally(() => {
        if (this.#running === running) this.#running = undefined;
      });
    this.#running = running;
    return running;
  }
}

/** What `awaitConsistency` reads of the informer and its watchers. */
export interface ConsistencyDeps {
  /** Whether the cache is synced: an unsynced one answers 429 anyway, and is not waited for. */
  synced(): boolean;
  /** The cache's resourceVersion now. */
  cacheResourceVersion(): string;
  /** Whether the informer's upstream watch is open and live. */
  watchLive(): boolean;
  /** Opens the next watch window now if the informer sleeps between them. */
  wakeIfSleeping(): Promise<void>;
  upstream: UpstreamRevision;
  /** Waits up to `waitMs` for the cache to reach `rv`. */
  reaches(rv: string, waitMs: number): Promise<void>;
}

export async function awaitConsistency(d: ConsistencyDeps): Promise<Consistency> {
  if (!d.synced()) return { current: d.cacheResourceVersion() };
  const wasLive = d.watchLive();
  await d.wakeIfSleeping();
  const target = await d.upstream.current();
  if (target === undefined || compareResourceVersions(target, d.cacheResourceVersion()) <= 0) return { current: d.cacheResourceVersion() };
  await d.reaches(target, wasLive ? LIVE_WATCH_GRACE_MS : FRESHNESS_WAIT_MS);
  const current = d.cacheResourceVersion();
  if (compareResourceVersions(target, current) <= 0 || d.watchLive()) return { current };
  return { behind: { target, current } };
}

/**
 * One informer's `/k8s` watchers: its own watch hub (watch-hub.ts), the watch relays that serve
 * watchers off its thread (watch-relay.ts RelayHost), and the waits of lists ahead of the cache.
 * InformerObject routes its watch and relay RPCs here and tells it when the log grows.
 *
 * Guarantees:
 * - An unsynced cache opens no watch, here or in a relay (review F5): its partial or stale objects
 *   are no initial state; the answer says why (`notReady`).
 * - While a watcher or a polling relay wants live events, the informer counts as watched (it stays
 *   awake between watch windows, cache/watch-windows.ts), and one sleeping between windows is woken
 *   when a watch opens, a relay opens or polls, a list waits for a resourceVersion, a read with no
 *   resourceVersion asks for consistency (consistent-reads.ts), or the alarm
 *   re-arms (a watch may open just as a window ends): `wake` then brings the alarm forward.
 * - `closeAll` ends every watcher, its own and the relays', cleanly: what they were promised no
 *   longer holds, and their clients re-watch (and relist on a 410).
 * - Every read is of the informer served at that moment: none once it is gone.
 */
import { ok, type Result } from "../errors.ts";
import type { ReadAdmission } from "./admission.ts";
import { readinessOfInformer, type WithInformer } from "./cache-reads.ts";
import { watchSourceOf } from "./informer-watch-source.ts";
import { awaitConsistency, type Consistency, type UpstreamRevision } from "./consistent-reads.ts";
import type { Freshness } from "./list-consistency.ts";
import { FRESHNESS_WAIT_MS, WatchHub } from "./watch-hub.ts";
import { type WatchOpening, type WatchParams, watchRequestOf } from "./watch-params.ts";
import type { PlaceReport } from "./relay-places.ts";
import { type RelayAnswer, type RelayCall, RelayHost, type RelayOpenAsk, type RelayOpening, type RelaySnapshot } from "./watch-relay.ts";
import type { WatchSource } from "./watch-source.ts";
import { isRefusal, WatcherCaps, type WatcherLimits } from "./watcher-caps.ts";

/** What the watchers read of the informer's spec: a zero `maxLagSeconds` never sleeps between windows. */
export interface WatchedSpec {
  maxLagSeconds?: number | undefined;
}

export class InformerWatchers {
  readonly #at: WithInformer<WatchedSpec>;
  /** Brings the alarm forward (now + 1 ms), so that a woken informer's next slice runs now. */
  readonly #wake: () => Promise<void>;
  /** Open `/k8s` watches, served from the log (watch-hub.ts). */
  readonly #hub: WatchHub;
  /** Watch relays serving `/k8s` watchers off this object's thread read through this (watch-relay.ts). */
  readonly #relays: RelayHost;

  /**
   * @param admission the object's heavy reads: watches' initial listings take its slots.
   * @param caps its watchers' caps (watcher-caps.ts watcherLimitsOf).
   */
  constructor(at: WithInformer<WatchedSpec>, admission: ReadAdmission, wake: () => Promise<void>, caps?: WatcherLimits) {
    this.#at = at;
    this.#wake = wake;
    this.#hub = new WatchHub(() => this.#source(), { admission, ...(caps ? { caps: new WatcherCaps(caps) } : {}) });
    this.#relays = new RelayHost(() => this.#source(), (ms) => this.#hub.changed(ms), admission, Date.now, caps ? { perPrincipal: caps.perPrincipal } : {});
  }

  /**
   * Opens a `/k8s` watch (watch-hub.ts): a stream of NDJSON watch events. Bad selectors are a
   * BadRequest; a start the log no longer covers is an ERROR event in the stream, as the server's.
   * An unsynced cache opens nothing (review F5): its partial or stale objects are no initial state.
   */
  async watch(request: WatchParams): Promise<Result<WatchOpening>> {
    const opened = this.#at((_, informer): WatchOpening => {
      const readiness = readinessOfInformer(informer);
      if (!readiness.synced) return { notReady: readiness };
      const opened = this.#hub.tryOpen(watchRequestOf(request));
      return isRefusal(opened) ? { tooMany: { message: opened.message, retryAfterSeconds: opened.retryAfterSeconds } } : opened;
    });
    if (opened.ok && "stream" in opened.value && this.wakeForWatchers()) await this.#wake();
    return opened;
  }

  /**
   * The cache's resourceVersion once it reaches `resourceVersion`, or after `waitMs` (at most the
   * watch cache's FRESHNESS_WAIT_MS): a `/k8s` list ahead of the cache (list-consistency.ts) waits
   * here on the watch hub's wake-up, as a watch-list's start does. Awaiting it keeps no input gate
   * shut: the object serves other requests and ingests meanwhile. An RV the cluster's earlier API
   * server handed out is told at once (Informer.fromEarlierServer): no wait makes it comparable.
   * An informer sleeping between watch windows opens the next one now: its cache may only be behind.
   */
  async awaitResourceVersion(resourceVersion: string, waitMs: number): Promise<Result<Freshness>> {
    const earlier = this.#at((_, informer) => informer.fromEarlierServer(resourceVersion));
    if (!earlier.ok) return earlier;
    if (earlier.value) return ok("earlierServer");
    if (this.#wakeIfSleeping()) await this.#wake();
    await this.#hub.reaches(resourceVersion, Math.min(Math.max(waitMs, 0), FRESHNESS_WAIT_MS));
    return this.#at((_, informer) => ({ current: informer.queryView().resourceVersion }));
  }

  /**
   * Brings the cache up to the upstream's current resourceVersion for a read with none
   * (consistent-reads.ts): wakes an informer sleeping between watch windows, then waits on the
   * watch hub's wake-up, as a list ahead of the cache does.
   */
  async awaitConsistency(upstream: UpstreamRevision): Promise<Result<Consistency>> {
    const informer = this.#at((_, informer) => informer);
    if (!informer.ok) return informer;
    const current = informer.value;
    return ok(
      await awaitConsistency({
        synced: () => readinessOfInformer(current).synced,
        cacheResourceVersion: () => current.queryView().resourceVersion,
        watchLive: () => current.progress().watch.state === "watching",
        wakeIfSleeping: async () => {
          if (this.#wakeIfSleeping()) await this.#wake();
        },
        upstream,
        reaches: async (rv, waitMs) => {
          await this.#hub.reaches(rv, Math.min(Math.max(waitMs, 0), FRESHNESS_WAIT_MS));
        },
      }),
    );
  }

  /**
   * A watch relay opening watches (watch-relay.ts; a batch of them): whether the cache may be
   * watched (an unsynced one opens nothing, as `watch` does), the state to start from, and a place
   * for each in its credential's count across the relays (relay-places.ts) or why not. Wakes an
   * informer sleeping between watch windows, as a watch opening here does.
   */
  async relayOpen(ask: RelayOpenAsk): Promise<Result<RelayOpening>> {
    const opened = this.#at((_, informer): RelayOpening => {
      const readiness = readinessOfInformer(informer);
      const opening = readiness.synced ? this.#relays.open(ask) : undefined;
      return opening ? { readiness, ...opening } : { readiness };
    });
    if (opened.ok && opened.value.readiness.synced && this.#wakeIfSleeping()) await this.#wake();
    return opened;
  }

  /**
   * A relay's poll (RelayHost.poll); undefined once the informer is gone. Only a relay's first poll
   * (nothing known yet) may find the informer asleep: polling keeps it awake (`watched`), and the
   * alarm's re-arm wakes it if a window ends meanwhile, so the polls of every batch check nothing.
   */
  async relayPoll(known: RelaySnapshot | undefined, waitMs: number, report?: PlaceReport): Promise<RelaySnapshot | undefined> {
    if (known === undefined && this.wakeForWatchers()) await this.#wake();
    return this.#relays.poll(known, waitMs, report);
  }

  /** A relay's read of the log or the cache (RelayHost.call). */
  relayCall(incarnation: string, call: RelayCall): Promise<RelayAnswer> {
    return this.#relays.call(incarnation, call);
  }

  /** The log grew or the cache advanced: the hub reads on, and relays' polls answer. */
  notify(): void {
    this.#hub.notify();
  }

  /** Whether `/k8s` watchers want live events: its own, or a relay's that polls. */
  watched(): boolean {
    return this.#hub.watchers > 0 || this.#relays.active;
  }

  /**
   * Wakes an informer sleeping between watch windows (cache/watch-windows.ts) while a `/k8s` watch
   * is open: its client expects live events. Asked when a watch opens and when the alarm re-arms
   * (a watch may open just as a window ends). Answers whether it woke it; the caller sets the alarm.
   */
  wakeForWatchers(): boolean {
    return this.watched() && this.#wakeIfSleeping();
  }

  /** What the watchers were promised no longer holds: their clients re-watch (and relist on a 410). */
  closeAll(): void {
    this.#relays.closeAll();
    this.#hub.closeAll();
  }

  /** Opens the next watch window now if the informer sleeps between them; answers whether it did. */
  #wakeIfSleeping(): boolean {
    const woke = this.#at((spec, informer) => {
      if ((spec.maxLagSeconds ?? 0) === 0 || informer.progress().watch.state !== "sleeping") return false;
      informer.wakeNow();
      return true;
    });
    return woke.ok && woke.value;
  }

  #source(): WatchSource | undefined {
    const current = this.#at((_, informer) => informer);
    if (!current.ok) return undefined;
    return watchSourceOf(current.value);
  }
}

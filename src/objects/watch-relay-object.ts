/**
 * A watch relay (k8s/watch-relay.ts): one Durable Object serving `/k8s` watchers of one informer off
 * the informer's thread. A deployment routes each watch to one of WATCH_RELAYS relays of its
 * informer, any of them (k8s/watch-relay.ts `pickRelay`), so that a credential's watchers spread
 * over them all; the informer's object counts them once across its relays (k8s/relay-places.ts)
 * and serves the relays a poll and a read or two per batch each.
 *
 * Guarantees:
 * - A watch opens here exactly when it would open in the informer's object: an unsynced cache is a
 *   notReady answer, a bad selector a BadRequest, a listing the informer's heavy-read admission sheds
 *   a 429 (its slots are shared with the informer's own lists), too many watchers a 429 (this
 *   relay's own cap, MAX_WATCHERS_PER_OBJECT, and the credential's across the informer's relays,
 *   WATCHERS_PER_CREDENTIAL, counted by the informer's object: k8s/relay-places.ts).
 * - Watches opening together (a re-watch herd after a deploy) cost the informer one `relayOpen`
 *   per round trip, not one each, and their starts one `positionsOf` (review N10).
 * - The relay polls its informer from its alarm, in slices of at most RELAY_SLICE_MS and of the
 *   invocation's subrequest budget (net/subrequest-budget.ts: no poll is made past its margin), each
 *   re-armed at once while watchers remain: a poll waits up to POLL_WAIT_MS, so a slice spends at
 *   most a few calls per batch and one per 20 s when nothing changes. With no watchers it stops,
 *   sets no alarm, and the object can be evicted; its informer stops counting it as watched two poll
 *   waits after its last poll (RelayHost.active), so a windowed informer may sleep (review B7).
 * - It stores nothing: a relay evicted or restarted drops its streams, whose clients re-watch.
 */
import { DurableObject } from "cloudflare:workers";
import { ownPlacement, placedStub } from "../clusters/placement.ts";
import type { Env } from "../env.ts";
import { attempt, ok, type Result } from "../errors.ts";
import { ANONYMOUS_OWNER, HEAVY_READ_RETRY_AFTER_SECONDS, HEAVY_READ_SHED_MESSAGE } from "../k8s/admission.ts";
import { needsListing, WatchHub } from "../k8s/watch-hub.ts";
import type { WatchOpening, WatchParams } from "../k8s/watch-params.ts";
import type { AdmittedListing } from "../k8s/watch-source.ts";
import { watchRequestOf } from "../k8s/watch-params.ts";
import { type RelayUpstream, RelaySource } from "../k8s/watch-relay.ts";
import { RelayWatcherCaps } from "../k8s/relay-places.ts";
import { isRefusal } from "../k8s/watcher-caps.ts";
import { SubrequestBudget, SubrequestLimitError, subrequestLimitOf } from "../net/subrequest-budget.ts";
import { setLogLevel } from "../log.ts";

/** One alarm's slice of polling: well inside the 15 min an alarm may run. */
export const RELAY_SLICE_MS = 10 * 60_000;

export class WatchRelay extends DurableObject<Env> {
  /** The informer object this relay serves (its name is the relay's, less the shard). */
  #informer: string | undefined;
  readonly #source: RelaySource;
  readonly #hub: WatchHub;
  /** This relay's own cap; each watch's place in its credential's count is the informer's (k8s/relay-places.ts). */
  readonly #caps = new RelayWatcherCaps();
  /** The running slice's budget; the hub's reads between slices are counted in the next one. */
  #budget = new SubrequestBudget();
  /** Released when the next slice's budget is there, for the reads waiting past this one's margin. */
  #nextSlice: { started: Promise<void>; release: () => void } | undefined;
  #pumping = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    setLogLevel(env.LOG_LEVEL);
    this.#source = new RelaySource(this.#upstream(), { changed: () => this.#hub.notify(), closeAll: () => this.#hub.closeAll() });
    this.#hub = new WatchHub(() => this.#source.current(), { caps: this.#caps });
  }

  /** Opens a watch of informer object `informer` (the route's), as InformerObject.watch does. */
  async watch(informer: string, params: WatchParams): Promise<Result<WatchOpening>> {
    this.#informer ??= informer;
    // The cache's readiness, the state to start from and a place in the credential's count across
    // the informer's relays, in one call with the other watches opening here now (RelaySource.enter).
    const entered = await this.#source.enter(params.principal ?? ANONYMOUS_OWNER);
    if (!entered.ok) return entered;
    if ("notReady" in entered.value) return ok({ notReady: entered.value.notReady });
    if (isRefusal(entered.value)) return ok({ tooMany: { message: entered.value.message, retryAfterSeconds: entered.value.retryAfterSeconds } });
    const { place } = entered.value;
    const request = attempt(() => watchRequestOf(params));
    if (!request.ok) {
      place.release();
      return request;
    }
    // A listing is a heavy read of the informer's cache: it takes its turns in the informer's
    // admission — once this relay's caps would let it open (review N7: a refused watch held a place).
    let listing: AdmittedListing | undefined;
    if (needsListing(request.value)) {
      const refused = this.#hub.refusal(request.value);
      listing = refused ? undefined : await this.#source.admit(request.value.principal ?? ANONYMOUS_OWNER);
      if (!listing) {
        place.release();
        return ok({ tooMany: refused ? { message: refused.message, retryAfterSeconds: refused.retryAfterSeconds } : { message: HEAVY_READ_SHED_MESSAGE, retryAfterSeconds: HEAVY_READ_RETRY_AFTER_SECONDS } });
      }
    }
    const watch = this.#caps.joining(place, () => this.#hub.tryOpen(request.value, listing));
    if (isRefusal(watch)) return ok({ tooMany: { message: watch.message, retryAfterSeconds: watch.retryAfterSeconds } });
    if (!this.#pumping) await this.ctx.storage.setAlarm(Date.now());
    return ok(watch);
  }

  /** Watchers open here now (tests and status). */
  async watchers(): Promise<number> {
    return this.#hub.watchers;
  }

  /** Whether it polls its informer now (tests and status): it stops once its last watcher left. */
  async pumping(): Promise<boolean> {
    return this.#pumping;
  }

  /** One slice of polling the informer for the watchers (see the contract). */
  override async alarm(): Promise<void> {
    if (this.#pumping || this.#informer === undefined) return;
    this.#pumping = true;
    this.#budget = new SubrequestBudget(subrequestLimitOf(this.env));
    this.#nextSlice?.release();
    this.#nextSlice = undefined;
    const until = Date.now() + RELAY_SLICE_MS;
    try {
      await this.#source.pump(() => this.#hub.watchers > 0 && Date.now() < until && !this.#budget.ended);
    } finally {
      this.#pumping = false;
      if (this.#hub.watchers > 0) await this.ctx.storage.setAlarm(Date.now() + 1);
    }
  }

  #stub() {
    return placedStub(this.env.INFORMER, this.#informer!, ownPlacement(this.ctx.id));
  }

  /**
   * The informer's object, each call counted in the slice's budget. Past the budget's margin the
   * pump ends the slice before its next poll and re-arms at once; a watcher's read made past it
   * waits for that next slice's budget rather than being refused (a refused read would end its
   * stream) or made in the ending invocation (how many a batch's reads would add there depends on
   * timing, and the margin must hold only the calls already on their way).
   */
  #upstream(): RelayUpstream {
    return {
      open: async (ask) => {
        await this.#inBudget();
        return this.#stub().relayOpen(ask);
      },
      // Past the margin no poll is made: the pump ends the slice, which re-arms (review B1a).
      poll: async (known, waitMs, report) => {
        if (!this.#budget.take()) throw new SubrequestLimitError();
        return this.#stub().relayPoll(known, waitMs, report);
      },
      call: async (incarnation, call) => {
        await this.#inBudget();
        return this.#stub().relayCall(incarnation, call);
      },
    };
  }

  async #inBudget(): Promise<void> {
    while (!this.#budget.take()) {
      if (!this.#nextSlice) {
        let release!: () => void;
        const started = new Promise<void>((resolve) => (release = resolve));
        this.#nextSlice = { started, release };
      }
      await this.#nextSlice.started;
    }
  }
}

/**
 * `/k8s` watchers served off the informer's thread (issue 20 item 2): a watch relay — another
 * Durable Object, objects/watch-relay-object.ts — runs its own watch hub (watch-hub.ts) for its
 * watchers, over a WatchSource that asks the informer's object for what the hub reads. The
 * informer's object then does per batch what one watcher costs it (a poll, a log read, a run end),
 * per relay, whatever the number of watchers; parsing, filtering, framing and writing to clients
 * happen in the relays. This file is both ends of that conversation:
 *
 * - `RelayHost` (in the informer's object) answers polls and calls. A poll returns the informer's
 *   state (`RelaySnapshot`: log incarnation, bounds, cache RV) as soon as it differs from the one
 *   the relay knows, else when the log grows or the cache advances, else after `waitMs`. A call is
 *   one WatchSource method, answered only for the log incarnation the relay names (`gone`
 *   otherwise: positions of another log mean nothing). While relays poll, the informer counts as
 *   watched (it stays awake, cache/watch-windows.ts).
 * - `RelaySource` (in the relay) keeps the newest snapshot it was given (by a poll, or by a watch's
 *   opening: `relayOpen`'s answer), serves `bounds`, `cacheResourceVersion` and `incarnation` from
 *   it, and asks for the rest. `pump` polls while its caller wants, notifying the relay's hub of
 *   every change.
 * - A credential's watches go to any relay (`pickRelay`) and are counted once, by the informer's
 *   object: each opening takes a place there, and each poll and opening reports the places given
 *   back (relay-places.ts). Openings, and watches' start positions, that arrive while one call is on
 *   its way go together in the next (call-batches.ts): a re-watch herd after a deploy costs the
 *   informer a few calls per relay, not two per watcher (review N10).
 *
 * Guarantees: the relay's watchers get the changes the informer's own hub would send them (the same
 * hub code over the same reads): resourceVersion order, whole runs, the same 410s, and DESIGN.md
 * invariant 9. The snapshot trails the informer by a poll while the other reads are live, so a watch
 * opens on the state `relayOpen` answered (review N2), a listing's bookmark carries the RV the
 * listing was read at, and the hub never stamps a bookmark below what a stream showed (review N3,
 * watch-hub.ts); a snapshot older than the one held (answers arriving out of order) is ignored. What the informer
 * promised them no longer holding (it was reconfigured: `closes` moved, or its object restarted:
 * `instance` moved, or a call failed) ends every relay stream cleanly, as those ends end the
 * informer's own streams; the clients re-watch from their last resourceVersion.
 */
import type { LogBounds, ReadResult } from "../cache/event-log.ts";
import type { VersionedPage, VersionedQuery } from "../cache/versioned-list.ts";
import { fail, ok, type Result } from "../errors.ts";
import { errorText, logger } from "../log.ts";
import { isSubrequestLimit } from "../net/subrequest-budget.ts";
import { ListingTurns, type ReadAdmission } from "./admission.ts";
import type { CacheReadiness } from "./cache-readiness.ts";
import { BATCH_MAX, CallBatches } from "./call-batches.ts";
import { type PlaceAnswer, type PlaceReport, PlaceTally, RelayPlaces } from "./relay-places.ts";
import type { AdmittedListing, ListedPage, WatchSource } from "./watch-source.ts";
import { MAX_WATCHERS_PER_PRINCIPAL, type Refusal, type WatcherPlace } from "./watcher-caps.ts";

/** Relays per informer unless WATCH_RELAYS says otherwise; at most MAX_RELAYS. */
export const DEFAULT_RELAYS = 4;
export const MAX_RELAYS = 64;

/** WATCH_RELAYS: how many relays an informer's watchers are spread over; 0, its own object serves them. */
export function relaysOf(env: { WATCH_RELAYS?: string }): number {
  if (env.WATCH_RELAYS === undefined || env.WATCH_RELAYS.trim() === "") return DEFAULT_RELAYS;
  const relays = Number(env.WATCH_RELAYS);
  return Number.isSafeInteger(relays) && relays >= 0 ? Math.min(relays, MAX_RELAYS) : DEFAULT_RELAYS;
}

/**
 * The relay a watch goes to: any of them, at random (issue 29 item 1). A credential's watchers then
 * spread over all the relays, and so does a re-watch herd; their cap is counted once, across the
 * relays, by the informer's object (relay-places.ts). Random rather than round-robin or least-loaded:
 * the Worker's isolates share no state (a round-robin would be one per isolate: random in effect),
 * and learning the relays' loads would cost a call per watch. A uniform choice keeps each relay
 * within a few percent of the mean from hundreds of watchers on (at 4,000 over 4 relays, one standard
 * deviation is 27 watchers), so a relay full (MAX_WATCHERS_PER_OBJECT) while others have room is
 * rare before about 95% of relays x 1,000.
 */
export function pickRelay(relays: number, random: () => number = Math.random): number {
  return Math.min(relays - 1, Math.floor(random() * relays));
}

/** How long a poll waits for a change before it answers the same state (a relay then polls again). */
export const POLL_WAIT_MS = 20_000;

/** What a relay knows of its informer, as the informer's object last answered a poll. */
export interface RelaySnapshot {
  /** The informer object's run (a random id per start): a new one ended its own watchers. */
  instance: string;
  /** How often the informer ended its watchers (it was reconfigured) in this run. */
  closes: number;
  /** When in this run it was taken (a count): of two snapshots of one run, the higher is the newer. */
  taken: number;
  incarnation: string;
  bounds: LogBounds;
  cacheResourceVersion: string;
}

/**
 * One WatchSource method a relay asks of the informer's object — or, for a watch's initial listing,
 * a lease on the informer's heavy-read admission (admission.ts), shared with its own lists: `enter`
 * takes a place for the watch's credential (or is shed); each `listAt` naming the lease reads its
 * page in the lease's turn (waiting for it; the slot is parked between pages, review N1); `release`
 * gives it back.
 */
export type RelayCall =
  | { op: "enter"; owner: string }
  | { op: "release"; lease: string }
  | { op: "read"; after: number; limit: number; maxBytes?: number }
  | { op: "readInOrder"; after: number; end: number; skip: number; limit: number }
  | { op: "listAt"; query: VersionedQuery; from?: { at: number; after: string }; lease?: string }
  | { op: "positionsOf"; resourceVersions: string[] }
  | { op: "fromEarlierServer"; resourceVersion: string }
  | { op: "boundaryAfter"; after: number; span: number };

/** A call's answer; `gone`: the informer's log is not (any more) the incarnation the relay named. */
export type RelayAnswer = { gone: true } | { value: unknown };

/** Where a watch starts in the log (WatchSource.positionOf). */
type Position = { after: number; skipUpTo?: string } | "expired";

/** A relay opening watches (a batch of them): its tally of places, and one credential per watch. */
export interface RelayOpenAsk {
  report: PlaceReport;
  principals: string[];
}

/** The informer's answer: whether its cache may be watched; if so the state to start from, and each watch's place. */
export interface RelayOpening {
  readiness: CacheReadiness;
  snapshot?: RelaySnapshot;
  places?: PlaceAnswer[];
}

/** What a relay's watch is given on opening: the cache is not ready, a place the informer counts, or a refusal (429). */
export type RelayEntry = { notReady: CacheReadiness } | { place: WatcherPlace } | Refusal;

/** The informer's object, as a relay reaches it (RPC in production; the host itself in unit tests). */
export interface RelayUpstream {
  /** Opens watches: each a place of its credential (relay-places.ts), all on the state answered. */
  open(ask: RelayOpenAsk): Promise<Result<RelayOpening>>;
  /** Undefined: the informer is gone (deleted). `report`: the relay's tally, and its heartbeat. */
  poll(known: RelaySnapshot | undefined, waitMs: number, report?: PlaceReport): Promise<RelaySnapshot | undefined>;
  call(incarnation: string, call: RelayCall): Promise<RelayAnswer>;
}

/**
 * A lease no page was asked under for this long is given back (review N7: its relay was evicted or
 * failed to release it). A listing asks its next page as soon as its client took the last one, and
 * a client that takes nothing for 10 s is closed (watch-hub.ts), so a live listing is never idle this
 * long; a lapsed lease's next page answers expired (the watch ends with 410), never unadmitted.
 */
export const LEASE_IDLE_MS = 30_000;

/** A relay's lease: its listing's turns, given back when idle too long. */
interface Lease {
  turns: ListingTurns;
  idle: ReturnType<typeof setTimeout> | undefined;
}

/** The informer's side: answers its relays' polls and calls from its own watch source. */
export class RelayHost {
  readonly #source: () => WatchSource | undefined;
  readonly #admission: ReadAdmission;
  /** Heavy-read listings relays run, by lease. */
  readonly #leases = new Map<string, Lease>();
  /** Resolves when the informer's hub is notified (the log grew, the cache advanced), or after `ms`. */
  readonly #changed: (ms: number) => Promise<void>;
  readonly #now: () => number;
  readonly #instance = crypto.randomUUID();
  /** Each credential's watches through all the relays, one count (relay-places.ts). */
  readonly #places: RelayPlaces;
  #closes = 0;
  #taken = 0;
  #polling = 0;
  #lastPollAt = Number.NEGATIVE_INFINITY;

  readonly #leaseIdleMs: number;

  /**
   * @param options.perPrincipal each credential's watches through all relays at most (watcher-caps.ts watcherLimitsOf).
   * @param options.leaseIdleMs how long a relay's lease lasts without a page asked (LEASE_IDLE_MS).
   */
  constructor(
    source: () => WatchSource | undefined,
    changed: (ms: number) => Promise<void>,
    admission: ReadAdmission,
    now: () => number = Date.now,
    { perPrincipal = MAX_WATCHERS_PER_PRINCIPAL, leaseIdleMs = LEASE_IDLE_MS }: { perPrincipal?: number; leaseIdleMs?: number } = {},
  ) {
    this.#source = source;
    this.#leaseIdleMs = leaseIdleMs;
    this.#admission = admission;
    this.#changed = changed;
    this.#now = now;
    this.#places = new RelayPlaces(this.#instance, perPrincipal, now);
  }

  /** Places of credentials held through the relays now (tests and status). */
  get places(): number {
    return this.#places.held;
  }

  /**
   * A relay opening watches (its batch): the state they start from, and a place for each or the
   * refusal that names WATCHERS_PER_CREDENTIAL; undefined once the informer is gone. The caller
   * (InformerWatchers.relayOpen) asks only of a synced cache.
   */
  open(ask: RelayOpenAsk): { snapshot: RelaySnapshot; places: PlaceAnswer[] } | undefined {
    const snapshot = this.snapshot();
    if (!snapshot) return undefined;
    return { snapshot, places: this.#places.grant(ask.report, ask.principals) };
  }

  /** Whether a relay polls now or did within two poll waits: its watchers want live events. */
  get active(): boolean {
    return this.#polling > 0 || this.#now() - this.#lastPollAt < 2 * POLL_WAIT_MS;
  }

  /** The informer ends its watchers (reconfigured): the relays end theirs at their next poll. */
  closeAll(): void {
    this.#closes++;
  }

  snapshot(): RelaySnapshot | undefined {
    const source = this.#source();
    if (!source) return undefined;
    return {
      instance: this.#instance,
      closes: this.#closes,
      taken: ++this.#taken,
      incarnation: source.incarnation,
      bounds: source.bounds(),
      cacheResourceVersion: source.cacheResourceVersion(),
    };
  }

  async poll(known: RelaySnapshot | undefined, waitMs: number, report?: PlaceReport): Promise<RelaySnapshot | undefined> {
    const until = this.#now() + Math.min(Math.max(waitMs, 0), POLL_WAIT_MS);
    this.#polling++;
    if (report) this.#places.polling(report, true);
    try {
      for (;;) {
        const current = this.snapshot();
        const left = until - this.#now();
        if (!current || !known || !sameSnapshot(current, known) || left <= 0) return current;
        await this.#changed(left);
      }
    } finally {
      this.#polling--;
      this.#lastPollAt = this.#now();
      if (report) this.#places.polling(report, false);
    }
  }

  async call(incarnation: string, call: RelayCall): Promise<RelayAnswer> {
    if (call.op === "enter") return { value: this.#enter(call.owner) };
    if (call.op === "release") return { value: this.#release(call.lease) };
    const source = this.#source();
    if (!source || source.incarnation !== incarnation) return { gone: true };
    switch (call.op) {
      case "read":
        return { value: await source.read(call.after, call.limit, call.maxBytes) };
      case "readInOrder":
        return { value: await source.readInOrder(call.after, call.end, call.skip, call.limit) };
      case "listAt":
        if (call.lease !== undefined) return this.#leasedListAt(incarnation, call.lease, call.query, call.from);
        return { value: await source.listAt(call.query, call.from) };
      case "positionsOf":
        return { value: await Promise.all(call.resourceVersions.slice(0, BATCH_MAX).map((rv) => source.positionOf(rv))) };
      case "fromEarlierServer":
        return { value: await source.fromEarlierServer(call.resourceVersion) };
      case "boundaryAfter":
        return { value: await source.boundaryAfter(call.after, call.span) };
    }
  }

  /** Heavy-read listings relays run now (tests). */
  get leases(): number {
    return this.#leases.size;
  }

  /** A lease on a heavy-read listing for `owner`'s watch, or undefined: shed (the relay answers 429). */
  #enter(owner: string): string | undefined {
    const slot = this.#admission.enter(owner);
    if (!slot) return undefined;
    const id = crypto.randomUUID();
    const lease: Lease = { turns: new ListingTurns(this.#admission, owner, slot), idle: undefined };
    this.#leases.set(id, lease);
    this.#idle(id, lease);
    return id;
  }

  /** A page of a leased listing, read in its turn; a lease given back (idle, released) answers expired. */
  async #leasedListAt(incarnation: string, id: string, query: VersionedQuery, from: { at: number; after: string } | undefined): Promise<RelayAnswer> {
    const lease = this.#leases.get(id);
    if (!lease) return { value: { expired: true } satisfies ListedPage };
    if (lease.idle !== undefined) clearTimeout(lease.idle);
    lease.idle = undefined;
    try {
      // The log may have moved to another incarnation while the page waited for its turn.
      return await lease.turns.page(async (): Promise<RelayAnswer> => {
        const source = this.#source();
        return source && source.incarnation === incarnation ? { value: await source.listAt(query, from) } : { gone: true };
      });
    } finally {
      if (this.#leases.get(id) === lease) this.#idle(id, lease);
    }
  }

  /** Gives `id` back after LEASE_IDLE_MS without a page asked. */
  #idle(id: string, lease: Lease): void {
    lease.idle = setTimeout(() => {
      logger.warn("a watch relay's heavy-read lease lapsed unused: given back", { idleMs: this.#leaseIdleMs });
      this.#release(id);
    }, this.#leaseIdleMs);
  }

  #release(id: string): void {
    const lease = this.#leases.get(id);
    if (!lease) return;
    this.#leases.delete(id);
    if (lease.idle !== undefined) clearTimeout(lease.idle);
    lease.turns.end();
  }
}

/** Whether two snapshots say the same (when each was taken aside). */
function sameSnapshot(a: RelaySnapshot, b: RelaySnapshot): boolean {
  return (
    a.instance === b.instance &&
    a.closes === b.closes &&
    a.incarnation === b.incarnation &&
    a.bounds.head === b.bounds.head &&
    a.bounds.tail === b.bounds.tail &&
    a.cacheResourceVersion === b.cacheResourceVersion
  );
}

/** What the relay's hub is told by the pump. */
export interface RelayListener {
  /** The informer's state changed: wake the watchers. */
  changed(): void;
  /** What the watchers were promised no longer holds: end their streams cleanly. */
  closeAll(): void;
}

/** The relay's side: a WatchSource over the informer's object, and the poll loop that keeps it current. */
export class RelaySource {
  readonly #upstream: RelayUpstream;
  readonly #listener: RelayListener;
  #snapshot: RelaySnapshot | undefined;
  #source: WatchSource | undefined;
  /** Whether the snapshot may be stale (a call found the log gone, or failed): the next poll answers at once. */
  #stale = true;
  /** The places this relay holds in the informer's count, and this relay's id there (relay-places.ts). */
  readonly #tally = new PlaceTally();
  /** Watches opening together: one `relayOpen` for those that arrive while one is on its way (review N10). */
  readonly #openings = new CallBatches<string, Result<RelayEntry>>((principals) => this.#openAll(principals));
  /** Watches' starts asked together, for the incarnation they are of (review N10). */
  #positions: { incarnation: string; batches: CallBatches<string, Position> } | undefined;

  constructor(upstream: RelayUpstream, listener: RelayListener) {
    this.#upstream = upstream;
    this.#listener = listener;
  }

  /** This relay's id in its informer's count of places (tests). */
  get id(): string {
    return this.#tally.relay;
  }

  /**
   * Opens a watch of `principal`: whether the cache may be watched and, if so, a place in the
   * informer's count of its credential's watches (given back by releasing it, when the watch ends
   * or is not opened after all) or the refusal naming WATCHERS_PER_CREDENTIAL. Watches arriving while
   * an opening is on its way go in the next (a re-watch herd costs the informer a few calls, not one
   * per watch), and each opens on the state that call answered: at least as new as the informer's
   * state when the watch arrived (review N2: see `open`). The call failing fails the watches it carried.
   */
  enter(principal: string): Promise<Result<RelayEntry>> {
    return this.#openings.ask(principal);
  }

  async #openAll(principals: string[]): Promise<Result<RelayEntry>[]> {
    const opened = await this.#upstream.open({ report: this.#tally.report(), principals });
    if (!opened.ok) return principals.map(() => fail(opened.error.code, opened.error.message));
    const { readiness, snapshot, places } = opened.value;
    if (!readiness.synced || !snapshot || !places) return principals.map(() => ok({ notReady: readiness }));
    this.open(snapshot);
    return principals.map((principal, i) => {
      const place = places[i]!;
      return ok(place === true ? { place: this.#tally.granted(snapshot.instance, principal) } : place);
    });
  }

  /** The source the relay's hub reads; undefined before the first snapshot and once the informer is gone. */
  current(): WatchSource | undefined {
    return this.#source;
  }

  /**
   * A watch opens with the informer's state as `relayOpen` answered it: at least as new as the
   * relay's (review N2). A relay whose pump stopped (its last watcher left) kept its last
   * snapshot, and a watch opened on that would start from an old tail (replaying changes as live),
   * close its listing with an old RV, or — the informer restarted since — be ended by the next poll.
   */
  open(snapshot: RelaySnapshot | undefined): void {
    this.accept(snapshot);
  }

  /**
   * Takes the informer's state as a poll or a watch's opening answered it, unless it is older than
   * the one held (the two answers of one run can arrive in either order): the relay's state never
   * goes back, so its watchers' bookmarks and starts never do.
   */
  accept(snapshot: RelaySnapshot | undefined): void {
    const known = this.#snapshot;
    if (known && snapshot && known.instance === snapshot.instance && known.taken >= snapshot.taken) return;
    this.#snapshot = snapshot;
    this.#source = snapshot && this.#sourceAt(snapshot);
    // Reconfigured, restarted or deleted: the informer's own watchers were ended; so are these.
    if (known && (!snapshot || known.instance !== snapshot.instance || known.closes !== snapshot.closes)) this.#listener.closeAll();
    this.#listener.changed();
  }

  /**
   * Polls the informer while `wanted()` (the relay has watchers and its slice has time), each change
   * told to the hub. A failed poll (the informer's object restarting, a network fault) ends every
   * watcher's stream cleanly and is retried after `retryMs`.
   */
  async pump(wanted: () => boolean, retryMs = 1_000): Promise<void> {
    while (wanted()) {
      try {
        const snapshot = await this.#upstream.poll(this.#stale ? undefined : this.#snapshot, POLL_WAIT_MS, this.#tally.report());
        this.#stale = false;
        this.accept(snapshot);
      } catch (error) {
        // The invocation's subrequests are spent (review B1a): the slice ends here, the next goes on.
        if (isSubrequestLimit(error)) return;
        this.#lost("poll", error);
        await new Promise((resolve) => setTimeout(resolve, retryMs));
      }
    }
  }

  /**
   * A watch's initial listing admitted by the informer's heavy-read admission for `owner` (the
   * watch's credential), as the hub admits its own (WatchHub.tryOpen): undefined when the informer
   * sheds it (a 429), or cannot be reached. Each page is asked under the lease and read in its turn;
   * `end` gives the lease back (were that call lost, the informer gives it back once idle).
   */
  async admit(owner: string): Promise<AdmittedListing | undefined> {
    const lease = await this.#ask<string | undefined>({ op: "enter", owner }, undefined);
    if (lease === undefined) return undefined;
    return {
      listAt: (query, from) => this.#ask<ListedPage>({ op: "listAt", query, lease, ...(from === undefined ? {} : { from }) }, { expired: true }),
      end: () => void this.#ask({ op: "release", lease }, undefined),
    };
  }

  /** A call's answer, or `gone` when the log is not the snapshot's any more or the call failed. */
  async #ask<T>(call: RelayCall, gone: T, incarnation = this.#snapshot?.incarnation ?? ""): Promise<T> {
    let answer: RelayAnswer;
    try {
      answer = await this.#upstream.call(incarnation, call);
    } catch (error) {
      this.#lost(call.op, error);
      return gone;
    }
    if ("gone" in answer) {
      this.#stale = true; // the next poll tells the new incarnation; the hub then ends with a 410
      return gone;
    }
    return answer.value as T;
  }

  /** The informer could not be asked: what its watchers were promised is unknown. */
  #lost(what: string, error: unknown): void {
    logger.warn("watch relay could not reach its informer: its watchers re-watch", { call: what, error: errorText(error) });
    this.#stale = true;
    this.#listener.closeAll();
  }

  /** Where a watch from `resourceVersion` starts: asked with the other watches' starts of the moment, each RV once. */
  #positionOf(incarnation: string, resourceVersion: string): Promise<Position> {
    if (this.#positions?.incarnation !== incarnation) {
      const batches = new CallBatches<string, Position>(async (rvs) => {
        const unique = [...new Set(rvs)];
        const answers = await this.#ask<Position[] | undefined>({ op: "positionsOf", resourceVersions: unique }, undefined, incarnation);
        const byRv = new Map(unique.map((rv, i) => [rv, answers?.[i] ?? ("expired" as const)]));
        return rvs.map((rv) => byRv.get(rv)!);
      });
      this.#positions = { incarnation, batches };
    }
    return this.#positions.batches.ask(resourceVersion);
  }

  #sourceAt(snapshot: RelaySnapshot): WatchSource {
    const ask = <T>(call: RelayCall, gone: T): Promise<T> => this.#ask(call, gone, snapshot.incarnation);
    const expired = (): ReadResult => ({ events: [], expired: true, bounds: snapshot.bounds });
    return {
      incarnation: snapshot.incarnation,
      bounds: () => snapshot.bounds,
      cacheResourceVersion: () => snapshot.cacheResourceVersion,
      read: (after, limit, maxBytes) => ask({ op: "read", after, limit, ...(maxBytes === undefined ? {} : { maxBytes }) }, expired()),
      readInOrder: (after, end, skip, limit) => ask({ op: "readInOrder", after, end, skip, limit }, expired()),
      listAt: (query, from) => ask<VersionedPage>({ op: "listAt", query, ...(from === undefined ? {} : { from }) }, { expired: true }),
      positionOf: (resourceVersion) => this.#positionOf(snapshot.incarnation, resourceVersion),
      fromEarlierServer: (resourceVersion) => ask({ op: "fromEarlierServer", resourceVersion }, false),
      boundaryAfter: (after, span) => ask<number | undefined>({ op: "boundaryAfter", after, span }, undefined),
    };
  }
}

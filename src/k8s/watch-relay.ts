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
import { errorText, logger } from "../log.ts";
import { ListingTurns, type ReadAdmission } from "./admission.ts";
import type { AdmittedListing, ListedPage, WatchSource } from "./watch-source.ts";

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
 * The relay a credential's watches go to: all of one credential's watchers meet in one relay, so
 * their cap (watcher-caps.ts) counts them all; credentials spread over the relays (FNV-1a).
 */
export function relayShard(principal: string, relays: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < principal.length; i++) hash = Math.imul(hash ^ principal.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % relays;
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
  | { op: "positionOf"; resourceVersion: string }
  | { op: "fromEarlierServer"; resourceVersion: string }
  | { op: "boundaryAfter"; after: number; span: number };

/** A call's answer; `gone`: the informer's log is not (any more) the incarnation the relay named. */
export type RelayAnswer = { gone: true } | { value: unknown };

/** The informer's object, as a relay reaches it (RPC in production; the host itself in unit tests). */
export interface RelayUpstream {
  /** Undefined: the informer is gone (deleted). */
  poll(known: RelaySnapshot | undefined, waitMs: number): Promise<RelaySnapshot | undefined>;
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
  #closes = 0;
  #taken = 0;
  #polling = 0;
  #lastPollAt = Number.NEGATIVE_INFINITY;

  readonly #leaseIdleMs: number;

  constructor(source: () => WatchSource | undefined, changed: (ms: number) => Promise<void>, admission: ReadAdmission, now: () => number = Date.now, leaseIdleMs = LEASE_IDLE_MS) {
    this.#source = source;
    this.#leaseIdleMs = leaseIdleMs;
    this.#admission = admission;
    this.#changed = changed;
    this.#now = now;
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

  async poll(known: RelaySnapshot | undefined, waitMs: number): Promise<RelaySnapshot | undefined> {
    const until = this.#now() + Math.min(Math.max(waitMs, 0), POLL_WAIT_MS);
    this.#polling++;
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
      case "positionOf":
        return { value: await source.positionOf(call.resourceVersion) };
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

  constructor(upstream: RelayUpstream, listener: RelayListener) {
    this.#upstream = upstream;
    this.#listener = listener;
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
        const snapshot = await this.#upstream.poll(this.#stale ? undefined : this.#snapshot, POLL_WAIT_MS);
        this.#stale = false;
        this.accept(snapshot);
      } catch (error) {
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
      positionOf: (resourceVersion) => ask<{ after: number; skipUpTo?: string } | "expired">({ op: "positionOf", resourceVersion }, "expired"),
      fromEarlierServer: (resourceVersion) => ask({ op: "fromEarlierServer", resourceVersion }, false),
      boundaryAfter: (after, span) => ask<number | undefined>({ op: "boundaryAfter", after, span }, undefined),
    };
  }
}

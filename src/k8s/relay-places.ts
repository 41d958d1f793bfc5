/**
 * One count per credential of the `/k8s` watches an informer serves through all its relays (issue 29
 * item 1; review "Shared credentials and caps"). The Worker sends each watch to any relay
 * (watch-relay.ts `pickRelay`), so a credential's watchers spread over them all; the informer's object
 * counts them in one place, `RelayPlaces` (held by its RelayHost), and a relay keeps the tally of
 * the places it holds there, `PlaceTally`, and joins each to its watch, `RelayWatcherCaps`.
 *
 * Guarantees:
 * - The cap (WATCHERS_PER_CREDENTIAL, watcher-caps.ts) is never exceeded: a place is granted by the
 *   informer's object, synchronously, when a relay opens a watch (`grant`, in the relay's batched
 *   `relayOpen`); over the cap the refusal names WATCHERS_PER_CREDENTIAL.
 * - A place is freed when its relay reports the watch ended: each relay's poll and opening carry
 *   its tally (`PlaceReport`, cumulative counts per credential, so a report lost or repeated frees
 *   nothing twice and nothing too early). A place freed in one relay counts until that relay's next
 *   poll or opening: at most POLL_WAIT_MS (20 s) longer than its watch lasted. So a count may be
 *   above the truth for that long (a client then gets a 429 and retries), never below it.
 * - A relay that stops polling (killed, evicted, restarted: a new relay has a new id) has its places
 *   dropped once RELAY_PLACES_TIMEOUT_MS passed since it was last heard of with no poll of it in
 *   flight. A relay with watchers polls at least every POLL_WAIT_MS, so that is three missed polls.
 * - A restarted informer object starts with no places (its relays' streams all end then: the
 *   relays' tallies of its earlier run are ignored, `PlaceReport.instance`). A relay ends its old
 *   streams as soon as it hears of the new run (its opening's or its poll's answer), before it opens
 *   any watch on it; so only for a poll's round trip after a restart may the old streams of other
 *   relays, ending, and new ones together exceed the cap, by at most the cap.
 *
 * Known limits: a batch of openings whose answer is lost after the informer granted its places (a
 * network fault between the two objects, both still running) keeps those places until the relay
 * stops polling; the relay's watchers for them were never opened. A tally holds one entry per
 * credential that had a watch in the relay during the informer's run (counts are cumulative, so an
 * entry cannot be dropped without an acknowledgement); with `TOKENS` that is a few, with Access
 * identities one per user who watched.
 */
import { MAX_WATCHERS_PER_OBJECT, type Refusal, WatcherCaps, type WatcherLimits, type WatcherPlace } from "./watcher-caps.ts";

/**
 * A relay not heard of for this long (no poll in flight, none started or ended, no opening) is gone:
 * its places are freed. Three poll waits (watch-relay.ts POLL_WAIT_MS, 20 s): a live relay with
 * watchers polls back to back, and a slice's re-arm (objects/watch-relay-object.ts) takes moments.
 */
export const RELAY_PLACES_TIMEOUT_MS = 60_000;

/** A relay's tally of the places the informer's run `instance` granted it: how many of each credential's ended. */
export interface PlaceReport {
  /** The relay's id: random per relay object's run (a restarted relay is another relay). */
  relay: string;
  /** The informer object's run (RelaySnapshot.instance) the counts are of; "" before any grant. */
  instance: string;
  /** Per credential, how many of its places granted by `instance` the relay has given back, in all. */
  ended: Record<string, number>;
}

/** A place as the informer's object answers it to a relay: granted, or refused (the 429's text). */
export type PlaceAnswer = true | Refusal;

interface RelayLedger {
  /** Places granted to the relay and not yet reported ended, per credential. */
  held: Map<string, WatcherPlace[]>;
  /** Per credential, the relay's cumulative `ended` already applied. */
  applied: Map<string, number>;
  seenAt: number;
  polling: number;
}

/** The informer's side: one per-credential count over all its relays (see the contract). */
export class RelayPlaces {
  /** Counts per credential only: a relay caps its own watchers at MAX_WATCHERS_PER_OBJECT. */
  readonly #caps: WatcherCaps;
  readonly #relays = new Map<string, RelayLedger>();
  readonly #instance: string;
  readonly #now: () => number;

  constructor(instance: string, perPrincipal: WatcherLimits["perPrincipal"], now: () => number = Date.now) {
    this.#instance = instance;
    this.#caps = new WatcherCaps({ perObject: Number.POSITIVE_INFINITY, perPrincipal });
    this.#now = now;
  }

  /** Places held now through all relays (tests and status). */
  get held(): number {
    return this.#caps.open;
  }

  /** A relay opening watches of these credentials (one each): applies its tally, then grants or refuses each. */
  grant(report: PlaceReport, principals: readonly string[]): PlaceAnswer[] {
    this.#expire();
    const ledger = this.#heard(report);
    return principals.map((principal) => {
      const place = this.#caps.take(principal);
      if ("refused" in place) return place;
      const held = ledger.held.get(principal) ?? [];
      held.push(place);
      ledger.held.set(principal, held);
      return true;
    });
  }

  /** A relay's poll starts (with its tally) or ends: while one is in flight the relay is alive. */
  polling(report: PlaceReport, started: boolean): void {
    const ledger = this.#heard(report);
    ledger.polling += started ? 1 : -1;
    this.#expire();
  }

  #heard(report: PlaceReport): RelayLedger {
    let ledger = this.#relays.get(report.relay);
    if (!ledger) {
      ledger = { held: new Map(), applied: new Map(), seenAt: 0, polling: 0 };
      this.#relays.set(report.relay, ledger);
    }
    ledger.seenAt = this.#now();
    if (report.instance !== this.#instance) return ledger; // of an earlier run: none of its places are here
    for (const [principal, ended] of Object.entries(report.ended)) {
      const applied = ledger.applied.get(principal) ?? 0;
      const held = ledger.held.get(principal) ?? [];
      for (let freed = applied; freed < ended && held.length > 0; freed++) held.pop()!.release();
      if (held.length === 0) ledger.held.delete(principal);
      ledger.applied.set(principal, Math.max(applied, ended));
    }
    return ledger;
  }

  /** Frees the places of relays not heard of for RELAY_PLACES_TIMEOUT_MS (and forgets idle ones). */
  #expire(): void {
    const now = this.#now();
    for (const [relay, ledger] of this.#relays) {
      if (ledger.polling > 0 || now - ledger.seenAt < RELAY_PLACES_TIMEOUT_MS) continue;
      for (const places of ledger.held.values()) for (const place of places) place.release();
      this.#relays.delete(relay);
    }
  }
}

/** The relay's side: its id, and how many places of each credential it gave back to the informer's run it knows. */
export class PlaceTally {
  readonly relay = crypto.randomUUID();
  #instance = "";
  #ended = new Map<string, number>();

  /** What the next poll or opening tells the informer's object. */
  report(): PlaceReport {
    return { relay: this.relay, instance: this.#instance, ended: Object.fromEntries(this.#ended) };
  }

  /** A place the informer's run `instance` granted for `principal`: counted ended once released. */
  granted(instance: string, principal: string): WatcherPlace {
    if (instance !== this.#instance) {
      // A restarted informer counts nothing of the earlier run's places: neither does the tally.
      this.#instance = instance;
      this.#ended = new Map();
    }
    let released = false;
    return {
      release: () => {
        if (released || instance !== this.#instance) return;
        released = true;
        this.#ended.set(principal, (this.#ended.get(principal) ?? 0) + 1);
      },
    };
  }
}

/**
 * A relay's own caps: MAX_WATCHERS_PER_OBJECT watches at most (its queues and CPU), none per
 * credential (the informer's object counts those: RelayPlaces). `joining` ties a place the informer
 * granted to the watch the hub opens, so that it is given back when that watch ends.
 */
export class RelayWatcherCaps extends WatcherCaps {
  #joining: WatcherPlace | undefined;

  constructor() {
    super({ perObject: MAX_WATCHERS_PER_OBJECT, perPrincipal: MAX_WATCHERS_PER_OBJECT });
  }

  /**
   * Runs `open` (WatchHub.tryOpen, which takes its place synchronously, before anything else) with
   * `granted` joined to the place it takes: released with it, or at once when `open` is refused.
   */
  joining<T>(granted: WatcherPlace, open: () => T): T {
    this.#joining = granted;
    try {
      return open();
    } finally {
      this.#joining?.release(); // refused, or no place taken: given back
      this.#joining = undefined;
    }
  }

  override take(principal: string): WatcherPlace | Refusal {
    const place = super.take(principal);
    const granted = this.#joining;
    if ("refused" in place || !granted) return place;
    this.#joining = undefined;
    return {
      release: () => {
        place.release();
        granted.release();
      },
    };
  }
}

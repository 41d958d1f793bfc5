/**
 * How many `/k8s` watches one informer object holds open (review A7, B3): at most
 * MAX_WATCHERS_PER_OBJECT in all, and at most MAX_WATCHERS_PER_PRINCIPAL of one credential, so that
 * one client (or one leaked token) cannot take every place.
 *
 * Guarantees:
 * - `take` decides at once, before any stream starts: a place, or a refusal the route answers as a
 *   429 TooManyRequests Status with `Retry-After` (what kube-apiserver's APF answers when it sheds).
 * - A place counts until it is released; releasing twice counts once. Counts live in memory: an
 *   evicted object has no open watches either.
 *
 * It does not queue: a watch is long-lived, so waiting for a place would hold the client for as
 * long as another watch lasts. The client retries after `Retry-After` (client-go does, by itself).
 */

/** Watches one informer object serves at most: each costs a queue (up to about 64 KiB) and CPU per event. */
export const MAX_WATCHERS_PER_OBJECT = 1_000;
/**
 * Watches of one credential on one informer at most (A7: a token holder opening thousands), in its
 * object or across its relays (relay-places.ts), unless the operator's WATCHERS_PER_CREDENTIAL says
 * otherwise (watcherLimitsOf).
 */
export const MAX_WATCHERS_PER_PRINCIPAL = 100;
/** Places free up when watches end (minutes apart at most, with timeouts of 30–60 min): retry after a few seconds. */
export const WATCHER_CAP_RETRY_AFTER_SECONDS = 5;

export interface WatcherPlace {
  release(): void;
}

export interface Refusal {
  refused: true;
  message: string;
  retryAfterSeconds: number;
}

export interface WatcherLimits {
  perObject: number;
  perPrincipal: number;
}

export class WatcherCaps {
  readonly #limits: WatcherLimits;
  #total = 0;
  readonly #byPrincipal = new Map<string, number>();

  constructor(limits: WatcherLimits = { perObject: MAX_WATCHERS_PER_OBJECT, perPrincipal: MAX_WATCHERS_PER_PRINCIPAL }) {
    this.#limits = limits;
  }

  get open(): number {
    return this.#total;
  }

  /** Why one more watch of `principal` would be refused now, if it would (nothing is taken). */
  refusal(principal: string): Refusal | undefined {
    const mine = this.#byPrincipal.get(principal) ?? 0;
    if (this.#total >= this.#limits.perObject) {
      return refusal(`too many watches of this resource are open (${this.#total}, at most ${this.#limits.perObject}): try again later`);
    }
    if (mine >= this.#limits.perPrincipal) {
      return refusal(
        `too many watches of this resource are open for credential '${principal}' (${mine}, at most ${this.#limits.perPrincipal}: the Worker's WATCHERS_PER_CREDENTIAL): close some, or try again later`,
      );
    }
    return undefined;
  }

  /** A place for one more watch of `principal` (a credential's name), or why there is none. */
  take(principal: string): WatcherPlace | Refusal {
    const refused = this.refusal(principal);
    if (refused) return refused;
    const mine = this.#byPrincipal.get(principal) ?? 0;
    this.#total++;
    this.#byPrincipal.set(principal, mine + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#total--;
        const left = (this.#byPrincipal.get(principal) ?? 1) - 1;
        if (left === 0) this.#byPrincipal.delete(principal);
        else this.#byPrincipal.set(principal, left);
      },
    };
  }
}

/**
 * The caps of a deployment: WATCHERS_PER_CREDENTIAL (a whole number, 1 to MAX_WATCHERS_PER_OBJECT)
 * sets the per-credential cap, e.g. for a team sharing one read token (issue 29); unset or not such
 * a number, MAX_WATCHERS_PER_PRINCIPAL, as WATCH_RELAYS falls back to its default.
 */
export function watcherLimitsOf(env: { WATCHERS_PER_CREDENTIAL?: string }): WatcherLimits {
  const value = Number(env.WATCHERS_PER_CREDENTIAL?.trim() || Number.NaN);
  const perPrincipal = Number.isSafeInteger(value) && value >= 1 ? Math.min(value, MAX_WATCHERS_PER_OBJECT) : MAX_WATCHERS_PER_PRINCIPAL;
  return { perObject: MAX_WATCHERS_PER_OBJECT, perPrincipal };
}

export function isRefusal(value: object): value is Refusal {
  return "refused" in value;
}

function refusal(message: string): Refusal {
  return { refused: true, message, retryAfterSeconds: WATCHER_CAP_RETRY_AFTER_SECONDS };
}

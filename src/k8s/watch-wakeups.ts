/**
 * When a watch hub's idle watchers wake (watch-hub.ts): at the hub's next `notify` (the log grew,
 * the cache advanced), or at the watcher's own due time (its next bookmark, its deadline), whichever
 * comes first.
 *
 * Guarantees:
 * - One timer for all waiting watchers, set for the earliest due time: a wait costs a promise and an
 *   array slot, no timer of its own. (A setTimeout, a Promise.race and a clearTimeout per watcher per
 *   wait were ~10% of the runtime's CPU at 1,000 watchers: issue 28, BENCHMARKS.md.) Watchers served
 *   in one turn share a due time (the clock stands still within a turn), so they share an entry.
 * - `notify` wakes every waiting watcher, and nothing is kept for them after: each asks again with
 *   its new due time.
 * - A due time is reached when the timer set for it fires, after its delay as measured when it was
 *   set (as a per-watcher timer would), whatever an injected clock says then.
 */

export class WatchWakeups {
  readonly #now: () => number;
  /** Waiting watchers by due time. */
  #waiting = new Map<number, (() => void)[]>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The due time the timer is set for. */
  #timerFor = Number.POSITIVE_INFINITY;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Resolves at the next `notify`, or once `due` (the clock's time) is reached. */
  until(due: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const waiting = this.#waiting.get(due);
      if (waiting) waiting.push(resolve);
      else this.#waiting.set(due, [resolve]);
      if (due < this.#timerFor) this.#schedule(due);
    });
  }

  /** Wakes every waiting watcher. */
  notify(): void {
    const waiting = this.#waiting;
    if (waiting.size === 0) return;
    this.#waiting = new Map();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerFor = Number.POSITIVE_INFINITY;
    for (const resolves of waiting.values()) for (const resolve of resolves) resolve();
  }

  #schedule(due: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerFor = due;
    this.#timer = setTimeout(() => this.#fire(due), Math.max(1, due - this.#now()));
  }

  /** The timer for `reached` fired: wakes the watchers due by then, and sets it for the next. */
  #fire(reached: number): void {
    this.#timer = undefined;
    this.#timerFor = Number.POSITIVE_INFINITY;
    let next = Number.POSITIVE_INFINITY;
    for (const [due, resolves] of this.#waiting) {
      if (due <= reached) {
        this.#waiting.delete(due);
        for (const resolve of resolves) resolve();
      } else next = Math.min(next, due);
    }
    if (next !== Number.POSITIVE_INFINITY) this.#schedule(next);
  }
}

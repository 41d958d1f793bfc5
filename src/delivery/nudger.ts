/**
 * Coalesced nudges: the informer tells its subscriptions "the log grew to `tail`" after each
 * applied batch, but never has more than one round of nudges in flight. Nudges that arrive during
 * a round collapse into one more round with the newest tail, so a burst of batches costs a few
 * rounds, not one per batch, and the last tail is always announced.
 *
 * Nudges are hints: a subscription that misses one still finds the events on its next poll. Each
 * nudge is a subrequest of the invocation that sends it: `withinBudget` bounds a round's fan-out.
 */
export class Nudger {
  readonly #round: (tail: number) => Promise<void>;
  #running = false;
  #pending: number | undefined;

  /** @param round nudges every subscriber once; its failures are its own to log. */
  constructor(round: (tail: number) => Promise<void>) {
    this.#round = round;
  }

  nudge(tail: number): void {
    if (this.#running) {
      this.#pending = Math.max(this.#pending ?? 0, tail);
      return;
    }
    this.#running = true;
    void this.#run(tail);
  }

  async #run(tail: number): Promise<void> {
    let next: number | undefined = tail;
    try {
      while (next !== undefined) {
        this.#pending = undefined;
        await this.#round(next).catch(() => undefined);
        next = this.#pending;
      }
    } finally {
      this.#running = false;
    }
  }
}

/**
 * The subscriptions a round may nudge now, each one subrequest taken from `budget`, and those left
 * for a later round once it is spent: past its margin nudging stops instead of failing (a
 * subscription not nudged still finds the events at its next poll), and the budget ends, so the
 * informer's slice ends and the next invocation, with a fresh budget, nudges the rest.
 */
export function withinBudget(ids: readonly string[], budget: { take(): boolean }): { now: string[]; later: string[] } {
  const now: string[] = [];
  for (const id of ids) {
    if (!budget.take()) return { now, later: ids.slice(now.length) };
    now.push(id);
  }
  return { now, later: [] };
}

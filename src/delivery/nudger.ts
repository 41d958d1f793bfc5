/**
 * Coalesced nudges: the informer tells its subscriptions "the log grew to `tail`" after each
 * applied batch, but never has more than one round of nudges in flight. Nudges that arrive during
 * a round collapse into one more round with the newest tail, so a burst of batches costs a few
 * rounds, not one per batch, and the last tail is always announced.
 *
 * Nudges are hints: a subscription that misses one still finds the events on its next poll.
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

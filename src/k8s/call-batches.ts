/**
 * Asks of one kind that go to another object together (review N10: a re-watch herd after a deploy
 * cost the informer's object one `relayOpen` and one `positionOf` per watcher). The first ask goes
 * at the end of the current turn; asks made while a call is on its way wait and go as one call when
 * it returns, at most BATCH_MAX a call. So a herd of any size costs a few calls per round trip.
 *
 * Guarantees:
 * - Each ask is answered by the call that carried it, never by one sent before it was made: an
 *   answer is at least as new as its ask (what the informer's object answered when the call reached
 *   it), as one call per ask would be.
 * - A failed call fails the asks it carried, and only them; the next asks go in a new call.
 */

/** Asks one call carries at most (a relay has at most MAX_WATCHERS_PER_OBJECT watchers, each asks one). */
export const BATCH_MAX = 1_000;

export class CallBatches<K, V> {
  readonly #call: (keys: K[]) => Promise<V[]>;
  #waiting: { key: K; resolve: (value: V) => void; reject: (error: unknown) => void }[] = [];
  #sending = false;

  /** @param call answers the keys it is given in their order. */
  constructor(call: (keys: K[]) => Promise<V[]>) {
    this.#call = call;
  }

  ask(key: K): Promise<V> {
    const answer = new Promise<V>((resolve, reject) => this.#waiting.push({ key, resolve, reject }));
    if (!this.#sending) void this.#send();
    return answer;
  }

  async #send(): Promise<void> {
    this.#sending = true;
    try {
      await null; // the asks of this turn go together
      while (this.#waiting.length > 0) {
        const batch = this.#waiting.splice(0, BATCH_MAX);
        try {
          const values = await this.#call(batch.map((ask) => ask.key));
          batch.forEach((ask, i) => ask.resolve(values[i]!));
        } catch (error) {
          for (const ask of batch) ask.reject(error);
        }
      }
    } finally {
      this.#sending = false;
    }
  }
}

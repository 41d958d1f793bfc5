/** Time and randomness are injected so the logic is deterministic under test (STYLE.md rule 10). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls `fire` after `ms` unless the returned function is called first; absent, `setTimeout`.
   * A test's clock runs it in simulated time, so an hour of timers takes no hour (watch windows).
   */
  setTimer?(ms: number, fire: () => void): () => void;
}

/** A number in [0, 1). */
export type Random = () => number;

export const systemClock: Clock = { now: () => Date.now() };
export const systemRandom: Random = () => Math.random();

/**
 * Lets other events (queries, status calls) run between long stretches of synchronous work: a
 * Durable Object serves nothing while JavaScript runs without awaiting.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Time and randomness are injected so the logic is deterministic under test (STYLE.md rule 10). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** A number in [0, 1). */
export type Random = () => number;

export const systemClock: Clock = { now: () => Date.now() };
export const systemRandom: Random = () => Math.random();

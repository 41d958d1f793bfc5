/**
 * Exponential backoff with jitter for the reflector, as client-go's (reflector.go:54-68, v0.30
 * `NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)`): waits of [0.8, 1.6) s, [1.6, 3.2) s, …
 * capped at [30, 60) s, about 0.22 requests/s in the worst case. If no backoff was asked for during
 * the last 2 minutes the API server is taken as healthy and the delay starts over.
 *
 * Pure: the state is plain data the informer persists, so backoff survives eviction; the caller
 * turns the wait into an alarm time and never sleeps.
 */
import type { Random } from "../clock.ts";

export const BACKOFF_INITIAL_MS = 800;
export const BACKOFF_MAX_MS = 30_000;
export const BACKOFF_FACTOR = 2;
/** Jitter 1.0: the wait is the delay plus up to one more delay. */
export const BACKOFF_JITTER = 1;
export const BACKOFF_RESET_MS = 120_000;

export interface BackoffState {
  /** The base delay of the next wait. */
  delayMs: number;
  /** When the last wait was asked for; null if never. */
  lastAt: number | null;
}

export const initialBackoff: BackoffState = { delayMs: BACKOFF_INITIAL_MS, lastAt: null };

/** The wait before the next attempt and the state after it. */
export function nextBackoff(state: BackoffState, now: number, random: Random): { waitMs: number; state: BackoffState } {
  const healthy = state.lastAt === null || now - state.lastAt > BACKOFF_RESET_MS;
  const delayMs = healthy ? BACKOFF_INITIAL_MS : state.delayMs;
  const waitMs = Math.round(delayMs + random() * BACKOFF_JITTER * delayMs);
  return { waitMs, state: { delayMs: Math.min(delayMs * BACKOFF_FACTOR, BACKOFF_MAX_MS), lastAt: now } };
}

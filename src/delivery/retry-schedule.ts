/**
 * What to do after a delivery attempt (issue "2/2 Webhook subscribers", API.md): a 2xx is
 * delivered; `410 Gone` disables the subscription (the receiver said it is gone for good);
 * anything else — another status, a timeout, a refused connection — is retried with exponential
 * backoff and full jitter (the AWS "full jitter" scheme: a uniform wait up to the exponential
 * bound, so many subscriptions failing together do not retry in step), never sooner than a
 * `Retry-After` the receiver sent, until the retry budget since the first failure is spent; then
 * the event is dead-lettered and the stream goes on. What can never be sent as it is (`unsendable`)
 * is dead-lettered at once.
 *
 * Pure: time and randomness come in, so the schedule is tested to the millisecond.
 */
import type { Random } from "../clock.ts";

export const RETRY_INITIAL_MS = 1_000;
export const RETRY_MAX_MS = 60 * 60_000;
export const RETRY_BUDGET_MS = 24 * 60 * 60_000;
/** Each attempt may take this long before it counts as failed (API.md: 15 s). */
export const ATTEMPT_TIMEOUT_MS = 15_000;

export interface AttemptOutcome {
  /** HTTP status, absent when no answer came (timeout, connection refused). */
  status?: number;
  /** The receiver's Retry-After, already parsed. */
  retryAfterMs?: number;
  /** It can never be sent as it is (an event past a queue message's size): dead-lettered at once, not retried. */
  unsendable?: boolean;
}

export type Decision =
  | { kind: "delivered" }
  | { kind: "disable" }
  | { kind: "dead-letter" }
  | { kind: "retry"; at: number };

export interface RetryState {
  /** Failed attempts so far for the event at the head of the stream. */
  failures: number;
  /** When the first of them happened. */
  firstFailureAt: number;
}

export function decide(
  outcome: AttemptOutcome,
  state: RetryState | undefined,
  now: number,
  random: Random,
  budgetMs = RETRY_BUDGET_MS,
): Decision {
  if (outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300) return { kind: "delivered" };
  if (outcome.status === 410) return { kind: "disable" };
  if (outcome.unsendable) return { kind: "dead-letter" };
  const failures = (state?.failures ?? 0) + 1;
  const firstFailureAt = state?.firstFailureAt ?? now;
  const bound = Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** Math.min(failures - 1, 32));
  const wait = Math.max(Math.round(random() * bound), Math.min(outcome.retryAfterMs ?? 0, RETRY_MAX_MS));
  const at = now + wait;
  if (at - firstFailureAt > budgetMs) return { kind: "dead-letter" };
  return { kind: "retry", at };
}

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date; undefined if absent or bad. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

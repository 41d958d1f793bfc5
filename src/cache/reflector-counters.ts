/**
 * What the reflector counts for operators (src/metrics): relists by cause, list pages, watch starts
 * and drops, and a bounded reason for the last error. The counts live in the reflector's memory,
 * which is persisted with every step anyway, so counting costs no statement of its own.
 *
 * Guarantees:
 * - Counters only grow, and survive evictions and reconfiguration (`restart` keeps them): they are
 *   Prometheus counters as they stand. Only deleting the informer resets them.
 * - Every label value comes from a closed set (RELIST_CAUSES, ErrorReason), never from an error's
 *   text, so a metric built on them has bounded cardinality.
 */
import {
  isConnectionFailure,
  isExpired,
  isTooLargeResourceVersion,
  isTooManyRequests,
  KubeApiError,
} from "../kube/errors.ts";
import { WatchDecodeError } from "../kube/watch-decoder.ts";

/**
 * Why a list that follows a sync happened: `expired` (410 Gone), `too_large_rv` (the server is
 * behind our RV), `short_watch` (a watch closed at once, client-go's VeryShortWatchError), `error`
 * (any other failure of a list or watch), `config` (what is listed, or its transform, changed).
 */
export const RELIST_CAUSES = ["expired", "too_large_rv", "short_watch", "error", "config"] as const;
export type RelistCause = (typeof RELIST_CAUSES)[number];

export interface ReflectorCounters {
  relists: Record<RelistCause, number>;
  /** List pages received (each page of each list, relists included). */
  listPages: number;
  /** Watches opened. */
  watchStarts: number;
  /** Watches that ended in an error after opening (broke, went silent, ERROR event, very short, bad line). */
  watchDrops: number;
}

export const initialCounters = (): ReflectorCounters => ({
  relists: { expired: 0, too_large_rv: 0, short_watch: 0, error: 0, config: 0 },
  listPages: 0,
  watchStarts: 0,
  watchDrops: 0,
});

/** The counters of a memory persisted before they existed start at zero. */
export function countersOf(memory: { counters?: ReflectorCounters }): ReflectorCounters {
  const counters = memory.counters ?? initialCounters();
  return { ...counters, relists: { ...initialCounters().relists, ...counters.relists } };
}

/** A watch that closed at once without events (client-go VeryShortWatchError). */
export class VeryShortWatchError extends Error {
  override readonly name = "VeryShortWatchError";
}

/** The relist an error leads to, when it leads to one. */
export function relistCauseOf(error: unknown): RelistCause {
  if (isExpired(error)) return "expired";
  if (isTooLargeResourceVersion(error)) return "too_large_rv";
  if (error instanceof VeryShortWatchError) return "short_watch";
  return "error";
}

/** The last error's kind: a closed set, so it can be a metric label. */
export const ERROR_REASONS = [
  "Expired",
  "TooLargeResourceVersion",
  "TooManyRequests",
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "ClientError",
  "ServerError",
  "ConnectionFailed",
  "MalformedWatch",
  "VeryShortWatch",
  "WatchSilent",
  "Internal",
  "Config",
  "Storage",
] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

export function errorReasonOf(error: unknown): ErrorReason {
  if (isExpired(error)) return "Expired";
  if (isTooLargeResourceVersion(error)) return "TooLargeResourceVersion";
  if (isTooManyRequests(error)) return "TooManyRequests";
  if (isConnectionFailure(error)) return "ConnectionFailed";
  if (error instanceof KubeApiError) {
    if (error.code === 401) return "Unauthorized";
    if (error.code === 403) return "Forbidden";
    if (error.code === 404) return "NotFound";
    if (error.code >= 500) return "ServerError";
    return "ClientError";
  }
  if (error instanceof WatchDecodeError) return "MalformedWatch";
  if (error instanceof VeryShortWatchError) return "VeryShortWatch";
  if (error instanceof WatchSilentError) return "WatchSilent";
  return "Internal";
}

/** A watch that stayed silent past its server timeout: a dead connection. */
export class WatchSilentError extends Error {
  override readonly name = "WatchSilentError";
}

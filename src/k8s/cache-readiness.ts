/**
 * What `/k8s` answers while an informer's cache is not synced (its first list, or the relist after a
 * restart, is not applied yet), for a get, a list and a watch alike, before anything is read from it:
 *
 * - while it is syncing: 429 TooManyRequests with `Retry-After: 1`, as kube-apiserver answers while
 *   its watch cache (re)initialises (cacher `ready.check`, "storage is (re)initializing"); client-go
 *   and kubectl wait and retry. Never a NotFound or a partial list: a cache that has not listed
 *   everything would say that existing objects do not exist (review F4/F5).
 * - where it will not sync by waiting (the upstream server does not serve the resource, or refuses
 *   our credential, or the informer's settings are wrong): 503 ServiceUnavailable with the
 *   informer's last error and no Retry-After. kube-apiserver has no such state; the error is passed
 *   on so that kubectl prints why at once instead of retrying a 429 ten times into the same answer.
 */
import type { ErrorReason } from "../cache/reflector-counters.ts";
import type { ResourceInfo } from "./catalog.ts";
import { qualified, StatusError, statusErrors } from "./status.ts";

/** Whether a cache may be read, and if not, why it will not become readable by itself. */
export interface CacheReadiness {
  synced: boolean;
  /** The informer's last error, set only when it is of a kind that retrying does not cure. */
  blockedBy?: string;
}

/** Errors a relist does not get past without a change by someone: the cache stays unsynced. */
const BLOCKING_REASONS: ReadonlySet<ErrorReason> = new Set(["NotFound", "Unauthorized", "Forbidden", "Config"]);

/** The readiness an informer's state gives: its last error counts only while it is not synced. */
export function readinessOf(synced: boolean, lastError: { message: string; reason: ErrorReason } | null): CacheReadiness {
  if (synced || lastError === null || !BLOCKING_REASONS.has(lastError.reason)) return { synced };
  return { synced, blockedBy: lastError.message };
}

/** The API server's retry hint while its cache initialises. */
const RETRY_AFTER_SECONDS = 1;

/** The Status to answer instead of reading an unsynced cache. */
export function notReadyError(info: Pick<ResourceInfo, "plural" | "group">, readiness: CacheReadiness): StatusError {
  if (readiness.blockedBy !== undefined) {
    return statusErrors.unavailable(`the cache of ${qualified(info)} cannot sync: ${readiness.blockedBy}`);
  }
  return new StatusError(429, "TooManyRequests", "storage is (re)initializing", { retryAfterSeconds: RETRY_AFTER_SECONDS });
}

/** Throws the not-ready Status unless the cache is synced. */
export function requireReady(info: Pick<ResourceInfo, "plural" | "group">, readiness: CacheReadiness): void {
  if (!readiness.synced) throw notReadyError(info, readiness);
}

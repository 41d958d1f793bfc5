/**
 * What the reflector remembers across steps besides its state (reflector.ts), persisted with it
 * after every step, and the updates a step makes to it: an error recorded, a counter moved.
 *
 * Guarantees: memory is plain JSON, so backoff, counters and the last error survive eviction; an
 * error is recorded with its text (for status), its kind from a closed set and its time (for
 * metrics, reflector-counters.ts); counting rides in the memory's next save and costs no statement.
 */
import { KubeApiError } from "../kube/errors.ts";
import { type BackoffState, initialBackoff } from "./backoff.ts";
import { countersOf, type ErrorReason, errorReasonOf, type ReflectorCounters, type RelistCause } from "./reflector-counters.ts";

export interface ReflectorMemory {
  /** client-go isLastSyncResourceVersionUnavailable: the next list must use RV "". */
  rvUnavailable: boolean;
  /** client-go paginatedResult: a list at RV "0" came back paginated, so keep asking for pages. */
  paginatedResult: boolean;
  backoff: BackoffState;
  relists: number;
  watchRestarts: number;
  /** When the current or last watch opened. */
  watchSince: number | null;
  lastError: string | null;
  /** The last error's kind (a closed set) and when it happened, for metrics. */
  lastErrorReason?: ErrorReason | null;
  lastErrorAt?: number | null;
  /** Why the next list is a relist: set on each way back to idle. */
  relistCause?: RelistCause;
  /** Operators' counters (reflector-counters.ts); absent in memory persisted before they existed. */
  counters?: ReflectorCounters;
}

export const initialMemory: ReflectorMemory = {
  rvUnavailable: false,
  paginatedResult: false,
  backoff: initialBackoff,
  relists: 0,
  watchRestarts: 0,
  watchSince: null,
  lastError: null,
};

/** Records `error` as the last one: its text for status, its kind and time for metrics. */
export function withError(memory: ReflectorMemory, error: unknown, now: number): ReflectorMemory {
  return { ...memory, lastError: describe(error), lastErrorReason: errorReasonOf(error), lastErrorAt: now };
}

/** Updates the operators' counters (reflector-counters.ts); they ride in the memory's next save. */
export function count(memory: ReflectorMemory, update: (counters: ReflectorCounters) => ReflectorCounters): ReflectorMemory {
  return { ...memory, counters: update(countersOf(memory)) };
}

/** A list starts over a synced cache: a relist, counted under the cause its way to idle recorded. */
export function countRelist(memory: ReflectorMemory): ReflectorMemory {
  const cause = memory.relistCause ?? "error";
  return count({ ...memory, relists: memory.relists + 1 }, (c) => ({ ...c, relists: { ...c.relists, [cause]: c.relists[cause] + 1 } }));
}

/** A watch that opened ended in an error. */
export const dropped = (memory: ReflectorMemory) => count(memory, (c) => ({ ...c, watchDrops: c.watchDrops + 1 }));

function describe(error: unknown): string {
  if (error instanceof KubeApiError) {
    return `${error.code > 0 ? `${error.code} ` : ""}${error.reason ? `${error.reason}: ` : ""}${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

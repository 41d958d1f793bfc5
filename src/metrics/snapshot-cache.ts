/**
 * What `/metrics` and the status page serve: a snapshot at most `METRICS_SNAPSHOT_SECONDS` (15 by
 * default) old, per isolate and per reader's scope. A collection asks every informer and
 * subscription object of the readable clusters (collect.ts); Prometheus servers, several replicas
 * of them and status pages refreshing every 15 s would otherwise wake every object for each
 * (issue 20; review B6).
 *
 * Guarantees:
 * - A snapshot is served only to readers of the same scope (the clusters they may read): a scoped
 *   reader never gets a snapshot collected for a wider one.
 * - No promise is shared across requests (review B4: a request's pending I/O dies with it): a
 *   request that finds no fresh snapshot collects its own and stores it once done; concurrent
 *   misses collect once each.
 * - At most MAX_SCOPES snapshots are kept; the oldest goes first.
 */
import { ApiError } from "../errors.ts";

export const DEFAULT_SNAPSHOT_SECONDS = 15;
/** The longest a deployment may let snapshots live: past this a scrape shows a stale world. */
export const MAX_SNAPSHOT_SECONDS = 300;
const MAX_SCOPES = 32;

/** `METRICS_SNAPSHOT_SECONDS` as milliseconds: a whole number of seconds within 0 (always fresh) and MAX_SNAPSHOT_SECONDS. */
export function snapshotMaxAgeMs(setting: string | undefined): number {
  const seconds = setting === undefined || setting.trim() === "" ? DEFAULT_SNAPSHOT_SECONDS : Number(setting);
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_SNAPSHOT_SECONDS) {
    throw new ApiError("Misconfigured", `METRICS_SNAPSHOT_SECONDS must be a whole number of seconds from 0 to ${MAX_SNAPSHOT_SECONDS}, not '${setting}'`);
  }
  return seconds * 1000;
}

export class SnapshotCache<T> {
  readonly #entries = new Map<string, { at: number; value: T }>();

  /** The snapshot of `scope` if younger than `maxAgeMs` at `now`, else a new one from `collect`. */
  async get(scope: string, now: number, maxAgeMs: number, collect: () => Promise<T>): Promise<T> {
    const kept = this.#entries.get(scope);
    if (kept !== undefined && now - kept.at < maxAgeMs) return kept.value;
    const value = await collect();
    if (maxAgeMs > 0) {
      this.#entries.delete(scope);
      this.#entries.set(scope, { at: now, value });
      for (const oldest of this.#entries.keys()) {
        if (this.#entries.size <= MAX_SCOPES) break;
        this.#entries.delete(oldest);
      }
    }
    return value;
  }
}

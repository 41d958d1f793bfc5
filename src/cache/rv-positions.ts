/**
 * Where a resourceVersion lands in the informer's log (client-go's RV semantics over our log), and
 * which resourceVersions came from an API server the cluster has since left (`Informer.restart`
 * with `serverMoved`).
 *
 * Guarantees:
 * - A watch from an RV starts after the last mark first made at or below it (cache-progress.ts), so
 *   it misses nothing after the RV and replays nothing the RV already covers (`skipUpTo`).
 * - Except at the RV of a relist's inferred deletes, which all share it (process-deltas.ts): a
 *   client that stopped among them resumes from that RV, so a watch from it starts before the run
 *   they close and is given all of them again (the hub skips the run's other events), never a gap.
 *   A repeated delete of an object the client no longer holds is a no-op for client-go's informer
 *   and kube-rs' store. When no mark before that run is left (retention passed it, or the cluster
 *   moved to another API server), it starts after the run as for any RV.
 * - An RV the log no longer reaches back to is expired, never served from a later position.
 * - After a move to another API server, an RV handed out before the move is expired rather than
 *   compared with the new server's (two etcds' revisions do not compare): the client relists.
 */
import { compareResourceVersions } from "../kube/resource-version.ts";
import type { CacheProgress } from "./cache-progress.ts";
import type { EventLog } from "./event-log.ts";
import type { InformerState } from "./informer-state.ts";

/** Where a watch starts: after log position `after`, skipping events at or below `skipUpTo`; or expired. */
export type WatchStart = { after: number; skipUpTo?: string } | "expired";

export class ResourceVersionPositions {
  readonly #log: EventLog;
  readonly #progress: CacheProgress;
  readonly #state: InformerState;

  constructor(log: EventLog, progress: CacheProgress, state: InformerState) {
    this.#log = log;
    this.#progress = progress;
    this.#state = state;
  }

  /**
   * Where a watch from `resourceVersion` starts (client-go's RV semantics over our log): after the
   * last mark first made at or below it; when the RVs that mark covers stop below it, events that
   * follow with an RV at or below it were seen already (`skipUpTo`). Expired when the log no longer
   * reaches back to it.
   */
  positionOf(resourceVersion: string): WatchStart {
    const { head } = this.#log.bounds();
    // A binary search over the marks (cache-progress.ts), O(log n) rows read, not a scan of all (review B8).
    const { found, last } = this.#progress.markForWatch(resourceVersion, head - 1);
    if (found === undefined || this.fromEarlierServer(resourceVersion, last!.rv)) return "expired";
    // Within a mark's RVs (a list's or a bookmark's RV: the usual start) nothing after it was seen yet.
    if (compareResourceVersions(resourceVersion, found.rv) > 0) return { after: found.seq, skipUpTo: resourceVersion };
    if (found.inferredDeletes && compareResourceVersions(resourceVersion, found.firstRv) === 0) {
      // The mark before their run (none: forgotten with a server move, or retention passed it).
      const runStart = this.#progress.lastMarkBelow(found.seq);
      if (runStart > 0 && runStart + 1 >= head) return { after: runStart, skipUpTo: resourceVersion };
    }
    return { after: found.seq };
  }

  /**
   * Whether `resourceVersion`, beyond `newest` (the current server's newest mark for a watch, the
   * cache's RV for a `/k8s` list), is one we handed out before the cluster moved to another API
   * server (restart's `serverMoved`). Two etcds' revisions do not compare: served as a future RV, it
   * would skip the new server's events until its RVs passed it (a list would wait for it, then 504).
   * An API server never changes etcd, so it has no such case; expired makes the client relist,
   * which is always right. (An old RV that happens to fall among the new server's cannot be told
   * from a new one; the marks before the move are gone, so below them a watch is expired too.)
   */
  fromEarlierServer(resourceVersion: string, newest: string): boolean {
    if (compareResourceVersions(resourceVersion, newest) <= 0) return false;
    const earlier = this.#state.earlierServerRv();
    return earlier !== "" && compareResourceVersions(resourceVersion, earlier) <= 0;
  }

  /**
   * The cluster moved to another API server: its resourceVersions are another etcd's. The marks
   * (positions of the old server's RVs) are dropped, and the highest RV handed out before is kept
   * so that a watch or a list from one of them is expired (fromEarlierServer) rather than served.
   */
  forgetServerInTx(): void {
    const candidates = [
      this.#state.earlierServerRv(),
      this.#progress.highestRv(),
      this.#progress.lastSyncResourceVersion(),
    ];
    const highest = candidates.reduce((a, b) => (compareResourceVersions(a, b) >= 0 ? a : b));
    this.#state.setEarlierServerRvInTx(highest);
    this.#progress.forgetMarksInTx();
  }
}

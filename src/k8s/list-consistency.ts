/**
 * The resourceVersion a `/k8s` list is served at, decided as kube-apiserver 1.32 decides it
 * (kubernetes-api-server-facts.md §4 "List resourceVersion"; cacher.go `shouldDelegateList`,
 * etcd3 store.go `GetList`), from ListOptions list-options.ts already validated:
 *
 * - unset: the most recent data (`latest`): the cache once it reached the upstream's current
 *   resourceVersion (consistent-reads.ts), as the 1.31+ watch cache serves it, else 504;
 * - "0": the cache as it is. At "0" the watch cache ignores `limit` (the whole list, no
 *   continue); a continued list is etcd's, which keeps its limit;
 * - N with Exact, or the legacy N + limit: the cache only while it is at exactly N. Older is 410:
 *   the server would read N from etcd, but we keep no history of objects; ahead is 504 at once;
 * - N otherwise (NotOlderThan): the cache once it is at least at N. A cache behind N is waited for
 *   up to FRESHNESS_WAIT_MS, as the watch cache waits, then 504 Too large resource version;
 * - N ahead of the cache that the API server the cluster moved away from handed out
 *   (Informer.fromEarlierServer) is 410 at once, Exact or not: another etcd's revision, which no
 *   wait makes comparable (review F16). An API server never changes etcd, so it has no such case.
 * - `continue` with a resourceVersion other than "0" is the server's 400.
 *
 * A get at N waits as a NotOlderThan list does (`getResourceVersion`).
 *
 * It holds no state: the route decides with `listResourceVersion` before it reads anything, then
 * reads through `readAt`, whose reads and waits are the informer object's.
 */
import { compareResourceVersions } from "../kube/resource-version.ts";
import type { Consistency } from "./consistent-reads.ts";
import { checkResourceVersionSyntax, type ListOptionsQuery } from "./list-options.ts";
import { statusErrors } from "./status.ts";
import { FRESHNESS_WAIT_MS } from "./watch-hub.ts";

/** What a list's pages must be served at. */
export type ListResourceVersion = { match: "latest" } | { match: "any" } | { match: "notOlderThan"; rv: string } | { match: "exact"; rv: string };

/** The resourceVersion a list is served at and the limit that applies to its page (undefined: none). */
export function listResourceVersion(o: ListOptionsQuery, limit: number | undefined): { at: ListResourceVersion; limit: number | undefined } {
  const { resourceVersion: rv, resourceVersionMatch: match } = o;
  const continues = o.continue !== undefined;
  // etcd3 store.go: only a resourceVersion that names a point conflicts with a token's own.
  if (continues && rv !== undefined && rv !== "0") throw statusErrors.badRequest("specifying resource version is not allowed when using continue");
  const pageLimit = limit === 0 || (rv === "0" && !continues) ? undefined : limit;
  // A continued list is served at its token's resourceVersion: only a first page is made consistent.
  if (rv === undefined && !continues) return { at: { match: "latest" }, limit: pageLimit };
  if (rv === undefined || rv === "0") return { at: { match: "any" }, limit: pageLimit };
  const exact = match === "Exact" || (match === undefined && limit !== undefined && limit > 0);
  return { at: exact ? { match: "exact", rv } : { match: "notOlderThan", rv }, limit: pageLimit };
}

/**
 * The resourceVersion a get is served at (GetOptions has no resourceVersionMatch): unset or "0" the
 * cache as it is (an unset one made consistent first by the route), N at least N, waited for as a
 * NotOlderThan list is (cacher.go Get: `WaitUntilFreshAndGet`). Not a decimal: the storage's 400.
 */
export function getResourceVersion(rv: string | undefined): ListResourceVersion {
  checkResourceVersionSyntax(rv);
  return rv === undefined ? { match: "latest" } : rv === "0" ? { match: "any" } : { match: "notOlderThan", rv };
}

/**
 * What waiting for a resourceVersion found (InformerObject.awaitResourceVersion): the cache's RV
 * then, or that the RV is the earlier server's (not waited for).
 */
export type Freshness = { current: string } | "earlierServer";

/** How `readAt` reads the cache: its first page as it is now (readiness checked), and waits for it. */
export interface ListReads<A extends { resourceVersion: string }> {
  read(): Promise<A>;
  /** Waits up to `waitMs` for the cache to reach `rv`; answers without waiting once it has. */
  reach(rv: string, waitMs: number): Promise<Freshness>;
  /** Brings the cache up to the upstream's current resourceVersion (InformerObject.awaitConsistency). */
  consistent(): Promise<Consistency>;
}

/**
 * The first page of a list served at `at`: read once, and once more after a wait when a
 * NotOlderThan resourceVersion was ahead; or the Status the server answers instead (410, 504). The
 * wait is the informer object's (it serves other requests meanwhile); the Worker only awaits it.
 */
export async function readAt<A extends { resourceVersion: string }>(at: ListResourceVersion, reads: ListReads<A>, waitMs = FRESHNESS_WAIT_MS): Promise<A> {
  if (at.match === "latest") {
    const consistency = await reads.consistent();
    if ("behind" in consistency) throw statusErrors.tooLargeResourceVersion(consistency.behind.target, consistency.behind.current);
  }
  let answer = await reads.read();
  if (at.match === "any" || at.match === "latest") return answer;
  if (compareResourceVersions(at.rv, answer.resourceVersion) > 0) {
    // Only the watch cache waits; an Exact list is etcd's, answered at once.
    const freshness = await reads.reach(at.rv, at.match === "exact" ? 0 : waitMs);
    if (freshness === "earlierServer") throw statusErrors.expiredList();
    if (compareResourceVersions(at.rv, freshness.current) > 0) throw statusErrors.tooLargeResourceVersion(at.rv, freshness.current);
    answer = await reads.read();
  }
  if (at.match === "exact" && compareResourceVersions(at.rv, answer.resourceVersion) !== 0) throw statusErrors.expiredList();
  return answer;
}

/**
 * Which clusters the status page and `/metrics` show a caller (issue 31 item 3; docs/security.md
 * "Member-cluster RBAC: the Worker's own read routes"). Both show, per informer, counts and health
 * of the whole cluster (objects held, events per minute, watch state, last error, its
 * subscriptions' delivery state) — never an object, a name or a namespace of one.
 *
 * Contract:
 * - A `scopes` cluster is shown to every credential that may read it, as before.
 * - An `rbac` cluster is shown only to a caller whom its RBAC lets `get` the non-resource URL
 *   `/metrics` (as kube-apiserver's `system:monitoring` ClusterRole does), or who is in
 *   `system:masters`: the server shows its own counts of every resource (apiserver_storage_objects)
 *   to them alone, and the cache's counts are the same kind of figure. Everyone else sees nothing of
 *   the cluster here — the objects they may list stay readable through `/informers/{name}/objects`.
 * - Fail closed: an `rbac` cluster whose RBAC cannot be read now is left out (the rest of the page
 *   still answers).
 * - Decided per request from the authorizer the isolate holds (http/read-authorization.ts), after the
 *   snapshot, which stays shared by every caller of one credential scope (metrics-snapshot.ts).
 */
import type { Context } from "hono";
import { decide } from "../auth/rbac/read-authorization.ts";
import { ApiError } from "../errors.ts";
import type { MetricsSnapshot } from "../metrics/collect.ts";
import type { AppEnv } from "./app-env.ts";
import { readAuthorizationOf } from "./read-authorization.ts";

/** The non-resource request whose permission shows an `rbac` cluster's counts. */
const SHOWS_COUNTS = { verb: "get", path: "/metrics" } as const;

/** Whether the caller may see `cluster`'s counts and health. */
async function showsCounts(c: Context<AppEnv>, cluster: string): Promise<boolean> {
  try {
    return decide(await readAuthorizationOf(c, cluster), SHOWS_COUNTS).allowed;
  } catch (error) {
    if (error instanceof ApiError && error.code === "ServiceUnavailable") return false;
    throw error;
  }
}

/** `snapshot` without the clusters whose counts the caller may not see (the contract above). */
export async function visibleSnapshot(c: Context<AppEnv>, snapshot: MetricsSnapshot): Promise<MetricsSnapshot> {
  const clusters = new Set([...snapshot.clusters.map((cluster) => cluster.name), ...snapshot.informers.map((informer) => informer.identity.cluster)]);
  const hidden = new Set<string>();
  // One cluster after another: a cold isolate builds each rbac cluster's authorizer from up to 16 MiB
  // of RBAC objects (rbac-source.ts), and several at once could hold more than its bound.
  for (const cluster of clusters) if (!(await showsCounts(c, cluster))) hidden.add(cluster);
  if (hidden.size === 0) return snapshot;
  return {
    ...snapshot,
    clusters: snapshot.clusters.filter((cluster) => !hidden.has(cluster.name)),
    informers: snapshot.informers.filter((informer) => !hidden.has(informer.identity.cluster)),
  };
}

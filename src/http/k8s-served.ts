/**
 * Which resources `/k8s` serves in a cluster (k8s/served.ts), as this isolate derives them from its
 * registry snapshot (registry-snapshot.ts): kept per cluster while the registry's version stands, a
 * miss looked up again once in a fresh registry (the resource may be new) and then remembered.
 */
import { informerStub as clusterInformerStub } from "../clusters/stubs.ts";
import type { ResourceInfo } from "../k8s/catalog.ts";
import { withSynthesizedNamespaces } from "../k8s/namespace-list.ts";
import { type ServedResource, servedResources } from "../k8s/served.ts";
import { statusErrors } from "../k8s/status.ts";
import { clusterOf } from "./auth.ts";
import type { K8sContext } from "./k8s-request.ts";
import { registryCache, registrySource } from "./registry-snapshot.ts";
import { placementIn } from "./known-informer.ts";

/**
 * How long a cluster's served resources stand while the registry is unchanged: while a custom
 * resource is not described yet (its CRD unread, no object cached), about as often as the registry
 * is checked; once all are, a minute (a CRD may change its printer columns).
 */
const UNDESCRIBED_TTL_MS = 1_000;
const DESCRIBED_TTL_MS = 60_000;
/**
 * Each cluster's served resources, as this isolate last derived them from its registry snapshot
 * (registry-snapshot.ts) and version. Keyed by cluster, so one cluster's resources never answer for
 * another's; only known clusters get here (requireK8sCluster), so the map holds at most one entry
 * per configured cluster.
 */
const registries = new Map<string, { version: string; at: number; undescribed: boolean; served: ServedResource[] }>();

export async function served(c: K8sContext, fresh = false): Promise<ServedResource[]> {
  const cluster = clusterOf(c);
  const snapshot = await registryCache.snapshot(registrySource(c.env), fresh);
  const cached = registries.get(cluster);
  if (cached && cached.version === snapshot.version && !(fresh && cached.undescribed)) {
    if (Date.now() - cached.at < (cached.undescribed ? UNDESCRIBED_TTL_MS : DESCRIBED_TTL_MS)) return cached.served;
  }
  let undescribed = false;
  const list = await servedResources(
    snapshot.informers.filter((informer) => informer.cluster === cluster),
    async (name) => {
      const described = await clusterInformerStub(c.env, { cluster, name }, placementIn(c.env, snapshot, cluster)).resourceDescription();
      if (described.ok && described.value) return described.value;
      undescribed = true;
      return undefined;
    },
  );
  registries.set(cluster, { version: snapshot.version, at: Date.now(), undescribed, served: list });
  return list;
}

/**
 * What `found` finds in the served resources; on a miss they are derived again from a freshly
 * checked registry (the resource may be new), unless the same miss happened within MISS_TTL_MS.
 */
async function servedLookup<T>(c: K8sContext, missKey: string, found: (list: ServedResource[]) => T | undefined): Promise<T | undefined> {
  const first = found(await served(c));
  const key = `k8s ${clusterOf(c)} ${missKey}`;
  if (first !== undefined || registryCache.missedRecently(key)) return first;
  const again = found(await served(c, true));
  if (again === undefined) registryCache.recordMiss(key);
  return again;
}

export async function findResource(c: K8sContext, group: string, version: string, plural: string): Promise<ServedResource | undefined> {
  return servedLookup(c, `resource ${group}/${version}/${plural}`, (list) =>
    list.find((r) => r.info.group === group && r.info.version === version && r.info.plural === plural),
  );
}

/** What discovery shows: the served resources, and the synthesized namespaces (k8s/namespace-list.ts). */
export const infos = async (c: K8sContext): Promise<ResourceInfo[]> => withSynthesizedNamespaces((await served(c)).map((r) => r.info));

/** The served resources if `found` holds of them (looked up again on a miss: it may be new); else 404. */
export async function infosWith(c: K8sContext, missKey: string, found: (infos: ResourceInfo[]) => boolean): Promise<ResourceInfo[]> {
  const list = await servedLookup(c, missKey, (served) => {
    const infos = served.map((r) => r.info);
    return found(infos) ? infos : undefined;
  });
  if (list === undefined) throw statusErrors.noSuchResource();
  return list;
}

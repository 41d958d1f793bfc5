/**
 * Discovery documents for the resources this deployment serves under `/k8s`, shaped as
 * kube-apiserver 1.32 writes them (kubernetes-api-server-facts.md §1): the legacy documents
 * (`/api`, `/api/v1`, `/apis`, `/apis/{group}`, `/apis/{group}/{version}`) and the aggregated v2 /
 * v2beta1 `APIGroupDiscoveryList` kubectl asks for first. Only mirrored resources are listed, with
 * the verbs the cache serves: get, list and watch. Subresources are not listed (a get of status and
 * scale is served all the same: subresources.ts).
 */
import { type ResourceInfo, groupVersion } from "./catalog.ts";

export const VERBS = ["get", "list", "watch"] as const;

function apiResource(info: ResourceInfo): Record<string, unknown> {
  return {
    name: info.plural,
    singularName: info.singular,
    namespaced: info.namespaced,
    kind: info.kind,
    verbs: [...VERBS],
    ...(info.shortNames.length > 0 ? { shortNames: info.shortNames } : {}),
    ...(info.categories.length > 0 ? { categories: info.categories } : {}),
  };
}

/** `/api`: APIVersions, with no apiVersion (as the server writes it). */
export function apiVersions(host: string): Record<string, unknown> {
  return { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: host }] };
}

/** `/api/v1` or `/apis/{group}/{version}`: APIResourceList (the core one has no apiVersion). */
export function apiResourceList(group: string, version: string, served: readonly ResourceInfo[]): Record<string, unknown> {
  const resources = served.filter((info) => info.group === group && info.version === version).map(apiResource);
  const gv = groupVersion({ group, version });
  return group === "" ? { kind: "APIResourceList", groupVersion: gv, resources } : { kind: "APIResourceList", apiVersion: "v1", groupVersion: gv, resources };
}

function groupEntry(group: string, served: readonly ResourceInfo[]): Record<string, unknown> {
  const versions = [...new Set(served.filter((info) => info.group === group).map((info) => info.version))].map((version) => ({
    groupVersion: `${group}/${version}`,
    version,
  }));
  return { name: group, versions, preferredVersion: versions[0] };
}

/** The non-core groups that serve something, in name order. */
export function groupsOf(served: readonly ResourceInfo[]): string[] {
  return [...new Set(served.map((info) => info.group).filter((group) => group !== ""))].sort();
}

/** `/apis`: APIGroupList (the core group is absent). */
export function apiGroupList(served: readonly ResourceInfo[]): Record<string, unknown> {
  return { kind: "APIGroupList", apiVersion: "v1", groups: groupsOf(served).map((group) => groupEntry(group, served)) };
}

/** `/apis/{group}`: APIGroup. */
export function apiGroup(group: string, served: readonly ResourceInfo[]): Record<string, unknown> {
  return { kind: "APIGroup", apiVersion: "v1", ...groupEntry(group, served) };
}

/**
 * Aggregated discovery: `/api` holds the core group (its name empty), `/apis` every other group.
 * `responseKind` group and version are empty as they equal the served group version.
 */
export function aggregatedDiscovery(core: boolean, served: readonly ResourceInfo[], version: "v2" | "v2beta1"): Record<string, unknown> {
  const groups = core ? [""] : groupsOf(served);
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groups.map((group) => {
      const inGroup = served.filter((info) => info.group === group);
      const versions = [...new Set(inGroup.map((info) => info.version))];
      return {
        metadata: { ...(group === "" ? {} : { name: group }), creationTimestamp: null },
        versions: versions.map((v) => ({
          version: v,
          freshness: "Current",
          resources: inGroup
            .filter((info) => info.version === v)
            .map((info) => ({
              resource: info.plural,
              responseKind: { group: "", version: "", kind: info.kind },
              scope: info.namespaced ? "Namespaced" : "Cluster",
              singularResource: info.singular,
              verbs: [...VERBS],
              ...(info.shortNames.length > 0 ? { shortNames: info.shortNames } : {}),
              ...(info.categories.length > 0 ? { categories: info.categories } : {}),
            })),
        })),
      };
    }),
  };
}

export function aggregatedContentType(version: "v2" | "v2beta1"): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

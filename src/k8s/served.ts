/**
 * Which informer answers for which resource under `/k8s`, and what a request path asks for.
 *
 * The rule for a resource mirrored by several informers: the cache can only stand in for the API
 * server where it holds the whole resource, so only an informer without `namespace`,
 * `labelSelector` or `fieldSelector` serves it; among several such informers, the first by name.
 * A resource mirrored only partially is not served (404, absent from discovery): answering a list
 * from a partial cache would tell clients that objects outside the selection do not exist.
 * A custom resource is served as soon as its CRD can be read (its kind, scope, names and printer
 * columns come from it), or else once its informer caches an object (kind and scope from it).
 */
import { type ResourceInfo, describeResource } from "./catalog.ts";
import type { ResourceDescription } from "../kube/resource-description.ts";

/**
 * What this module reads of a registered informer (config/informer-registry.ts, its spec from
 * config.ts): named here, so that the read API does not import the configuration layer above it.
 */
export interface ServingInformer {
  name: string;
  spec: {
    resource: string;
    apiVersion?: string | undefined;
    namespace?: string | undefined;
    labelSelector?: string | undefined;
    fieldSelector?: string | undefined;
    indexers: Record<string, string>;
  };
}

export interface ServedResource {
  informer: string;
  info: ResourceInfo;
  /** Field paths the informer indexes: field selectors may name them too. */
  indexedFields: string[];
}

/** What an informer's object says about its custom resource (InformerObject.resourceDescription), or undefined while nothing tells. */
export type DescriptionOf = (informer: string) => Promise<ResourceDescription | undefined>;

/** Whether an informer holds its whole resource, so that it may answer for it (the rule above; search uses it too). */
export function holdsWholeResource(spec: Pick<ServingInformer["spec"], "namespace" | "labelSelector" | "fieldSelector">): boolean {
  return spec.namespace === undefined && !spec.labelSelector && !spec.fieldSelector;
}

export async function servedResources(informers: readonly ServingInformer[], descriptionOf: DescriptionOf): Promise<ServedResource[]> {
  const byResource = new Map<string, ServedResource>();
  for (const { name, spec } of informers) {
    if (!holdsWholeResource(spec)) continue;
    let info: ResourceInfo | undefined;
    try {
      info = describeResource(spec.resource, spec.apiVersion) ?? describeResource(spec.resource, spec.apiVersion, await descriptionOf(name));
    } catch {
      continue; // a spec the registry took earlier that no longer resolves: not served
    }
    if (!info) continue;
    const key = `${info.group}/${info.plural}`;
    if (!byResource.has(key)) byResource.set(key, { informer: name, info, indexedFields: Object.values(spec.indexers) });
  }
  return [...byResource.values()];
}

/** What a path below `/api/v1` or `/apis/{group}/{version}` names. */
export type ResourceRequest =
  | { kind: "collection"; plural: string; namespace?: string; watch: boolean }
  | { kind: "object"; plural: string; namespace?: string; name: string; watch: boolean; subresource?: string };

/**
 * Parses the segments after the group version: `pods`, `pods/x`, `namespaces/ns/pods[/x]`, an
 * object's subresource (`pods/x/status`; k8s/subresources.ts says which are served), and the
 * deprecated `watch/…` forms (a watch; a name becomes a metadata.name field selector). Anything
 * else: undefined (404).
 */
export function parseResourcePath(segments: readonly string[]): ResourceRequest | undefined {
  let rest = [...segments];
  const watch = rest[0] === "watch";
  if (watch) rest = rest.slice(1);
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1]!;
    rest = rest.slice(2);
  }
  if (rest.length === 1) return { kind: "collection", plural: rest[0]!, ...(namespace === undefined ? {} : { namespace }), watch };
  if (rest.length === 2) {
    return { kind: "object", plural: rest[0]!, name: rest[1]!, ...(namespace === undefined ? {} : { namespace }), watch };
  }
  if (rest.length === 3 && !watch) {
    return { kind: "object", plural: rest[0]!, name: rest[1]!, ...(namespace === undefined ? {} : { namespace }), watch, subresource: rest[2]! };
  }
  return undefined;
}

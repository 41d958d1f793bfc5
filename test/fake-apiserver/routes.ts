/**
 * Maps a Kubernetes URL path (without the `/clusters/{id}` prefix) to what it names: a discovery
 * document, a collection (all namespaces, one namespace, or cluster-scoped), or one object. The
 * deprecated `/watch/` path segment is accepted and turns a GET into a watch. Anything else is
 * "not found" (subresources, unknown groups, a namespace on a cluster-scoped resource).
 */
import { findResource, RESOURCES, type ResourceDef } from "./resources.ts";

export type KubeRoute =
  | { kind: "version" }
  | { kind: "openapi"; document: "v2" | "v3" | { groupVersion: string } }
  | { kind: "crd"; name: string }
  | { kind: "apiVersions" }
  | { kind: "groupList" }
  | { kind: "group"; group: string }
  | { kind: "resourceList"; group: string; version: string }
  | { kind: "collection"; def: ResourceDef; namespace: string | undefined; forceWatch: boolean }
  | { kind: "object"; def: ResourceDef; namespace: string | undefined; name: string; forceWatch: boolean }
  | { kind: "notFound" };

const groupVersions = new Set(RESOURCES.map((r) => `${r.group}/${r.version}`));

export function routeKubePath(path: string): KubeRoute {
  let segments: string[];
  try {
    segments = path.split("/").filter((s) => s !== "").map(decodeURIComponent);
  } catch {
    return { kind: "notFound" };
  }
  const [root, a, b] = segments;
  if (root === "version" && segments.length === 1) return { kind: "version" };
  if (root === "openapi") {
    if (segments.length === 2 && (a === "v2" || a === "v3")) return { kind: "openapi", document: a };
    if (a === "v3" && segments.length > 2) return { kind: "openapi", document: { groupVersion: segments.slice(2).join("/") } };
    return { kind: "notFound" };
  }
  if (root === "apis" && a === "apiextensions.k8s.io" && b === "v1" && segments[3] === "customresourcedefinitions" && segments.length === 5) {
    return { kind: "crd", name: segments[4]! };
  }
  let group: string;
  let version: string;
  let rest: string[];
  if (root === "api") {
    if (segments.length === 1) return { kind: "apiVersions" };
    group = "";
    version = a!;
    rest = segments.slice(2);
  } else if (root === "apis") {
    if (segments.length === 1) return { kind: "groupList" };
    if (segments.length === 2) {
      return RESOURCES.some((r) => r.group === a) ? { kind: "group", group: a! } : { kind: "notFound" };
    }
    group = a!;
    version = b!;
    rest = segments.slice(3);
  } else {
    return { kind: "notFound" };
  }
  if (!groupVersions.has(`${group}/${version}`)) return { kind: "notFound" };
  if (rest.length === 0) return { kind: "resourceList", group, version };

  let forceWatch = false;
  if (rest[0] === "watch") {
    forceWatch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  let resource: string;
  let name: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    resource = rest[2]!;
    name = rest[3];
    if (rest.length > 4) return { kind: "notFound" };
  } else {
    if (rest.length > 2) return { kind: "notFound" };
    resource = rest[0]!;
    name = rest[1];
  }
  const def = findResource(group, version, resource);
  if (!def || (namespace !== undefined && !def.namespaced)) return { kind: "notFound" };
  if (name === undefined) return { kind: "collection", def, namespace, forceWatch };
  return { kind: "object", def, namespace, name, forceWatch };
}

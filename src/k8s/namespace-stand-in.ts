/**
 * `GET /api/v1/namespaces/{name}` when namespaces are not mirrored. kubectl and dashboards ask it
 * (kubectl after a NotFound, to say whether the namespace or the object is missing). We cannot
 * list namespaces, but a namespace that holds an object of a mirrored resource exists; so that one
 * gets an Active stand-in, and any other name the real server's 404 `namespaces "x" not found` —
 * a mistyped namespace is reported as one, as against the real server. An empty namespace is
 * reported missing: the one case we get wrong, and the cost of not mirroring namespaces.
 *
 * The stand-in differs from a real Namespace: it has no uid, creationTimestamp or
 * resourceVersion of its own (we know none; in a synthesized list or watch it carries that list's
 * or event's), and an annotation says what it is, so no client takes it for the real object.
 * The list and watch of namespaces are namespace-list.ts's.
 */
import { type ResourceInfo, describeResource } from "./catalog.ts";
import { statusErrors } from "./status.ts";

export const NAMESPACES: ResourceInfo = describeResource("namespaces", undefined)!;

/** Marks the stand-in, so a client (or an operator reading `-o yaml`) can tell it from a real Namespace. */
export const STAND_IN_ANNOTATION = "edge-informer.dev/stand-in";

const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Whether any mirrored resource holds an object in the namespace. */
export type HoldsNamespace = (namespace: string) => Promise<boolean>;

/** The stand-in Namespace as JSON text, or throws the server's NotFound. */
export async function namespaceStandIn(name: string, holdsNamespace: HoldsNamespace): Promise<string> {
  if (!NAMESPACE_NAME.test(name) || name.length > 63 || !(await holdsNamespace(name))) throw statusErrors.notFound(NAMESPACES, name);
  return standInNamespace(name);
}

/** The stand-in of a namespace known to hold objects, as JSON text (also each item of namespace-list.ts's list). */
export function standInNamespace(name: string, resourceVersion?: string): string {
  return JSON.stringify({
    kind: "Namespace",
    apiVersion: "v1",
    // The label kube-apiserver gives every namespace (1.21+): namespace selectors name it.
    metadata: {
      name,
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      labels: { "kubernetes.io/metadata.name": name },
      annotations: { [STAND_IN_ANNOTATION]: "true" },
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  });
}

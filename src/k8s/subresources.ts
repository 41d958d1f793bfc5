/**
 * The subresources `/k8s` answers on a get, as kube-apiserver 1.32 has them (its discovery documents:
 * kubernetes-api-server-facts.md §1.1, §1.3):
 * - `status`, for the built-in kinds that have it: the object itself (the status strategy's get
 *   returns the whole object);
 * - `scale`, for deployments, replica sets, stateful sets and replication controllers: an
 *   autoscaling/v1 Scale built from the object (registry `scaleFromDeployment` and its siblings:
 *   the object's name, namespace, uid, resourceVersion and creationTimestamp, `spec.replicas`,
 *   `status.replicas` and the selector as a string), printed NAME DESIRED AVAILABLE in a Table;
 * - what only the cluster can serve (`log`, `exec`, `attach`, `portforward`, `proxy`, …): refused
 *   with 403 Forbidden saying so, as the server refuses a user without the right (a 404 would read
 *   as "no such pod");
 * anything else is the server's 404 for an unknown path. Custom resources' status and scale
 * subresources (declared in their CRDs) are not served.
 */
import type { KubeObject } from "../kube/types.ts";
import type { ResourceInfo } from "./catalog.ts";
import { column, NAME_COLUMN } from "./printers/columns.ts";
import { labelSelectorString } from "./printers/label-selector.ts";
import type { Printer } from "./printers/printer.ts";

/** Built-in resources (kubectl's `resource.group` name) with a `status` subresource. */
const WITH_STATUS = new Set([
  "pods",
  "services",
  "replicationcontrollers",
  "resourcequotas",
  "namespaces",
  "nodes",
  "persistentvolumes",
  "persistentvolumeclaims",
  "deployments.apps",
  "replicasets.apps",
  "statefulsets.apps",
  "daemonsets.apps",
  "jobs.batch",
  "cronjobs.batch",
  "horizontalpodautoscalers.autoscaling",
  "poddisruptionbudgets.policy",
  "ingresses.networking.k8s.io",
  "customresourcedefinitions.apiextensions.k8s.io",
]);
/** Built-in resources with a `scale` subresource. */
const WITH_SCALE = new Set(["replicationcontrollers", "deployments.apps", "replicasets.apps", "statefulsets.apps"]);
/** Subresources only the cluster can serve (they read a node or a container, or write). */
const NOT_SERVED: Record<string, ReadonlySet<string>> = {
  pods: new Set(["log", "exec", "attach", "portforward", "proxy", "binding", "eviction", "ephemeralcontainers", "resize"]),
  services: new Set(["proxy"]),
  nodes: new Set(["proxy"]),
};

/** What a get of `info`'s `subresource` is: the object, its Scale, a refusal, or nothing (404). */
export function subresourceOf(info: Pick<ResourceInfo, "name" | "builtIn">, subresource: string): "status" | "scale" | "refused" | undefined {
  if (!info.builtIn) return undefined;
  if (subresource === "status" && WITH_STATUS.has(info.name)) return "status";
  if (subresource === "scale" && WITH_SCALE.has(info.name)) return "scale";
  if (NOT_SERVED[info.name]?.has(subresource)) return "refused";
  return undefined;
}

/** The autoscaling/v1 Scale of a deployment, replica set, stateful set or replication controller. */
export function scaleOf(object: KubeObject): Record<string, unknown> {
  const { name, namespace, uid, resourceVersion, creationTimestamp } = object.metadata;
  const spec = (object.spec ?? {}) as { replicas?: number; selector?: unknown };
  const status = (object.status ?? {}) as { replicas?: number };
  // A replication controller's selector is a plain map; the others' a LabelSelector.
  const selector = object.kind === "ReplicationController" ? labelSelectorString({ matchLabels: spec.selector }) : labelSelectorString(spec.selector);
  return {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: { name, ...(namespace === undefined ? {} : { namespace }), uid, resourceVersion, creationTimestamp },
    spec: spec.replicas ? { replicas: spec.replicas } : {},
    // ScaleStatus.replicas is always written; selector is omitempty.
    status: { replicas: status.replicas ?? 0, ...(selector ? { selector } : {}) },
  };
}

/** The Scale printer (printers.go `printScale`): Name, Desired (spec.replicas), Available (status.replicas). */
export const SCALE_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column("Desired", "integer", "Number of desired replicas"),
    column("Available", "integer", "Number of actual replicas"),
  ],
  print: (object) => {
    const scale = object as { metadata: { name?: string }; spec?: { replicas?: number }; status?: { replicas?: number } };
    return { cells: [scale.metadata.name ?? "", scale.spec?.replicas ?? 0, scale.status?.replicas ?? 0] };
  },
};

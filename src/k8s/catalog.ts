/**
 * What the API server says about each built-in resource we can mirror: kind, list kind, singular
 * name, short names, categories and the field labels its field selectors accept
 * (kubernetes-api-server-facts.md §1.2, §3; KK pkg/apis/{core,apps,batch}/v1/conversion.go). Discovery, Status
 * errors and field-selector validation of `/k8s` read it. Custom resources are described from
 * their informer's spec and their CRD (kube/resource-description.ts), or a cached object.
 */
import { resolveResource } from "../kube/resources.ts";
import type { PrinterColumn, ResourceDescription } from "../kube/resource-description.ts";

export interface ResourceInfo {
  /** kubectl's name: `pods`, `deployments.apps`, `widgets.example.com`. */
  name: string;
  group: string;
  version: string;
  /** Plural, as in URLs. */
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Field paths a field selector may name, besides metadata.name and metadata.namespace; null: any (custom resources). */
  fieldLabels: readonly string[] | null;
  /** A built-in type: its list items carry no kind/apiVersion (a custom resource's, unstructured, do). */
  builtIn: boolean;
  /** A custom resource's additionalPrinterColumns (from its CRD), for Table output; none for built-ins. */
  printerColumns: readonly PrinterColumn[];
}

interface Entry {
  kind: string;
  shortNames?: string[];
  all?: true;
  fields?: readonly string[];
}

const POD_FIELDS = [
  "spec.nodeName",
  "spec.restartPolicy",
  "spec.schedulerName",
  "spec.serviceAccountName",
  "spec.hostNetwork",
  "status.phase",
  "status.podIP",
  "status.podIPs",
  "status.nominatedNodeName",
];
const EVENT_FIELDS = [
  "involvedObject.kind",
  "involvedObject.namespace",
  "involvedObject.name",
  "involvedObject.uid",
  "involvedObject.apiVersion",
  "involvedObject.resourceVersion",
  "involvedObject.fieldPath",
  "reason",
  "reportingComponent",
  "source",
  "type",
];

/** Keyed by kubectl's `resource.group` name, as src/kube/resources.ts. */
const ENTRIES: Record<string, Entry> = {
  pods: { kind: "Pod", shortNames: ["po"], all: true, fields: POD_FIELDS },
  services: { kind: "Service", shortNames: ["svc"], all: true },
  endpoints: { kind: "Endpoints", shortNames: ["ep"] },
  configmaps: { kind: "ConfigMap", shortNames: ["cm"] },
  secrets: { kind: "Secret", fields: ["type"] },
  serviceaccounts: { kind: "ServiceAccount", shortNames: ["sa"] },
  persistentvolumeclaims: { kind: "PersistentVolumeClaim", shortNames: ["pvc"] },
  events: { kind: "Event", shortNames: ["ev"], fields: EVENT_FIELDS },
  replicationcontrollers: { kind: "ReplicationController", shortNames: ["rc"], all: true, fields: ["status.replicas"] },
  limitranges: { kind: "LimitRange", shortNames: ["limits"] },
  resourcequotas: { kind: "ResourceQuota", shortNames: ["quota"] },
  podtemplates: { kind: "PodTemplate" },
  namespaces: { kind: "Namespace", shortNames: ["ns"], fields: ["status.phase"] },
  nodes: { kind: "Node", shortNames: ["no"], fields: ["spec.unschedulable"] },
  persistentvolumes: { kind: "PersistentVolume", shortNames: ["pv"] },
  "deployments.apps": { kind: "Deployment", shortNames: ["deploy"], all: true },
  "replicasets.apps": { kind: "ReplicaSet", shortNames: ["rs"], all: true, fields: ["status.replicas"] },
  "statefulsets.apps": { kind: "StatefulSet", shortNames: ["sts"], all: true },
  "daemonsets.apps": { kind: "DaemonSet", shortNames: ["ds"], all: true },
  "controllerrevisions.apps": { kind: "ControllerRevision" },
  "jobs.batch": { kind: "Job", all: true, fields: ["status.successful"] },
  "cronjobs.batch": { kind: "CronJob", shortNames: ["cj"], all: true },
  "horizontalpodautoscalers.autoscaling": { kind: "HorizontalPodAutoscaler", shortNames: ["hpa"], all: true },
  "poddisruptionbudgets.policy": { kind: "PodDisruptionBudget", shortNames: ["pdb"] },
  "ingresses.networking.k8s.io": { kind: "Ingress", shortNames: ["ing"] },
  "networkpolicies.networking.k8s.io": { kind: "NetworkPolicy", shortNames: ["netpol"] },
  "ingressclasses.networking.k8s.io": { kind: "IngressClass" },
  "endpointslices.discovery.k8s.io": { kind: "EndpointSlice" },
  "events.events.k8s.io": { kind: "Event", shortNames: ["ev"] },
  "leases.coordination.k8s.io": { kind: "Lease" },
  "roles.rbac.authorization.k8s.io": { kind: "Role" },
  "rolebindings.rbac.authorization.k8s.io": { kind: "RoleBinding" },
  "clusterroles.rbac.authorization.k8s.io": { kind: "ClusterRole" },
  "clusterrolebindings.rbac.authorization.k8s.io": { kind: "ClusterRoleBinding" },
  "storageclasses.storage.k8s.io": { kind: "StorageClass", shortNames: ["sc"] },
  "customresourcedefinitions.apiextensions.k8s.io": { kind: "CustomResourceDefinition", shortNames: ["crd", "crds"] },
};

/**
 * Describes the resource an informer mirrors. `custom` (from its CRD or a cached object) describes
 * a custom resource; without it a custom resource cannot be described and the answer is undefined.
 */
export function describeResource(resource: string, apiVersion: string | undefined, custom?: ResourceDescription): ResourceInfo | undefined {
  const ref = resolveResource(resource, apiVersion);
  const entry = Object.hasOwn(ENTRIES, resource) ? ENTRIES[resource] : undefined;
  const kind = entry?.kind ?? custom?.kind;
  if (kind === undefined) return undefined;
  return {
    name: resource,
    group: ref.group,
    version: ref.version,
    plural: ref.resource,
    singular: entry ? kind.toLowerCase() : (custom?.singular ?? kind.toLowerCase()),
    kind,
    // A custom resource's scope is unknown to the table: its CRD (or a cached object) tells.
    namespaced: ref.namespaced ?? custom?.namespaced ?? true,
    shortNames: entry?.shortNames ?? custom?.shortNames ?? [],
    categories: entry?.all ? ["all"] : (custom?.categories ?? []),
    fieldLabels: entry ? (entry.fields ?? []) : null,
    builtIn: entry !== undefined,
    printerColumns: custom?.printerColumns ?? [],
  };
}

/** `v1` or `apps/v1`. */
export function groupVersion(info: Pick<ResourceInfo, "group" | "version">): string {
  return info.group === "" ? info.version : `${info.group}/${info.version}`;
}

/**
 * The built-in resource a name means to kubectl, when it is not the name we key on: its bare plural
 * (`deployments` → `deployments.apps`), its singular (`pod` → `pods`), a short name (`deploy`,
 * `po`) or its kind (`Deployment`), alone or with its group (`deployment.apps`). kubectl resolves
 * all of these (its RESTMapper); an informer spec names the resource exactly, so a spec using one is
 * told which name was meant. Undefined for a name that is exact already, or means nothing built in.
 * Where two groups share a name (`ev`, `events`), kubectl's preference wins: the core group, listed first.
 */
export function meantBuiltIn(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (Object.hasOwn(ENTRIES, lower) && lower === name) return undefined;
  if (Object.hasOwn(ENTRIES, lower)) return lower;
  const dot = lower.indexOf(".");
  const head = dot === -1 ? lower : lower.slice(0, dot);
  const group = dot === -1 ? undefined : lower.slice(dot + 1);
  for (const [full, entry] of Object.entries(ENTRIES)) {
    const fullDot = full.indexOf(".");
    const plural = fullDot === -1 ? full : full.slice(0, fullDot);
    const fullGroup = fullDot === -1 ? "" : full.slice(fullDot + 1);
    if (group !== undefined && group !== fullGroup) continue;
    if (head === plural || head === entry.kind.toLowerCase() || entry.shortNames?.includes(head)) return full;
  }
  return undefined;
}

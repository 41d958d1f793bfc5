/**
 * The resource types the fake serves and what a real apiserver says about each: group/version, kind,
 * scope, discovery names, and which field selectors it accepts (others get 400, as on a real server).
 */

export interface ResourceDef {
  /** Plural, as in URLs. */
  name: string;
  singularName: string;
  kind: string;
  listKind: string;
  /** "" for the core group. */
  group: string;
  version: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Built-in types omit kind/apiVersion on list items; custom resources (unstructured) keep them. */
  builtIn: boolean;
  /** Field selector paths the apiserver converts for this type. */
  fieldLabels: string[];
}

const POD_FIELDS = [
  "metadata.name",
  "metadata.namespace",
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
const NAMESPACED_META = ["metadata.name", "metadata.namespace"];

export const RESOURCES: readonly ResourceDef[] = [
  {
    name: "pods",
    singularName: "pod",
    kind: "Pod",
    listKind: "PodList",
    group: "",
    version: "v1",
    namespaced: true,
    shortNames: ["po"],
    categories: ["all"],
    builtIn: true,
    fieldLabels: POD_FIELDS,
  },
  {
    name: "configmaps",
    singularName: "configmap",
    kind: "ConfigMap",
    listKind: "ConfigMapList",
    group: "",
    version: "v1",
    namespaced: true,
    shortNames: ["cm"],
    categories: [],
    builtIn: true,
    fieldLabels: NAMESPACED_META,
  },
  {
    // Served so informers of secrets can be tested (issue 17 item 8: allowSensitive, keepSecretData).
    name: "secrets",
    singularName: "secret",
    kind: "Secret",
    listKind: "SecretList",
    group: "",
    version: "v1",
    namespaced: true,
    shortNames: [],
    categories: [],
    builtIn: true,
    fieldLabels: [...NAMESPACED_META, "type"],
  },
  {
    name: "namespaces",
    singularName: "namespace",
    kind: "Namespace",
    listKind: "NamespaceList",
    group: "",
    version: "v1",
    namespaced: false,
    shortNames: ["ns"],
    categories: [],
    builtIn: true,
    fieldLabels: ["metadata.name", "status.phase"],
  },
  {
    name: "nodes",
    singularName: "node",
    kind: "Node",
    listKind: "NodeList",
    group: "",
    version: "v1",
    namespaced: false,
    shortNames: ["no"],
    categories: [],
    builtIn: true,
    fieldLabels: ["metadata.name", "spec.unschedulable"],
  },
  {
    name: "deployments",
    singularName: "deployment",
    kind: "Deployment",
    listKind: "DeploymentList",
    group: "apps",
    version: "v1",
    namespaced: true,
    shortNames: ["deploy"],
    categories: ["all"],
    builtIn: true,
    fieldLabels: NAMESPACED_META,
  },
  // For the Table comparisons of kubectl-tables-kinds.e2e.test.ts (issue 18, F19): one resource
  // per kind with a printers.go handler that test covers.
  ...[
    builtIn("services", "Service", "", "v1", { shortNames: ["svc"], categories: ["all"] }),
    builtIn("endpoints", "Endpoints", "", "v1", { shortNames: ["ep"] }),
    builtIn("events", "Event", "", "v1", { shortNames: ["ev"], fieldLabels: [...NAMESPACED_META, "involvedObject.kind", "involvedObject.name", "reason", "type"] }),
    builtIn("persistentvolumeclaims", "PersistentVolumeClaim", "", "v1", { shortNames: ["pvc"] }),
    builtIn("replicasets", "ReplicaSet", "apps", "v1", { shortNames: ["rs"], categories: ["all"], fieldLabels: [...NAMESPACED_META, "status.replicas"] }),
    builtIn("statefulsets", "StatefulSet", "apps", "v1", { shortNames: ["sts"], categories: ["all"] }),
    builtIn("daemonsets", "DaemonSet", "apps", "v1", { shortNames: ["ds"], categories: ["all"] }),
    builtIn("jobs", "Job", "batch", "v1", { categories: ["all"], fieldLabels: [...NAMESPACED_META, "status.successful"] }),
    builtIn("cronjobs", "CronJob", "batch", "v1", { shortNames: ["cj"], categories: ["all"] }),
    builtIn("ingresses", "Ingress", "networking.k8s.io", "v1", { shortNames: ["ing"] }),
    builtIn("horizontalpodautoscalers", "HorizontalPodAutoscaler", "autoscaling", "v2", { shortNames: ["hpa"], categories: ["all"] }),
  ],
  // The member cluster's RBAC objects (issue 31), which a cluster with `authorization: rbac` mirrors.
  builtIn("roles", "Role", "rbac.authorization.k8s.io", "v1", {}),
  builtIn("rolebindings", "RoleBinding", "rbac.authorization.k8s.io", "v1", {}),
  { ...builtIn("clusterroles", "ClusterRole", "rbac.authorization.k8s.io", "v1", { fieldLabels: ["metadata.name"] }), namespaced: false },
  { ...builtIn("clusterrolebindings", "ClusterRoleBinding", "rbac.authorization.k8s.io", "v1", { fieldLabels: ["metadata.name"] }), namespaced: false },
  {
    name: "widgets",
    singularName: "widget",
    kind: "Widget",
    listKind: "WidgetList",
    group: "example.com",
    version: "v1",
    namespaced: true,
    shortNames: ["wd"],
    categories: [],
    builtIn: false,
    // A CRD's selectableFields (apiextensions v1.32+) add to metadata.name/namespace.
    fieldLabels: [...NAMESPACED_META, "spec.color"],
  },
  {
    // A custom resource with additionalPrinterColumns of every type (crd.ts).
    name: "gadgets",
    singularName: "gadget",
    kind: "Gadget",
    listKind: "GadgetList",
    group: "example.com",
    version: "v1",
    namespaced: true,
    shortNames: ["gd"],
    categories: [],
    builtIn: false,
    fieldLabels: NAMESPACED_META,
  },
  {
    // A custom resource named like a built-in: kind Pod, plural pods, in example.com. It prints as
    // a custom resource (Name, Age), never with the core Pod's columns.
    name: "pods",
    singularName: "pod",
    kind: "Pod",
    listKind: "PodList",
    group: "example.com",
    version: "v1",
    namespaced: true,
    shortNames: [],
    categories: [],
    builtIn: false,
    fieldLabels: NAMESPACED_META,
  },
];

/** A namespaced built-in resource: its names, and the discovery extras a real server lists. */
function builtIn(
  name: string,
  kind: string,
  group: string,
  version: string,
  extra: { shortNames?: string[]; categories?: string[]; fieldLabels?: string[] },
): ResourceDef {
  return {
    name,
    singularName: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    group,
    version,
    namespaced: true,
    shortNames: extra.shortNames ?? [],
    categories: extra.categories ?? [],
    builtIn: true,
    fieldLabels: extra.fieldLabels ?? NAMESPACED_META,
  };
}

export function apiVersionOf(def: ResourceDef): string {
  return def.group === "" ? def.version : `${def.group}/${def.version}`;
}

/** By URL coordinates. */
export function findResource(group: string, version: string, name: string): ResourceDef | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.name === name);
}

/** By a control-API name: "pods", "deployments.apps", "widgets.example.com", or a kind ("Pod"). */
export function resourceByName(name: string): ResourceDef | undefined {
  return RESOURCES.find(
    (r) => r.name === name || `${r.name}.${r.group}` === name || r.kind === name || r.shortNames.includes(name),
  );
}

/** The message a real apiserver gives for an unsupported field selector path on this type. */
export function unsupportedFieldMessage(def: ResourceDef, path: string): string {
  if (def.group === "") return `field label not supported: ${path}`;
  return `"${path}" is not a known field selector: only "${def.fieldLabels.join('", "')}"`;
}

/** Adds kind/apiVersion in the order the apiserver serializes them (typed structs vs unstructured maps). */
export function withTypeMeta(def: ResourceDef, obj: object): object {
  return def.builtIn
    ? { kind: def.kind, apiVersion: apiVersionOf(def), ...obj }
    : { apiVersion: apiVersionOf(def), kind: def.kind, ...obj };
}

/** An object as a LIST returns it: bare for built-ins, with type meta for custom resources. */
export function asListItem(def: ResourceDef, obj: object): object {
  return def.builtIn ? obj : withTypeMeta(def, obj);
}

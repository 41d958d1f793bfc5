/**
 * Turns an informer's kubectl-style resource name ("pods", "deployments.apps", "widgets.example.com")
 * into the collection URL path of the API server. Built-in resources resolve without an apiVersion;
 * custom resources need one. Namespaced-ness is known for built-ins so a namespace on a
 * cluster-scoped resource is refused up front instead of failing at the first list.
 */
import { ValidationError } from "../errors.ts";

export interface ResourceRef {
  /** "" for the core group. */
  group: string;
  version: string;
  /** Plural lower-case name, e.g. "pods". */
  resource: string;
  /** undefined when unknown (custom resources). */
  namespaced: boolean | undefined;
}

interface BuiltIn {
  version: string;
  namespaced: boolean;
}

/** Group/version and scope of the built-in resources, keyed by kubectl's `resource.group` name. */
const BUILT_INS: Record<string, BuiltIn> = {
  pods: { version: "v1", namespaced: true },
  services: { version: "v1", namespaced: true },
  endpoints: { version: "v1", namespaced: true },
  configmaps: { version: "v1", namespaced: true },
  secrets: { version: "v1", namespaced: true },
  serviceaccounts: { version: "v1", namespaced: true },
  persistentvolumeclaims: { version: "v1", namespaced: true },
  events: { version: "v1", namespaced: true },
  replicationcontrollers: { version: "v1", namespaced: true },
  limitranges: { version: "v1", namespaced: true },
  resourcequotas: { version: "v1", namespaced: true },
  podtemplates: { version: "v1", namespaced: true },
  namespaces: { version: "v1", namespaced: false },
  nodes: { version: "v1", namespaced: false },
  persistentvolumes: { version: "v1", namespaced: false },
  "deployments.apps": { version: "v1", namespaced: true },
  "replicasets.apps": { version: "v1", namespaced: true },
  "statefulsets.apps": { version: "v1", namespaced: true },
  "daemonsets.apps": { version: "v1", namespaced: true },
  "controllerrevisions.apps": { version: "v1", namespaced: true },
  "jobs.batch": { version: "v1", namespaced: true },
  "cronjobs.batch": { version: "v1", namespaced: true },
  "horizontalpodautoscalers.autoscaling": { version: "v2", namespaced: true },
  "poddisruptionbudgets.policy": { version: "v1", namespaced: true },
  "ingresses.networking.k8s.io": { version: "v1", namespaced: true },
  "networkpolicies.networking.k8s.io": { version: "v1", namespaced: true },
  "ingressclasses.networking.k8s.io": { version: "v1", namespaced: false },
  "endpointslices.discovery.k8s.io": { version: "v1", namespaced: true },
  "events.events.k8s.io": { version: "v1", namespaced: true },
  "leases.coordination.k8s.io": { version: "v1", namespaced: true },
  "roles.rbac.authorization.k8s.io": { version: "v1", namespaced: true },
  "rolebindings.rbac.authorization.k8s.io": { version: "v1", namespaced: true },
  "clusterroles.rbac.authorization.k8s.io": { version: "v1", namespaced: false },
  "clusterrolebindings.rbac.authorization.k8s.io": { version: "v1", namespaced: false },
  "storageclasses.storage.k8s.io": { version: "v1", namespaced: false },
  "customresourcedefinitions.apiextensions.k8s.io": { version: "v1", namespaced: false },
};

const RESOURCE_PATTERN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9.-]*[a-z0-9])?)?$/;

/** Throws ValidationError unless `resource` has the form of a kubectl resource name (plural[.group]). */
export function checkResourcePattern(resource: string): void {
  if (!RESOURCE_PATTERN.test(resource)) {
    throw new ValidationError(`resource '${resource}' is not a kubectl resource name such as "pods" or "deployments.apps"`);
  }
}

/** Resolves `resource` (+ optional `apiVersion`) or throws ValidationError saying what is missing. */
export function resolveResource(resource: string, apiVersion?: string): ResourceRef {
  checkResourcePattern(resource);
  const dot = resource.indexOf(".");
  const plural = dot === -1 ? resource : resource.slice(0, dot);
  const group = dot === -1 ? "" : resource.slice(dot + 1);
  // Own properties only: "constructor" is a valid resource pattern but no built-in.
  const builtIn = Object.hasOwn(BUILT_INS, resource) ? BUILT_INS[resource] : undefined;
  if (apiVersion === undefined) {
    if (!builtIn) {
      throw new ValidationError(
        `resource '${resource}' is not a built-in resource: give its apiVersion, e.g. "${group || "example.com"}/v1"`,
      );
    }
    return { group, version: builtIn.version, resource: plural, namespaced: builtIn.namespaced };
  }
  const slash = apiVersion.indexOf("/");
  const apiGroup = slash === -1 ? "" : apiVersion.slice(0, slash);
  const version = slash === -1 ? apiVersion : apiVersion.slice(slash + 1);
  if (!/^v[0-9]+((alpha|beta)[0-9]+)?$/.test(version)) {
    throw new ValidationError(`apiVersion '${apiVersion}' does not end in a Kubernetes version such as v1 or v1beta1`);
  }
  if (apiGroup !== group) {
    throw new ValidationError(
      `apiVersion '${apiVersion}' is in group '${apiGroup || "core"}' but resource '${resource}' names group '${group || "core"}'`,
    );
  }
  return { group, version, resource: plural, namespaced: builtIn?.namespaced };
}

/** `/api/v1[/namespaces/{ns}]/pods` or `/apis/{group}/{version}[/namespaces/{ns}]/{resource}`. */
export function collectionPath(ref: ResourceRef, namespace?: string): string {
  const root = ref.group === "" ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  const scope = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${root}${scope}/${ref.resource}`;
}

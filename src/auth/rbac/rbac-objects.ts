/**
 * The RBAC objects of one member cluster (rbac.authorization.k8s.io/v1), as their informers hold
 * them: plain JSON, every list field optional (the API server omits empty ones), and the request
 * attributes the evaluator decides on. Types only; no behaviour.
 */

/** One rule of a Role or ClusterRole (k8s.io/api/rbac/v1 PolicyRule). */
export interface PolicyRule {
  verbs?: readonly string[] | null;
  apiGroups?: readonly string[] | null;
  resources?: readonly string[] | null;
  resourceNames?: readonly string[] | null;
  nonResourceURLs?: readonly string[] | null;
}

export interface ObjectName {
  name: string;
  namespace?: string;
}

/** A Role (namespaced) or ClusterRole. An aggregated ClusterRole's `rules` are read as stored. */
export interface RbacRole {
  metadata: ObjectName;
  rules?: readonly PolicyRule[] | null;
}

/** `User`, `Group` or `ServiceAccount`; any other kind matches nobody, as on the server. */
export interface Subject {
  kind: string;
  name: string;
  /** ServiceAccount only; in a RoleBinding it defaults to the binding's namespace. */
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  apiGroup?: string;
  kind: string;
  name: string;
}

/** A RoleBinding (namespaced) or ClusterRoleBinding. */
export interface RbacBinding {
  metadata: ObjectName;
  subjects?: readonly Subject[] | null;
  roleRef: RoleRef;
}

/** Everything the evaluator needs from one cluster. */
export interface RbacObjects {
  roles: readonly RbacRole[];
  clusterRoles: readonly RbacRole[];
  roleBindings: readonly RbacBinding[];
  clusterRoleBindings: readonly RbacBinding[];
}

/** Who asks: the user name and every group (see `authenticatedUser` for `system:authenticated`). */
export interface RbacUser {
  name: string;
  groups: readonly string[];
}

export type ReadVerb = "get" | "list" | "watch";

/**
 * A request for an API resource, as kube-apiserver's RequestInfo names it. `namespace` absent is
 * the cluster scope. Note the server's quirk: `GET /api/v1/namespaces/foo` has namespace `foo`
 * (and name `foo`), so a RoleBinding in `foo` may grant reading the Namespace object itself.
 */
export interface ResourceAttributes {
  verb: string;
  apiGroup: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** A request for a path outside the resource API (`/version`, `/api`, `/apis/…`, `/openapi/v2`). */
export interface NonResourceAttributes {
  verb: string;
  path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

export function isNonResource(attributes: RequestAttributes): attributes is NonResourceAttributes {
  return "path" in attributes;
}

export interface Decision {
  allowed: boolean;
  /** kube-apiserver's wording: "RBAC: allowed by …", or on a denial the roles that were missing. */
  reason: string;
}

/**
 * The names of the four informers an `rbac` cluster keeps of its RBAC objects (issue 31): what the
 * factory creates (objects/factory-rbac-informers.ts) and what auth/rbac/rbac-source.ts reads. Names
 * only, so that both sides share them without one depending on the other.
 */
/** The four RBAC informers of an `rbac` cluster: reserved name → resource. */
export const RBAC_INFORMERS = {
  "rbac-roles": "roles.rbac.authorization.k8s.io",
  "rbac-rolebindings": "rolebindings.rbac.authorization.k8s.io",
  "rbac-clusterroles": "clusterroles.rbac.authorization.k8s.io",
  "rbac-clusterrolebindings": "clusterrolebindings.rbac.authorization.k8s.io",
} as const;

export type RbacInformerName = keyof typeof RBAC_INFORMERS;

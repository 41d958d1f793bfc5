/**
 * The RBAC objects every real cluster starts with, as far as reads need them (kube-apiserver's
 * bootstrappolicy/policy.go): system:discovery, system:basic-user and system:public-info-viewer for
 * authenticated users, cluster-admin for system:masters; and the Role and RoleBinding shapes the
 * RBAC tests use (issue 31). Plain data: the workerd tests and the e2e tests both seed with it.
 */
import type { FakeCluster } from "./client.ts";

const RBAC_GROUP = "rbac.authorization.k8s.io";

/** The bootstrap ClusterRoles and ClusterRoleBindings a real cluster reads with (bootstrappolicy/policy.go). */
export const BOOTSTRAP_CLUSTER_ROLES = [
  {
    metadata: { name: "system:discovery" },
    rules: [{ nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"], verbs: ["get"] }],
  },
  {
    metadata: { name: "system:basic-user" },
    rules: [
      { apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"], verbs: ["create"] },
      { apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], verbs: ["create"] },
    ],
  },
  { metadata: { name: "system:public-info-viewer" }, rules: [{ nonResourceURLs: ["/healthz", "/livez", "/readyz", "/version", "/version/"], verbs: ["get"] }] },
  { metadata: { name: "cluster-admin" }, rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }, { nonResourceURLs: ["*"], verbs: ["*"] }] },
];

const clusterBinding = (role: string, groups: string[]) => ({
  metadata: { name: role },
  roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: role },
  subjects: groups.map((name) => ({ apiGroup: RBAC_GROUP, kind: "Group", name })),
});

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS = [
  clusterBinding("system:discovery", ["system:authenticated"]),
  clusterBinding("system:basic-user", ["system:authenticated"]),
  clusterBinding("system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]),
  clusterBinding("cluster-admin", ["system:masters"]),
];

export async function seedBootstrapRbac(fake: FakeCluster): Promise<void> {
  for (const role of BOOTSTRAP_CLUSTER_ROLES) await fake.create("clusterroles", role);
  for (const binding of BOOTSTRAP_CLUSTER_ROLE_BINDINGS) await fake.create("clusterrolebindings", binding);
}

/** Role `pod-reader` in `namespace`: get, list and watch pods. */
export function podReaderRole(namespace: string) {
  return { metadata: { name: "pod-reader", namespace }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }] };
}

/** A RoleBinding of Role `pod-reader` in `namespace` to `user`. */
export function podReaderBinding(namespace: string, user: string) {
  return {
    metadata: { name: `${user}-reads-pods`, namespace },
    roleRef: { apiGroup: RBAC_GROUP, kind: "Role", name: "pod-reader" },
    subjects: [{ apiGroup: RBAC_GROUP, kind: "User", name: user }],
  };
}

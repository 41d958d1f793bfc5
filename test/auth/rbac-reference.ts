/**
 * A deliberately simple RBAC evaluator written from the Kubernetes documentation
 * (https://kubernetes.io/docs/reference/access-authn-authz/rbac/), NOT from src/: the differential
 * test (rbac.differential.test.ts) holds src/auth/rbac to it. Brute force: every binding, every
 * rule, no index, no early structure. What the documentation says, rule by rule:
 * - permissions are purely additive: allowed iff some rule of some role bound to the user allows;
 * - a RoleBinding grants within its namespace, whether it refers to a Role (of that namespace) or
 *   to a ClusterRole; a ClusterRoleBinding grants cluster-wide and in every namespace, and refers
 *   to ClusterRoles only; a reference to a role that does not exist grants nothing;
 * - subjects: User (by name), Group (by one of the user's groups; every authenticated user is in
 *   `system:authenticated`), ServiceAccount (the user `system:serviceaccount:<ns>:<name>`, ns
 *   defaulting to the RoleBinding's);
 * - `*` in verbs, apiGroups or resources means all; a subresource is `resource/sub`, and `*` `/sub`
 *   means that subresource of every resource; resourceNames, when present, only match requests that
 *   name an object; nonResourceURLs match exactly, or as a prefix when they end in `*`, and only
 *   ClusterRoleBindings grant them.
 */
import type { RbacObjects, RbacBinding, PolicyRule, Subject } from "../../src/auth/rbac/rbac-objects.ts";

export interface ReferenceRequest {
  verb: string;
  /** Resource requests. */
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Non-resource requests (then the fields above are absent). */
  path?: string;
}

/** Whether the user `userName` in `groups` (authenticated) may make `request`. */
export function referenceAllows(rbac: RbacObjects, userName: string, groups: string[], request: ReferenceRequest): boolean {
  const allGroups = groups.includes("system:authenticated") || groups.includes("system:unauthenticated") ? groups : [...groups, "system:authenticated"];
  const isFor = (subject: Subject, bindingNamespace: string): boolean => {
    if (subject.kind === "User") return subject.name === userName;
    if (subject.kind === "Group") return allGroups.includes(subject.name);
    if (subject.kind === "ServiceAccount") {
      const ns = subject.namespace ? subject.namespace : bindingNamespace;
      if (ns === "") return false;
      return userName === "system:serviceaccount:" + ns + ":" + subject.name;
    }
    return false;
  };
  const bindingIsFor = (binding: RbacBinding, bindingNamespace: string): boolean =>
    (binding.subjects ?? []).some((s) => isFor(s, bindingNamespace));

  const usableRules: PolicyRule[] = [];
  for (const crb of rbac.clusterRoleBindings) {
    if (!bindingIsFor(crb, "")) continue;
    if (crb.roleRef.kind !== "ClusterRole") continue;
    const role = rbac.clusterRoles.find((r) => r.metadata.name === crb.roleRef.name);
    if (role) usableRules.push(...(role.rules ?? []));
  }
  const isResourceRequest = request.path === undefined;
  if (isResourceRequest && request.namespace) {
    for (const rb of rbac.roleBindings) {
      const ns = rb.metadata.namespace;
      if (ns !== request.namespace) continue;
      if (!bindingIsFor(rb, ns)) continue;
      let role = undefined;
      if (rb.roleRef.kind === "Role") role = rbac.roles.find((r) => r.metadata.namespace === ns && r.metadata.name === rb.roleRef.name);
      if (rb.roleRef.kind === "ClusterRole") role = rbac.clusterRoles.find((r) => r.metadata.name === rb.roleRef.name);
      if (role) usableRules.push(...(role.rules ?? []));
    }
  }
  return usableRules.some((rule) => referenceRuleAllows(rule, request));
}

function referenceRuleAllows(rule: PolicyRule, request: ReferenceRequest): boolean {
  const verbs = rule.verbs ?? [];
  if (!verbs.includes("*") && !verbs.includes(request.verb)) return false;
  if (request.path !== undefined) {
    return (rule.nonResourceURLs ?? []).some((url) => {
      if (url === "*" || url === request.path) return true;
      if (!url.endsWith("*")) return false;
      let prefix = url;
      while (prefix.endsWith("*")) prefix = prefix.slice(0, -1);
      return request.path!.startsWith(prefix);
    });
  }
  const groups = rule.apiGroups ?? [];
  if (!groups.includes("*") && !groups.includes(request.apiGroup!)) return false;
  const resources = rule.resources ?? [];
  const wanted = request.subresource ? request.resource + "/" + request.subresource : request.resource!;
  const resourceOk =
    resources.includes("*") ||
    resources.includes(wanted) ||
    (request.subresource !== undefined && request.subresource !== "" && resources.includes("*/" + request.subresource));
  if (!resourceOk) return false;
  const names = rule.resourceNames ?? [];
  if (names.length === 0) return true;
  return request.name !== undefined && names.includes(request.name);
}

/** Every namespace in `namespaces` where the user may make the collection request, or "all" if at the cluster scope. */
export function referenceListScope(
  rbac: RbacObjects,
  userName: string,
  groups: string[],
  request: { verb: string; apiGroup: string; resource: string; subresource?: string },
  namespaces: string[],
): "all" | string[] {
  if (referenceAllows(rbac, userName, groups, { ...request })) return "all";
  return namespaces.filter((namespace) => referenceAllows(rbac, userName, groups, { ...request, namespace }));
}

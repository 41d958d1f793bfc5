/**
 * kube-apiserver's RBAC authorizer over one cluster's RBAC objects, for reads: pure, no I/O.
 * Built once from the object lists (bindings indexed by subject, roles by name), then asked many
 * times; rebuild it when the objects change.
 *
 * Guarantees (plugin/pkg/auth/authorizer/rbac/rbac.go, pkg/registry/rbac/validation/rule.go):
 * - A request is allowed iff some rule (policy-rule.ts) of a role bound to the user allows it;
 *   there is no deny rule, and nothing else allows.
 * - ClusterRoleBindings grant everywhere: at the cluster scope and in every namespace; they can
 *   only reference ClusterRoles (a `Role` roleRef resolves to nothing, as on the server).
 * - RoleBindings grant in their own namespace only, to a Role of that namespace or to a
 *   ClusterRole (whose rules then apply in the binding's namespace only).
 * - A binding to a role that does not exist grants nothing, and the denial's reason names it.
 * - Non-resource requests (`/version`, discovery) are decided by ClusterRoleBindings only.
 * - Aggregated ClusterRoles are read from their `rules` as stored: the cluster's controller fills
 *   them; `aggregationRule` is ignored.
 * - The user is taken as given: add `system:authenticated` with `authenticatedUser` (subjects.ts).
 */
import { ruleAllows } from "./policy-rule.ts";
import {
  type Decision,
  isNonResource,
  type PolicyRule,
  type RbacBinding,
  type RbacObjects,
  type RbacRole,
  type RbacUser,
  type RequestAttributes,
} from "./rbac-objects.ts";
import { describeSubject, subjectKey, userKeys } from "./subjects.ts";

/** A binding reached through one of its subjects (kept for the reason). */
interface Grant {
  binding: RbacBinding;
  subjectIndex: number;
}

type GrantsBySubject = Map<string, Grant[]>;

/** What a list or watch of a collection may cover: the whole cluster, or these namespaces. */
export type ListScope = { all: true } | { all: false; namespaces: Set<string> };

export interface CollectionRequest {
  verb: string;
  apiGroup: string;
  resource: string;
  subresource?: string;
}

export class RbacAuthorizer {
  private readonly clusterRoles = new Map<string, RbacRole>();
  /** Keyed by `namespace/name`. */
  private readonly roles = new Map<string, RbacRole>();
  private readonly clusterGrants: GrantsBySubject = new Map();
  /** namespace → subject key → grants: what `authorize` reads for a namespaced request. */
  private readonly namespaceGrants = new Map<string, GrantsBySubject>();
  /** subject key → grants of RoleBindings in every namespace: what `listScope` reads. */
  private readonly roleBindingGrants: GrantsBySubject = new Map();

  constructor(objects: RbacObjects) {
    for (const role of objects.clusterRoles) this.clusterRoles.set(role.metadata.name, role);
    for (const role of objects.roles) this.roles.set(roleKey(role.metadata.namespace ?? "", role.metadata.name), role);
    for (const binding of objects.clusterRoleBindings) indexBinding(this.clusterGrants, binding, "");
    for (const binding of objects.roleBindings) {
      const namespace = binding.metadata.namespace ?? "";
      if (!namespace) continue; // a RoleBinding always has one; without it, it could grant nowhere
      let grants = this.namespaceGrants.get(namespace);
      if (!grants) this.namespaceGrants.set(namespace, (grants = new Map()));
      indexBinding(grants, binding, namespace);
      indexBinding(this.roleBindingGrants, binding, namespace);
    }
  }

  /** Whether `user` may make `request`, and why. */
  authorize(user: RbacUser, request: RequestAttributes): Decision {
    const keys = userKeys(user);
    const missing: string[] = [];
    const allowedBy =
      this.grantingBinding(this.clusterGrants, keys, "", request, missing) ??
      (isNonResource(request) || !request.namespace
        ? undefined
        : this.grantingBinding(this.namespaceGrants.get(request.namespace), keys, request.namespace, request, missing));
    if (allowedBy) return { allowed: true, reason: `RBAC: allowed by ${allowedBy}` };
    return { allowed: false, reason: missing.length ? `RBAC: ${[...new Set(missing)].join(", ")}` : "" };
  }

  /**
   * Where `user` may list (or watch) a collection: everywhere if a ClusterRoleBinding allows it,
   * else the namespaces whose RoleBindings do. Decided once per request, not per object; it reads
   * only the user's own bindings, however many namespaces the cluster has.
   */
  listScope(user: RbacUser, request: CollectionRequest): ListScope {
    const keys = userKeys(user);
    const ignored: string[] = [];
    if (this.grantingBinding(this.clusterGrants, keys, "", request, ignored)) return { all: true };
    const namespaces = new Set<string>();
    for (const key of keys) {
      for (const { binding } of this.roleBindingGrants.get(key) ?? []) {
        const namespace = binding.metadata.namespace!;
        if (namespaces.has(namespace)) continue;
        const rules = this.rulesOf(binding, namespace, ignored);
        if (rules?.some((rule) => ruleAllows(rule, { ...request, namespace }))) namespaces.add(namespace);
      }
    }
    return { all: false, namespaces };
  }

  /**
   * Every rule that applies to `user` in `namespace` ("" for the cluster scope only): those of roles
   * bound by ClusterRoleBindings, then those of the namespace's RoleBindings — what
   * SelfSubjectRulesReview lists (the server's RulesFor). `missing` names roles that were not found
   * (the review's `incomplete` and `evaluationError`).
   */
  rulesFor(user: RbacUser, namespace: string): { rules: PolicyRule[]; missing: string[] } {
    const keys = userKeys(user);
    const rules: PolicyRule[] = [];
    const missing: string[] = [];
    const visit = (grants: GrantsBySubject | undefined, bindingNamespace: string) => {
      const seen = new Set<RbacBinding>();
      for (const key of keys) {
        for (const { binding } of grants?.get(key) ?? []) {
          if (seen.has(binding)) continue;
          seen.add(binding);
          rules.push(...(this.rulesOf(binding, bindingNamespace, missing) ?? []));
        }
      }
    };
    visit(this.clusterGrants, "");
    if (namespace) visit(this.namespaceGrants.get(namespace), namespace);
    return { rules, missing: [...new Set(missing)] };
  }

  /** The description of the first binding among `grants` of `keys` that allows `request`. */
  private grantingBinding(
    grants: GrantsBySubject | undefined,
    keys: readonly string[],
    bindingNamespace: string,
    request: RequestAttributes,
    missing: string[],
  ): string | undefined {
    if (!grants) return undefined;
    for (const key of keys) {
      for (const { binding, subjectIndex } of grants.get(key) ?? []) {
        const rules = this.rulesOf(binding, bindingNamespace, missing);
        if (!rules?.some((rule) => ruleAllows(rule, request))) continue;
        return describeBinding(binding, bindingNamespace, subjectIndex);
      }
    }
    return undefined;
  }

  private rulesOf(binding: RbacBinding, bindingNamespace: string, missing: string[]): readonly PolicyRule[] | undefined {
    const { kind, name } = binding.roleRef;
    if (kind === "ClusterRole") {
      const role = this.clusterRoles.get(name);
      if (!role) missing.push(`clusterrole.rbac.authorization.k8s.io ${JSON.stringify(name)} not found`);
      return role?.rules ?? undefined;
    }
    if (kind === "Role") {
      const role = this.roles.get(roleKey(bindingNamespace, name));
      if (!role) missing.push(`role.rbac.authorization.k8s.io ${JSON.stringify(name)} not found`);
      return role?.rules ?? undefined;
    }
    missing.push(`unsupported role reference kind: ${JSON.stringify(kind)}`);
    return undefined;
  }
}

function indexBinding(grants: GrantsBySubject, binding: RbacBinding, bindingNamespace: string): void {
  (binding.subjects ?? []).forEach((subject, subjectIndex) => {
    const key = subjectKey(subject, bindingNamespace);
    if (key === undefined) return;
    let list = grants.get(key);
    if (!list) grants.set(key, (list = []));
    list.push({ binding, subjectIndex });
  });
}

function roleKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** kube-apiserver's binding describers (rbac.go), e.g. `RoleBinding "read/team-a" of Role "pods" to User "alice"`. */
function describeBinding(binding: RbacBinding, bindingNamespace: string, subjectIndex: number): string {
  const subject = describeSubject(binding.subjects![subjectIndex]!, bindingNamespace);
  const role = `${binding.roleRef.kind} ${JSON.stringify(binding.roleRef.name)}`;
  if (!bindingNamespace) return `ClusterRoleBinding ${JSON.stringify(binding.metadata.name)} of ${role} to ${subject}`;
  return `RoleBinding ${JSON.stringify(`${binding.metadata.name}/${bindingNamespace}`)} of ${role} to ${subject}`;
}

/**
 * How one request's reads of one cluster are authorized (issue 31; docs/security.md "Member-cluster
 * RBAC"). Routes ask `decide` before they read, `listScopeOf` where one answer spans namespaces
 * (`/search`, `/informers/{name}/objects`, the status page), and `rulesIn` for SelfSubjectRulesReview.
 *
 * Contract:
 * - A `scopes` cluster (the default): the credential's cluster scope (auth/principal.ts
 *   `permission`) has decided already; every read of the cluster is allowed here.
 * - An `rbac` cluster: each read is also decided as kube-apiserver decides it, for the credential's
 *   Kubernetes user and groups (principal.ts): a user in `system:masters` may do anything (the
 *   server's privileged-group authorizer, ahead of RBAC); everyone else what the cluster's RBAC
 *   allows (rbac-authorizer.ts), as mirrored by its informers and read through rbac-source.ts — at
 *   most about CHECK_EVERY_MS behind them. The credential's cluster scope still applies first: RBAC
 *   narrows what a credential may read, it never widens it.
 * - Fails closed: when the cluster's RBAC objects cannot be read whole, the caller refuses (503);
 *   no decision is made from part of them. A `system:masters` user needs none (`bySuperuser`).
 * - What differs from kube-apiserver: only RBAC (and `system:masters`) decide — no webhook, Node or
 *   ABAC authorizer, no impersonation.
 */
import type { Principal } from "../principal.ts";
import { type ListScope, type CollectionRequest, RbacAuthorizer } from "./rbac-authorizer.ts";
import type { Decision, PolicyRule, RbacUser, RequestAttributes } from "./rbac-objects.ts";
import { isNonResource } from "./rbac-objects.ts";

/** kube-apiserver's privileged group: its members pass every authorization (user.SystemPrivilegedGroup). */
export const SUPERUSER_GROUP = "system:masters";

export type ReadAuthorization =
  | { mode: "scopes" }
  | { mode: "rbac"; user: RbacUser; authorizer: RbacAuthorizer };

/** A `scopes` cluster's authorization: nothing more to decide. */
export const BY_SCOPES: ReadAuthorization = { mode: "scopes" };

/** The authorization of `principal`'s reads of an `rbac` cluster whose authorizer is `authorizer`. */
export function byRbac(principal: Pick<Principal, "user" | "groups">, authorizer: RbacAuthorizer): ReadAuthorization {
  return { mode: "rbac", user: { name: principal.user, groups: principal.groups }, authorizer };
}

/** Whether `user` is in the server's privileged group (`system:masters`). */
export function isSuperuser(user: Pick<RbacUser, "groups">): boolean {
  return user.groups.includes(SUPERUSER_GROUP);
}

/** Nothing for a superuser's decisions to read: `decide` and the rest pass it before asking RBAC. */
const NO_RBAC = new RbacAuthorizer({ roles: [], clusterRoles: [], roleBindings: [], clusterRoleBindings: [] });

/** A `system:masters` user's authorization of an `rbac` cluster: allowed everything, whatever its RBAC objects. */
export function bySuperuser(principal: Pick<Principal, "user" | "groups">): ReadAuthorization {
  return byRbac(principal, NO_RBAC);
}

/** Whether the read described by `attributes` is allowed, and why (kube-apiserver's reason wording). */
export function decide(authorization: ReadAuthorization, attributes: RequestAttributes): Decision {
  if (authorization.mode === "scopes") return { allowed: true, reason: "" };
  if (isSuperuser(authorization.user)) return { allowed: true, reason: `allowed by the ${SUPERUSER_GROUP} group` };
  return authorization.authorizer.authorize(authorization.user, attributes);
}

/** Where a list or watch of a collection may look: all namespaces, or these. Decided once per request. */
export function listScopeOf(authorization: ReadAuthorization, request: CollectionRequest): ListScope {
  if (authorization.mode === "scopes" || isSuperuser(authorization.user)) return { all: true };
  return authorization.authorizer.listScope(authorization.user, request);
}

/** Whether `namespace` is inside `scope` (the cluster scope, "", only for `all`). */
export function inListScope(scope: ListScope, namespace: string): boolean {
  return scope.all || (namespace !== "" && scope.namespaces.has(namespace));
}

/**
 * The RBAC rules that apply to the user in `namespace` (SelfSubjectRulesReview), or undefined for a
 * `scopes` cluster (its rules are the credential's, not RBAC's). A superuser's is one rule allowing
 * everything, as the server's privileged-group authorizer reports it.
 */
export function rulesIn(authorization: ReadAuthorization, namespace: string): { rules: PolicyRule[]; missing: string[] } | undefined {
  if (authorization.mode === "scopes") return undefined;
  if (isSuperuser(authorization.user)) {
    return { rules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }, { verbs: ["*"], nonResourceURLs: ["*"] }], missing: [] };
  }
  return authorization.authorizer.rulesFor(authorization.user, namespace);
}

/**
 * kube-apiserver's refusal text (apiserver responsewriters `forbiddenMessage` and apimachinery
 * `NewForbidden`): `pods "x" is forbidden: User "u" cannot get resource "pods" in API group "" in
 * the namespace "ns"`, `… at the cluster scope` without a namespace, `forbidden: User "u" cannot get
 * path "/version"` for a non-resource URL; the authorizer's reason after a colon when it gave one.
 */
export function forbiddenMessage(user: string, attributes: RequestAttributes, reason: string): string {
  let message: string;
  if (isNonResource(attributes)) {
    message = `forbidden: User ${JSON.stringify(user)} cannot ${attributes.verb} path ${JSON.stringify(attributes.path)}`;
  } else {
    const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
    const where = attributes.namespace ? `in the namespace ${JSON.stringify(attributes.namespace)}` : "at the cluster scope";
    const qualified = attributes.apiGroup ? `${attributes.resource}.${attributes.apiGroup}` : attributes.resource;
    const subject = attributes.name ? `${qualified} ${JSON.stringify(attributes.name)}` : qualified;
    message = `${subject} is forbidden: User ${JSON.stringify(user)} cannot ${attributes.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attributes.apiGroup)} ${where}`;
  }
  return reason ? `${message}: ${reason}` : message;
}

// src/auth/rbac: one named case per rule of kube-apiserver's RBAC authorizer for reads (issue 31 item 2),
// readable on their own; rbac.differential.test.ts covers their combinations.
import { describe, expect, it } from "vitest";
import { RbacAuthorizer } from "../../src/auth/rbac/rbac-authorizer.ts";
import type { PolicyRule, RbacBinding, RbacObjects, RbacRole, Subject } from "../../src/auth/rbac/rbac-objects.ts";
import { authenticatedUser } from "../../src/auth/rbac/subjects.ts";

const alice = authenticatedUser("alice", ["dev"]);
const robot = authenticatedUser("system:serviceaccount:team-a:robot", ["system:serviceaccounts"]);

const clusterRole = (name: string, ...rules: PolicyRule[]): RbacRole => ({ metadata: { name }, rules });
const role = (namespace: string, name: string, ...rules: PolicyRule[]): RbacRole => ({ metadata: { name, namespace }, rules });
const user = (name: string): Subject => ({ kind: "User", name, apiGroup: "rbac.authorization.k8s.io" });
const group = (name: string): Subject => ({ kind: "Group", name, apiGroup: "rbac.authorization.k8s.io" });
const serviceAccount = (name: string, namespace?: string): Subject => ({ kind: "ServiceAccount", name, ...(namespace ? { namespace } : {}) });
const clusterBinding = (name: string, roleName: string, ...subjects: Subject[]): RbacBinding => ({
  metadata: { name },
  subjects,
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
});
const binding = (namespace: string, name: string, roleRef: { kind: "Role" | "ClusterRole"; name: string }, ...subjects: Subject[]): RbacBinding => ({
  metadata: { name, namespace },
  subjects,
  roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
});
const rbac = (objects: Partial<RbacObjects>) =>
  new RbacAuthorizer({ roles: [], clusterRoles: [], roleBindings: [], clusterRoleBindings: [], ...objects });

const readPods: PolicyRule = { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"] };
const podsInTeamA = (rule: PolicyRule, who: Subject = user("alice")) =>
  rbac({ roles: [role("team-a", "r", rule)], roleBindings: [binding("team-a", "b", { kind: "Role", name: "r" }, who)] });
const pods = (extra: { verb?: string; namespace?: string; name?: string; subresource?: string } = {}) => ({
  verb: "get",
  apiGroup: "",
  resource: "pods",
  namespace: "team-a",
  ...extra,
});

describe("RbacAuthorizer", () => {
  it("allows what a Role bound by a RoleBinding grants, in that namespace only, and says by what", () => {
    const authorizer = podsInTeamA(readPods);
    expect(authorizer.authorize(alice, pods())).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "b/team-a" of Role "r" to User "alice"',
    });
    expect(authorizer.authorize(alice, pods({ namespace: "team-b" })).allowed).toBe(false);
    expect(authorizer.authorize(alice, { verb: "list", apiGroup: "", resource: "pods" }).allowed).toBe(false); // cluster scope
  });

  it("denies verbs, groups and resources the rule does not name; `*` names them all", () => {
    const authorizer = podsInTeamA(readPods);
    expect(authorizer.authorize(alice, pods({ verb: "delete" })).allowed).toBe(false);
    expect(authorizer.authorize(alice, { ...pods(), apiGroup: "apps" }).allowed).toBe(false);
    expect(authorizer.authorize(alice, { ...pods(), resource: "secrets" }).allowed).toBe(false);
    const everything = podsInTeamA({ verbs: ["*"], apiGroups: ["*"], resources: ["*"] });
    expect(everything.authorize(alice, { verb: "watch", apiGroup: "apps", resource: "deployments", namespace: "team-a" }).allowed).toBe(true);
    expect(everything.authorize(alice, pods({ subresource: "log" })).allowed).toBe(true); // `*` covers subresources
  });

  it("matches a subresource as resource/subresource or star-slash-subresource, never by the bare resource", () => {
    expect(podsInTeamA(readPods).authorize(alice, pods({ subresource: "status" })).allowed).toBe(false);
    expect(podsInTeamA({ ...readPods, resources: ["pods/status"] }).authorize(alice, pods({ subresource: "status" })).allowed).toBe(true);
    expect(podsInTeamA({ ...readPods, resources: ["pods/status"] }).authorize(alice, pods()).allowed).toBe(false);
    const anyStatus = podsInTeamA({ ...readPods, resources: ["*/status"] });
    expect(anyStatus.authorize(alice, pods({ subresource: "status" })).allowed).toBe(true);
    expect(anyStatus.authorize(alice, pods({ subresource: "log" })).allowed).toBe(false);
    expect(anyStatus.authorize(alice, pods()).allowed).toBe(false);
    // As on kube-apiserver, `pods/*` is no wildcard: it names a subresource called `*`.
    expect(podsInTeamA({ ...readPods, resources: ["pods/*"] }).authorize(alice, pods({ subresource: "log" })).allowed).toBe(false);
  });

  it("restricts by resourceNames: only a request naming one of them, so never a list", () => {
    const authorizer = podsInTeamA({ ...readPods, resourceNames: ["web"] });
    expect(authorizer.authorize(alice, pods({ name: "web" })).allowed).toBe(true);
    expect(authorizer.authorize(alice, pods({ verb: "watch", name: "web" })).allowed).toBe(true);
    expect(authorizer.authorize(alice, pods({ name: "db" })).allowed).toBe(false);
    expect(authorizer.authorize(alice, pods({ verb: "list" })).allowed).toBe(false);
    expect(authorizer.authorize(alice, pods({ verb: "watch" })).allowed).toBe(false);
  });

  it("lets a RoleBinding to a ClusterRole grant its rules in the binding's namespace only", () => {
    const authorizer = rbac({
      clusterRoles: [clusterRole("pod-reader", readPods)],
      roleBindings: [binding("team-a", "b", { kind: "ClusterRole", name: "pod-reader" }, user("alice"))],
    });
    expect(authorizer.authorize(alice, pods()).allowed).toBe(true);
    expect(authorizer.authorize(alice, pods({ namespace: "team-b" })).allowed).toBe(false);
    expect(authorizer.authorize(alice, { verb: "list", apiGroup: "", resource: "pods" }).allowed).toBe(false);
  });

  it("lets a ClusterRoleBinding grant at the cluster scope and in every namespace", () => {
    const authorizer = rbac({ clusterRoles: [clusterRole("pod-reader", readPods)], clusterRoleBindings: [clusterBinding("all", "pod-reader", group("dev"))] });
    expect(authorizer.authorize(alice, { verb: "list", apiGroup: "", resource: "pods" })).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "all" of ClusterRole "pod-reader" to Group "dev"',
    });
    expect(authorizer.authorize(alice, pods({ namespace: "anywhere" })).allowed).toBe(true);
  });

  it("grants nothing through a binding to a missing role, and names it in the denial", () => {
    const authorizer = rbac({ roleBindings: [binding("team-a", "b", { kind: "Role", name: "gone" }, user("alice"))] });
    expect(authorizer.authorize(alice, pods())).toEqual({ allowed: false, reason: 'RBAC: role.rbac.authorization.k8s.io "gone" not found' });
    const cluster = rbac({ clusterRoleBindings: [clusterBinding("all", "gone", user("alice"))] });
    expect(cluster.authorize(alice, pods())).toEqual({ allowed: false, reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found' });
  });

  it("matches subjects: users by name, groups (with system:authenticated), ServiceAccounts by their user name", () => {
    expect(podsInTeamA(readPods, user("bob")).authorize(alice, pods()).allowed).toBe(false);
    expect(podsInTeamA(readPods, group("dev")).authorize(alice, pods()).allowed).toBe(true);
    expect(podsInTeamA(readPods, group("system:authenticated")).authorize(alice, pods()).allowed).toBe(true);
    expect(podsInTeamA(readPods, { kind: "Robot", name: "alice" }).authorize(alice, pods()).allowed).toBe(false);
    // A ServiceAccount subject without a namespace means the RoleBinding's own.
    expect(podsInTeamA(readPods, serviceAccount("robot")).authorize(robot, pods())).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "b/team-a" of Role "r" to ServiceAccount "robot/team-a"',
    });
    expect(podsInTeamA(readPods, serviceAccount("robot", "team-b")).authorize(robot, pods()).allowed).toBe(false);
    // …and in a ClusterRoleBinding, nobody.
    const cluster = rbac({ clusterRoles: [clusterRole("pod-reader", readPods)], clusterRoleBindings: [clusterBinding("all", "pod-reader", serviceAccount("robot"))] });
    expect(cluster.authorize(robot, pods()).allowed).toBe(false);
  });

  it("adds system:authenticated as the apiserver does, unless the user is unauthenticated", () => {
    expect(authenticatedUser("alice", ["dev"]).groups).toEqual(["dev", "system:authenticated"]);
    expect(authenticatedUser("alice", ["system:authenticated"]).groups).toEqual(["system:authenticated"]);
    expect(authenticatedUser("system:anonymous", ["system:unauthenticated"]).groups).toEqual(["system:unauthenticated"]);
  });

  it("reads an aggregated ClusterRole from its rules as stored, ignoring aggregationRule", () => {
    const aggregated = { ...clusterRole("view", readPods), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: "y" } }] } };
    const authorizer = rbac({ clusterRoles: [aggregated], clusterRoleBindings: [clusterBinding("v", "view", user("alice"))] });
    expect(authorizer.authorize(alice, pods()).allowed).toBe(true);
    expect(authorizer.authorize(alice, { ...pods(), resource: "secrets" }).allowed).toBe(false);
  });

  it("decides non-resource URLs by ClusterRoleBindings: exact, or a prefix ending in `*`", () => {
    const discovery = clusterRole("discovery", { verbs: ["get"], nonResourceURLs: ["/version", "/apis/*", "/api"] });
    const authorizer = rbac({ clusterRoles: [discovery], clusterRoleBindings: [clusterBinding("d", "discovery", group("system:authenticated"))] });
    expect(authorizer.authorize(alice, { verb: "get", path: "/version" }).allowed).toBe(true);
    expect(authorizer.authorize(alice, { verb: "get", path: "/apis/apps/v1" }).allowed).toBe(true);
    expect(authorizer.authorize(alice, { verb: "get", path: "/api/v1" }).allowed).toBe(false);
    expect(authorizer.authorize(alice, { verb: "get", path: "/healthz" }).allowed).toBe(false);
    // A RoleBinding to the same ClusterRole grants no non-resource URL, and a resource rule none either.
    const namespaced = rbac({ clusterRoles: [discovery], roleBindings: [binding("team-a", "d", { kind: "ClusterRole", name: "discovery" }, user("alice"))] });
    expect(namespaced.authorize(alice, { verb: "get", path: "/version" }).allowed).toBe(false);
    expect(podsInTeamA({ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }).authorize(alice, { verb: "get", path: "/version" }).allowed).toBe(false);
  });

  describe("listScope", () => {
    const list = { verb: "list", apiGroup: "", resource: "pods" };

    it("is every namespace when a ClusterRoleBinding allows the list", () => {
      const authorizer = rbac({ clusterRoles: [clusterRole("pod-reader", readPods)], clusterRoleBindings: [clusterBinding("all", "pod-reader", user("alice"))] });
      expect(authorizer.listScope(alice, list)).toEqual({ all: true });
    });

    it("is the namespaces whose RoleBindings allow it, not those that allow only named objects or other verbs", () => {
      const authorizer = rbac({
        roles: [role("team-a", "r", readPods), role("team-b", "named", { ...readPods, resourceNames: ["web"] }), role("team-c", "get", { ...readPods, verbs: ["get"] })],
        clusterRoles: [clusterRole("pod-reader", readPods)],
        roleBindings: [
          binding("team-a", "b", { kind: "Role", name: "r" }, user("alice")),
          binding("team-b", "b", { kind: "Role", name: "named" }, user("alice")),
          binding("team-c", "b", { kind: "Role", name: "get" }, user("alice")),
          binding("team-d", "b", { kind: "ClusterRole", name: "pod-reader" }, group("dev")),
          binding("team-e", "b", { kind: "ClusterRole", name: "pod-reader" }, user("bob")),
        ],
      });
      expect(authorizer.listScope(alice, list)).toEqual({ all: false, namespaces: new Set(["team-a", "team-d"]) });
      expect(authorizer.listScope(alice, { ...list, verb: "watch" })).toEqual({ all: false, namespaces: new Set(["team-a", "team-d"]) });
      expect(authorizer.listScope(authenticatedUser("carol", []), list)).toEqual({ all: false, namespaces: new Set() });
    });
  });
});

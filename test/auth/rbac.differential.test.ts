// Issue 31 item 4: src/auth/rbac (indexed, kube-apiserver's code paths) and test/auth/rbac-reference.ts
// (brute force, from the documentation) agree on every randomised (RBAC objects, user, groups, request).
// The vocabularies are small on purpose, so names collide: bindings to missing roles, ServiceAccounts
// defaulting to the binding's namespace, wildcards meeting exact names, resourceNames meeting lists.
// Replay a failure with CHECK_SEED (and CHECK_PATH) as fast-check prints them (test/check/settings.ts).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RbacAuthorizer } from "../../src/auth/rbac/rbac-authorizer.ts";
import type { PolicyRule, RbacBinding, RbacObjects, RbacRole, Subject } from "../../src/auth/rbac/rbac-objects.ts";
import { authenticatedUser } from "../../src/auth/rbac/subjects.ts";
import { checkParameters } from "../check/settings.ts";
import { referenceAllows, referenceListScope, type ReferenceRequest } from "./rbac-reference.ts";

const NAMESPACES = ["a", "b", "c"];
const USERS = ["alice", "bob", "system:serviceaccount:a:robot", "system:serviceaccount:b:robot", "system:serviceaccount:a:other"];
const GROUPS = ["dev", "ops", "system:authenticated", "system:unauthenticated", "system:serviceaccounts"];
const ROLE_NAMES = ["r1", "r2", "r3"];
const CLUSTER_ROLE_NAMES = ["c1", "c2", "view", "r1"];
const RULE_VERBS = ["get", "list", "watch", "*", "create"];
const RULE_GROUPS = ["", "apps", "*"];
const RULE_RESOURCES = ["pods", "secrets", "deployments", "pods/log", "pods/status", "*/status", "*", "deployments/scale", "pods/*", "*/*"];
const RESOURCE_NAMES = ["x", "y"];
const RULE_URLS = ["/version", "/api", "/api/*", "/apis*", "*", "/apis/apps/**", "/healthz"];
const PATHS = ["/version", "/api", "/api/v1", "/apis", "/apis/apps/v1", "/healthz", "/openapi/v2"];
const REQUEST_RESOURCES = ["pods", "secrets", "deployments", "configmaps"];
const SUBRESOURCES = ["status", "log", "scale", "*"];

/** Cases per run: `ciRuns` runs × this many requests. */
const REQUESTS_PER_RUN = 6;
const CI_RUNS = 4_000;

/** Present one time in four, or four times in five. */
const rarely = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
const often = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 5 });
const someOf = (values: string[]) => fc.subarray(values, { minLength: 1 });
const maybeEmpty = <T>(arb: fc.Arbitrary<T[]>) => fc.oneof(arb, fc.constant([] as T[]), fc.constant(undefined), fc.constant(null));

const rule: fc.Arbitrary<PolicyRule> = fc.oneof(
  { weight: 4, arbitrary: fc.record({
    verbs: someOf(RULE_VERBS),
    apiGroups: someOf(RULE_GROUPS),
    resources: someOf(RULE_RESOURCES),
    resourceNames: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: someOf(RESOURCE_NAMES) }),
  }) },
  { weight: 1, arbitrary: fc.record({ verbs: someOf(RULE_VERBS), nonResourceURLs: someOf(RULE_URLS) }) },
);

const rules = fc.oneof({ weight: 6, arbitrary: fc.array(rule, { minLength: 1, maxLength: 3 }) }, { weight: 1, arbitrary: maybeEmpty(fc.constant([])) });

const role = (names: string[], namespaced: boolean): fc.Arbitrary<RbacRole> =>
  fc.record({
    metadata: namespaced
      ? fc.record({ name: fc.constantFrom(...names), namespace: fc.constantFrom(...NAMESPACES) })
      : fc.record({ name: fc.constantFrom(...names) }),
    rules,
  });

const subject: fc.Arbitrary<Subject> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("User"), name: fc.constantFrom(...USERS) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("Group"), name: fc.constantFrom(...GROUPS) }) },
  fc.record({ kind: fc.constant("ServiceAccount"), name: fc.constantFrom("robot", "other") }),
  fc.record({ kind: fc.constant("ServiceAccount"), name: fc.constantFrom("robot", "other"), namespace: fc.constantFrom(...NAMESPACES) }),
  fc.record({ kind: fc.constant("Robot"), name: fc.constantFrom(...USERS) }),
);

const binding = (namespaced: boolean): fc.Arbitrary<RbacBinding> =>
  fc.record({
    metadata: namespaced
      ? fc.record({ name: fc.constantFrom("b1", "b2", "b3", "b4"), namespace: fc.constantFrom(...NAMESPACES) })
      : fc.record({ name: fc.constantFrom("b1", "b2", "b3") }),
    subjects: fc.oneof({ weight: 6, arbitrary: fc.array(subject, { minLength: 1, maxLength: 3 }) }, { weight: 1, arbitrary: maybeEmpty(fc.constant([])) }),
    roleRef: fc.record({
      apiGroup: fc.constant("rbac.authorization.k8s.io"),
      kind: fc.oneof({ weight: 5, arbitrary: fc.constantFrom("Role", "ClusterRole") }, { weight: 1, arbitrary: fc.constant("Bogus") }),
      name: fc.constantFrom(...ROLE_NAMES, ...CLUSTER_ROLE_NAMES, "missing"),
    }),
  });

// Object names are unique per kind (and namespace), as in a cluster.
const identity = (object: RbacRole | RbacBinding) => `${object.metadata.namespace ?? ""}/${object.metadata.name}`;
const world: fc.Arbitrary<RbacObjects> = fc.record({
  roles: fc.uniqueArray(role(ROLE_NAMES, true), { maxLength: 6, selector: identity, size: "max" }),
  clusterRoles: fc.uniqueArray(role(CLUSTER_ROLE_NAMES, false), { maxLength: 4, selector: identity, size: "max" }),
  roleBindings: fc.uniqueArray(binding(true), { maxLength: 8, selector: identity, size: "max" }),
  clusterRoleBindings: fc.uniqueArray(binding(false), { maxLength: 3, selector: identity, size: "max" }),
});

const resourceRequest: fc.Arbitrary<ReferenceRequest> = fc.record(
  {
    verb: fc.constantFrom("get", "list", "watch"),
    apiGroup: fc.constantFrom("", "apps"),
    resource: fc.constantFrom(...REQUEST_RESOURCES),
    subresource: rarely(fc.constantFrom(...SUBRESOURCES)),
    namespace: often(fc.constantFrom(...NAMESPACES)),
    name: fc.option(fc.constantFrom(...RESOURCE_NAMES, "z"), { nil: undefined }),
  },
);

const nonResourceRequest: fc.Arbitrary<ReferenceRequest> = fc.record({ verb: fc.constantFrom("get", "list"), path: fc.constantFrom(...PATHS) });

const request = fc.oneof({ weight: 4, arbitrary: resourceRequest }, { weight: 1, arbitrary: nonResourceRequest });

const caller = fc.record({ name: fc.constantFrom(...USERS), groups: fc.subarray(GROUPS) });


const collection = fc.record(
  { verb: fc.constantFrom("list", "watch"), apiGroup: fc.constantFrom("", "apps"), resource: fc.constantFrom(...REQUEST_RESOURCES), subresource: rarely(fc.constantFrom(...SUBRESOURCES)) },
);

describe("src/auth/rbac agrees with the reference evaluator", () => {
  it(`on every randomised request (${CI_RUNS} RBAC object sets × ${REQUESTS_PER_RUN} requests)`, () => {
    let cases = 0;
    let allowed = 0;
    fc.assert(
      fc.property(world, caller, fc.array(request, { minLength: REQUESTS_PER_RUN, maxLength: REQUESTS_PER_RUN }), (rbac, who, requests) => {
        const authorizer = new RbacAuthorizer(rbac);
        const user = authenticatedUser(who.name, who.groups);
        for (const req of requests) {
          const expected = referenceAllows(rbac, who.name, who.groups, req);
          const attributes = req.path !== undefined ? { verb: req.verb, path: req.path } : { ...req, apiGroup: req.apiGroup!, resource: req.resource! };
          expect(authorizer.authorize(user, attributes).allowed, JSON.stringify(req)).toBe(expected);
          cases++;
          if (expected) allowed++;
        }
      }),
      checkParameters(CI_RUNS),
    );
    expect(cases).toBeGreaterThanOrEqual(10_000);
    // Not vacuous: both answers are common.
    expect(allowed).toBeGreaterThan(cases / 50);
    expect(allowed).toBeLessThan(cases / 2);
  });

  it("on the list scope of every randomised collection request", () => {
    const kinds = { all: 0, some: 0, none: 0 };
    fc.assert(
      fc.property(world, caller, collection, (rbac, who, req) => {
        const scope = new RbacAuthorizer(rbac).listScope(authenticatedUser(who.name, who.groups), req);
        const expected = referenceListScope(rbac, who.name, who.groups, req, NAMESPACES);
        if (expected === "all") {
          expect(scope).toEqual({ all: true });
          kinds.all++;
        } else {
          expect(scope.all).toBe(false);
          // Namespaces outside NAMESPACES cannot occur: every binding is in one of them.
          expect(scope.all ? [] : [...scope.namespaces].sort()).toEqual(expected);
          if (expected.length) kinds.some++;
          else kinds.none++;
        }
      }),
      checkParameters(CI_RUNS),
    );
    expect(Math.min(kinds.all, kinds.some, kinds.none)).toBeGreaterThan(0);
  });
});

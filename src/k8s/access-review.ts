/**
 * The API server's self-review APIs, answered from the caller's own credential (API.md "Access"):
 * `SelfSubjectAccessReview` ("may I?", `kubectl auth can-i`, k9s), `SelfSubjectRulesReview`
 * (everything I may do in a namespace, Headlamp's `testAuth`) and `SelfSubjectReview` (who am I,
 * `kubectl auth whoami`). They are create-only virtual resources that change nothing, so the
 * read-only `/k8s` answers them (201 Created, the request echoed with its `status`), as
 * kube-apiserver does (KK pkg/registry/authorization/selfsubjectaccessreview/rest.go).
 *
 * The rule they report is the one `/k8s` enforces: a credential that may read the cluster may get,
 * list and watch each resource this cluster serves, in every namespace; nothing else is allowed
 * (every write is 405; of subresources only a get of status and scale is served). Discovery, `/version` and health
 * (non-resource URLs) answer any reader; OpenAPI only readers of the cluster. A cluster outside the
 * credential's scope allows no resource at all.
 *
 * `SelfSubjectReview` answers the caller's Kubernetes user and groups (auth/principal.ts: TOKENS
 * `user` and `groups`, an Access identity's email and its identity provider's groups, always with
 * `system:authenticated`), with no `extra`, as kube-apiserver does for a static token.
 *
 * On a cluster whose `authorization` is `rbac` (issue 31) the answers are also the member cluster's
 * RBAC's, as `/k8s` enforces it (auth/rbac/read-authorization.ts): an access review is allowed only
 * where RBAC allows it too, with RBAC's reason; a rules review lists the RBAC rules that apply in
 * its namespace (those of ClusterRoleBindings and of the namespace's RoleBindings, as the server's
 * RulesFor), with their verbs narrowed to the read verbs this cache serves, `incomplete` and
 * `evaluationError` naming roles that were not found.
 *
 * Where we differ: the rules name only what we serve (on an `rbac` cluster: only read verbs).
 */
import * as z from "zod/mini";
import type { Principal } from "../auth/principal.ts";
import { BY_SCOPES, decide, type ReadAuthorization, rulesIn } from "../auth/rbac/read-authorization.ts";
import type { PolicyRule } from "../auth/rbac/rbac-objects.ts";
import type { ResourceInfo } from "./catalog.ts";
import { subresourceOf } from "./subresources.ts";
import { VERBS } from "./discovery.ts";
import { statusErrors } from "./status.ts";

/** What the caller may do on the cluster the review is sent to. */
export interface ReviewSubject {
  principal: Principal;
  /** Whether the credential may read this cluster's objects (`permission` found nothing to refuse). */
  mayRead: boolean;
  /** What this cluster serves. */
  served: readonly ResourceInfo[];
  /** How this cluster authorizes the caller's reads: its scopes, or also the member cluster's RBAC. */
  authorization?: ReadAuthorization;
}

/** The review paths below `/apis` and the kind each answers. */
export const REVIEW_PATHS = {
  "authorization.k8s.io/v1/selfsubjectaccessreviews": "SelfSubjectAccessReview",
  "authorization.k8s.io/v1/selfsubjectrulesreviews": "SelfSubjectRulesReview",
  "authentication.k8s.io/v1/selfsubjectreviews": "SelfSubjectReview",
} as const;
export type ReviewPath = keyof typeof REVIEW_PATHS;

/** Whether `path` (below `/k8s` or `/k8s/clusters/{c}`) is a review: the only POST `/k8s` accepts. */
export function isReviewPath(path: string): boolean {
  return Object.keys(REVIEW_PATHS).some((review) => path.endsWith(`/apis/${review}`));
}

/** Non-resource URLs any reader may get (kube-apiserver's system:discovery and system:public-info-viewer). */
const NON_RESOURCE_URLS = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/readyz", "/version", "/version/"];
/** Non-resource URLs only readers of the cluster may get: its OpenAPI names every kind installed there (review N6). */
const CLUSTER_NON_RESOURCE_URLS = ["/openapi", "/openapi/*"];

/** The non-resource URLs the caller may get. */
function nonResourceUrls(subject: ReviewSubject): string[] {
  return subject.mayRead ? [...NON_RESOURCE_URLS, ...CLUSTER_NON_RESOURCE_URLS] : NON_RESOURCE_URLS;
}

const ResourceAttributes = z.object({
  namespace: z.optional(z.string()),
  verb: z.optional(z.string()),
  group: z.optional(z.string()),
  version: z.optional(z.string()),
  resource: z.optional(z.string()),
  subresource: z.optional(z.string()),
  name: z.optional(z.string()),
});
const NonResourceAttributes = z.object({ path: z.optional(z.string()), verb: z.optional(z.string()) });
const Review = z.object({
  apiVersion: z.optional(z.string()),
  kind: z.optional(z.string()),
  metadata: z.optional(z.record(z.string(), z.unknown())),
  spec: z.optional(
    z.object({
      resourceAttributes: z.optional(ResourceAttributes),
      nonResourceAttributes: z.optional(NonResourceAttributes),
      namespace: z.optional(z.string()),
    }),
  ),
});
type Review = z.infer<typeof Review>;

function parseReview(kind: string, body: unknown): Review {
  const parsed = Review.safeParse(body);
  if (!parsed.success) throw statusErrors.badRequest(`the body of the request is not a valid ${kind}: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return parsed.data;
}

/** Whether the caller may `verb` the resource: a read verb on a served resource (a subresource: a get of status or scale) of a readable cluster. */
function allowsResource(subject: ReviewSubject, attributes: z.infer<typeof ResourceAttributes>): { allowed: boolean; reason?: string } {
  const verb = attributes.verb ?? "";
  if (!(VERBS as readonly string[]).includes(verb)) return { allowed: false, reason: "this is a read-only cache of the cluster: only get, list and watch are served" };
  if (!subject.mayRead) return { allowed: false, reason: `credential '${subject.principal.name}' may not read this cluster` };
  const served = subject.served.find(
    (info) => info.group === (attributes.group ?? "") && info.plural === attributes.resource && (!attributes.version || attributes.version === info.version),
  );
  if (attributes.subresource) {
    // Only a get of the status and scale subresources is served (k8s/subresources.ts).
    const sub = served && verb === "get" ? subresourceOf(served, attributes.subresource) : undefined;
    if (sub !== "status" && sub !== "scale") return { allowed: false, reason: "subresources are not served by this cache" };
  }
  if (!served) return { allowed: false, reason: "this cache does not serve that resource" };
  const authorization = subject.authorization ?? BY_SCOPES;
  if (authorization.mode === "scopes") return { allowed: true, reason: `credential '${subject.principal.name}' may read this cluster` };
  return decide(authorization, {
    verb,
    apiGroup: attributes.group ?? "",
    resource: attributes.resource ?? "",
    ...(attributes.subresource ? { subresource: attributes.subresource } : {}),
    ...(attributes.namespace ? { namespace: attributes.namespace } : {}),
    ...(attributes.name ? { name: attributes.name } : {}),
  });
}

function allowsNonResource(subject: ReviewSubject, attributes: z.infer<typeof NonResourceAttributes>): boolean {
  const path = attributes.path ?? "";
  if (attributes.verb !== "get") return false;
  if (!nonResourceUrls(subject).some((url) => (url.endsWith("*") ? path.startsWith(url.slice(0, -1)) : path === url))) return false;
  return decide(subject.authorization ?? BY_SCOPES, { verb: "get", path }).allowed;
}

/** The answer to a review: the request as sent, with the server's metadata and its `status`. */
export function answerReview(path: ReviewPath, body: unknown, subject: ReviewSubject): Record<string, unknown> {
  const kind = REVIEW_PATHS[path];
  const review = parseReview(kind, body);
  const head = { kind, apiVersion: path.slice(0, path.lastIndexOf("/")), metadata: { ...review.metadata, creationTimestamp: null } };
  switch (kind) {
    case "SelfSubjectAccessReview": {
      const spec = review.spec ?? {};
      let verdict: { allowed: boolean; reason?: string };
      if (spec.resourceAttributes) verdict = allowsResource(subject, spec.resourceAttributes);
      else if (spec.nonResourceAttributes) verdict = { allowed: allowsNonResource(subject, spec.nonResourceAttributes) };
      else throw statusErrors.invalidReview(kind, "authorization.k8s.io", "spec.resourceAttributes", "exactly one of nonResourceAttributes or resourceAttributes must be specified");
      return { ...head, spec, status: verdict };
    }
    case "SelfSubjectRulesReview": {
      const rbac = subject.mayRead ? rulesIn(subject.authorization ?? BY_SCOPES, review.spec?.namespace ?? "") : undefined;
      // By scopes the rules are the same in every namespace: the credential reads whole clusters.
      return { ...head, spec: review.spec ?? {}, status: rbac ? rbacRules(rbac) : rulesOf(subject) };
    }
    case "SelfSubjectReview":
      return { ...head, status: { userInfo: userInfoOf(subject.principal) } };
  }
}

function rulesOf(subject: ReviewSubject): Record<string, unknown> {
  const groups = [...new Set(subject.served.map((info) => info.group))];
  const resourceRules = subject.mayRead
    ? groups.map((group) => ({
        verbs: [...VERBS],
        apiGroups: [group],
        resources: subject.served.filter((info) => info.group === group).map((info) => info.plural),
      }))
    : [];
  return { resourceRules, nonResourceRules: [{ verbs: ["get"], nonResourceURLs: nonResourceUrls(subject) }], incomplete: false };
}

/** The read verbs a rule grants (`*` is all of them), or none. */
function readVerbsOf(rule: PolicyRule): string[] {
  const verbs = rule.verbs ?? [];
  return verbs.includes("*") ? [...VERBS] : VERBS.filter((verb) => verbs.includes(verb));
}

/** An `rbac` cluster's rules review: RBAC's rules in the namespace, narrowed to the read verbs served. */
function rbacRules({ rules, missing }: { rules: PolicyRule[]; missing: string[] }): Record<string, unknown> {
  const resourceRules: Record<string, unknown>[] = [];
  const nonResourceRules: Record<string, unknown>[] = [];
  for (const rule of rules) {
    const verbs = readVerbsOf(rule);
    if (verbs.length === 0) continue;
    if (rule.nonResourceURLs?.length) nonResourceRules.push({ verbs, nonResourceURLs: [...rule.nonResourceURLs] });
    if (rule.resources?.length) {
      resourceRules.push({
        verbs,
        apiGroups: [...(rule.apiGroups ?? [])],
        resources: [...rule.resources],
        ...(rule.resourceNames?.length ? { resourceNames: [...rule.resourceNames] } : {}),
      });
    }
  }
  return { resourceRules, nonResourceRules, incomplete: missing.length > 0, ...(missing.length ? { evaluationError: missing.join(", ") } : {}) };
}

function userInfoOf(principal: Principal): Record<string, unknown> {
  return { username: principal.user, groups: [...principal.groups] };
}

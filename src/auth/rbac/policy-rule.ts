/**
 * Whether one PolicyRule allows one request, with kube-apiserver's semantics
 * (plugin/pkg/auth/authorizer/rbac/rbac.go `RuleAllows`, pkg/apis/rbac/v1/evaluation_helpers.go):
 * - verbs, apiGroups: `*` or an exact match;
 * - resources: `*`, an exact match of `resource` or `resource/subresource`, or, for a request of a
 *   subresource, a star-slash-subresource rule (`*` `/status` matches every resource's status).
 *   `resource/*` is NOT a wildcard on the server (it matches only a subresource literally named
 *   `*`), so it is not one here;
 * - resourceNames: empty allows any request; otherwise only a request naming one of them, so a
 *   list or a watch of a collection (no name) is never allowed by a rule with resourceNames;
 * - nonResourceURLs: `*`, an exact path, or a prefix ending in `*` (every trailing `*` removed);
 * - a resource request never matches nonResourceURLs, nor a non-resource request resources.
 */
import { isNonResource, type PolicyRule, type RequestAttributes } from "./rbac-objects.ts";

const ALL = "*";

function listed(values: readonly string[] | null | undefined, wanted: string): boolean {
  if (!values) return false;
  for (const value of values) if (value === ALL || value === wanted) return true;
  return false;
}

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const ruleResource of rule.resources ?? []) {
    if (ruleResource === ALL || ruleResource === combined) return true;
    if (subresource && ruleResource === `*/${subresource}`) return true;
  }
  return false;
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames;
  if (!names || names.length === 0) return true;
  return names.includes(name);
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const url of rule.nonResourceURLs ?? []) {
    if (url === ALL || url === path) return true;
    if (url.endsWith(ALL) && path.startsWith(url.replace(/\*+$/, ""))) return true;
  }
  return false;
}

export function ruleAllows(rule: PolicyRule, request: RequestAttributes): boolean {
  if (!listed(rule.verbs, request.verb)) return false;
  if (isNonResource(request)) return nonResourceURLMatches(rule, request.path);
  return (
    listed(rule.apiGroups, request.apiGroup) &&
    resourceMatches(rule, request.resource, request.subresource ?? "") &&
    resourceNameMatches(rule, request.name ?? "")
  );
}

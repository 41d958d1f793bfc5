/**
 * What a `/k8s` request asks, in the terms an authorizer decides on (kube-apiserver's RequestInfo,
 * apiserver `pkg/endpoints/request/requestinfo.go`), so the member cluster's RBAC can decide it as
 * the server would (issue 31).
 *
 * Guarantees, as RequestInfo resolves them:
 * - A path below `/api/v1/` or `/apis/{group}/{version}/` is a resource request; every other path
 *   (`/api`, `/apis/apps/v1`, `/version`, `/openapi/v2`, health) is a non-resource request for that
 *   path, relative to the API server's root.
 * - Verbs: `get` for an object, `list` for a collection, `watch` for a collection with `watch=true`
 *   or any deprecated `/watch/` path. A list or watch whose field selector requires one
 *   `metadata.name` names that object, so `resourceNames` rules apply (`kubectl get pod x -w`).
 * - `GET /api/v1/namespaces/{name}` is in namespace `{name}`: a RoleBinding there may grant it.
 * - A self-review is `create` on its resource (granted to every authenticated user by the
 *   cluster's `system:basic-user` ClusterRole).
 */
import type { RequestAttributes, ResourceAttributes } from "../auth/rbac/rbac-objects.ts";
import { REVIEW_PATHS, type ReviewPath } from "./access-review.ts";
import type { ResourceRequest } from "./served.ts";

/** The object a field selector names, when it requires exactly one `metadata.name` (fields.RequiresExactMatch). */
function exactName(fieldSelector: string | undefined): string | undefined {
  for (const term of (fieldSelector ?? "").split(",")) {
    const match = /^\s*metadata\.name\s*={1,2}\s*(.*?)\s*$/.exec(term);
    if (match && match[1]) return match[1];
  }
  return undefined;
}

/** A resource request's attributes. `watchQuery`: the request's `watch` parameter is true. */
export function resourceAttributes(group: string, request: ResourceRequest, watchQuery: boolean, fieldSelector: string | undefined): ResourceAttributes {
  const base = { apiGroup: group, resource: request.plural };
  if (request.kind === "object") {
    const namespace = request.namespace ?? (group === "" && request.plural === "namespaces" ? request.name : undefined);
    return {
      ...base,
      verb: request.watch ? "watch" : "get",
      name: request.name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(request.subresource === undefined ? {} : { subresource: request.subresource }),
    };
  }
  const name = exactName(fieldSelector);
  return {
    ...base,
    verb: request.watch || watchQuery ? "watch" : "list",
    ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
    ...(name === undefined ? {} : { name }),
  };
}

/** Whether `path` (relative to the API server's root) is a resource request, decided in resource routes. */
export function isResourcePath(path: string): boolean {
  return /^\/api\/v1\/[^/]/.test(path) || /^\/apis\/[^/]+\/[^/]+\/[^/]/.test(path);
}

/** The attributes of a request that is not below a resource prefix: a self-review's `create`, else a non-resource `get`. */
export function endpointAttributes(method: string, path: string): RequestAttributes {
  const review = (Object.keys(REVIEW_PATHS) as ReviewPath[]).find((review) => path === `/apis/${review}`);
  if (method === "POST" && review) {
    const [apiGroup, , resource] = review.split("/") as [string, string, string];
    return { verb: "create", apiGroup, resource };
  }
  return { verb: "get", path };
}

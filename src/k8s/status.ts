/**
 * Errors as the API server writes them: a `Status` object with the HTTP code, a `reason` and, where
 * the server gives them, `details` (kubernetes-api-server-facts.md §3). Every `/k8s` failure is one
 * of these, so kubectl prints `Error from server (<reason>): <message>` and client libraries get the
 * fields they branch on (`reason: Expired` → relist, `NotFound`, `retryAfterSeconds`).
 */
import type { ResourceInfo } from "./catalog.ts";

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: { reason?: string; message?: string; field?: string }[];
  retryAfterSeconds?: number;
}

export interface K8sStatus {
  kind: "Status";
  apiVersion: "v1";
  metadata: { continue?: string };
  status: "Failure";
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

/** A failure to answer with: carries its Status. */
export class StatusError extends Error {
  override readonly name = "StatusError";
  readonly status: K8sStatus;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, ...(details ? { details } : {}), code };
  }
}

/** `pods` or `deployments.apps`, as the server names a resource in messages. */
export function qualified(info: Pick<ResourceInfo, "plural" | "group">): string {
  return info.group === "" ? info.plural : `${info.plural}.${info.group}`;
}

function resourceDetails(info: Pick<ResourceInfo, "plural" | "group">, name?: string): StatusDetails {
  // `group` is omitted for the core group; `kind` is the plural resource (errors.go NewNotFound).
  return { ...(name === undefined ? {} : { name }), ...(info.group === "" ? {} : { group: info.group }), kind: info.plural };
}

export const statusErrors = {
  notFound: (info: Pick<ResourceInfo, "plural" | "group">, name: string) =>
    new StatusError(404, "NotFound", `${qualified(info)} "${name}" not found`, resourceDetails(info, name)),
  /** A subresource the cache cannot serve (`pods/log`, `exec`, …): refused as the API server refuses a user without the right (403). */
  subresourceNotServed: (info: Pick<ResourceInfo, "plural" | "group">, name: string, subresource: string) =>
    new StatusError(
      403,
      "Forbidden",
      `${qualified(info)} "${name}" is forbidden: this is a read-only cache of the cluster: ${info.plural}/${subresource} is not served (ask the cluster itself)`,
      resourceDetails(info, name),
    ),
  /** `/k8s/clusters/{cluster}` of a cluster this deployment does not have (issue 12). */
  unknownCluster: (cluster: string) => new StatusError(404, "NotFound", `cluster "${cluster}" not found`, { name: cluster, kind: "clusters" }),
  /** An unknown path under an API prefix (a resource nobody mirrors). */
  noSuchResource: () => new StatusError(404, "NotFound", "the server could not find the requested resource", {}),
  methodNotAllowed: () =>
    new StatusError(
      405,
      "MethodNotAllowed",
      "the server does not allow this method on the requested resource (this is a read-only cache of the cluster: write to the cluster's API server)",
      {},
    ),
  badRequest: (message: string) => new StatusError(400, "BadRequest", message),
  /** A list at a resourceVersion the cache is past (etcd3 errors.go: a compacted revision). */
  expiredList: () => new StatusError(410, "Expired", "The resourceVersion for the provided list is too old."),
  /**
   * A continue whose snapshot is gone (etcd3 errors.go): with `resume`, a token that goes on from the
   * same key inconsistently, offered in `metadata.continue` as the server offers it (client-go
   * ignores it and relists); without one, the server's shorter message.
   */
  expiredContinue: (resume?: string) => {
    const start = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter";
    if (resume === undefined) return new StatusError(410, "Expired", `${start}.`);
    const error = new StatusError(
      410,
      "Expired",
      `${start}, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.`,
    );
    error.status.metadata.continue = resume;
    return error;
  },
  expiredWatch: (rv: string, oldest: string) => new StatusError(410, "Expired", `too old resource version: ${rv} (${oldest})`),
  tooLargeResourceVersion: (rv: string, current: string) =>
    new StatusError(504, "Timeout", `Timeout: Too large resource version: ${rv}, current: ${current}`, {
      causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
      retryAfterSeconds: 1,
    }),
  /** A review body the server's validation refuses: 422 naming the field (`SelfSubjectAccessReview.authorization.k8s.io "" is invalid: …`). */
  invalidReview: (kind: string, group: string, field: string, message: string) =>
    new StatusError(422, "Invalid", `${kind}.${group} "" is invalid: ${field}: ${message}`, {
      group,
      kind,
      causes: [{ reason: "FieldValueInvalid", message, field }],
    }),
  notAcceptable: (types: string) => new StatusError(406, "NotAcceptable", `only the following media types are accepted: ${types}`),
  /** An unexpected failure (errors.go NewInternalError: the message is prefixed, the cause repeated). */
  internal: (message: string) => new StatusError(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] }),
  unavailable: (message: string) => new StatusError(503, "ServiceUnavailable", message),
  /**
   * A read the authorizer refused (apiserver responsewriters.Forbidden): the message is
   * read-authorization.ts `forbiddenMessage`; details name the resource (`kind` is its plural) and
   * object, empty for a non-resource path.
   */
  forbidden: (message: string, resource?: { group: string; resource: string; name?: string | undefined }) =>
    new StatusError(
      403,
      "Forbidden",
      message,
      resource ? { ...(resource.name ? { name: resource.name } : {}), ...(resource.group ? { group: resource.group } : {}), kind: resource.resource } : {},
    ),
  /**
   * Load shed before anything is read or streamed (errors.go NewTooManyRequests, what APF answers):
   * client-go waits `Retry-After` and retries the request by itself.
   */
  tooManyRequests: (message: string, retryAfterSeconds: number) => new StatusError(429, "TooManyRequests", message, { retryAfterSeconds }),
};

export function statusResponse(error: StatusError, headers: Record<string, string> = {}): Response {
  const extra: Record<string, string> = { ...headers };
  if (error.status.details?.retryAfterSeconds !== undefined) extra["retry-after"] = String(error.status.details.retryAfterSeconds);
  return new Response(JSON.stringify(error.status), {
    status: error.status.code,
    headers: { "content-type": "application/json", "cache-control": "no-cache, private", ...extra },
  });
}

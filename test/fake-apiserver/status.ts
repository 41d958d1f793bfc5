/**
 * metav1.Status bodies exactly as a real kube-apiserver writes them (field order, reasons, messages;
 * reference §1.3.5, §1.6): the fake uses these for HTTP errors and for watch ERROR events alike.
 */

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface KubeStatus {
  kind: "Status";
  apiVersion: "v1";
  metadata: { continue?: string };
  status: "Failure";
  message: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** Thrown anywhere in the fake to answer a request with `status`. */
export class StatusError extends Error {
  override readonly name = "StatusError";
  readonly status: KubeStatus;
  constructor(s: KubeStatus) {
    super(s.message);
    this.status = s;
  }
}

export function status(code: number, reason: string | undefined, message: string, details?: StatusDetails): KubeStatus {
  // Keep the apiserver's key order: kind, apiVersion, metadata, status, message, reason, details, code.
  const s: Record<string, unknown> = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message };
  if (reason) s.reason = reason;
  if (details) s.details = details;
  s.code = code;
  return s as unknown as KubeStatus;
}

export const badRequest = (message: string): KubeStatus => status(400, "BadRequest", message);

export const unauthorized = (): KubeStatus => status(401, "Unauthorized", "Unauthorized");

/** `pods "x" not found` / `deployments.apps "x" not found`. */
export function notFound(resource: string, group: string, name: string): KubeStatus {
  const qualified = group ? `${resource}.${group}` : resource;
  const details: StatusDetails = group ? { name, group, kind: resource } : { name, kind: resource };
  return status(404, "NotFound", `${qualified} "${name}" not found`, details);
}

/** What the apiserver answers for a path it has no handler for. */
export const noSuchResource = (): KubeStatus =>
  status(404, "NotFound", "the server could not find the requested resource", {});

export function alreadyExists(resource: string, group: string, name: string): KubeStatus {
  const qualified = group ? `${resource}.${group}` : resource;
  const details: StatusDetails = group ? { name, group, kind: resource } : { name, kind: resource };
  return status(409, "AlreadyExists", `${qualified} "${name}" already exists`, details);
}

export function conflict(resource: string, group: string, name: string): KubeStatus {
  const qualified = group ? `${resource}.${group}` : resource;
  const details: StatusDetails = group ? { name, group, kind: resource } : { name, kind: resource };
  return status(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    details,
  );
}

export const methodNotAllowed = (method: string): KubeStatus =>
  status(405, "MethodNotAllowed", `the server does not allow this method on the requested resource (${method})`, {});

export const notAcceptable = (): KubeStatus =>
  status(406, "NotAcceptable", "only the following media types are accepted: application/json");

// etcd3/errors.go messages.
export const LIST_TOO_OLD = "The resourceVersion for the provided list is too old.";
export const CONTINUE_EXPIRED =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.";
export const INCONSISTENT_CONTINUE =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

export const expired = (message: string): KubeStatus => status(410, "Expired", message);

/** The watch cache's answer for a watch from a compacted RV (reference §1.6.3). */
export const watchTooOld = (requested: bigint | string, oldest: bigint | string): KubeStatus =>
  expired(`too old resource version: ${requested} (${oldest})`);

/** storage.NewTooLargeResourceVersionError with the watch cache's 1 s retry hint (reference §1.6.4). */
export function tooLargeResourceVersion(requested: bigint | string, current: bigint | string): KubeStatus {
  return status(504, "Timeout", `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
    retryAfterSeconds: 1,
  });
}

export interface FieldError {
  field: string;
  type: "Forbidden" | "NotSupported" | "Invalid";
  detail: string;
  value?: string;
  supported?: string[];
}

/** errors.NewInvalid(ListOptions.meta.k8s.io, "", errs): 422 with one cause per field error. */
export function invalidListOptions(errors: FieldError[]): KubeStatus {
  const body = (e: FieldError): string => {
    switch (e.type) {
      case "Forbidden":
        return `Forbidden: ${e.detail}`;
      case "NotSupported":
        return `Unsupported value: "${e.value}": supported values: ${(e.supported ?? []).map((v) => `"${v}"`).join(", ")}`;
      case "Invalid":
        return `Invalid value: "${e.value}": ${e.detail}`;
    }
  };
  const rendered = errors.map((e) => `${e.field}: ${body(e)}`);
  const aggregate = rendered.length === 1 ? rendered[0]! : `[${rendered.join(", ")}]`;
  return status(422, "Invalid", `ListOptions.meta.k8s.io "" is invalid: ${aggregate}`, {
    group: "meta.k8s.io",
    kind: "ListOptions",
    causes: errors.map((e) => ({ reason: `FieldValue${e.type}`, message: body(e), field: e.field })),
  });
}

/** Generic Status for an injected HTTP code, with the reason and wording the apiserver uses for it. */
export function statusForCode(
  code: number,
  opts: { reason?: string; message?: string; retryAfterSeconds?: number } = {},
): KubeStatus {
  const retry = opts.retryAfterSeconds;
  const withRetry = (d: StatusDetails = {}): StatusDetails | undefined =>
    retry !== undefined ? { ...d, retryAfterSeconds: retry } : Object.keys(d).length ? d : undefined;
  switch (code) {
    case 410:
      return status(410, opts.reason ?? "Expired", opts.message ?? LIST_TOO_OLD, withRetry());
    case 429:
      return status(429, opts.reason ?? "TooManyRequests", opts.message ?? "Too many requests, please try again later.", {
        retryAfterSeconds: retry ?? 1,
      });
    case 500:
      return status(500, opts.reason ?? "InternalError", opts.message ?? "Internal error occurred: injected fault", withRetry({
        causes: [{ message: "injected fault" }],
      }));
    case 503:
      return status(503, opts.reason ?? "ServiceUnavailable", opts.message ?? "the server is currently unable to handle the request", withRetry());
    case 504:
      return status(
        504,
        opts.reason ?? "Timeout",
        opts.message ?? "Timeout: request did not complete within requested timeout - context deadline exceeded",
        withRetry(),
      );
    default: {
      const reasons: Record<number, string> = {
        400: "BadRequest",
        401: "Unauthorized",
        403: "Forbidden",
        404: "NotFound",
        405: "MethodNotAllowed",
        409: "Conflict",
        422: "Invalid",
      };
      return status(code, opts.reason ?? reasons[code], opts.message ?? `injected fault: HTTP ${code}`, withRetry());
    }
  }
}

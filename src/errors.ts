/**
 * The closed set of errors the HTTP layer renders as `{"error": {"code", "message"}}` (API.md).
 * Anything else is a bug and becomes a 500 without its message leaking internals.
 */

export type ErrorCode =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "Conflict"
  | "Gone"
  | "PayloadTooLarge"
  | "UnsupportedMediaType"
  | "DeliveryFailed"
  | "Internal"
  | "Misconfigured"
  | "ServiceUnavailable"
  | "TooManyRequests";

const STATUS_OF: Record<ErrorCode, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  Gone: 410,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  /** A webhook redelivery the endpoint did not acknowledge. */
  DeliveryFailed: 502,
  /**
   * The deployment lacks a setting the request needs (e.g. ENCRYPTION_KEY), or something the answer
   * depends on cannot be reached now (Cloudflare Access's keys); the message says which.
   */
  ServiceUnavailable: 503,
  /** Load shed before the work started (k8s/admission.ts): try again after a moment. */
  TooManyRequests: 429,
  Internal: 500,
  /** The deployment's settings are wrong (e.g. a token too short): the message says which. */
  Misconfigured: 500,
};

/** An error a client caused or may act on; carries its HTTP status. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly code: ErrorCode;
  readonly status: number;
  /** A 429's own Retry-After, when it is not the load shedding's (http/errors.ts). */
  readonly retryAfterSeconds: number | undefined;
  constructor(code: ErrorCode, message: string, retryAfterSeconds?: number) {
    super(message);
    this.code = code;
    this.status = STATUS_OF[code];
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class ValidationError extends Error {
  override readonly name: string = "ValidationError";
}

/** What crosses a Durable Object RPC boundary in place of a thrown ApiError (RPC keeps only messages). */
export type Result<T> = { ok: true; value: T } | { ok: false; error: { code: ErrorCode; message: string } };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function fail<T>(code: ErrorCode, message: string): Result<T> {
  return { ok: false, error: { code, message } };
}

/** Unwraps an RPC result, re-throwing its error as an ApiError on this side. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw new ApiError(result.error.code, result.error.message);
}

/** Runs `fn`, turning an ApiError or ValidationError into a failed Result. */
export function attempt<T>(fn: () => T): Result<T> {
  try {
    return ok(fn());
  } catch (error) {
    return failureOf(error);
  }
}

/** `attempt` for asynchronous work. */
export async function attemptAsync<T>(fn: () => Promise<T>): Promise<Result<T>> {
  try {
    return ok(await fn());
  } catch (error) {
    return failureOf(error);
  }
}

/** The failed Result of an ApiError or ValidationError; anything else is a bug and is thrown on. */
function failureOf(error: unknown): Result<never> {
  if (error instanceof ApiError) return fail(error.code, error.message);
  if (error instanceof ValidationError) return fail("BadRequest", error.message);
  throw error;
}

/** Renders validation issues (zod's) as one message: `field: problem; field: problem`. */
export function describeIssues(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : ""}${issue.message}`)
    .join("; ");
}

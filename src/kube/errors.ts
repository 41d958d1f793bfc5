/**
 * Kubernetes API errors and the predicates the reflector branches on. Each server quirk sits behind
 * one named predicate whose comment names the behaviour (reference §1.6.5, client-go
 * reflector.go `isExpiredError`, `isTooLargeResourceVersionError`, `isWatchErrorRetriable`).
 */
import { type BodyStart, readBodyStart } from "../net/bounded-body.ts";
import { isLostConnection, LOST_CONNECTION } from "../net/connection-failure.ts";
import type { Status, StatusCause } from "./types.ts";

/**
 * The most of an error answer's body that is read. A Status is a few hundred bytes; a proxy's
 * error page a few KiB. Past this the body is refused unread (review A9): a hostile or broken
 * server could otherwise fill the isolate's memory with one "error page".
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

export class KubeApiError extends Error {
  override readonly name = "KubeApiError";
  /** HTTP status, or 0 when no answer arrived (connection refused, reset, timed out). */
  readonly code: number;
  readonly reason: string;
  readonly causes: StatusCause[];
  readonly retryAfterSeconds: number | undefined;

  constructor(code: number, reason: string, message: string, causes: StatusCause[] = [], retryAfterSeconds?: number) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.causes = causes;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** From a Status object (an HTTP error body or a watch ERROR event). */
  static fromStatus(status: Partial<Status>, httpCode?: number): KubeApiError {
    const code = typeof status.code === "number" && status.code > 0 ? status.code : (httpCode ?? 0);
    return new KubeApiError(
      code,
      status.reason ?? "",
      status.message ?? `the API server answered ${code}`,
      status.details?.causes ?? [],
      status.details?.retryAfterSeconds,
    );
  }

  /**
   * From a non-2xx HTTP response; a body that is not a Status (e.g. from a proxy), one over
   * MAX_ERROR_BODY_BYTES, or one not complete within `timeoutMs` (not read further either way,
   * review A9a) maps from the code alone.
   */
  static async fromResponse(response: Response, timeoutMs?: number): Promise<KubeApiError> {
    const deadline = new AbortController();
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => deadline.abort(), timeoutMs);
    let body: BodyStart;
    try {
      body = await readBodyStart(response, MAX_ERROR_BODY_BYTES, deadline.signal);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
    const { text, exceeded, expired } = body;
    const unread = exceeded
      ? `over ${MAX_ERROR_BODY_BYTES / 1024} KiB (refused, not read)`
      : expired
        ? `not complete within ${(timeoutMs ?? 0) / 1000} s (not read further)`
        : undefined;
    if (unread !== undefined) return new KubeApiError(response.status, "", `${response.status} ${response.statusText || "error"} from the API server, with an error body ${unread}`);
    let status: Partial<Status> = {};
    try {
      const parsed = JSON.parse(text) as Partial<Status>;
      if (parsed && parsed.kind === "Status") status = parsed;
    } catch {
      // not JSON: keep the HTTP code only
    }
    const retryAfter = Number(response.headers.get("retry-after"));
    const error = KubeApiError.fromStatus(
      { message: status.message ?? `${response.status} ${response.statusText || "error"} from the API server`, ...status },
      response.status,
    );
    if (error.retryAfterSeconds === undefined && Number.isFinite(retryAfter) && retryAfter > 0) {
      return new KubeApiError(error.code, error.reason, error.message, error.causes, retryAfter);
    }
    return error;
  }

  /**
   * The API server could not be reached. `description` says why when the caller could find out
   * (net/connection-failure.ts); otherwise workerd's "Network connection lost." gets both its causes named.
   */
  static connectionFailed(cause: unknown, description?: string): KubeApiError {
    const message =
      description ??
      (isLostConnection(cause)
        ? `the connection was refused, reset or lost before an answer — is the API server running at KUBE_API_URL? (${LOST_CONNECTION})`
        : cause instanceof Error
          ? cause.message
          : String(cause));
    return new KubeApiError(0, "ConnectionFailed", `could not reach the API server: ${message}`);
  }
}

/**
 * The requested resourceVersion or continue token is older than the server keeps. Servers say
 * "Expired"; 1.17-era servers said "Gone"; a bare 410 without a reason counts too.
 */
export function isExpired(error: unknown): boolean {
  if (!(error instanceof KubeApiError)) return false;
  return error.reason === "Expired" || error.reason === "Gone" || (error.reason === "" && error.code === 410);
}

/**
 * The server has not yet observed the requested resourceVersion (504, typical right after an
 * apiserver restart or on a lagging HA replica, kubernetes#91073). Servers ≥1.19 send the cause
 * reason; 1.17.0–1.18.5 only the cause message; older ones only the message (kubernetes#92537, #94316).
 */
export function isTooLargeResourceVersion(error: unknown): boolean {
  if (!(error instanceof KubeApiError)) return false;
  if (error.causes.some((cause) => cause.reason === "ResourceVersionTooLarge")) return true;
  const isTimeout = error.reason === "Timeout" || error.code === 504;
  return (
    isTimeout &&
    (error.causes.some((cause) => cause.message === "Too large resource version") ||
      error.message.includes("Too large resource version"))
  );
}

export function isTooManyRequests(error: unknown): boolean {
  return error instanceof KubeApiError && (error.reason === "TooManyRequests" || error.code === 429);
}

/** No HTTP answer at all: refused, reset or timed out before headers. */
export function isConnectionFailure(error: unknown): boolean {
  return error instanceof KubeApiError && error.code === 0;
}

/**
 * A failed watch request worth retrying at the same resourceVersion, without a relist: the server
 * was unreachable or asked us to slow down (client-go `isWatchErrorRetriable`).
 */
export function isWatchErrorRetriable(error: unknown): boolean {
  return isConnectionFailure(error) || isTooManyRequests(error);
}

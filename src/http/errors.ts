/**
 * One error path for the whole API (hono's `onError`): every failure becomes
 * `{"error": {"code", "message"}}` with a fitting status (API.md). Client mistakes carry their own
 * message; anything unexpected is logged and answered as a bare 500, so internals never leak.
 */
import { logger } from "../log.ts";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError, type ErrorCode, ValidationError } from "../errors.ts";
import { HEAVY_READ_RETRY_AFTER_SECONDS } from "../k8s/admission.ts";

const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  410: "Gone",
  413: "PayloadTooLarge",
  415: "UnsupportedMediaType",
};

export function errorBody(code: ErrorCode, message: string) {
  return { error: { code, message } };
}

export function renderError(error: Error, c: Context): Response {
  if (error instanceof ApiError) {
    const response = c.json(errorBody(error.code, error.message), error.status as ContentfulStatusCode);
    // Load shed before any work (k8s/admission.ts): a client may retry after a moment; so may one
    // refused with a wait of its own (a 503 while a cluster's RBAC cannot be read: http/read-authorization.ts).
    const retryAfter = error.retryAfterSeconds ?? (error.code === "TooManyRequests" ? HEAVY_READ_RETRY_AFTER_SECONDS : undefined);
    if (retryAfter !== undefined) response.headers.set("retry-after", String(retryAfter));
    return response;
  }
  if (error instanceof ValidationError) {
    return c.json(errorBody("BadRequest", error.message), 400);
  }
  if (error instanceof HTTPException && error.status < 500) {
    const response = error.getResponse();
    const code = CODE_OF_STATUS[error.status] ?? "BadRequest";
    const headers = new Headers(response.headers);
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify(errorBody(code, error.message || response.statusText || code)), {
      status: error.status,
      headers,
    });
  }
  logger.error("unhandled error", { route: `${c.req.method} ${new URL(c.req.url).pathname}`, error: error.message, stack: error.stack ?? null });
  return c.json(errorBody("Internal", "internal error"), 500);
}

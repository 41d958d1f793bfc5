/**
 * Request validation through zod and `@hono/zod-validator`: handlers only ever see parsed values,
 * and a failure is a 400 naming each bad field (DESIGN invariant 8). Mutating requests carry JSON
 * or nothing (415 otherwise).
 */
import { zValidator } from "@hono/zod-validator";
import type { Context, MiddlewareHandler, ValidationTargets } from "hono";
import { bodyLimit } from "hono/body-limit";
import * as z from "zod/mini";
import { ApiError, describeIssues } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";

export function validate<Target extends keyof ValidationTargets, Schema extends z.ZodMiniType>(target: Target, schema: Schema) {
  return zValidator(target, schema, (result) => {
    if (!result.success) throw new ApiError("BadRequest", describeInvalid(target, result.error));
  });
}

/**
 * A 400's message. A route parameter's issues say themselves which value is wrong and what the rule
 * is (`paramMatching`); anything else is prefixed with where it was found.
 */
export function describeInvalid(target: keyof ValidationTargets, error: Parameters<typeof describeIssues>[0]): string {
  if (target === "param") return error.issues.map((issue) => issue.message).join("; ");
  return `invalid ${target === "json" ? "body" : target}: ${describeIssues(error)}`;
}

/** A route parameter that must match `pattern`; the 400 names the value and states the rule. */
export function paramMatching(what: string, rule: string, matches: (value: string) => boolean) {
  return z.string().check(z.refine(matches, { error: (issue) => `'${String(issue.input)}' is not ${what}: ${rule}` }));
}

const MUTATING_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Refuses a mutating request that carries a body, or a content type, other than `application/json`
 * (415). A browser sends text/plain, form and multipart bodies cross-site without a CORS preflight,
 * so without this any web page could POST to an instance running with ALLOW_UNAUTHENTICATED; a
 * JSON body needs a preflight, which this API never grants. Bodiless requests pass.
 */
export const requireJsonBody: MiddlewareHandler<AppEnv> = async function requireJsonBody(c, next) {
  if (!MUTATING_METHODS.has(c.req.method)) return next();
  const type = c.req.header("content-type");
  const hasBody = c.req.raw.body !== null && c.req.header("content-length") !== "0";
  if (type === undefined && !hasBody) return next();
  if (type?.split(";")[0]!.trim().toLowerCase() !== "application/json") {
    throw new ApiError(
      "UnsupportedMediaType",
      `${c.req.method} bodies must be JSON: send 'Content-Type: application/json' (got ${type === undefined ? "no content type" : `'${type}'`})`,
    );
  }
  return next();
};

/**
 * Refuses a mutating request a browser sends from another site (403). A bodiless POST or DELETE
 * needs no preflight, so without this any web page could delete an informer or redeliver dead
 * letters on an instance running with ALLOW_UNAUTHENTICATED. Browsers say where a request comes
 * from (`Sec-Fetch-Site`, else `Origin`); the API's own clients (curl, kubectl, the typed client)
 * send neither, and pass.
 */
export const refuseCrossSiteWrites: MiddlewareHandler<AppEnv> = async function refuseCrossSiteWrites(c, next) {
  if (!MUTATING_METHODS.has(c.req.method)) return next();
  const site = c.req.header("sec-fetch-site");
  const origin = c.req.header("origin");
  const foreign =
    site !== undefined ? site !== "same-origin" && site !== "none" : origin !== undefined && origin !== new URL(c.req.url).origin;
  if (foreign) {
    throw new ApiError("Forbidden", "a browser page of another site cannot change anything here: call the API from a tool, or from this instance's own pages");
  }
  return next();
};

/** Caps a request body (413 beyond `maxSize` bytes, before anything is read into memory). */
export function limitBody(maxSize: number, what: string) {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError("PayloadTooLarge", `${what} is at most ${maxSize} bytes`);
    },
  });
}

/** The request body as JSON, or a 400 saying it is not. */
export async function jsonBody(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw new ApiError("BadRequest", "the body is not valid JSON");
  }
}

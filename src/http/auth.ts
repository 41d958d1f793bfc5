/**
 * Bearer-token guards (API.md "Configuration"): mutating endpoints need ADMIN_TOKEN and answer 403
 * while it is unset, unless ALLOW_UNAUTHENTICATED is "true" (local development); read endpoints need
 * READ_TOKEN (or ADMIN_TOKEN) only when READ_TOKEN is set. Tokens are compared in constant time and
 * never logged or echoed.
 */
import type { MiddlewareHandler } from "hono";
import { timingSafeEqual } from "hono/utils/buffer";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

async function matchesAny(token: string, accepted: (string | undefined)[]): Promise<boolean> {
  let matched = false;
  for (const candidate of accepted) {
    if (candidate && (await timingSafeEqual(token, candidate))) matched = true;
  }
  return matched;
}

function unauthorized(message: string): ApiError {
  return new ApiError("Unauthorized", message);
}

/** Guards a mutating endpoint. */
export const requireAdmin: MiddlewareHandler<AppEnv> = async function requireAdmin(c, next) {
  const { ADMIN_TOKEN, ALLOW_UNAUTHENTICATED } = c.env;
  if (!ADMIN_TOKEN) {
    if (ALLOW_UNAUTHENTICATED === "true") return next();
    throw new ApiError(
      "Forbidden",
      "mutating endpoints are disabled: set the ADMIN_TOKEN secret (or ALLOW_UNAUTHENTICATED=true for local development)",
    );
  }
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw unauthorized("this endpoint needs 'Authorization: Bearer <ADMIN_TOKEN>'");
  if (!(await matchesAny(token, [ADMIN_TOKEN]))) throw unauthorized("the bearer token is not the admin token");
  return next();
};

/** Why a read is refused (no token, or not an accepted one), or undefined when it may proceed. */
export async function readRefusal(env: AppEnv["Bindings"], authorization: string | undefined): Promise<string | undefined> {
  const { READ_TOKEN, ADMIN_TOKEN } = env;
  if (!READ_TOKEN) return undefined;
  const token = bearerToken(authorization);
  if (!token) return "this endpoint needs 'Authorization: Bearer <READ_TOKEN>'";
  if (!(await matchesAny(token, [READ_TOKEN, ADMIN_TOKEN]))) return "the bearer token is not accepted";
  return undefined;
}

/** Guards a read endpoint when READ_TOKEN is set. */
export const requireRead: MiddlewareHandler<AppEnv> = async function requireRead(c, next) {
  const refusal = await readRefusal(c.env, c.req.header("authorization"));
  if (refusal !== undefined) throw unauthorized(refusal);
  return next();
};

/**
 * Request validation through zod and `@hono/zod-validator`: handlers only ever see parsed values,
 * and a failure is a 400 naming each bad field (DESIGN invariant 8).
 */
import { zValidator } from "@hono/zod-validator";
import type { Context, ValidationTargets } from "hono";
import { bodyLimit } from "hono/body-limit";
import type * as z from "zod/mini";
import { ApiError, describeIssues } from "../errors.ts";

export function validate<Target extends keyof ValidationTargets, Schema extends z.ZodMiniType>(target: Target, schema: Schema) {
  return zValidator(target, schema, (result) => {
    if (!result.success) {
      throw new ApiError("BadRequest", `invalid ${target === "json" ? "body" : target}: ${describeIssues(result.error)}`);
    }
  });
}

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

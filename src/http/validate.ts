/**
 * Request validation through zod and `@hono/zod-validator`: handlers only ever see parsed values,
 * and a failure is a 400 naming each bad field (DESIGN invariant 8).
 */
import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import type * as z from "zod/mini";
import { describeIssues } from "../config.ts";
import { ApiError } from "../errors.ts";

export function validate<Target extends keyof ValidationTargets, Schema extends z.ZodMiniType>(target: Target, schema: Schema) {
  return zValidator(target, schema, (result) => {
    if (!result.success) {
      throw new ApiError("BadRequest", `invalid ${target === "json" ? "body" : target}: ${describeIssues(result.error)}`);
    }
  });
}

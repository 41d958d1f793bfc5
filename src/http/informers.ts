/**
 * Admin and status routes (API.md "Admin and status"): list, create or update, inspect and delete
 * informers. Mutations go through the factory, which keeps the registry.
 */
import { Hono } from "hono";
import * as z from "zod/mini";
import { parseInformerSpec } from "../config.ts";
import { ApiError, unwrap } from "../errors.ts";
import { FACTORY_NAME } from "../objects/informer-factory.ts";
import { registryCache } from "./registry-snapshot.ts";
import type { InformerStatus } from "../objects/informer-object.ts";
import type { AppEnv } from "./app-env.ts";
import { clusterOf, requireAdmin, requireRead } from "./auth.ts";
import { jsonBody, limitBody, validate } from "./validate.ts";
import { informerStub } from "../clusters/stubs.ts";
import { informerAddress } from "./known-informer.ts";

export const MAX_SPEC_BYTES = 64 * 1024;

/** What an informer name is, as a 400 states it. */
export const INFORMER_NAME_RULE = "a lower-case DNS label of 1-63 characters (a-z, 0-9 and '-', starting and ending with a letter or digit)";
const INFORMER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A route parameter that must match `pattern`; the 400 names the value and states the rule. */
export function paramMatching(what: string, rule: string, matches: (value: string) => boolean) {
  return z.string().check(z.refine(matches, { error: (issue) => `'${String(issue.input)}' is not ${what}: ${rule}` }));
}

export const nameParam = z.object({
  name: paramMatching("an informer name", INFORMER_NAME_RULE, (name) => name.length <= 63 && INFORMER_NAME.test(name)),
});

/** Under /informers (the default cluster) and /clusters/{cluster}/informers. */
export const informerRoutes = new Hono<AppEnv>()
  .get("/", requireRead, async (c) => {
    const registered = await c.env.FACTORY.getByName(FACTORY_NAME).list(clusterOf(c));
    const statuses = await Promise.all(
      registered.map(async (informer) => {
        const status = await informerStub(c.env, informer, c.get("placement")).status();
        return status.ok ? status.value : undefined;
      }),
    );
    return c.json({ items: statuses.filter((s): s is InformerStatus => s !== undefined) });
  })
  .put(
    "/:name",
    requireAdmin,
    validate("param", nameParam),
    limitBody(MAX_SPEC_BYTES, "an informer spec"),
    async (c) => {
      const { name } = c.req.valid("param");
      const spec = parseInformerSpec(await jsonBody(c), name, clusterOf(c));
      if (spec.subscriptions.length > 0) {
        throw new ApiError(
          "BadRequest",
          "subscriptions are declared only in INFORMERS (wrangler.toml); create them with POST /informers/{name}/subscriptions",
        );
      }
      const { created, status } = unwrap(await c.env.FACTORY.getByName(FACTORY_NAME).put(spec));
      registryCache.invalidate(); // this isolate serves its own write at once
      return c.json(status, created ? 201 : 200);
    },
  )
  .get("/:name", requireRead, validate("param", nameParam), async (c) => {
    const status = unwrap(await informerStub(c.env, informerAddress(c), c.get("placement")).status());
    return c.json(status);
  })
  .delete("/:name", requireAdmin, validate("param", nameParam), async (c) => {
    unwrap(await c.env.FACTORY.getByName(FACTORY_NAME).remove(informerAddress(c)));
    registryCache.invalidate();
    return c.body(null, 204);
  });

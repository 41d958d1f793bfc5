/**
 * Admin and status routes (API.md "Admin and status"): list, create or update, inspect and delete
 * informers. Mutations go through the factory, which keeps the registry.
 */
import { Hono } from "hono";
import { parseInformerSpec } from "../config/informer-spec.ts";
import { ApiError, unwrap } from "../errors.ts";
import { factoryStub } from "../objects/factory-stub.ts";
import { registryCache } from "./registry-snapshot.ts";
import type { InformerStatus } from "../objects/informer-object.ts";
import type { AppEnv } from "./app-env.ts";
import { clusterOf, requireAdmin, requireRead } from "./auth.ts";
import { jsonBody, limitBody, validate } from "./validate.ts";
import { informerStub } from "../clusters/stubs.ts";
import { informerAddress, nameParam } from "./known-informer.ts";

export const MAX_SPEC_BYTES = 64 * 1024;

/** Under /informers (the default cluster) and /clusters/{cluster}/informers. */
export const informerRoutes = new Hono<AppEnv>()
  .get("/", requireRead, async (c) => {
    const registered = await factoryStub(c.env).list(clusterOf(c));
    const statuses = await Promise.all(
      registered.map(async (informer) => {
        const status = await informerStub(c.env, informer, c.get("placement")).status();
        // The factory's own (objects/factory-rbac-informers.ts) are listed, marked, so tools can hide them.
        if (!status.ok) return undefined;
        return informer.source === "internal" ? { ...status.value, internal: true } : status.value;
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
      const { created, status } = unwrap(await factoryStub(c.env).put(spec));
      registryCache.invalidate(); // this isolate serves its own write at once
      return c.json(status, created ? 201 : 200);
    },
  )
  .get("/:name", requireRead, validate("param", nameParam), async (c) => {
    const status = unwrap(await informerStub(c.env, informerAddress(c), c.get("placement")).status());
    return c.json(status);
  })
  .delete("/:name", requireAdmin, validate("param", nameParam), async (c) => {
    unwrap(await factoryStub(c.env).remove(informerAddress(c)));
    registryCache.invalidate();
    return c.body(null, 204);
  });

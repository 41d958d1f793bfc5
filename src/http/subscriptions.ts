/**
 * Webhook subscription routes (API.md "Webhook subscriptions"): create and list under an informer,
 * inspect, delete, re-enable, the delivery log, dead letters and redelivery. The signing secret is
 * in the creation answer only; no other answer carries it.
 */
import { Hono } from "hono";
import * as z from "zod/mini";
import { parseSubscriptionSpec } from "../delivery/subscription-spec.ts";
import type { SubscriptionStatus } from "../delivery/subscription.ts";
import { errorBody } from "./errors.ts";
import { ApiError, unwrap } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";
import { requireAdmin, requireRead } from "./auth.ts";
import { nameParam } from "./informers.ts";
import { jsonBody, limitBody, validate } from "./validate.ts";

export const MAX_SUBSCRIPTION_BYTES = 16 * 1024;

const idParam = z.object({ id: z.string().check(z.regex(/^sub_[a-z0-9][-a-z0-9]{0,127}$/, "not a subscription id")) });
const limitQuery = (max: number) =>
  z.strictObject({ limit: z.optional(z.coerce.number().check(z.int(), z.gte(1), z.lte(max))) });

/** `sub_` + 128 random bits in lower-case hex. */
function newSubscriptionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `sub_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Under /informers. */
export const informerSubscriptionRoutes = new Hono<AppEnv>()
  .post(
    "/:name/subscriptions",
    requireAdmin,
    validate("param", nameParam),
    limitBody(MAX_SUBSCRIPTION_BYTES, "a subscription"),
    async (c) => {
      const spec = parseSubscriptionSpec(await jsonBody(c), { allowLoopbackHttp: c.env.ALLOW_UNAUTHENTICATED === "true" });
      const id = newSubscriptionId();
      const created = unwrap(await c.env.SUBSCRIPTION.getByName(id).create(id, c.req.valid("param").name, spec));
      return c.json(created, 201, { location: `/subscriptions/${id}` });
    },
  )
  .get("/:name/subscriptions", requireRead, validate("param", nameParam), async (c) => {
    const ids = unwrap(await c.env.INFORMER.getByName(c.req.valid("param").name).subscriberIds());
    const statuses = await Promise.all(ids.map(async (id) => (await c.env.SUBSCRIPTION.getByName(id).status())));
    return c.json({ items: statuses.flatMap((s): SubscriptionStatus[] => (s.ok ? [s.value] : [])) });
  });

/** Under /subscriptions. */
export const subscriptionRoutes = new Hono<AppEnv>()
  .get("/:id", requireRead, validate("param", idParam), async (c) => {
    return c.json(unwrap(await c.env.SUBSCRIPTION.getByName(c.req.valid("param").id).status()));
  })
  .delete("/:id", requireAdmin, validate("param", idParam), async (c) => {
    const outcome = await c.env.SUBSCRIPTION.getByName(c.req.valid("param").id).destroy();
    if (outcome === "declared") {
      throw new ApiError("Conflict", "this subscription is declared in INFORMERS (wrangler.toml): remove it there");
    }
    return outcome === "deleted" ? c.body(null, 204) : c.json(errorBody("NotFound", "subscription not found"), 404);
  })
  .post("/:id/enable", requireAdmin, validate("param", idParam), async (c) => {
    return c.json(unwrap(await c.env.SUBSCRIPTION.getByName(c.req.valid("param").id).enable()));
  })
  .get("/:id/deliveries", requireRead, validate("param", idParam), validate("query", limitQuery(200)), async (c) => {
    const items = unwrap(await c.env.SUBSCRIPTION.getByName(c.req.valid("param").id).deliveries(c.req.valid("query").limit ?? 50));
    return c.json({ items });
  })
  .get("/:id/dead-letters", requireRead, validate("param", idParam), validate("query", limitQuery(1000)), async (c) => {
    const items = unwrap(await c.env.SUBSCRIPTION.getByName(c.req.valid("param").id).deadLetters(c.req.valid("query").limit ?? 100));
    return c.json({ items });
  })
  .post(
    "/:id/dead-letters/:eventId/redeliver",
    requireAdmin,
    validate("param", z.object({ ...idParam.shape, eventId: z.string().check(z.regex(/^evt_[A-Za-z0-9_-]{1,64}$/, "not an event id")) })),
    async (c) => {
      const { id, eventId } = c.req.valid("param");
      const result = unwrap(await c.env.SUBSCRIPTION.getByName(id).redeliver(eventId));
      if (result.delivered) return c.json(result);
      const reason = result.attempt.error ?? "not acknowledged";
      return c.json({ ...errorBody("DeliveryFailed", `the endpoint did not acknowledge the redelivery: ${reason}`), attempt: result.attempt }, 502);
    },
  );

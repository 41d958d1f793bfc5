/**
 * Webhook subscription routes (API.md "Webhook subscriptions"): create and list under an informer,
 * inspect, delete, re-enable, the delivery log, dead letters and redelivery. The signing secret is
 * in the creation (and rotation) answer only; no other answer carries it. An Ed25519 subscription's
 * public key is not secret: `GET /subscriptions/{id}/signing-key` answers it to readers.
 *
 * Every list is a page bounded by count and by size, with `continue` when more follow (#7.18). A
 * malformed id is a 400 and an unknown one a 404, both before any Durable Object is touched: ids
 * are looked up in the factory's index (known-subscription.ts), which a creation writes before the
 * object and a deletion clears after it (#7.17).
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import * as z from "zod/mini";
import { decodeContinue, encodeContinue } from "../cache/lister.ts";
import type { SubscriberCursor } from "../delivery/subscriber-list.ts";
import { parseSubscriptionSpec, SIGNING_KINDS, webhookUrlPolicy } from "../delivery/subscription-spec.ts";
import { queueTargets } from "../delivery/queue-target.ts";
import { MAX_PAGE_CHARS } from "../delivery/dead-letters.ts";
import type { DeadLetter, DeliveryAttempt, ListAnswer, SubscriptionStatus } from "../delivery/subscription-views.ts";
import { errorBody } from "./errors.ts";
import { ApiError, describeIssues, unwrap, ValidationError } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";
import type { Role } from "../auth/credentials.ts";
import { toHex } from "../net/byte-encoding.ts";
import { mayAccess, type Principal } from "../auth/principal.ts";
import { permit, permitRole, requireAdmin, requireRead } from "./auth.ts";
import { listableKeys } from "./list-scope.ts";
import { describeInvalid, jsonBody, limitBody, paramMatching, validate } from "./validate.ts";
import { informerStub, subscriptionStub } from "../clusters/stubs.ts";
import { clusterPlacement, informerAddress, nameParam } from "./known-informer.ts";
import { forgetSubscription, knownSubscription, rememberSubscription } from "./known-subscription.ts";
import { factoryStub } from "../objects/factory-stub.ts";

export const MAX_SUBSCRIPTION_BYTES = 16 * 1024;

const SUBSCRIPTION_ID = /^sub_[a-z0-9][-a-z0-9]{0,127}$/;
const idParam = z.object({
  id: paramMatching("a subscription id", "'sub_' and 1-128 lower-case letters, digits and '-', not starting with '-'", (id) => SUBSCRIPTION_ID.test(id)),
});
const EVENT_ID = /^evt_[A-Za-z0-9_-]{1,64}$/;
const pageQuery = (max: number) =>
  z.strictObject({
    limit: z.optional(z.coerce.number().check(z.int(), z.gte(1), z.lte(max))),
    continue: z.optional(z.string().check(z.maxLength(1024))),
  });
/**
 * How long a rotated secret is still signed with: a day by default, at most a week (issue 10); and
 * the new secret's kind (default: the subscription's), so HMAC rotates to Ed25519 (issue 32).
 */
const rotationBody = z.strictObject({
  graceSeconds: z._default(z.int().check(z.gte(0), z.lte(7 * 24 * 3600)), 24 * 3600),
  signing: z.optional(z.enum(SIGNING_KINDS)),
});
/** Statuses one list answer carries at most (each is a few KB at most: URL and selectors are capped). */
const MAX_LIST_SUBSCRIPTIONS = 500;
const DEFAULT_LIST_SUBSCRIPTIONS = 100;

const encodeCursor = (cursor: SubscriberCursor) => encodeContinue(JSON.stringify([cursor.createdAt, cursor.id]));

function decodeCursor(token: string): SubscriberCursor {
  try {
    const [createdAt, id] = JSON.parse(decodeContinue(token)) as unknown[];
    if (typeof createdAt === "number" && typeof id === "string") return { createdAt, id };
  } catch {
    // fall through
  }
  throw new ValidationError("continue: not a continue token from this API");
}

/** `sub_` + 128 random bits in lower-case hex. */
function newSubscriptionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `sub_${toHex(bytes)}`;
}

/**
 * A receiver URL as `principal` may see it. The URL is write-only like the secret (a Slack- or
 * Teams-style URL is itself a credential): admins see it whole, readers its origin and `/…`.
 */
export function receiverUrlFor(principal: Principal | undefined, url: string): string {
  if (principal?.admin) return url;
  const parsed = new URL(url);
  return parsed.pathname === "/" && !parsed.search ? parsed.origin : `${parsed.origin}/…`;
}

/**
 * A delivery attempt as `principal` may see it: what the receiver answered (`response`) is for
 * admins only (review N8: an admin credential picks the receiver, and its answers would otherwise be
 * a channel to every reader); readers keep the status and our own words for the failure.
 */
export function attemptFor(principal: Principal | undefined, attempt: DeliveryAttempt): DeliveryAttempt {
  if (principal?.admin || attempt.response === undefined) return attempt;
  const { response: _, ...withoutResponse } = attempt;
  return withoutResponse;
}

function statusFor(c: Context<AppEnv>, status: SubscriptionStatus): SubscriptionStatus {
  return status.url === undefined ? status : { ...status, url: receiverUrlFor(c.get("principal"), status.url) };
}

/**
 * Guards `/subscriptions/{id}/…`: the caller may `role` on the subscription's cluster. The id is
 * checked (400), then looked up in the factory's index (404 when unknown, its object untouched), and
 * a caller who may do nothing of the kind is refused before either. A subscription of a cluster the
 * caller may not access is the same 404 as an unknown id (review A2(g)): otherwise a 403 would tell
 * a credential scoped to one cluster which ids exist in the others.
 */
function onSubscription(role: Role): MiddlewareHandler<AppEnv> {
  return async function onSubscription(c, next) {
    const principal = await permitRole(c, role);
    const parsed = idParam.safeParse({ id: c.req.param("id") });
    if (!parsed.success) throw new ApiError("BadRequest", describeInvalid("param", parsed.error));
    const address = await knownSubscription(c.env, parsed.data.id);
    if (!address || !mayAccess(principal, address.cluster)) throw new ApiError("NotFound", "subscription not found");
    await permit(c, role, address.cluster);
    c.set("placement", await clusterPlacement(c.env, address.cluster));
    return next();
  };
}

/** Under /informers and /clusters/{cluster}/informers. */
export const informerSubscriptionRoutes = new Hono<AppEnv>()
  .post(
    "/:name/subscriptions",
    requireAdmin,
    validate("param", nameParam),
    limitBody(MAX_SUBSCRIPTION_BYTES, "a subscription"),
    async (c) => {
      const spec = parseSubscriptionSpec(await jsonBody(c), webhookUrlPolicy(c.env, new URL(c.req.url).hostname), queueTargets(c.env));
      const id = newSubscriptionId();
      const address = informerAddress(c);
      const factory = factoryStub(c.env);
      // Indexed first: a subscription must never exist unindexed (its routes would answer 404).
      await factory.indexSubscription(id, address);
      const created = await subscriptionStub(c.env, id, c.get("placement")).create(id, address, spec);
      if (!created.ok) await factory.unindexSubscription(id);
      else rememberSubscription(id, address);
      return c.json(unwrap(created), 201, { location: `/subscriptions/${id}` });
    },
  )
  .get("/:name/subscriptions", requireRead, validate("param", nameParam), validate("query", pageQuery(MAX_LIST_SUBSCRIPTIONS)), async (c) => {
    const query = c.req.valid("query");
    const after = query.continue === undefined ? null : decodeCursor(query.continue);
    const page = unwrap(
      await informerStub(c.env, informerAddress(c), c.get("placement")).subscriberPage(after, query.limit ?? DEFAULT_LIST_SUBSCRIPTIONS),
    );
    // The informer's tail is read once here, not by each subscription.
    const statuses = await Promise.all(page.items.map(({ id }) => subscriptionStub(c.env, id, c.get("placement")).status(page.tail)));
    const items: SubscriptionStatus[] = [];
    let chars = 0;
    for (const [i, status] of statuses.entries()) {
      if (!status.ok) continue; // deleted since the page was read
      chars += JSON.stringify(status.value).length;
      if (chars > MAX_PAGE_CHARS && items.length > 0) return c.json({ items, continue: encodeCursor(page.items[i - 1]!) });
      items.push(statusFor(c, status.value));
    }
    return c.json(page.more ? { items, continue: encodeCursor(page.items.at(-1)!) } : { items });
  });

/** Under /subscriptions. */
export const subscriptionRoutes = new Hono<AppEnv>()
  .get("/:id", onSubscription("read"), validate("param", idParam), async (c) => {
    return c.json(statusFor(c, unwrap(await subscriptionStub(c.env, c.req.valid("param").id, c.get("placement")).status())));
  })
  .delete("/:id", onSubscription("admin"), validate("param", idParam), async (c) => {
    const id = c.req.valid("param").id;
    const outcome = await subscriptionStub(c.env, id, c.get("placement")).destroy();
    if (outcome !== "declared") {
      forgetSubscription(id);
      await factoryStub(c.env).unindexSubscription(id);
    }
    if (outcome === "declared") {
      throw new ApiError("Conflict", "this subscription is declared in INFORMERS (wrangler.toml): remove it there");
    }
    return outcome === "deleted" ? c.body(null, 204) : c.json(errorBody("NotFound", "subscription not found"), 404);
  })
  .post(
    "/:id/secret",
    onSubscription("admin"),
    validate("param", idParam),
    limitBody(1024, "a secret rotation"),
    async (c) => {
      const hasBody = c.req.header("content-type") !== undefined;
      const parsed = rotationBody.safeParse(hasBody ? await jsonBody(c) : {});
      if (!parsed.success) throw new ApiError("BadRequest", `invalid body: ${describeIssues(parsed.error)}`);
      const { graceSeconds, signing } = parsed.data;
      return c.json(unwrap(await subscriptionStub(c.env, c.req.valid("param").id, c.get("placement")).rotateSecret(graceSeconds, signing)));
    },
  )
  // Public: readers of the cluster may hand it to their receivers. An HMAC subscription has none (409).
  .get("/:id/signing-key", onSubscription("read"), validate("param", idParam), async (c) => {
    return c.json(unwrap(await subscriptionStub(c.env, c.req.valid("param").id, c.get("placement")).signingKey()));
  })
  .post("/:id/enable", onSubscription("admin"), validate("param", idParam), async (c) => {
    return c.json(unwrap(await subscriptionStub(c.env, c.req.valid("param").id, c.get("placement")).enable()));
  })
  .get("/:id/deliveries", onSubscription("read"), validate("param", idParam), validate("query", pageQuery(200)), async (c) => {
    const { limit, continue: token } = c.req.valid("query");
    const page = unwrap(await subscriptionStub(c.env, c.req.valid("param").id, c.get("placement")).deliveries(limit ?? 50, token));
    return c.json({ ...page, items: page.items.map((attempt) => attemptFor(c.get("principal"), attempt)) });
  })
  .get("/:id/dead-letters", onSubscription("read"), validate("param", idParam), validate("query", pageQuery(1000)), async (c) => {
    const { limit, continue: token } = c.req.valid("query");
    const { id } = c.req.valid("param");
    // (The RPC type of a dead letter, which carries its event as JSON, resolves to unknown.)
    const page = unwrap(await subscriptionStub(c.env, id, c.get("placement")).deadLetters(limit ?? 100, token)) as ListAnswer<DeadLetter>;
    // Dead letters carry objects: on an rbac cluster, only those the caller may list (issue 31; list-scope.ts).
    const address = await knownSubscription(c.env, id);
    if (!address) throw new ApiError("NotFound", "subscription not found");
    const listable = await listableKeys(c, address);
    return c.json(listable ? { ...page, items: page.items.filter((dead) => listable(dead.key)) } : page);
  })
  .post(
    "/:id/dead-letters/:eventId/redeliver",
    onSubscription("admin"),
    validate("param", z.object({ ...idParam.shape, eventId: paramMatching("an event id", "'evt_' and 1-64 letters, digits, '_' and '-'", (id) => EVENT_ID.test(id)) })),
    async (c) => {
      const { id, eventId } = c.req.valid("param");
      const result = unwrap(await subscriptionStub(c.env, id, c.get("placement")).redeliver(eventId));
      if (result.delivered) return c.json(result);
      const reason = result.attempt.error ?? "not acknowledged";
      return c.json({ ...errorBody("DeliveryFailed", `the endpoint did not acknowledge the redelivery: ${reason}`), attempt: result.attempt }, 502);
    },
  );

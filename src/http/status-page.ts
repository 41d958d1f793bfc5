/**
 * The status page (API.md "Operating"): `GET /` renders informers and subscriptions for a browser
 * (status-view.ts), or the same snapshot as JSON for anything that does not ask for HTML; and the
 * page's one action, redelivering a subscription's dead letters, as a plain form POST.
 *
 * A browser cannot send a bearer token without script, so the page also accepts HTTP Basic
 * credentials whose password is the token (any user name): a 401 asks the browser for them. The
 * page shows only the clusters the credential may read, and of an `rbac` cluster only to a caller
 * its RBAC lets `get /metrics` (status-visibility.ts); the redeliver action needs an admin
 * credential on the subscription's cluster, and is refused from another site's pages (validate.ts).
 * Both answer with a content security policy that allows no script, no framing and no form target
 * but this origin: the page's one action cannot be clickjacked.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { secureHeaders } from "hono/secure-headers";
import * as z from "zod/mini";
import { ApiError, unwrap } from "../errors.ts";
import { errorText, logger } from "../log.ts";
import { subscriptionIdentity } from "../log-identity.ts";
import type { AppEnv } from "./app-env.ts";
import { permit, permitRole, principalOf, readableScope } from "./auth.ts";
import { mayAccess } from "../auth/principal.ts";
import { metricsSnapshot } from "./metrics-snapshot.ts";
import { visibleSnapshot } from "./status-visibility.ts";
import { type Notice, renderStatusPage } from "./status-view.ts";
import { refuseCrossSiteWrites, validate } from "./validate.ts";
import { knownSubscription } from "./known-subscription.ts";
import { clusterPlacement } from "./known-informer.ts";
import { subscriptionStub } from "../clusters/stubs.ts";

/** Dead letters one click redelivers at most (oldest first; it stops at the first the endpoint refuses). */
export const REDELIVER_PER_CLICK = 20;

const idParam = z.object({ id: z.string().check(z.regex(/^sub_[a-z0-9][-a-z0-9]{0,127}$/, "not a subscription id")) });

/** A 401 becomes the browser's credentials prompt; any other refusal stays the JSON error it is. */
async function orChallenge<T>(c: Context<AppEnv>, realm: string, check: () => Promise<T>): Promise<T | Response> {
  try {
    return await check();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) throw error;
    return c.text(`${error.message} (as the password, any user name, or as a bearer token)`, 401, {
      "www-authenticate": `Basic realm="${realm}", charset="UTF-8"`,
      "cache-control": "no-store",
    });
  }
}

const pageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    styleSrc: ["'unsafe-inline'"],
    imgSrc: ["'self'", "data:"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
  },
  xFrameOptions: "DENY",
  referrerPolicy: "no-referrer",
  xContentTypeOptions: "nosniff",
  strictTransportSecurity: false,
  crossOriginEmbedderPolicy: false,
});

export const statusRoutes = new Hono<AppEnv>()
  .use("/", pageHeaders)
  .use("/status/*", pageHeaders)
  .get("/", async (c) => {
    const readable = await orChallenge(c, "edge-informer", () => readableScope(c));
    if (readable instanceof Response) return readable;
    const snapshot = await visibleSnapshot(c, await metricsSnapshot(c, readable));
    if (!(c.req.header("accept") ?? "").includes("text/html")) return c.json(snapshot);
    const page = await renderStatusPage(snapshot, notice(c.req.query()));
    return c.html(page, 200, { "cache-control": "no-store" });
  })
  .post("/status/subscriptions/:id/redeliver", refuseCrossSiteWrites, validate("param", idParam), async (c) => {
    // Admin somewhere first, else the browser's prompt (a reader signed in for the page is asked for
    // an admin credential); then admin on the subscription's cluster (403).
    const allowed = await orChallenge(c, "edge-informer admin", async () => {
      const principal = await principalOf(c);
      if (principal.via !== "anonymous" && !principal.admin) throw new ApiError("Unauthorized", `credential '${principal.name}' may not redeliver: an admin credential may`);
      return permitRole(c, "admin");
    });
    if (allowed instanceof Response) return allowed;
    const { id } = c.req.valid("param");
    // An unknown id is a 404 before its object is addressed (known-subscription.ts), and so is
    // another cluster's (review A2(g): a 403 would tell which ids exist there).
    const address = await knownSubscription(c.env, id);
    if (!address || !mayAccess(allowed, address.cluster)) throw new ApiError("NotFound", "subscription not found");
    const stub = subscriptionStub(c.env, id, await clusterPlacement(c.env, address.cluster));
    // The log lines name the subscription's cluster and informer too.
    const who = subscriptionIdentity(unwrap(await stub.metrics()));
    await permit(c, "admin", who.cluster);
    // (The RPC type of a dead letter, which carries its event as JSON, resolves to unknown.)
    const page = unwrap(await stub.deadLetters(REDELIVER_PER_CLICK)) as { items: { eventId: string }[] };
    let redelivered = 0;
    let failed = 0;
    for (const dead of page.items) {
      const delivered = await stub.redeliver(dead.eventId).then(
        (result) => result.ok && unwrap(result).delivered,
        (error: unknown) => (logger.warn("redelivery failed", { ...who, error: errorText(error) }), false),
      );
      if (delivered) {
        redelivered++;
        continue;
      }
      failed++;
      break; // the endpoint still refuses: the rest would fail the same way
    }
    logger.info("dead letters redelivered from the status page", { ...who, count: redelivered, failed });
    return c.redirect(`/?subscription=${id}&redelivered=${redelivered}&failed=${failed}#${id}`, 303);
  });

function notice(query: Record<string, string>): Notice | undefined {
  const subscription = query.subscription;
  if (subscription === undefined || !idParam.safeParse({ id: subscription }).success) return undefined;
  const count = (text: string | undefined) => Math.max(0, Math.trunc(Number(text)) || 0);
  return { subscription, redelivered: count(query.redelivered), failed: count(query.failed) };
}

/**
 * The status page (API.md "Operating"): `GET /` renders informers and subscriptions for a browser
 * (status-view.ts), or the same snapshot as JSON for anything that does not ask for HTML; and the
 * page's one action, redelivering a subscription's dead letters, as a plain form POST.
 *
 * A browser cannot send a bearer token without script, so the page also accepts HTTP Basic
 * credentials whose password is the token (any user name): a 401 asks the browser for them. Reads
 * need READ_TOKEN (or ADMIN_TOKEN) when it is set, as every read route; the redeliver action needs
 * ADMIN_TOKEN, as every mutation, and is refused from another site's pages (validate.ts).
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { timingSafeEqual } from "hono/utils/buffer";
import * as z from "zod/mini";
import { unwrap } from "../errors.ts";
import { errorText, logger } from "../log.ts";
import { collect } from "../metrics/collect.ts";
import { subscriptionIdentity } from "../metrics/identity.ts";
import type { AppEnv } from "./app-env.ts";
import { type Notice, renderStatusPage } from "./status-view.ts";
import { refuseCrossSiteWrites, validate } from "./validate.ts";

/** Dead letters one click redelivers at most (oldest first; it stops at the first the endpoint refuses). */
export const REDELIVER_PER_CLICK = 20;

const idParam = z.object({ id: z.string().check(z.regex(/^sub_[a-z0-9][-a-z0-9]{0,127}$/, "not a subscription id")) });

/** The token of `Authorization: Bearer <token>` or of HTTP Basic credentials (the password). */
export function credentialToken(header: string | undefined): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (bearer) return bearer[1];
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? "");
  if (!basic) return undefined;
  try {
    const decoded = new TextDecoder().decode(Uint8Array.from(atob(basic[1]!), (ch) => ch.charCodeAt(0)));
    const colon = decoded.indexOf(":");
    return colon === -1 ? undefined : decoded.slice(colon + 1) || undefined;
  } catch {
    return undefined;
  }
}

async function accepted(token: string | undefined, tokens: (string | undefined)[]): Promise<boolean> {
  let matched = false;
  for (const candidate of tokens) {
    if (token && candidate && (await timingSafeEqual(token, candidate))) matched = true;
  }
  return matched;
}

function challenge(c: Context<AppEnv>, realm: string, message: string) {
  return c.text(message, 401, { "www-authenticate": `Basic realm="${realm}", charset="UTF-8"`, "cache-control": "no-store" });
}

export const statusRoutes = new Hono<AppEnv>()
  .get("/", async (c) => {
    const { READ_TOKEN, ADMIN_TOKEN } = c.env;
    if (READ_TOKEN && !(await accepted(credentialToken(c.req.header("authorization")), [READ_TOKEN, ADMIN_TOKEN]))) {
      return challenge(c, "edge-informer", "the status page needs READ_TOKEN (as the password, any user name, or as a bearer token)");
    }
    const snapshot = await collect(c.env);
    if (!(c.req.header("accept") ?? "").includes("text/html")) return c.json(snapshot);
    const page = await renderStatusPage(snapshot, notice(c.req.query()));
    return c.html(page, 200, { "cache-control": "no-store" });
  })
  .post("/status/subscriptions/:id/redeliver", refuseCrossSiteWrites, validate("param", idParam), async (c) => {
    const { ADMIN_TOKEN, ALLOW_UNAUTHENTICATED } = c.env;
    if (!ADMIN_TOKEN && ALLOW_UNAUTHENTICATED !== "true") {
      return c.text("mutating endpoints are disabled: set the ADMIN_TOKEN secret", 403);
    }
    if (ADMIN_TOKEN && !(await accepted(credentialToken(c.req.header("authorization")), [ADMIN_TOKEN]))) {
      return challenge(c, "edge-informer admin", "redelivering needs ADMIN_TOKEN (as the password, any user name, or as a bearer token)");
    }
    const { id } = c.req.valid("param");
    const stub = c.env.SUBSCRIPTION.getByName(id);
    // An unknown id is a 404. The log lines name the subscription's cluster and informer too.
    const who = subscriptionIdentity(unwrap(await stub.metrics()));
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

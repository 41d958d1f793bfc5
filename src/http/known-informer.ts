/**
 * Guards the routes of one informer (`/informers/{name}` and everything below it): a malformed name
 * is a 400 and an unregistered one a 404, both before the informer's Durable Object is touched —
 * reaching an object by name creates it, with its storage, and reads are anonymous unless READ_TOKEN
 * is set (#7.17). `PUT /informers/{name}` (creation) passes through.
 *
 * The registry is the factory's. Each isolate remembers the names it found registered, so queries do
 * not all pass through the one factory object; a name deleted since is harmless, as its informer
 * object answers NotFound without writing (InformerObject creates tables only in configure()).
 */
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.ts";
import { FACTORY_NAME } from "../objects/informer-factory.ts";
import type { AppEnv } from "./app-env.ts";
import { requireAdmin, requireRead } from "./auth.ts";
import { nameParam } from "./informers.ts";
import { describeInvalid } from "./validate.ts";

const registered = new Set<string>();

async function isRegistered(env: AppEnv["Bindings"], name: string): Promise<boolean> {
  if (registered.has(name)) return true;
  const found = (await env.FACTORY.getByName(FACTORY_NAME).get(name)) !== undefined;
  if (found) registered.add(name);
  return found;
}

export const requireKnownInformer: MiddlewareHandler<AppEnv> = async function requireKnownInformer(c, next) {
  if (c.req.method === "PUT" && /^\/informers\/[^/]+\/?$/.test(c.req.path)) return next();
  // Authenticate first, so an anonymous client cannot tell known names from unknown ones.
  const authorize = c.req.method === "GET" || c.req.method === "HEAD" ? requireRead : requireAdmin;
  return authorize(c, async () => {
    const parsed = nameParam.safeParse({ name: c.req.param("name") });
    if (!parsed.success) throw new ApiError("BadRequest", describeInvalid("param", parsed.error));
    if (!(await isRegistered(c.env, parsed.data.name))) {
      throw new ApiError("NotFound", `informer '${parsed.data.name}' not found`);
    }
    await next();
  });
};

/**
 * Guards the routes of one cluster (`/clusters/{cluster}/…`) and of one informer (`/informers/{name}`,
 * `/clusters/{cluster}/informers/{name}` and everything below them): a malformed name is a 400 and
 * an unregistered one a 404, both before the informer's Durable Object is touched — reaching an
 * object by name creates it, with its storage (#7.17). Creating routes (`PUT /informers/{name}`, `PUT /clusters/{cluster}`) pass through, and so
 * does `DELETE /clusters/{cluster}`, whose own 404 comes from the factory.
 *
 * The registry is the factory's; each isolate reads its versioned snapshot (registry-snapshot.ts), so
 * queries do not all pass through the one factory object. A name deleted through another isolate
 * may pass here for about a second; that is harmless, as its informer object answers NotFound
 * without writing (InformerObject creates tables only in configure()).
 */
import type { Context, MiddlewareHandler } from "hono";
import * as z from "zod/mini";
import { CLUSTER_NAME_RULE, DEFAULT_CLUSTER, describeInformer, type InformerAddress, informerObjectName, isClusterName } from "../clusters/cluster.ts";
import { ApiError } from "../errors.ts";
import { registryCache, type RegistrySnapshot, registrySource } from "./registry-snapshot.ts";
import type { Placement } from "../clusters/placement.ts";
import { defaultClusterPlacement, defaultJurisdictionRefusal } from "../clusters/placement-settings.ts";
import type { AppEnv } from "./app-env.ts";
import { clusterOf, requireAdmin, requireRead } from "./auth.ts";
import { describeInvalid, paramMatching } from "./validate.ts";

/** What an informer name is, as a 400 states it. */
export const INFORMER_NAME_RULE = "a lower-case DNS label of 1-63 characters (a-z, 0-9 and '-', starting and ending with a letter or digit)";
const INFORMER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const nameParam = z.object({
  name: paramMatching("an informer name", INFORMER_NAME_RULE, (name) => name.length <= 63 && INFORMER_NAME.test(name)),
});

export const clusterParam = z.object({ cluster: paramMatching("a cluster name", CLUSTER_NAME_RULE, isClusterName) });

/** The informer a route addresses: its `{cluster}` (the default cluster under `/informers`) and `{name}`. */
export function informerAddress(c: Context<AppEnv>): InformerAddress {
  return { cluster: clusterOf(c), name: c.req.param("name")! };
}

/** Authenticates first, so an anonymous client cannot tell known names from unknown ones. */
function authorize(c: Context<AppEnv>, next: () => Promise<void>) {
  return (c.req.method === "GET" || c.req.method === "HEAD" ? requireRead : requireAdmin)(c, next);
}

/**
 * Where `cluster`'s objects live: the default cluster's from its settings (KUBE_API_LOCATION_HINT,
 * KUBE_API_JURISDICTION; a bad one throws Misconfigured), a named cluster's from `snapshot`.
 */
export function placementIn(env: AppEnv["Bindings"], snapshot: RegistrySnapshot, cluster: string): Placement {
  if (cluster !== DEFAULT_CLUSTER) return snapshot.placements[cluster] ?? {};
  const placement = defaultClusterPlacement(env);
  const refusal = defaultJurisdictionRefusal(snapshot.defaultJurisdiction, placement);
  if (refusal) throw new ApiError("Misconfigured", refusal);
  return placement;
}

/** Where `cluster`'s objects live (placementIn), from this isolate's registry snapshot. */
export async function clusterPlacement(env: AppEnv["Bindings"], cluster: string): Promise<Placement> {
  return placementIn(env, await registryCache.snapshot(registrySource(env)), cluster);
}

/** Whether `cluster` is registered, from this isolate's registry snapshot (registry-snapshot.ts). */
export async function isKnownCluster(env: AppEnv["Bindings"], cluster: string): Promise<boolean> {
  if (cluster === DEFAULT_CLUSTER) return true;
  return (await registryCache.lookup(registrySource(env), `cluster ${cluster}`, (s) => s.clusters.includes(cluster) || undefined)) === true;
}

export const requireKnownCluster: MiddlewareHandler<AppEnv> = async function requireKnownCluster(c, next) {
  if ((c.req.method === "PUT" || c.req.method === "DELETE") && /^\/clusters\/[^/]+\/?$/.test(c.req.path)) return next();
  return authorize(c, async () => {
    const parsed = clusterParam.safeParse({ cluster: c.req.param("cluster") });
    if (!parsed.success) throw new ApiError("BadRequest", describeInvalid("param", parsed.error));
    const cluster = parsed.data.cluster;
    if (!(await isKnownCluster(c.env, cluster))) throw new ApiError("NotFound", `cluster '${cluster}' not found`);
    c.set("placement", await clusterPlacement(c.env, cluster));
    await next();
  });
};

export const requireKnownInformer: MiddlewareHandler<AppEnv> = async function requireKnownInformer(c, next) {
  if (c.req.method === "PUT" && /\/informers\/[^/]+\/?$/.test(c.req.path)) {
    // Where it will live, refused here when the settings moved (a 500 naming them, not the factory's
    // RPC error); asked of admins only, as the route itself is.
    return requireAdmin(c, async () => {
      await clusterPlacement(c.env, clusterOf(c));
      await next();
    });
  }
  return authorize(c, async () => {
    const parsed = nameParam.safeParse({ name: c.req.param("name") });
    if (!parsed.success) throw new ApiError("BadRequest", describeInvalid("param", parsed.error));
    const address = { cluster: clusterOf(c), name: parsed.data.name };
    const known = await registryCache.lookup(registrySource(c.env), `informer ${informerObjectName(address)}`, (s) =>
      s.informers.some((i) => i.cluster === address.cluster && i.name === address.name) || undefined,
    );
    if (!known) throw new ApiError("NotFound", `${describeInformer(address)} not found`);
    c.set("placement", await clusterPlacement(c.env, address.cluster));
    await next();
  });
};

/** This isolate changed the registry (a cluster or informer put or removed): it must ask again before serving them. */
export function forgetRegistry(): void {
  registryCache.invalidate();
}

/**
 * Guards the routes of one cluster (`/clusters/{cluster}/…`) and of one informer (`/informers/{name}`,
 * `/clusters/{cluster}/informers/{name}` and everything below them): a malformed name is a 400 and
 * an unregistered one a 404, both before the informer's Durable Object is touched — reaching an
 * object by name creates it, with its storage (#7.17). Creating routes (`PUT /informers/{name}`, `PUT /clusters/{cluster}`) pass through, and so
 * does `DELETE /clusters/{cluster}`, whose own 404 comes from the factory.
 *
 * The registry is the factory's. Each isolate remembers the names it found registered, so queries do
 * not all pass through the one factory object; a name deleted since is harmless, as its informer
 * object answers NotFound without writing (InformerObject creates tables only in configure()).
 */
import type { Context, MiddlewareHandler } from "hono";
import * as z from "zod/mini";
import { CLUSTER_NAME_RULE, DEFAULT_CLUSTER, describeInformer, type InformerAddress, informerObjectName, isClusterName } from "../clusters/cluster.ts";
import { ApiError } from "../errors.ts";
import { FACTORY_NAME } from "../objects/informer-factory.ts";
import type { AppEnv } from "./app-env.ts";
import { clusterOf, requireAdmin, requireRead } from "./auth.ts";
import { nameParam, paramMatching } from "./informers.ts";
import { describeInvalid } from "./validate.ts";

export const clusterParam = z.object({ cluster: paramMatching("a cluster name", CLUSTER_NAME_RULE, isClusterName) });

const registeredInformers = new Set<string>();
/**
 * Clusters this isolate found registered, until when it trusts that. A cluster deleted through
 * another isolate is unknown here within this long (an informer's own object answers NotFound at
 * once, so only a cluster's listing routes could show it meanwhile, empty).
 */
const CLUSTER_TRUST_MS = 5_000;
const registeredClusters = new Map<string, number>();

/** The informer a route addresses: its `{cluster}` (the default cluster under `/informers`) and `{name}`. */
export function informerAddress(c: Context<AppEnv>): InformerAddress {
  return { cluster: clusterOf(c), name: c.req.param("name")! };
}

/** Authenticates first, so an anonymous client cannot tell known names from unknown ones. */
function authorize(c: Context<AppEnv>, next: () => Promise<void>) {
  return (c.req.method === "GET" || c.req.method === "HEAD" ? requireRead : requireAdmin)(c, next);
}

/** Whether `cluster` is registered: this isolate's memory first, then the factory (which never creates one here). */
export async function isKnownCluster(env: AppEnv["Bindings"], cluster: string): Promise<boolean> {
  if (cluster === DEFAULT_CLUSTER || (registeredClusters.get(cluster) ?? 0) > Date.now()) return true;
  if (!(await env.FACTORY.getByName(FACTORY_NAME).hasCluster(cluster))) return false;
  registeredClusters.set(cluster, Date.now() + CLUSTER_TRUST_MS);
  return true;
}

export const requireKnownCluster: MiddlewareHandler<AppEnv> = async function requireKnownCluster(c, next) {
  if ((c.req.method === "PUT" || c.req.method === "DELETE") && /^\/clusters\/[^/]+\/?$/.test(c.req.path)) return next();
  return authorize(c, async () => {
    const parsed = clusterParam.safeParse({ cluster: c.req.param("cluster") });
    if (!parsed.success) throw new ApiError("BadRequest", describeInvalid("param", parsed.error));
    const cluster = parsed.data.cluster;
    if (!(await isKnownCluster(c.env, cluster))) throw new ApiError("NotFound", `cluster '${cluster}' not found`);
    await next();
  });
};

export const requireKnownInformer: MiddlewareHandler<AppEnv> = async function requireKnownInformer(c, next) {
  if (c.req.method === "PUT" && /\/informers\/[^/]+\/?$/.test(c.req.path)) return next();
  return authorize(c, async () => {
    const parsed = nameParam.safeParse({ name: c.req.param("name") });
    if (!parsed.success) throw new ApiError("BadRequest", describeInvalid("param", parsed.error));
    const address = { cluster: clusterOf(c), name: parsed.data.name };
    const key = informerObjectName(address);
    if (!registeredInformers.has(key)) {
      if ((await c.env.FACTORY.getByName(FACTORY_NAME).get(address)) === undefined) {
        throw new ApiError("NotFound", `${describeInformer(address)} not found`);
      }
      registeredInformers.add(key);
    }
    await next();
  });
};

/** A cluster was removed: this isolate must ask again before serving it. */
export function forgetCluster(cluster: string): void {
  registeredClusters.delete(cluster);
  for (const key of registeredInformers) if (key.startsWith(`${cluster}/`)) registeredInformers.delete(key);
}

/**
 * Cluster routes (API.md "Clusters", issue 12): list clusters with their health, add or change one
 * at run time, remove one. A token given here is stored write-only: no answer, list, log line or
 * metric carries it (answers show which credentials exist, `credentials`, never their values).
 */
import { Hono } from "hono";
import * as z from "zod/mini";
import { parseClusterBody } from "../clusters/cluster-spec.ts";
import { ApiError, unwrap } from "../errors.ts";
import type { ClusterView } from "../objects/informer-factory.ts";
import { factoryStub } from "../objects/factory-stub.ts";
import type { AppEnv } from "./app-env.ts";
import { readableClusters, requireAdmin, requireRead } from "./auth.ts";
import { clusterParam, forgetRegistry } from "./known-informer.ts";
import { jsonBody, limitBody, validate } from "./validate.ts";

const MAX_CLUSTER_BYTES = 32 * 1024;
const deleteQuery = z.strictObject({ cascade: z.optional(z.enum(["true", "false"])) });

export const clusterRoutes = new Hono<AppEnv>()
  .get("/", async (c) => {
    // A credential scoped to some clusters lists only those (and probes no other API server).
    const readable = await readableClusters(c);
    const factory = factoryStub(c.env);
    const clusters = (await factory.clusters()).filter((cluster) => readable(cluster.name));
    const health = await factory.clusterHealth(clusters.map((cluster) => cluster.name));
    return c.json({ items: clusters.map((cluster) => ({ ...cluster, health: health[cluster.name] })) });
  })
  .get("/:cluster", requireRead, validate("param", clusterParam), async (c) => {
    const { cluster: name } = c.req.valid("param");
    const factory = factoryStub(c.env);
    const cluster = (await factory.clusters()).find((view: ClusterView) => view.name === name);
    if (!cluster) throw new ApiError("NotFound", `cluster '${name}' not found`);
    const health = await factory.clusterHealth([name]);
    return c.json({ ...cluster, health: health[name] });
  })
  .put("/:cluster", requireAdmin, validate("param", clusterParam), limitBody(MAX_CLUSTER_BYTES, "a cluster"), async (c) => {
    const connection = parseClusterBody(await jsonBody(c), c.env, new URL(c.req.url).hostname);
    const { created, cluster } = unwrap(await factoryStub(c.env).putCluster(c.req.valid("param").cluster, connection));
    forgetRegistry();
    return c.json(cluster, created ? 201 : 200);
  })
  .delete("/:cluster", requireAdmin, validate("param", clusterParam), validate("query", deleteQuery), async (c) => {
    const { cluster } = c.req.valid("param");
    unwrap(await factoryStub(c.env).removeCluster(cluster, c.req.valid("query").cascade === "true"));
    forgetRegistry();
    return c.body(null, 204);
  });

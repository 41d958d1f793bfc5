/**
 * `GET /metrics` (API.md "Operating"): the Prometheus text exposition of every informer and
 * subscription (src/metrics/prometheus.ts) of the clusters the caller may read (of an `rbac` cluster,
 * only if its RBAC lets the caller `get /metrics`: status-visibility.ts), as of a snapshot at most
 * METRICS_SNAPSHOT_SECONDS old (metrics/snapshot-cache.ts).
 */
import { Hono } from "hono";
import { CONTENT_TYPE } from "../metrics/exposition.ts";
import { renderMetrics } from "../metrics/prometheus.ts";
import type { AppEnv } from "./app-env.ts";
import { readableScope } from "./auth.ts";
import { metricsSnapshot } from "./metrics-snapshot.ts";
import { visibleSnapshot } from "./status-visibility.ts";

export const metricsRoutes = new Hono<AppEnv>().get("/", async (c) => {
  const text = renderMetrics(await visibleSnapshot(c, await metricsSnapshot(c, await readableScope(c))));
  return c.body(text, 200, { "content-type": CONTENT_TYPE, "cache-control": "no-store" });
});

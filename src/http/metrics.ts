/**
 * `GET /metrics` (API.md "Operating"): the Prometheus text exposition of every informer and
 * subscription (src/metrics/prometheus.ts) of the clusters the caller may read.
 */
import { Hono } from "hono";
import { collect } from "../metrics/collect.ts";
import { CONTENT_TYPE } from "../metrics/exposition.ts";
import { renderMetrics } from "../metrics/prometheus.ts";
import type { AppEnv } from "./app-env.ts";
import { readableClusters } from "./auth.ts";

export const metricsRoutes = new Hono<AppEnv>().get("/", async (c) => {
  const text = renderMetrics(await collect(c.env, Date.now, await readableClusters(c)));
  return c.body(text, 200, { "content-type": CONTENT_TYPE, "cache-control": "no-store" });
});

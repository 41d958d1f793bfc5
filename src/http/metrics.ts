/**
 * `GET /metrics` (API.md "Operating"): the Prometheus text exposition of every informer and
 * subscription (src/metrics/prometheus.ts), behind READ_TOKEN like every read route.
 */
import { Hono } from "hono";
import { collect } from "../metrics/collect.ts";
import { CONTENT_TYPE } from "../metrics/exposition.ts";
import { renderMetrics } from "../metrics/prometheus.ts";
import type { AppEnv } from "./app-env.ts";
import { requireRead } from "./auth.ts";

export const metricsRoutes = new Hono<AppEnv>().get("/", requireRead, async (c) => {
  const text = renderMetrics(await collect(c.env));
  return c.body(text, 200, { "content-type": CONTENT_TYPE, "cache-control": "no-store" });
});

/**
 * The Worker's HTTP API: small hono sub-apps mounted on one app, one error path, and the declared
 * clusters and informers (`CLUSTERS`, `INFORMERS`) brought in line with the factory once per isolate
 * before the first request (declared-sync.ts).
 */
import { setLogLevel } from "../log.ts";
import { type Context, Hono } from "hono";
import { ensureDeclaredInformers } from "./declared-sync.ts";
import type { AppEnv } from "./app-env.ts";
import { errorBody, renderError } from "./errors.ts";
import { informerRoutes } from "./informers.ts";
import { k8sRoutes } from "./k8s.ts";
import { metricsRoutes } from "./metrics.ts";
import { statusRoutes } from "./status-page.ts";
import { clusterRoutes } from "./clusters.ts";
import { auditMutations, requireCredential } from "./auth.ts";
import { requireKnownCluster, requireKnownInformer } from "./known-informer.ts";
import { queryRoutes } from "./query.ts";
import { searchRoutes } from "./search.ts";
import { informerSubscriptionRoutes, subscriptionRoutes } from "./subscriptions.ts";
import { refuseCrossSiteWrites, requireJsonBody } from "./validate.ts";
import { checkPlacementSettings } from "../clusters/placement-settings.ts";
import { defaultClusterAuthorization } from "../clusters/cluster.ts";

/** Carries DEV_RUN_ID on /healthz: which `npm start` run this Worker belongs to. */
export const DEV_RUN_HEADER = "x-edge-informer-dev-run";

export { DECLARED_SYNC_WAIT, ensureDeclaredInformers } from "./declared-sync.ts";

/** The request's `waitUntil`; undefined when the app is called without an execution context (tests). */
function requestWaitUntil(c: Context<AppEnv>): ((promise: Promise<unknown>) => void) | undefined {
  try {
    const ctx = c.executionCtx;
    return (promise) => ctx.waitUntil(promise);
  } catch {
    return undefined;
  }
}

export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(renderError);
  app.notFound((c) => c.json(errorBody("NotFound", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`), 404));
  app.get("/healthz", (c) => c.text("ok", 200, c.env.DEV_RUN_ID ? { [DEV_RUN_HEADER]: c.env.DEV_RUN_ID } : {}));
  // A bad placement or authorization setting fails every route closed, naming it, before any object is addressed.
  app.use("*", async (c, next) => {
    checkPlacementSettings(c.env);
    defaultClusterAuthorization(c.env);
    await next();
  });
  app.use("*", async (c, next) => {
    setLogLevel(c.env.LOG_LEVEL);
    await ensureDeclaredInformers(c.env, requestWaitUntil(c));
    await next();
  });
  app.use("*", auditMutations);
  // Before the JSON-body rule: /k8s answers every write verb with its own 405 Status (and its
  // refusals as Status objects too, so it checks credentials itself).
  app.route("/k8s", k8sRoutes);
  // Before the JSON-body rule too: the status page's redeliver button is an HTML form (and its 401
  // asks the browser for credentials).
  app.route("/", statusRoutes);
  // Everything else needs a credential before its route, or its 404, is even looked up.
  app.use("*", requireCredential);
  app.use("*", requireJsonBody);
  app.use("*", refuseCrossSiteWrites);
  // hono's `/*` matches `/clusters/:cluster` and `/informers/:name` too.
  app.use("/clusters/:cluster/*", requireKnownCluster);
  app.route("/clusters", clusterRoutes);
  // The same informer API for the default cluster and for each named one.
  for (const base of ["/informers", "/clusters/:cluster/informers"]) {
    app.use(`${base}/:name/*`, requireKnownInformer);
    app.route(base, informerRoutes);
    app.route(base, queryRoutes);
    app.route(base, informerSubscriptionRoutes);
  }
  app.route("/subscriptions", subscriptionRoutes);
  app.route("/search", searchRoutes);
  app.route("/metrics", metricsRoutes);
  return app;
}

/**
 * The Worker's HTTP API: small hono sub-apps mounted on one app, one error path, and the declared
 * informers (`INFORMERS`) brought in line with the factory once per isolate before the first request.
 */
import { errorText, logger, setLogLevel } from "../log.ts";
import { Hono } from "hono";
import type { Env } from "../env.ts";
import { FACTORY_NAME } from "../objects/informer-factory.ts";
import type { AppEnv } from "./app-env.ts";
import { errorBody, renderError } from "./errors.ts";
import { informerRoutes } from "./informers.ts";
import { k8sRoutes } from "./k8s.ts";
import { metricsRoutes } from "./metrics.ts";
import { statusRoutes } from "./status-page.ts";
import { requireKnownInformer } from "./known-informer.ts";
import { queryRoutes } from "./query.ts";
import { informerSubscriptionRoutes, subscriptionRoutes } from "./subscriptions.ts";
import { refuseCrossSiteWrites, requireJsonBody } from "./validate.ts";

/** Carries DEV_RUN_ID on /healthz: which `npm start` run this Worker belongs to. */
export const DEV_RUN_HEADER = "x-edge-informer-dev-run";

let declaredFor: string | undefined;
let declaring: Promise<void> | undefined;

/** Syncs `INFORMERS` into the factory once per isolate and value (so a redeploy with a new value applies it). */
export async function ensureDeclaredInformers(env: Env): Promise<void> {
  const text = env.INFORMERS ?? "";
  if (declaredFor === text) return;
  declaring ??= env.FACTORY.getByName(FACTORY_NAME)
    .syncDeclared(text)
    .then(() => {
      declaredFor = text;
    })
    .catch((error: unknown) => logger.error("syncing INFORMERS failed", { cause: "config", error: errorText(error) }))
    .finally(() => {
      declaring = undefined;
    });
  await declaring;
}

export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(renderError);
  app.notFound((c) => c.json(errorBody("NotFound", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`), 404));
  app.get("/healthz", (c) => c.text("ok", 200, c.env.DEV_RUN_ID ? { [DEV_RUN_HEADER]: c.env.DEV_RUN_ID } : {}));
  app.use("*", async (c, next) => {
    setLogLevel(c.env.LOG_LEVEL);
    await ensureDeclaredInformers(c.env);
    await next();
  });
  // Before the JSON-body rule: /k8s answers every write verb with its own 405 Status.
  app.route("/k8s", k8sRoutes);
  // Before the JSON-body rule too: the status page's redeliver button is an HTML form.
  app.route("/", statusRoutes);
  app.use("*", requireJsonBody);
  app.use("*", refuseCrossSiteWrites);
  app.use("/informers/:name/*", requireKnownInformer); // hono's `/*` matches `/informers/:name` too
  app.route("/informers", informerRoutes);
  app.route("/informers", queryRoutes);
  app.route("/informers", informerSubscriptionRoutes);
  app.route("/subscriptions", subscriptionRoutes);
  app.route("/metrics", metricsRoutes);
  return app;
}

/**
 * Worker entry: the HTTP API, the cron trigger that keeps informers alive, and the Durable Object
 * classes the runtime instantiates.
 */
import type { Env } from "./env.ts";
import { createApp, ensureDeclaredInformers } from "./http/app.ts";
import type { InformerFactory } from "./objects/informer-factory.ts";
import { factoryStub } from "./objects/factory-stub.ts";
import type { InformerObject } from "./objects/informer-object.ts";
import type { SubscriptionObject } from "./objects/subscription-object.ts";
import type { WatchRelay } from "./objects/watch-relay-object.ts";
import { setLogLevel } from "./log.ts";

// Names the classes behind Env's namespaces here, at the top, so that src/env.ts (read by every
// layer) imports none of them.
declare module "./env.ts" {
  interface DurableObjectClasses {
    INFORMER: InformerObject;
    FACTORY: InformerFactory;
    SUBSCRIPTION: SubscriptionObject;
    RELAY: WatchRelay;
  }
}

export { InformerFactory } from "./objects/informer-factory.ts";
export { InformerObject } from "./objects/informer-object.ts";
export { SubscriptionObject } from "./objects/subscription-object.ts";
export { WatchRelay } from "./objects/watch-relay-object.ts";
export type { Env } from "./env.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  /** Every cron tick: apply INFORMERS and re-arm any informer whose alarm is missing (invariant 7). */
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(
      (async () => {
        setLogLevel(env.LOG_LEVEL);
        await ensureDeclaredInformers(env, (promise) => ctx.waitUntil(promise));
        await factoryStub(env).reconcile(); // it logs each informer it re-armed
      })(),
    );
  },
} satisfies ExportedHandler<Env>;

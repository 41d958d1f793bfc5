/**
 * A subscription created in a test's SQLite, for unit tests of the modules that keep their state in
 * a subscription's storage (the delivery log, the held keys): their tables and the subscription row
 * they keep columns in exist, as after `create`.
 */
import { SubscriptionStore } from "../../src/delivery/subscription-store.ts";
import type { Db } from "../../src/sql.ts";

export function storedSubscription(db: Db): SubscriptionStore {
  const store = new SubscriptionStore(db);
  store.create({
    id: "sub_stored",
    cluster: "default",
    informer: "pods",
    spec: { url: "https://hooks.example/a", events: ["add", "update", "delete", "sync"], resyncPeriodSeconds: 0, replayExisting: false, maxBatchSize: 1, retryBudgetSeconds: 60, timeoutSeconds: 15 },
    secret: "whsec_x",
    declared: false,
    now: 0,
    position: { cursor: 0, marker: null },
    generation: 1,
    nextResyncAt: null,
  });
  return store;
}

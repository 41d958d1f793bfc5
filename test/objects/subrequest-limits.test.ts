/**
 * The alarm loops inside the platform's subrequest limit (review B1; docs/architecture.md "Platform
 * limits"). Local workerd enforces no limit, so test/helpers/subrequest-limit.ts emulates it: one
 * alarm is one invocation, and any subrequest past the limit is refused and counted. A slice must
 * end at its margin, re-arm at once, and leave the rest to the next invocation.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { subscriptionSpecSchema } from "../../src/delivery/subscription-spec.ts";
import { unwrap } from "../../src/errors.ts";
import type { SubscriptionObject } from "../../src/objects/subscription-object.ts";
import type { InformerObject } from "../../src/objects/informer-object.ts";
import { pod } from "../fake-apiserver/client.ts";
import { newCluster, startInformer, status, waitSleeping, waitSynced } from "../helpers/informer.ts";
import { underSubrequestLimit } from "../helpers/subrequest-limit.ts";
import { startInCluster } from "../helpers/clusters.ts";
import { readLines } from "../helpers/watch-lines.ts";
import { relayStub } from "../../src/clusters/stubs.ts";
import { informerObjectName } from "../../src/clusters/cluster.ts";
import { describeResource } from "../../src/k8s/catalog.ts";
import { SLICE_END_FRACTION } from "../../src/net/subrequest-budget.ts";
import type { WatchRelay } from "../../src/objects/watch-relay-object.ts";
import { waitReceiverConverged } from "../helpers/webhooks.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";

const LIMIT = 20; // the budget ends at 16

describe("subscription alarm under the subrequest limit", () => {
  it("ends a slice with a backlog at the budget's margin, re-arms at once, and delivers the rest in later invocations", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 2, podsPerNamespace: 20 });
    const informer = await startInformer(cluster);
    await waitSynced(informer.stub);
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const id = `sub_${crypto.randomUUID().replace(/-/g, "")}`;
    // One POST per object: the replay of 40 objects needs more subrequests than one invocation has.
    const spec = subscriptionSpecSchema.parse({ url: hook.url, replayExisting: true, maxBatchSize: 1 });
    const run = await underSubrequestLimit(env.SUBSCRIPTION.getByName(id), LIMIT, async (instance: SubscriptionObject, state) => {
      const created = unwrap(await instance.create(id, { cluster: "default", name: informer.name }, spec));
      // The same turn as create: an alarm the runtime fires meanwhile finds this slice running.
      await instance.alarm();
      const status = unwrap(await instance.status(0));
      return { secret: created.secret!, status, alarm: await state.storage.getAlarm() };
    });
    expect(run.refused).toBe(0);
    expect(run.made).toBeLessThanOrEqual(LIMIT);
    // Ended by its budget, not by running out of work, and never charged to the receiver.
    expect((await hook.requests()).length).toBeGreaterThan(0);
    expect((await hook.requests()).length).toBeLessThan(40);
    expect(run.result.status).toMatchObject({ state: "active", consecutiveFailures: 0, lastError: null });
    expect(run.result.alarm).not.toBeNull();
    expect(run.result.alarm!).toBeLessThanOrEqual(Date.now() + 1_000);
    await waitReceiverConverged(hook, run.result.secret, cluster);
  });
});

describe("informer alarm under the subrequest limit", () => {
  it("stops nudging at the budget's margin, ends the slice and re-arms at once instead of failing nudges", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 2 });
    // Asleep between watch windows: no alarm of the runtime's runs while the test drives one.
    const informer = await startInformer(cluster, { maxLagSeconds: 60 });
    await waitSynced(informer.stub);
    await waitSleeping(informer.stub);
    // 30 subscriptions caught up and waiting for a nudge: more than one invocation may send.
    const ids = Array.from({ length: 30 }, (_, i) => `sub_nudged${i}`);
    for (const id of ids) {
      const { tail } = unwrap(await informer.stub.addSubscriber(id));
      unwrap(await informer.stub.readLog(tail, 10, id));
    }
    await cluster.create("pods", pod({ name: "new", namespace: "ns-0" }));
    const run = await underSubrequestLimit(informer.stub, LIMIT, async (instance: InformerObject, state) => {
      // The window is due now (it would open by itself in a minute).
      state.storage.sql.exec("UPDATE informer_state SET wake_at = 0");
      await instance.alarm();
      return state.storage.getAlarm();
    });
    expect(run.refused).toBe(0);
    expect(run.made).toBeLessThanOrEqual(LIMIT);
    expect(run.result).not.toBeNull();
    expect(run.result!).toBeLessThanOrEqual(Date.now() + 1_000);
    expect((await status(informer.stub)).lastError).toBeNull();
  });

  it("takes the runtime's 'Too many subrequests' on its watch for the end of the slice, not for an API server failure", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 2 });
    const informer = await startInformer(cluster, { maxLagSeconds: 60 });
    await waitSynced(informer.stub);
    await waitSleeping(informer.stub);
    // The object believes it has 1,000; the runtime allows none more (calls the budget did not see spent them).
    const run = await underSubrequestLimit(
      informer.stub,
      0,
      async (instance: InformerObject, state) => {
        state.storage.sql.exec("UPDATE informer_state SET wake_at = 0");
        await instance.alarm();
        return state.storage.getAlarm();
      },
      1_000,
    );
    expect(run.refused).toBe(1); // the watch, refused as the runtime would
    expect(run.result).not.toBeNull();
    expect(run.result!).toBeLessThanOrEqual(Date.now() + 1_000);
    expect((await status(informer.stub)).lastError).toBeNull();
  });
});


describe("watch relay alarm under the subrequest limit", () => {
  it("ends a polling slice at the budget's margin and re-arms at once; its watcher gets every change across slices", async () => {
    const { cluster, fake, stub, remove } = await startInCluster("relay-budget");
    const address = { cluster, name: "pods" };
    const { cacheResourceVersion } = await status(stub);
    // The churn reaches the fake API server with the fetch of before the limit: the test's, not the relay's.
    const rawFetch = globalThis.fetch;
    const create = (name: string) =>
      rawFetch(`${fake.url}/__control/objects`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ op: "create", resource: "pods", object: pod({ name, namespace: "ns-0" }) }),
      });
    const names = Array.from({ length: 30 }, (_, i) => `budget-${i}`);
    const run = await underSubrequestLimit(relayStub(env, address, 0), LIMIT, async (instance: WatchRelay, state) => {
      const params = { info: describeResource("pods", undefined)!, format: { kind: "json" as const }, includeObject: "Object" as const };
      const opened = unwrap(await instance.watch(informerObjectName(address), { ...params, bookmarks: false, initialEvents: false, resourceVersion: cacheResourceVersion }));
      if (!("stream" in opened)) throw new Error("the relay did not open the watch");
      // The same turn as the watch: an alarm the runtime fires meanwhile finds this slice polling.
      const pumped = instance.alarm();
      const lines = readLines(opened.stream, names.length);
      const churn = (async () => {
        for (const name of names) {
          await create(name);
          await new Promise((resolve) => setTimeout(resolve, 40));
        }
      })();
      await pumped;
      return { lines, churn, alarm: await state.storage.getAlarm() };
    });
    expect(run.refused).toBe(0);
    expect(run.made).toBeLessThanOrEqual(LIMIT);
    expect(run.made).toBeGreaterThanOrEqual(LIMIT * SLICE_END_FRACTION); // ended by its budget, not by its watcher leaving
    expect(run.result.alarm).not.toBeNull();
    expect(run.result.alarm!).toBeLessThanOrEqual(Date.now() + 1_000);
    await run.result.churn;
    // The rest came through the slices after: nothing lost or repeated at the seams.
    const received = (await run.result.lines).map((line) => JSON.parse(line).object.metadata.name);
    expect(received).toEqual(names);
    await remove();
  });
});

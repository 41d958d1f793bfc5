/**
 * Webhook subscriptions end to end, inside workerd: real informers on the fake API server, real
 * SubscriptionObjects, and the fake receiver (Node) as the endpoints. Every request is verified with
 * the subscription's secret; the receiver's rebuilt cache must equal the cluster, with no key ever
 * going back to an older resourceVersion (invariants 3 and 4).
 */
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { FakeCluster, pod } from "../fake-apiserver/client.ts";
import { eventId } from "../../src/delivery/event-id.ts";
import { subscriptionSpecSchema } from "../../src/delivery/subscription-spec.ts";
import { unwrap } from "../../src/errors.ts";
import type { SubscriptionObject } from "../../src/objects/subscription-object.ts";
import { newCluster, startInformer, waitFor, waitSleeping, waitSynced } from "../helpers/informer.ts";
import { startInCluster } from "../helpers/clusters.ts";
import { receiverView, subscribe, subscriptionStored, waitReceiverConverged } from "../helpers/webhooks.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const endpoint = (options: Parameters<typeof ReceiverEndpoint.create>[1] = {}) => ReceiverEndpoint.create(env.RECEIVER_URL, options);

const stored = subscriptionStored;
const randomId = () => `sub_${crypto.randomUUID().replace(/-/g, "")}`;

async function syncedInformer(pods = 10, spec: Parameters<typeof startInformer>[1] = {}) {
  const cluster = await newCluster();
  await cluster.seed({ namespaces: 2, podsPerNamespace: pods / 2 });
  const informer = await startInformer(cluster, spec);
  await waitSynced(informer.stub);
  return { cluster, ...informer };
}

describe("webhook subscriptions", () => {
  it("replays the cache, then delivers every change in order with valid signatures", async () => {
    const { cluster, name, stub } = await syncedInformer(10);
    const hook = await endpoint();
    const { secret, stub: subscription } = await subscribe(name, hook);
    expect(secret).toMatch(/^whsec_/);
    await waitReceiverConverged(hook, secret, cluster);
    await cluster.churn({ seed: 7, operations: 60 });
    await cluster.create("pods", pod({ name: "late", namespace: "ns-0" }));
    const view = await waitReceiverConverged(hook, secret, cluster);
    const replay = view.events.slice(0, 10);
    expect(replay.every((e) => e.type === "add" && e.initialList)).toBe(true);
    expect(view.events.slice(10).every((e) => !e.initialList)).toBe(true);
    expect(view.events.map((e) => e.sequence)).toEqual(view.events.map((_, i) => i + 1)); // no failures: no duplicates
    expect(new Set(view.events.map((e) => e.id)).size).toBe(view.events.length);
    const status = unwrap(await subscription().status());
    expect(status).toMatchObject({ state: "active", lag: 0, consecutiveFailures: 0, deadLetters: 0, marker: null });
    expect(status).not.toHaveProperty("secret");
    expect((unwrap(await stub.status())).subscriptions).toBe(1);
  });

  it("delivers the changes of an informer sleeping between watch windows, nudged as each window grows the log (maxLagSeconds)", async () => {
    const { cluster, name, stub } = await syncedInformer(4, { maxLagSeconds: 3 });
    const hook = await endpoint();
    const { secret } = await subscribe(name, hook);
    await waitReceiverConverged(hook, secret, cluster);
    await waitSleeping(stub);
    await cluster.create("pods", pod({ name: "while-asleep", namespace: "ns-0" }));
    await waitReceiverConverged(hook, secret, cluster);
    // No subscription keeps the informer awake: it sleeps again with its subscriber caught up. (How
    // soon the delivery follows the window is a latency, not asserted; the nudges a window's batches
    // send are counted in test/delivery/nudger.test.ts.)
    expect((await waitSleeping(stub)).watch.state).toBe("sleeping");
  });

  it("names the cluster in every event's body and header, signed, with ids that tell clusters apart and stay the same in the default one", async () => {
    // Two clusters holding the same pods, each mirrored by an informer named "pods", and the default
    // cluster's informer of the same pods: three subscriptions, three receivers.
    const sameObjects = async (fake: FakeCluster) => {
      for (const name of ["web-1", "web-2"]) await fake.create("pods", pod({ name, namespace: "default" }));
    };
    const started = [await startInCluster("east", {}, 0), await startInCluster("west", {}, 0)];
    const clusters = started.map((s) => s.cluster);
    const fakes = new Map<string, FakeCluster>(started.map((s) => [s.cluster, s.fake]));
    const home = await syncedInformer(0);
    fakes.set("default", home.cluster);
    for (const fake of fakes.values()) await sameObjects(fake);

    const received = new Map<string, { hook: ReceiverEndpoint; secret: string }>();
    for (const [cluster, informer] of [[clusters[0]!, "pods"], [clusters[1]!, "pods"], ["default", home.name]] as const) {
      const hook = await endpoint();
      const { secret } = await subscribe(informer, hook, {}, cluster);
      received.set(cluster, { hook, secret });
    }
    // An update in each, so not only the replay's adds are checked.
    for (const fake of fakes.values()) {
      const web1 = (await fake.state("pods")).items.find((o) => o.metadata.name === "web-1")!;
      await fake.update("pods", { ...web1, metadata: { ...web1.metadata, labels: { changed: "yes" }, resourceVersion: undefined } });
    }

    const ids = new Map<string, string[]>();
    for (const [cluster, { hook, secret }] of received) {
      const view = await waitReceiverConverged(hook, secret, fakes.get(cluster)!); // verifies every signature (verifyWebhook)
      expect(view.events.map((e) => e.type).sort()).toEqual(["add", "add", "update"]);
      for (const request of await hook.requests()) {
        expect(request.headers["x-edge-informer-cluster"]).toBe(cluster);
        // The Standard Webhooks reference library agrees with ours on the signature.
        expect(new Webhook(secret).verify(request.body, request.headers)).toMatchObject({ cluster });
      }
      const informer = cluster === "default" ? home.name : "pods";
      for (const event of view.events) {
        expect([event.cluster, event.informer]).toEqual([cluster, informer]);
        // The id hashes the informer's object name: `cluster/pods` in another cluster, the bare name
        // in the default one, so a default cluster's ids are what they were before clusters existed.
        const identity = { key: event.key, uid: event.object.metadata.uid!, resourceVersion: event.resourceVersion, type: event.type };
        expect(event.id).toBe(await eventId({ informer: cluster === "default" ? informer : `${cluster}/${informer}`, ...identity }));
        if (cluster !== "default") expect(event.id).not.toBe(await eventId({ informer, ...identity }));
      }
      ids.set(cluster, view.events.map((e) => e.id));
    }
    // The same pod, uid and resourceVersion in two clusters would still be two events.
    const [east, west] = clusters.map((cluster) => ids.get(cluster)!);
    expect(east!.filter((id) => west!.includes(id))).toEqual([]);
    const sample = { key: "default/web-1", uid: "00000000-0000-0000-0000-000000000001", resourceVersion: "7", type: "add" };
    expect(await eventId({ informer: `${clusters[0]}/pods`, ...sample })).not.toBe(await eventId({ informer: `${clusters[1]}/pods`, ...sample }));
    for (const { remove } of started) await remove();
  });

  it("retries through 5xx, 429 with Retry-After, resets and timeouts, losing nothing", async () => {
    const { cluster, name } = await syncedInformer(4);
    const hook = await endpoint({
      script: [{ status: 503 }, { status: 429, headers: { "retry-after": "1" } }, { destroy: true }, { hang: true }],
    });
    const { secret, stub: subscription } = await subscribe(name, hook, { timeoutSeconds: 1 });
    await cluster.churn({ seed: 3, operations: 10 });
    const view = await waitReceiverConverged(hook, secret, cluster, 45_000);
    const requests = await hook.requests();
    expect(requests.slice(0, 5).map((r) => r.outcome)).toEqual([503, 429, "destroy", "hang", 204]);
    // The four failed attempts carried the same event, byte for byte; the 429's Retry-After was honoured.
    expect(new Set(requests.slice(0, 5).map((r) => r.body)).size).toBe(1);
    expect(requests[2]!.receivedAt - requests[1]!.receivedAt).toBeGreaterThanOrEqual(1_000);
    expect(view.events[0]!.id).toBe(view.events[4]!.id);
    const deliveries = unwrap(await subscription().deliveries(200)).items;
    expect(deliveries.at(-1)).toMatchObject({ attempt: 1, status: 503, error: expect.stringMatching(/HTTP 503/) });
    expect(deliveries.some((d) => d.status === null && /no answer within 1 s/.test(d.error ?? ""))).toBe(true);
    expect(unwrap(await subscription().status())).toMatchObject({ state: "active", consecutiveFailures: 0 });
  });

  it("keeps other subscriptions on time while one endpoint refuses connections, and catches it up after", async () => {
    const { cluster, name } = await syncedInformer(6);
    const healthy = await endpoint();
    const down = await endpoint({ dedicatedPort: true });
    await down.down();
    const a = await subscribe(name, healthy);
    const b = await subscribe(name, down);
    await cluster.churn({ seed: 11, operations: 40 });
    await waitReceiverConverged(healthy, a.secret, cluster);
    const failing = await waitFor("the refused subscription to fail", async () => {
      const s = unwrap(await b.stub().status());
      return s.consecutiveFailures > 0 && s;
    });
    expect(failing).toMatchObject({ state: "failing", marker: { kind: "replay" } }); // still on its first batch
    const tail = unwrap(await env.INFORMER.getByName(name).status()).eventLog.tail;
    expect(unwrap(await b.stub().status()).lag).toBe(tail - failing.cursor); // events waiting behind it
    expect(failing.lastError).toMatch(/request failed/);
    await down.up();
    await waitReceiverConverged(down, b.secret, cluster, 45_000);
    expect(unwrap(await b.stub().status())).toMatchObject({ state: "active", consecutiveFailures: 0 });
  });

  it("loses nothing and never goes back when the informer and subscriptions crash during delivery", async () => {
    const { cluster, name } = await syncedInformer(10);
    const hooks = await Promise.all([endpoint(), endpoint({ default: { status: 204, delayMs: 30 } })]);
    const subs = await Promise.all([subscribe(name, hooks[0]), subscribe(name, hooks[1], { maxBatchSize: 5 })]);
    for (let round = 0; round < 4; round++) {
      const churn = cluster.churn({ seed: 40 + round, operations: 30 });
      await sleep(30 + 40 * round);
      await abortAllDurableObjects().catch(() => {}); // the abort rejects into this call too
      await env.INFORMER.getByName(name).ensureRunning(); // what the cron does
      await churn;
    }
    for (const [i, hook] of hooks.entries()) await waitReceiverConverged(hook, subs[i]!.secret, cluster, 45_000);
  });

  it("never sends a key's older event again after its newer one when killed while acknowledgements are held (invariant 10)", async () => {
    const { cluster, name, stub } = await syncedInformer(4);
    const hooks = await Promise.all([endpoint(), endpoint(), endpoint()]);
    const specs = [{}, { labelSelector: "app=web" }, { maxBatchSize: 5 }].map((spec) => ({ replayExisting: false, ...spec }));
    const subs = await Promise.all(hooks.map((hook, i) => subscribe(name, hook, specs[i])));
    const received = (i: number) => receiverView(hooks[i]!, subs[i]!.secret);
    const x = (phase: string) => pod({ name: "x", namespace: "ns-0", labels: { app: "web" }, phase });
    await cluster.create("pods", x("Running"));
    await waitFor("x at every receiver", async () => (await Promise.all(subs.map((_, i) => received(i)))).every((v) => v.events.length === 1));
    for (const sub of subs) unwrap(await sub.stub().metrics()); // stores the acknowledgement held
    // A graceful delete: an update, then the delete, both answered 204 and held in memory.
    await cluster.update("pods", x("Succeeded"));
    await cluster.delete("pods", { metadata: { name: "x", namespace: "ns-0" } });
    await waitFor("the delete at every receiver", async () => (await Promise.all(subs.map((_, i) => received(i)))).every((v) => v.events.at(-1)?.type === "delete"));
    await abortAllDurableObjects().catch(() => {}); // kill -9: what was held is lost
    await env.INFORMER.getByName(name).ensureRunning(); // what the cron does: nudges every subscription
    const tail = unwrap(await env.INFORMER.getByName(name).status()).eventLog.tail; // a fresh stub: the kill broke the old ones
    for (const sub of subs) await waitFor("the restarted subscription back at the log's tail", async () => unwrap(await sub.stub().status(tail)).cursor === tail);
    for (const i of subs.keys()) {
      const view = await received(i);
      expect(view.problems, `${JSON.stringify(specs[i])}: ${view.events.map((e) => `${e.type}@${e.resourceVersion}`).join(", ")}`).toEqual([]);
      expect(view.events.at(-1)?.type).toBe("delete");
    }
  });

  it("numbers a burst without a gap or a second number for one event when killed again and again (sequences taken at the 2xx)", async () => {
    const { cluster, name } = await syncedInformer(4);
    const hook = await endpoint({ default: { status: 204, delayMs: 5 } });
    const { secret } = await subscribe(name, hook, { replayExisting: false });
    const churn = cluster.churn({ seed: 91, operations: 80 });
    for (let kill = 0; kill < 8; kill++) {
      await sleep(25 + 15 * kill);
      await abortAllDurableObjects().catch(() => {}); // between any two awaits: a fill, a POST, an acknowledgement
      await env.INFORMER.getByName(name).ensureRunning();
    }
    await churn;
    const view = await waitReceiverConverged(hook, secret, cluster, 45_000); // no jump, no step back, no key back in time
    // A resend repeats an event with its number; no event ever gets two numbers, no number two events.
    const numberOf = new Map<string, Set<number>>();
    const idOf = new Map<number, Set<string>>();
    for (const e of view.events) {
      numberOf.set(e.id, (numberOf.get(e.id) ?? new Set()).add(e.sequence));
      idOf.set(e.sequence, (idOf.get(e.sequence) ?? new Set()).add(e.id));
    }
    expect([...numberOf.values()].filter((n) => n.size > 1)).toEqual([]);
    expect([...idOf.values()].filter((ids) => ids.size > 1)).toEqual([]);
    expect([...idOf.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: idOf.size }, (_, i) => i + 1));
  });

  it("resyncs on its period under churn without sending a key back in time", async () => {
    const { cluster, name } = await syncedInformer(8);
    const hook = await endpoint();
    const { secret } = await subscribe(name, hook, { resyncPeriodSeconds: 1 });
    for (let round = 0; round < 4; round++) {
      await cluster.churn({ seed: 70 + round, operations: 15 });
      await sleep(400);
    }
    await waitFor("a resync after the churn", async () => {
      const { events } = await receiverView(hook, secret);
      return events.filter((e) => e.type === "sync").length >= 8;
    });
    const view = await waitReceiverConverged(hook, secret, cluster);
    const sync = view.events.find((e) => e.type === "sync")!;
    expect(sync.oldObject).toEqual(sync.object);
  });

  it("applies namespace and label filters, turning selection changes into add and delete", async () => {
    const cluster = await newCluster();
    const { name, stub } = await startInformer(cluster);
    await waitSynced(stub);
    const hook = await endpoint();
    const { secret } = await subscribe(name, hook, { namespace: "a", labelSelector: "tier=web", replayExisting: false });
    await cluster.create("pods", pod({ name: "p", namespace: "a", labels: { tier: "db" } }));
    await cluster.create("pods", pod({ name: "q", namespace: "b", labels: { tier: "web" } }));
    await cluster.update("pods", pod({ name: "p", namespace: "a", labels: { tier: "web" } }));
    await cluster.update("pods", pod({ name: "p", namespace: "a", labels: { tier: "db" } }));
    const view = await waitFor("two events", async () => {
      const v = await receiverView(hook, secret);
      return v.events.length >= 2 && v;
    });
    await sleep(300);
    expect((await receiverView(hook, secret)).events.map((e) => `${e.type} ${e.key}`)).toEqual(["add a/p", "delete a/p"]);
    expect(view.events[1]!.object.metadata.labels).toEqual({ tier: "web" });
  });

  it("marks a subscriber that was down past the log's retention expired, then replays the cache to it", async () => {
    const { cluster, name, stub } = await syncedInformer(6, { retention: { maxEvents: 1_000 } });
    const down = await endpoint({ dedicatedPort: true });
    await down.down();
    const { secret, stub: subscription } = await subscribe(name, down, { replayExisting: false });
    await cluster.churn({ seed: 90, operations: 1_300 });
    await waitFor("retention to drop the subscriber's position", async () => (unwrap(await stub.status())).eventLog.head > 2, 30_000);
    await down.up();
    await subscription().enable(); // "retry now": the backoff after a long outage can be minutes
    // `expired` holds only while the replay runs, which can be shorter than a poll under load: its
    // replayed events (initialList; replayExisting was off) at the receiver are the lasting sign.
    await waitFor(
      "the expiry",
      async () => unwrap(await subscription().status()).expired || (await receiverView(down, secret)).events.some((e) => e.initialList),
      45_000,
    );
    const view = await waitReceiverConverged(down, secret, cluster, 45_000);
    // What the receiver got: the events read before they expired, then a full replay, then live
    // changes — with no gap in the sequence numbers.
    expect(view.events.filter((e) => e.initialList).length).toBeGreaterThan(0);
    const sequences = [...new Set(view.events.map((e) => e.sequence))];
    expect(sequences).toEqual(sequences.map((_, i) => i + 1));
    expect(unwrap(await subscription().status())).toMatchObject({ expired: false, marker: null, state: "active" });
  });
  it("applies a declared subscription's changed resync period: 0 stops resyncing, N starts it (#7.11)", async () => {
    const { name } = await syncedInformer(4);
    const secret = `whsec_${btoa("a declared secret of 24b")}`;
    const syncs = async (hook: ReceiverEndpoint) => (await receiverView(hook, secret)).events.filter((e) => e.type === "sync").length;
    const declare = (id: string, hook: ReceiverEndpoint, resyncPeriodSeconds: number) =>
      env.SUBSCRIPTION.getByName(id).declare(id, { cluster: "default", name }, subscriptionSpecSchema.parse({ url: hook.url, replayExisting: false, resyncPeriodSeconds }), secret);

    const stopping = await endpoint();
    const a = `sub_${name}-stop`;
    expect(unwrap(await declare(a, stopping, 1))).toBe("created");
    await waitFor("two resyncs", async () => (await syncs(stopping)) >= 8);
    expect(unwrap(await declare(a, stopping, 0))).toBe("updated");
    await sleep(500); // a resync under way finishes
    const before = await syncs(stopping);
    await sleep(2_500);
    expect(await syncs(stopping)).toBe(before);

    const starting = await endpoint();
    const b = `sub_${name}-start`;
    expect(unwrap(await declare(b, starting, 0))).toBe("created");
    await sleep(1_500);
    expect(await syncs(starting)).toBe(0);
    expect(unwrap(await declare(b, starting, 1))).toBe("updated");
    await waitFor("a resync", async () => (await syncs(starting)) >= 4, 5_000);
  });

  it("refuses to rotate a declared subscription's secret, which is a Worker secret (409), and keeps it", async () => {
    const { name } = await syncedInformer(4);
    const secret = `whsec_${btoa("a declared secret of 24b")}`;
    const hook = await endpoint();
    const id = `sub_${name}-rotate`;
    const stub = env.SUBSCRIPTION.getByName(id);
    expect(unwrap(await stub.declare(id, { cluster: "default", name }, subscriptionSpecSchema.parse({ url: hook.url }), secret))).toBe("created");
    expect(await stub.rotateSecret(60)).toMatchObject({ ok: false, error: { code: "Conflict", message: expect.stringMatching(/wrangler secret put/) } });
    // Still signed with the declared secret alone.
    await waitFor("the replay", async () => (await receiverView(hook, secret)).events.length >= 4);
    expect((await hook.requests()).every((r) => !r.headers["webhook-signature"]!.includes(" "))).toBe(true);
  });

  it("sends nothing once a DELETE starts, even when the alarm fires during it, and leaves no storage or alarm (#7.16)", async () => {
    const { name } = await syncedInformer(4);
    const hook = await endpoint({ script: [{ status: 503, headers: { "retry-after": "3600" } }] });
    const { id, stub } = await subscribe(name, hook);
    await waitFor("the first attempt to fail", async () => unwrap(await stub().status()).consecutiveFailures === 1);
    await runInDurableObject(stub(), async (instance: SubscriptionObject, state) => {
      state.storage.sql.exec("UPDATE subscription SET next_attempt_at = 0"); // the retry is due now
      // The alarm fires while the DELETE is being answered.
      expect(await Promise.all([instance.destroy(), instance.alarm()])).toEqual(["deleted", undefined]);
      await instance.nudge(1_000); // a nudge that was on its way
      expect(await state.storage.getAlarm()).toBeNull();
    });
    await sleep(300);
    expect(await hook.requests()).toHaveLength(1);
    expect(await stored(id)).toBe(false);
    expect(unwrap(await env.INFORMER.getByName(name).status()).subscriptions).toBe(0);
  });

  it("answers NotFound for an unknown subscription and stores nothing for it (#7.17)", async () => {
    const { name } = await syncedInformer(2);
    const id = randomId();
    const stub = env.SUBSCRIPTION.getByName(id);
    const notFound = { ok: false, error: { code: "NotFound" } };
    expect(await stub.status()).toMatchObject(notFound);
    expect(await stub.deliveries(10)).toMatchObject(notFound);
    expect(await stub.deadLetters(10)).toMatchObject(notFound);
    expect(await stub.enable()).toMatchObject(notFound);
    expect(await stub.redeliver("evt_unknown")).toMatchObject(notFound);
    expect(await stub.destroy(true)).toBe("not-found");
    await stub.nudge(10);
    await runDurableObjectAlarm(stub);
    const spec = subscriptionSpecSchema.parse({ url: "https://hooks.example/x" });
    expect(await stub.create(id, { cluster: "default", name: `${name}-missing` }, spec)).toMatchObject(notFound);
    expect(await stored(id)).toBe(false);
    // A created one is stored (the check above can fail), and its deletion leaves nothing.
    const hook = await endpoint();
    const created = await subscribe(name, hook);
    expect(await stored(created.id)).toBe(true);
    expect(await created.stub().destroy()).toBe("deleted");
    expect(await stored(created.id)).toBe(false);
  });
});

/**
 * Queue subscriptions end to end (issue 32 item 3, docs/api.md "Queue subscriptions"): created
 * through the HTTP API with `{"queue": "EVENTS"}`, delivered by the real SubscriptionObject to a
 * queue of miniflare's, and consumed by a consumer Worker (test/queue-consumer/consumer.mjs) that
 * records each message as it receives it. Bad targets are a 400 naming the binding, and nothing is
 * created. Every Durable Object killed repeatedly mid-delivery: the consumer, applying events by the
 * sequence rule docs/api.md gives, still ends with the cluster's state, no sequence number missing.
 */
import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EdgeInformerApiError, EdgeInformerClient, type FetchLike, type SubscriptionSpec } from "../../src/client/index.ts";
import type { QueueMessageBody } from "../../src/client/index.ts";
import { createApp } from "../../src/http/app.ts";
import { pod } from "../fake-apiserver/client.ts";
import { clusterVersions, newCluster, startInformer, waitFor, waitSynced } from "../helpers/informer.ts";

const BASE = "http://localhost";
const app = createApp();
const worker: FetchLike = async (input, init) => app.fetch(new Request(input, init), { ...env, ALLOW_UNAUTHENTICATED: "true" });
const admin = new EdgeInformerClient({ baseUrl: BASE, token: "test-admin-token-0123456789abcdef", fetch: worker });

type Consumed = { id: string; attempts: number; body: QueueMessageBody };

/** What the consumer Worker received for `subscription`, in the order it received it. */
async function consumed(subscription: string): Promise<Consumed[]> {
  const response = await env.QUEUE_CONSUMER.fetch(`http://consumer/received?subscription=${subscription}`);
  return (await response.json()) as Consumed[];
}

/**
 * A consumer's state by the rule docs/api.md gives: per key, apply an event only above the highest
 * sequence applied (kept after a delete), whatever order the messages came in. key → resourceVersion.
 */
function appliedBySequence(messages: Consumed[]): Map<string, string> {
  const applied = new Map<string, { sequence: number; resourceVersion: string | null }>();
  for (const { body } of messages) {
    const held = applied.get(body.key);
    if (held !== undefined && held.sequence >= body.sequence) continue;
    applied.set(body.key, { sequence: body.sequence, resourceVersion: body.type === "delete" ? null : body.resourceVersion });
  }
  return new Map([...applied].flatMap(([key, { resourceVersion }]) => (resourceVersion === null ? [] : [[key, resourceVersion] as const])));
}

/** A 400 whose message matches `message`, as the client throws it. */
const badRequest = (message: RegExp) => expect.objectContaining({ name: "EdgeInformerApiError", status: 400, code: "BadRequest", message: expect.stringMatching(message) });

describe("queue subscriptions", () => {
  it("refuses a queue that is not a listed producer binding, or a second target, with a 400 naming it, and creates nothing", async () => {
    const cluster = await newCluster();
    const { name } = await startInformer(cluster);
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ queue: "UNLISTED" }, /queue 'UNLISTED' is not listed in WEBHOOK_QUEUES/],
      [{ queue: "MISSING" }, /queue 'MISSING' is not listed in WEBHOOK_QUEUES/],
      [{ queue: "EVENTS", url: "https://hooks.example.com/" }, /exactly one of 'url'.*and 'queue'/],
      [{ queue: "not a binding" }, /queue: must name a queue producer binding/],
    ];
    for (const [spec, message] of bad) await expect(admin.createSubscription(name, spec as SubscriptionSpec), JSON.stringify(spec)).rejects.toEqual(badRequest(message));
    // Listed, but bound to no queue producer: a service binding answers any method name, and is not one.
    const listedService: FetchLike = async (input, init) => app.fetch(new Request(input, init), { ...env, ALLOW_UNAUTHENTICATED: "true", WEBHOOK_QUEUES: "EVENTS,QUEUE_CONSUMER,GONE" });
    const operator = new EdgeInformerClient({ baseUrl: BASE, token: "test-admin-token-0123456789abcdef", fetch: listedService });
    await expect(operator.createSubscription(name, { queue: "QUEUE_CONSUMER" })).rejects.toEqual(badRequest(/queue 'QUEUE_CONSUMER': the binding is not a queue producer/));
    await expect(operator.createSubscription(name, { queue: "GONE" })).rejects.toEqual(badRequest(/queue 'GONE': the Worker has no binding of that name/));
    expect(await admin.listSubscriptions(name)).toEqual([]);
  });

  it("sends every event to the queue, one message each, and the consumer Worker receives them all, each key in order", async () => {
    const cluster = await newCluster();
    await cluster.create("pods", pod({ name: "a", namespace: "default" }));
    const informer = await startInformer(cluster);
    await waitSynced(informer.stub);
    const created = await admin.createSubscription(informer.name, { queue: "EVENTS", maxBatchSize: 3, resyncPeriodSeconds: 0 });
    expect(created).toMatchObject({ queue: "EVENTS", state: "active", maxBatchSize: 3 });
    expect(created).not.toHaveProperty("url");
    expect(await admin.getSubscription(created.id)).toMatchObject({ queue: "EVENTS" });

    await cluster.create("pods", pod({ name: "b", namespace: "default" }));
    for (let i = 1; i <= 4; i++) await cluster.update("pods", pod({ name: "a", namespace: "default", image: `nginx:1.${i}` }));
    await cluster.delete("pods", { metadata: { name: "b", namespace: "default" } });
    const messages = await waitFor("the consumer to receive every event", async () => {
      const got = await consumed(created.id);
      return got.some((m) => m.body.type === "delete" && m.body.key === "default/b") && got.filter((m) => m.body.key === "default/a").length >= 5 && got;
    });

    // Each message is the event as an HTTP delivery carries it, plus the subscription's id.
    for (const { body } of messages) {
      expect(body).toMatchObject({ id: expect.stringMatching(/^evt_/), subscription: created.id, cluster: "default", informer: informer.name, object: expect.any(Object) });
    }
    // Nothing lost and nothing repeated: sequence numbers 1..n, each once.
    expect(messages.map((m) => m.body.sequence)).toEqual(messages.map((_, i) => i + 1));
    // Per key, in order (miniflare's queue keeps send order; in production, restore it by sequence: docs/api.md).
    const rvs = (key: string) => messages.filter((m) => m.body.key === key).map((m) => Number(m.body.resourceVersion));
    expect(rvs("default/a")).toEqual([...rvs("default/a")].sort((x, y) => x - y));
    expect(messages.filter((m) => m.body.key === "default/b").map((m) => m.body.type)).toEqual(["add", "delete"]);
    // The attempts: each accepted by the queue (202), none failed.
    const log = await admin.deliveries(created.id);
    expect(log.every((attempt) => attempt.status === 202 && attempt.error === undefined)).toBe(true);
  });

  it("loses nothing when every Durable Object is killed while it delivers: the consumer, applying by sequence, ends with the cluster's state", async () => {
    const cluster = await newCluster();
    for (let i = 0; i < 4; i++) await cluster.create("pods", pod({ name: `p${i}`, namespace: "default" }));
    const informer = await startInformer(cluster);
    await waitSynced(informer.stub);
    const { id } = await admin.createSubscription(informer.name, { queue: "EVENTS", resyncPeriodSeconds: 0 });
    for (let round = 1; round <= 4; round++) {
      for (let i = 0; i < 4; i++) await cluster.upsert("pods", pod({ name: `p${i}`, namespace: "default", image: `nginx:${round}.${i}` }));
      if (round === 2) await cluster.delete("pods", { metadata: { name: "p1", namespace: "default" } });
      if (round === 3) await cluster.create("pods", pod({ name: "p9", namespace: "default" }));
      await abortAllDurableObjects().catch(() => {}); // the abort also rejects into this call
      await env.INFORMER.getByName(informer.name).ensureRunning();
    }
    const truth = await clusterVersions(cluster);
    const messages = await waitFor(
      "the consumer to hold the cluster's state",
      async () => {
        const got = await consumed(id);
        const state = appliedBySequence(got);
        return state.size === truth.size && [...truth].every(([key, rv]) => state.get(key) === rv) && got;
      },
      60_000,
    );
    // Nothing lost: every sequence number up to the last arrived (a resend repeats one, never skips).
    const sequences = new Set(messages.map((m) => m.body.sequence));
    expect(sequences.size).toBe(Math.max(...sequences));
    // A sequence names one event, however often it was sent.
    const ids = new Map<number, string>();
    for (const { body } of messages) {
      expect(ids.get(body.sequence) ?? body.id).toBe(body.id);
      ids.set(body.sequence, body.id);
    }
  });
});

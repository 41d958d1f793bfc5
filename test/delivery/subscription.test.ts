/**
 * The subscription's delivery state machine against an in-memory feed and a scripted endpoint:
 * ordering, acknowledgement (invariant 4), retries, dead letters, 410, replay and resync markers
 * (invariant 3), expiry, filters, batching, and resuming from storage after an eviction.
 */
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/client/index.ts";
import type { WebhookEvent } from "../../src/client/types.ts";
import type { DeliveryRequest, SendResult } from "../../src/delivery/sender.ts";
import { type SubscriptionSpecInput, subscriptionSpecSchema } from "../../src/delivery/subscription-spec.ts";
import { Subscription, type StepResult } from "../../src/delivery/subscription.ts";
import type { Db } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeFeed } from "../helpers/fake-feed.ts";
import { FakeClock, fixedRandom } from "../helpers/fakes.ts";

const SECRET = `whsec_${btoa("a test secret of 24 bytes")}`;

interface Received {
  request: DeliveryRequest;
  events: WebhookEvent[];
}

/** An endpoint answering from a script (then 204), verifying every request it gets. */
class Endpoint {
  readonly received: Received[] = [];
  script: SendResult[] = [];
  async send(request: DeliveryRequest): Promise<SendResult> {
    const events = verifyWebhook(SECRET, request.body, request.headers as unknown as Record<string, string>);
    this.received.push({ request, events });
    return this.script.shift() ?? { status: 204, durationMs: 1 };
  }
  get events(): WebhookEvent[] {
    return this.received.flatMap((r) => r.events);
  }
}

function setup(db: Db, spec: Partial<SubscriptionSpecInput> = {}, feed = new FakeFeed()) {
  const clock = new FakeClock(Date.now()); // signatures are checked against real time
  const endpoint = new Endpoint();
  const make = () => new Subscription(db, clock, fixedRandom(0.5), feed, (r) => endpoint.send(r));
  const subscription = make();
  const parsed = subscriptionSpecSchema.parse({ url: "https://hooks.example/a", ...spec });
  subscription.create({
    id: "sub_0123456789",
    informer: "pods",
    secret: SECRET,
    tail: feed.tail,
    spec: { ...parsed, resyncPeriodSeconds: parsed.resyncPeriodSeconds ?? 0 },
  });
  return { feed, clock, endpoint, subscription, make };
}

/** Steps until the subscription waits or idles; returns that result. */
async function drain(subscription: Subscription, max = 10_000): Promise<StepResult> {
  for (let i = 0; i < max; i++) {
    const result = await subscription.step();
    if (result.kind !== "progress") return result;
  }
  throw new Error("the subscription never settled");
}

const summary = (events: WebhookEvent[]) => events.map((e) => `${e.type} ${e.key}@${e.resourceVersion}`);

describe("Subscription", () => {
  it("delivers every log event in order, signed, with increasing sequence numbers", async () => {
    await withDb(async (db) => {
      const { feed, endpoint, subscription } = setup(db, { replayExisting: false });
      feed.put("default/a");
      feed.put("default/b");
      feed.put("default/a");
      feed.delete("default/b");
      expect(await drain(subscription)).toMatchObject({ kind: "idle" });
      expect(summary(endpoint.events)).toEqual(["add default/a@101", "add default/b@102", "update default/a@103", "delete default/b@102"]);
      expect(endpoint.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
      expect(endpoint.events[2]!.oldObject).toMatchObject({ metadata: { resourceVersion: "101" } });
      expect(endpoint.received.map((r) => r.request.headers["webhook-id"])).toEqual(endpoint.events.map((e) => e.id));
      expect(subscription.status()).toMatchObject({ cursor: 4, lag: 0, state: "active", consecutiveFailures: 0 });
    });
  });

  it("keeps the cursor until a 2xx, retrying the same event with the same id and body", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false });
      feed.put("default/a");
      feed.put("default/b");
      endpoint.script = [
        { status: 503, durationMs: 1, error: "HTTP 503" },
        { durationMs: 15_000, error: "no answer within 15 s" },
        { status: 429, durationMs: 1, retryAfterMs: 30_000, error: "HTTP 429" },
      ];
      const waited = await drain(subscription);
      expect(waited).toEqual({ kind: "wait", until: clock.now() + 500 }); // full jitter: 0.5 × 1 s
      expect(subscription.status()).toMatchObject({ cursor: 0, state: "failing", consecutiveFailures: 1, lastError: "HTTP 503" });
      clock.advance(500);
      expect(await drain(subscription)).toEqual({ kind: "wait", until: clock.now() + 1_000 }); // 0.5 × 2 s
      clock.advance(1_000);
      expect(await drain(subscription)).toEqual({ kind: "wait", until: clock.now() + 30_000 }); // Retry-After wins
      clock.advance(30_000);
      expect(await drain(subscription)).toMatchObject({ kind: "idle" });
      const attempts = endpoint.received.slice(0, 4);
      expect(new Set(attempts.map((r) => r.request.body)).size).toBe(1);
      expect(new Set(attempts.map((r) => r.request.headers["webhook-id"])).size).toBe(1);
      expect(summary(endpoint.events)).toEqual(["add default/a@101", "add default/a@101", "add default/a@101", "add default/a@101", "add default/b@102"]);
      expect(subscription.deliveries(10).map((d) => [d.attempt, d.status])).toEqual([
        [1, 204],
        [4, 204],
        [3, 429],
        [2, null],
        [1, 503],
      ]);
      expect(subscription.status()).toMatchObject({ cursor: 2, state: "active", consecutiveFailures: 0, lastError: null });
    });
  });

  it("dead-letters an event after the retry budget, goes on, and redelivers it on request", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false, retryBudgetSeconds: 60 });
      feed.put("default/a");
      feed.put("default/b");
      endpoint.script = Array.from({ length: 8 }, () => ({ status: 500, durationMs: 1, error: "HTTP 500" }));
      for (let result = await drain(subscription); result.kind === "wait"; result = await drain(subscription)) {
        clock.advance(result.until - clock.now());
      }
      expect(subscription.status()).toMatchObject({ cursor: 2, deadLetters: 1, state: "active", lastError: null });
      const [dead] = subscription.deadLetters(10);
      expect(dead).toMatchObject({ key: "default/a", type: "add", sequence: 1, lastError: "HTTP 500", event: { key: "default/a", sequence: 1 } });
      expect(summary(endpoint.events).at(-1)).toBe("add default/b@102");

      endpoint.script = [{ status: 500, durationMs: 1, error: "HTTP 500" }];
      expect(await subscription.redeliver(dead!.eventId)).toMatchObject({ delivered: false, attempt: { status: 500 } });
      expect(subscription.status()!.deadLetters).toBe(1);
      expect(await subscription.redeliver(dead!.eventId)).toMatchObject({ delivered: true, attempt: { status: 204 } });
      expect(subscription.status()!.deadLetters).toBe(0);
      expect(endpoint.received.at(-1)!.request.headers["webhook-id"]).toBe(dead!.eventId);
      await expect(subscription.redeliver(dead!.eventId)).rejects.toThrow(/no dead letter/);
    });
  });

  it("is disabled by 410 Gone, keeps the event, and delivers it once re-enabled", async () => {
    await withDb(async (db) => {
      const { feed, endpoint, subscription } = setup(db, { replayExisting: false });
      feed.put("default/a");
      endpoint.script = [{ status: 410, durationMs: 1, error: "HTTP 410" }];
      expect(await drain(subscription)).toEqual({ kind: "idle", until: null });
      expect(subscription.status()).toMatchObject({ state: "disabled", cursor: 0, disabledReason: expect.stringMatching(/410 Gone/) });
      feed.put("default/b");
      expect(await drain(subscription)).toEqual({ kind: "idle", until: null });
      subscription.enable();
      await drain(subscription);
      expect(summary(endpoint.events)).toEqual(["add default/a@101", "add default/a@101", "add default/b@102"]);
      expect(subscription.status()).toMatchObject({ state: "active", cursor: 2 });
    });
  });

  it("replays the cache for a new subscription, skipping keys whose newer events follow", async () => {
    await withDb(async (db) => {
      const feed = new FakeFeed();
      for (const name of ["a", "b", "c", "d"]) feed.put(`default/${name}`, {}, true);
      feed.delete("default/d");
      const { endpoint, subscription } = setup(db, {}, feed); // marker at P = 5
      feed.put("default/b"); // changed after P: skipped in the replay, its update follows
      feed.put("default/e");
      await drain(subscription);
      expect(summary(endpoint.events)).toEqual([
        "add default/a@101",
        "add default/c@103",
        "update default/b@105",
        "add default/e@106",
      ]);
      expect(endpoint.events.slice(0, 2).every((e) => e.initialList)).toBe(true);
      expect(subscription.status()).toMatchObject({ marker: null, cursor: 7, expired: false });
    });
  });

  it("resyncs on its period after the events before the marker, as sync events", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false, resyncPeriodSeconds: 60 });
      feed.put("default/a");
      feed.put("default/b");
      const idle = await drain(subscription);
      expect(idle).toEqual({ kind: "idle", until: clock.now() + 60_000 });
      feed.put("default/c");
      subscription.noteTail(feed.tail); // the nudge: marker at P = 3
      clock.advance(60_000);
      expect(await subscription.step()).toEqual({ kind: "progress" });
      feed.put("default/a"); // after P: skipped by the resync, delivered after it
      await drain(subscription);
      expect(summary(endpoint.events)).toEqual([
        "add default/a@101",
        "add default/b@102",
        "add default/c@103",
        "sync default/b@102",
        "sync default/c@103",
        "update default/a@104",
      ]);
      const sync = endpoint.events[3]!;
      expect(sync.oldObject).toEqual(sync.object);
      expect(subscription.status()!.marker).toBeNull();
    });
  });

  it("never resyncs with period 0", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false, resyncPeriodSeconds: 0 });
      feed.put("default/a");
      await drain(subscription);
      clock.advance(7 * 24 * 3_600_000);
      await drain(subscription);
      expect(summary(endpoint.events)).toEqual(["add default/a@101"]);
    });
  });

  it("marks a subscription that fell behind retention expired and replays the cache", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false });
      feed.put("default/a");
      endpoint.script = [{ status: 400, durationMs: 1, error: "HTTP 400" }];
      await drain(subscription); // waiting to retry event 1
      feed.put("default/b");
      feed.put("default/a");
      feed.compact(3); // events 1 and 2 are gone; the outbox still holds event 1
      clock.advance(60_000);
      await subscription.step(); // retry: delivered
      expect(subscription.status()).toMatchObject({ cursor: 1 });
      await subscription.step(); // read: expired
      expect(subscription.status()).toMatchObject({ expired: true, marker: { kind: "replay", at: 3 } });
      await drain(subscription);
      expect(summary(endpoint.events)).toEqual(["add default/a@101", "add default/a@101", "add default/a@103", "add default/b@102"]);
      expect(endpoint.events.slice(2).every((e) => e.initialList)).toBe(true);
      expect(subscription.status()).toMatchObject({ expired: false, marker: null, cursor: 3 });
    });
  });

  it("after an expiry, retracts what the receiver holds but the cache no longer has, keeping skipped keys", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false });
      for (const name of ["a", "b", "c", "d"]) feed.put(`default/${name}`);
      await drain(subscription); // the receiver holds a, b, c, d
      endpoint.script = [{ status: 503, durationMs: 1, error: "HTTP 503" }];
      feed.delete("default/b");
      await drain(subscription); // the delete of b is failing
      feed.delete("default/c");
      feed.put("default/e");
      feed.compact(feed.tail); // everything but the last event is gone
      clock.advance(60_000);
      while (subscription.status()!.marker === null) await subscription.step(); // b's delete goes out; expired
      feed.put("default/d"); // after the marker: skipped by the replay, its update follows
      await drain(subscription);
      expect(summary(endpoint.events.slice(4, 6))).toEqual(["delete default/b@102", "delete default/b@102"]);
      const after = endpoint.events.slice(6);
      expect(summary(after)).toEqual([
        "add default/a@101",
        "add default/e@105",
        "delete default/c@103",
        "update default/d@106",
      ]);
      expect(after[2]).toMatchObject({ finalStateUnknown: true, object: { metadata: { name: "c", namespace: "default", uid: "uid-default/c" } } });
      expect(after[0]!.initialList && after[1]!.initialList).toBe(true);
      expect(subscription.status()).toMatchObject({ expired: false, marker: null });
    });
  });

  it("filters by type and namespace, and turns selector transitions into add and delete", async () => {
    await withDb(async (db) => {
      const { feed, endpoint, subscription } = setup(db, {
        replayExisting: false,
        namespace: "team-a",
        labelSelector: "app=web",
        events: ["add", "delete"],
      });
      feed.put("team-b/x", { app: "web" }); // other namespace
      feed.put("team-a/a", { app: "db" }); // not selected
      feed.put("team-a/a", { app: "web" }); // enters the selection → add
      feed.put("team-a/a", { app: "web", v: "2" }); // update: filtered by type
      feed.put("team-a/a", { app: "db" }); // leaves the selection → delete with the old state
      feed.put("team-a/b", { app: "web" });
      feed.delete("team-a/b");
      await drain(subscription);
      expect(summary(endpoint.events)).toEqual([
        "add team-a/a@103",
        "delete team-a/a@105",
        "add team-a/b@106",
        "delete team-a/b@106",
      ]);
      expect(endpoint.events[1]!.object).toMatchObject({ metadata: { labels: { app: "web", v: "2" } } });
      expect(subscription.status()!.cursor).toBe(feed.tail);
    });
  });

  it("sends batches of up to maxBatchSize as {events: [...]}", async () => {
    await withDb(async (db) => {
      const { feed, endpoint, subscription } = setup(db, { replayExisting: false, maxBatchSize: 3 });
      for (let i = 0; i < 7; i++) feed.put(`default/p${i}`);
      await drain(subscription);
      expect(endpoint.received.map((r) => r.events.length)).toEqual([3, 3, 1]);
      expect(JSON.parse(endpoint.received[2]!.request.body)).toHaveProperty("events");
      expect(endpoint.received.map((r) => r.request.headers["webhook-id"])).toEqual([
        "msg_sub_0123456789_1",
        "msg_sub_0123456789_4",
        "msg_sub_0123456789_7",
      ]);
      expect(endpoint.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });
  });

  it("resumes after an eviction with the same batch, and never skips", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false });
      feed.put("default/a");
      feed.put("default/b");
      endpoint.script = [{ status: 502, durationMs: 1, error: "HTTP 502" }];
      const waiting = await drain(subscription);
      const revived = make(); // a new instance over the same storage: nothing in memory survives
      expect(await drain(revived)).toEqual(waiting);
      expect(revived.status()).toMatchObject({ cursor: 0, consecutiveFailures: 1 });
      clock.advance((waiting as { until: number }).until - clock.now());
      await drain(revived);
      const [first, second] = endpoint.received;
      expect(second!.request.body).toBe(first!.request.body);
      expect(second!.request.headers["webhook-id"]).toBe(first!.request.headers["webhook-id"]);
      expect(summary(endpoint.events)).toEqual(["add default/a@101", "add default/a@101", "add default/b@102"]);
    });
  });
});

/**
 * Queue subscriptions keep the HTTP delivery's rules (DESIGN invariants 3, 4, 10): a subscription
 * whose target is a queue (a FakeQueue that records and fails as scripted) sends each event as one
 * message, in order; the cursor moves only after the queue accepted the send; a failed send is
 * retried on the retry schedule, then dead-lettered, and redelivered on request; an event too large
 * for a message is dead-lettered at once. And what a delivery costs: one sendBatch (one subrequest)
 * per delivery, however many events it carries, up to 100.
 */
import { describe, expect, it } from "vitest";
import type { QueueMessageBody } from "../../src/client/index.ts";
import { queueSender } from "../../src/delivery/queue-sender.ts";
import { queueTargets } from "../../src/delivery/queue-target.ts";
import type { SubscriptionSpecInput } from "../../src/delivery/subscription-spec.ts";
import { SubrequestBudget } from "../../src/net/subrequest-budget.ts";
import type { Db } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock } from "../helpers/fakes.ts";
import { FakeQueue } from "../helpers/fake-queue.ts";
import { drain, setup } from "../helpers/subscription-harness.ts";

type Message = QueueMessageBody;

const summary = (messages: Message[]) => messages.map((m) => `${m.type} ${m.key}`);

function queued(db: Db, spec: Partial<SubscriptionSpecInput> = {}) {
  const queue = new FakeQueue();
  const budget = new SubrequestBudget(1_000_000);
  const sendToQueue = queueSender(new FakeClock(), () => queueTargets({ WEBHOOK_QUEUES: "EVENTS", EVENTS: queue }), (call) => budget.spend(call));
  const harness = setup(db, { url: undefined, queue: "EVENTS", replayExisting: false, ...spec }, undefined, { sendToQueue });
  const messages = () => queue.accepted as Message[];
  return { ...harness, queue, budget, messages };
}

describe("queue subscriptions", () => {
  it("sends each event as one message, in log order, each carrying the event's envelope and the subscription's id", async () => {
    await withDb(async (db) => {
      const { feed, subscription, queue, messages, endpoint } = queued(db);
      feed.put("default/a", { v: "1" });
      feed.put("default/b");
      feed.put("default/a", { v: "2" });
      feed.delete("default/b");
      await drain(subscription);
      expect(summary(messages())).toEqual(["add default/a", "add default/b", "update default/a", "delete default/b"]);
      expect(messages().map((m) => [m.sequence, m.subscription, m.cluster, m.informer])).toEqual([1, 2, 3, 4].map((n) => [n, "sub_0123456789", "default", "pods"]));
      expect(messages()[0]).toMatchObject({ id: expect.stringMatching(/^evt_/), object: { metadata: { name: "a" } } });
      expect(queue.calls).toHaveLength(4);
      expect(endpoint.received).toEqual([]); // nothing over HTTP
      expect(subscription.status()!.cursor).toBe(feed.tail);
    });
  });

  it("moves the cursor only once the queue accepted: a failed send is retried on the schedule, in order, then the stream goes on", async () => {
    await withDb(async (db) => {
      const { feed, clock, subscription, queue, messages } = queued(db, { maxBatchSize: 2 });
      const start = subscription.store.get()!.position.cursor;
      feed.put("default/a");
      feed.put("default/b");
      feed.put("default/a", { v: "2" });
      queue.script = ["throw", "throw"];
      const waiting = await drain(subscription);
      if (waiting.kind !== "wait") throw new Error(`expected a wait, got ${waiting.kind}`);
      expect(subscription.status()).toMatchObject({ state: "failing", consecutiveFailures: 1, lastError: expect.stringMatching(/^queue 'EVENTS' refused the batch/) });
      expect(subscription.store.get()!.position.cursor).toBe(start);
      expect(messages()).toEqual([]);
      clock.advance(waiting.until - clock.now());
      expect((await drain(subscription)).kind).toBe("wait"); // the second failure
      clock.advance(60 * 60_000);
      await drain(subscription);
      // A batch ends before a key's second event: [a, b], then [a@3], the first sent three times.
      expect(queue.calls.map((call) => call.length)).toEqual([2, 2, 2, 1]);
      expect(summary(messages())).toEqual(["add default/a", "add default/b", "update default/a"]);
      expect(subscription.status()).toMatchObject({ state: "active", consecutiveFailures: 0, cursor: feed.tail, deadLetters: 0 });
      expect(subscription.deliveries(10).items.map((a) => [a.status, a.attempt])).toEqual([[202, 1], [202, 3], [null, 2], [null, 1]]);
    });
  });

  it("dead-letters what the queue keeps refusing past the retry budget, goes on, and redelivers it to the queue on request", async () => {
    await withDb(async (db) => {
      const { feed, clock, subscription, queue, messages } = queued(db, { retryBudgetSeconds: 5 });
      feed.put("default/a");
      queue.script = Array<"throw">(20).fill("throw");
      for (let i = 0; i < 20 && subscription.status()!.deadLetters === 0; i++) {
        const result = await drain(subscription);
        if (result.kind === "wait") clock.advance(result.until - clock.now());
      }
      const [dead] = subscription.deadLetters(10).items;
      expect(dead).toMatchObject({ key: "default/a", attempts: 4, lastError: expect.stringMatching(/refused the batch/) });
      queue.script = [];
      feed.put("default/b");
      await drain(subscription);
      expect(summary(messages())).toEqual(["add default/b"]);
      expect(await subscription.redeliver(dead!.eventId)).toMatchObject({ delivered: true, attempt: { status: 202 } });
      expect(messages().map((m) => m.id)).toEqual([messages()[0]!.id, dead!.eventId]);
      expect(subscription.deadLetters(10).items).toEqual([]);
    });
  });

  it("dead-letters at once an event too large for a queue message, and goes on", async () => {
    await withDb(async (db) => {
      const { feed, subscription, queue, messages } = queued(db);
      feed.put("default/big", { blob: "x".repeat(130_000) });
      feed.put("default/small");
      await drain(subscription);
      expect(subscription.deadLetters(10).items).toMatchObject([{ key: "default/big", attempts: 1, lastError: expect.stringMatching(/past Queues' limit of 128000/) }]);
      expect(summary(messages())).toEqual(["add default/small"]);
      expect(queue.calls).toHaveLength(1);
    });
  });

  it("spends one sendBatch, one subrequest, per delivery: an event at maxBatchSize 1, a batch of up to 100 otherwise", async () => {
    for (const [maxBatchSize, calls] of [[1, 40], [100, 1]] as const) {
      await withDb(async (db) => {
        const { feed, subscription, queue, budget, messages } = queued(db, { maxBatchSize });
        for (let i = 0; i < 40; i++) feed.put(`default/p${i}`);
        await drain(subscription);
        expect(messages()).toHaveLength(40);
        expect([queue.calls.length, budget.used]).toEqual([calls, calls]);
      });
    }
  });

  it("writes the rows an HTTP delivery writes: the same outbox and bookkeeping (docs/costs.md)", async () => {
    const written = (spec: Partial<SubscriptionSpecInput>) =>
      withDb(async (db) => {
        const { feed, subscription, clock } = queued(db, spec);
        const before = db.rows.totals().written;
        for (let i = 0; i < 64; i++) {
          feed.put(`default/p${i % 8}`, { v: String(i) });
          await drain(subscription);
          clock.advance(1_000);
        }
        subscription.flush();
        return db.rows.totals().written - before;
      });
    const toQueue = await written({});
    expect(toQueue).toBeGreaterThan(0);
    expect(toQueue).toBe(await written({ queue: undefined, url: "https://hooks.example/a" }));
  });
});

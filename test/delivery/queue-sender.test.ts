/**
 * The sending side of queue subscriptions (src/delivery/queue-sender.ts, queue-target.ts): which
 * bindings may be named, how events become messages within Queues' limits, what a failed, hung or
 * refused send reports, and one subrequest per sendBatch.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.ts";
import {
  QUEUE_ACCEPTED_STATUS,
  QUEUE_BATCH_BYTES,
  QUEUE_BATCH_MESSAGES,
  QUEUE_MESSAGE_BYTES,
  queueChunks,
  queueSender,
} from "../../src/delivery/queue-sender.ts";
import { queueTargets } from "../../src/delivery/queue-target.ts";
import { SubrequestBudget, SubrequestLimitError } from "../../src/net/subrequest-budget.ts";
import { FakeQueue } from "../helpers/fake-queue.ts";

const event = (n: number, objectChars = 10) => JSON.stringify({ id: `evt_${n}`, type: "add", key: `default/p${n}`, object: { data: "x".repeat(objectChars) }, sequence: n });
const request = (texts: string[], timeoutMs = 15_000) => ({ queue: "EVENTS", subscription: "sub_q", texts, timeoutMs });

function sender(queue: FakeQueue, budget = new SubrequestBudget(1_000)) {
  const send = queueSender(systemClock, () => queueTargets({ WEBHOOK_QUEUES: "EVENTS", EVENTS: queue }), (call) => budget.spend(call));
  return { send, budget };
}

describe("queueTargets", () => {
  it("resolves a listed queue producer binding, and names the reason for anything else", () => {
    const targets = queueTargets(env);
    expect(targets.resolve("EVENTS")).toEqual({ queue: env.EVENTS });
    expect(targets.resolve("UNLISTED")).toEqual({ refusal: "queue 'UNLISTED' is not listed in WEBHOOK_QUEUES" });
    const listedAll = queueTargets({ ...env, WEBHOOK_QUEUES: " EVENTS , QUEUE_CONSUMER,SUBSCRIPTION,ADMIN_TOKEN,GONE" });
    expect(listedAll.resolve("EVENTS")).toEqual({ queue: env.EVENTS });
    for (const name of ["QUEUE_CONSUMER", "SUBSCRIPTION", "ADMIN_TOKEN"]) expect(listedAll.resolve(name)).toEqual({ refusal: `queue '${name}': the binding is not a queue producer` });
    expect(listedAll.resolve("GONE")).toEqual({ refusal: expect.stringMatching(/no binding of that name/) });
    expect(queueTargets({ ...env, WEBHOOK_QUEUES: undefined }).resolve("EVENTS")).toEqual({ refusal: expect.stringMatching(/WEBHOOK_QUEUES is unset/) });
  });
});

describe("queueChunks", () => {
  it("makes one message per event, with the subscription's id, in order, at most 100 messages a call", () => {
    const texts = Array.from({ length: 250 }, (_, i) => event(i + 1));
    const chunks = queueChunks(texts, "sub_q");
    if (!("batches" in chunks)) throw new Error("expected batches");
    expect(chunks.batches.map((b) => b.length)).toEqual([QUEUE_BATCH_MESSAGES, QUEUE_BATCH_MESSAGES, 50]);
    const bodies = chunks.batches.flat().map((m) => m.body as { id: string; subscription: string });
    expect(bodies.map((b) => b.id)).toEqual(texts.map((_, i) => `evt_${i + 1}`));
    expect(bodies.every((b) => b.subscription === "sub_q")).toBe(true);
    expect(chunks.batches.flat().every((m) => m.contentType === "json")).toBe(true);
  });

  it("keeps each call within 256 KB", () => {
    const texts = Array.from({ length: 10 }, (_, i) => event(i + 1, 60_000));
    const chunks = queueChunks(texts, "sub_q");
    if (!("batches" in chunks)) throw new Error("expected batches");
    expect(chunks.batches.map((b) => b.length)).toEqual([4, 4, 2]);
    for (const batch of chunks.batches) expect(batch.reduce((n, m) => n + JSON.stringify(m.body).length + 100, 0)).toBeLessThanOrEqual(QUEUE_BATCH_BYTES);
  });

  it("names the first event whose message is past 128 KB", () => {
    const chunks = queueChunks([event(1), event(2, QUEUE_MESSAGE_BYTES), event(3)], "sub_q");
    expect(chunks).toEqual({ tooLarge: { index: 1, bytes: expect.any(Number) } });
  });
});

describe("queueSender", () => {
  it("reports an accepted batch as 202, one subrequest per sendBatch call", async () => {
    const queue = new FakeQueue();
    const { send, budget } = sender(queue);
    const texts = Array.from({ length: 150 }, (_, i) => event(i + 1));
    expect(await send(request(texts))).toMatchObject({ status: QUEUE_ACCEPTED_STATUS });
    expect(queue.calls.map((c) => c.length)).toEqual([100, 50]);
    expect(budget.used).toBe(2);
    expect(queue.accepted).toHaveLength(150);
  });

  it("fails the attempt when a call throws or does not answer in time, saying so", async () => {
    const queue = new FakeQueue();
    const { send } = sender(queue);
    queue.script = ["throw"];
    expect(await send(request([event(1)]))).toEqual({ durationMs: expect.any(Number), error: "queue 'EVENTS' refused the batch: Queue sendBatch failed: 500 internal error" });
    queue.script = ["ok", "hang"];
    const texts = Array.from({ length: 101 }, (_, i) => event(i + 1));
    expect(await send(request(texts, 20))).toMatchObject({ error: "no answer within 0.02 s" });
    expect(queue.calls.map((c) => c.length)).toEqual([1, 100, 1]);
  });

  it("sends nothing to a queue it may not name, or of an event too large for a message (unsendable)", async () => {
    const queue = new FakeQueue();
    const refused = queueSender(systemClock, () => queueTargets({ WEBHOOK_QUEUES: "OTHER", EVENTS: queue }), (call) => call());
    expect(await refused(request([event(1)]))).toEqual({ durationMs: 0, error: "not sent: queue 'EVENTS' is not listed in WEBHOOK_QUEUES" });
    const { send } = sender(queue);
    const tooLarge = await send(request([event(1), event(2, QUEUE_MESSAGE_BYTES)]));
    expect(tooLarge).toMatchObject({ unsendable: true, error: expect.stringMatching(/^not sent: event 2 of 2 makes a \d+-byte queue message, past Queues' limit of 128000$/) });
    expect(queue.calls).toEqual([]);
  });

  it("throws the slice's subrequest limit, never charging it to the queue", async () => {
    const queue = new FakeQueue();
    const spent = new SubrequestBudget(1);
    await spent.spend(async () => undefined);
    const { send } = sender(queue, spent);
    await expect(send(request([event(1)]))).rejects.toBeInstanceOf(SubrequestLimitError);
    expect(queue.calls).toEqual([]);
  });
});

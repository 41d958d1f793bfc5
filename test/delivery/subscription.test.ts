/**
 * The subscription's delivery state machine against an in-memory feed and a scripted endpoint:
 * ordering, acknowledgement (invariant 4), retries, dead letters, 410, replay and resync markers
 * (invariant 3), expiry, filters, batching, and resuming from storage after an eviction.
 */
import { describe, expect, it } from "vitest";
import { subscriptionSpecSchema } from "../../src/delivery/subscription-spec.ts";
import type { WebhookEvent } from "../../src/client/types.ts";
import { HELD_CHANGES_MAX, SEGMENT_KEYS } from "../../src/delivery/held-keys.ts";
import { BATCH_CHARS } from "../../src/delivery/fill.ts";
import { WINDOW_DELIVERIES, WINDOW_MS } from "../../src/delivery/outbox-window.ts";
import { Subscription } from "../../src/delivery/subscription.ts";
import { DEAD_LETTER_BYTES } from "../../src/delivery/dead-letters.ts";
import type { Db, Statement } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeFeed } from "../helpers/fake-feed.ts";
import { FakeClock, fixedRandom } from "../helpers/fakes.ts";
import { keysGoingBack, versionsByKey } from "../helpers/receiver-order.ts";
import { drain, SECRET, setup, storedOne, summary, withHistory } from "../helpers/subscription-harness.ts";
import { httpSender } from "../../src/delivery/sender.ts";
import { SubrequestLimitError } from "../../src/net/subrequest-budget.ts";
import { egressRule } from "../../src/net/egress.ts";

/** Statement names run against `db` while `fn` runs (`writes`: only those that are not a SELECT). */
async function statementsOf<T>(db: Db, fn: () => T | Promise<T>, which: "all" | "writes" = "all"): Promise<string[]> {
  const names: string[] = [];
  const note = (s: Statement) => {
    if (which === "all" || !/^\s*SELECT\b/i.test(s.text)) names.push(s.name);
  };
  type Call = (s: Statement, ...bindings: unknown[]) => unknown;
  const spied = db as unknown as { all: Call; run: Call };
  const { all, run } = spied;
  spied.all = function (this: Db, s, ...bindings) {
    note(s);
    return all.call(this, s, ...bindings);
  };
  spied.run = function (this: Db, s, ...bindings) {
    note(s);
    return run.call(this, s, ...bindings);
  };
  try {
    await fn();
  } finally {
    spied.all = all;
    spied.run = run;
  }
  return names;
}

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
      expect(subscription.deliveries(10).items.map((d) => [d.attempt, d.status])).toEqual([
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
      const [dead] = subscription.deadLetters(10).items;
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
      // Idle: the acknowledgements of a and b are stored WINDOW_MS after the window was, then it
      // sleeps until the resync.
      const start = clock.now();
      expect(await drain(subscription)).toEqual({ kind: "idle", until: start + WINDOW_MS });
      clock.advance(WINDOW_MS);
      expect(await drain(subscription)).toEqual({ kind: "idle", until: start + 60_000 });
      expect(subscription.store.get()!.position.cursor).toBe(2);
      feed.put("default/c");
      subscription.noteTail(feed.tail); // the nudge: marker at P = 3
      clock.advance(60_000 - WINDOW_MS);
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

  it("keeps the keys it sent with its position, writes them to held_keys in bulk, a segment a row, and retracts them after an expiry either way", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false });
      const key = (i: number) => `default/k${String(i).padStart(4, "0")}`;
      const keys = HELD_CHANGES_MAX + 100;
      for (let i = 0; i < keys; i++) feed.put(key(i));
      const statements = await statementsOf(
        db,
        async () => {
          await drain(subscription);
          clock.advance(WINDOW_MS); // the last acknowledgements are stored
          await drain(subscription);
        },
        "writes",
      );
      // One write of held_keys, when the changes held with the position passed HELD_CHANGES_MAX keys
      // (at the window that brought them there): a row per segment of at most SEGMENT_KEYS / 2 keys
      // after the split, not per key. The rest are held with the position.
      const count = (sql: string) => db.first<{ n: number }>({ name: "test.count", text: sql })!.n;
      const written = count("SELECT sum(json_array_length(keys)) AS n FROM held_keys");
      expect(written).toBeGreaterThan(HELD_CHANGES_MAX);
      expect(written).toBeLessThanOrEqual(HELD_CHANGES_MAX + WINDOW_DELIVERIES);
      expect(statements.filter((name) => name.startsWith("heldKeys."))).toEqual(Array(Math.ceil(written / (SEGMENT_KEYS / 2))).fill("heldKeys.put"));
      expect(count("SELECT count(*) AS n FROM subscription, json_each(held_changes)")).toBe(keys - written);

      // The receiver holds every key. One written to held_keys and one still among the held
      // changes go while the log that says so expires.
      feed.delete(key(0));
      feed.delete(key(keys - 1));
      feed.put(key(1));
      feed.compact(feed.tail);
      clock.advance(60_000);
      await drain(subscription);
      const retracted = endpoint.events.filter((e) => e.finalStateUnknown);
      expect(summary(retracted)).toEqual([`delete ${key(0)}@101`, `delete ${key(keys - 1)}@${100 + keys}`]);
      expect(endpoint.events.filter((e) => e.initialList)).toHaveLength(keys - 2);
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

  it("ends a batch at BATCH_CHARS whatever maxBatchSize allows, so large objects never make one huge body", async () => {
    await withDb(async (db) => {
      const { feed, endpoint, subscription } = setup(db, { replayExisting: false, maxBatchSize: 100 });
      const pad = "x".repeat(1_500_000);
      for (let i = 0; i < 6; i++) feed.put(`default/big${i}`, { pad });
      await drain(subscription);
      // 1.5 M characters an event: two fit within 4 Mi, a third would not.
      expect(endpoint.received.map((r) => r.events.length)).toEqual([2, 2, 2]);
      for (const { request } of endpoint.received) expect(request.body.length).toBeLessThanOrEqual(BATCH_CHARS);
      expect(endpoint.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
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
  it("survives a crash after every step: each batch is sent as written, sequences never skip or repeat", async () => {
    for (const maxBatchSize of [1, 3]) {
      const run = (crashing: boolean) =>
        withDb(async (db) => {
          const { feed, endpoint, subscription, make } = setup(db, { replayExisting: false, maxBatchSize });
          for (let i = 0; i < 7; i++) feed.put(`default/p${i % 3}`);
          feed.delete("default/p1");
          // Crashing: a new instance before every step, so nothing in memory (outbox, look-ahead, key) survives.
          if (crashing) for (let i = 0; i < 100 && (await make().step()).kind === "progress"; i++);
          else await drain(subscription);
          return endpoint;
        });
      const reference = await run(false);
      const crashed = await run(true);
      expect(crashed.received.map((r) => r.request.body)).toEqual(reference.received.map((r) => r.request.body));
      expect(crashed.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    }
  });

  it("resends the identical batch when the process dies during the POST, then numbers on", async () => {
    await withDb(async (db) => {
      const { feed, endpoint, subscription, make, dying, makeDying } = setup(db, { replayExisting: false });
      feed.put("default/a");
      feed.put("default/b");
      dying.now = true;
      await expect(drain(makeDying())).rejects.toThrow(/process died/);
      dying.now = false;
      await drain(make());
      const [first, resent] = endpoint.received;
      expect(resent!.request.body).toBe(first!.request.body);
      expect(endpoint.events.map((e) => [e.sequence, e.key])).toEqual([
        [1, "default/a"],
        [1, "default/a"],
        [2, "default/b"],
      ]);
      expect(subscription.status()).toMatchObject({ cursor: 2 });
    });
  });

  it("delivers an outbox written before sequences moved to acknowledgement (chunked texts, numbers taken)", async () => {
    await withDb(async (db) => {
      const { feed, endpoint, subscription, make } = setup(db, { replayExisting: false });
      feed.put("default/a");
      feed.put("default/b");
      await subscription.step(); // writes the outbox: a window of both events
      const body = subscription.store.storedOutbox()!.texts[0]!;
      // What the earlier layout stored: one event, its text in chunks, its sequence number taken at writing.
      for (const sql of [
        "INSERT INTO texts (name, part, chunk) SELECT 'out:0', 0, substr(inline_texts, 1, inline_lengths ->> '$[0]') FROM outbox",
        `UPDATE outbox SET events = '[' || (events -> '$[0]') || ']', advance = advances -> '$[0]', advances = NULL,
           inline_texts = NULL, inline_lengths = NULL`,
        "UPDATE subscription SET next_sequence = next_sequence + 1",
      ]) {
        db.run({ name: "test.legacy", text: sql });
      }
      await drain(make());
      expect(endpoint.received[0]!.request.body).toBe(body);
      expect(endpoint.events.map((e) => [e.sequence, e.key])).toEqual([
        [1, "default/a"],
        [2, "default/b"],
      ]);
      expect(db.all({ name: "test.texts", text: "SELECT name FROM texts" })).toEqual([]);
    });
  });

  it("stores an instance's first window, keeps later windows of log events in memory, and stores a window's acknowledgements in one transaction (maxBatchSize 1)", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false }, withHistory(300));
      const writes = (fn: () => unknown) => statementsOf(db, fn, "writes");
      feed.put("default/a");
      // Until this instance has stored an acknowledgement, its window is in the outbox: crashes
      // before every store still progress, from the stored window.
      expect(await writes(() => subscription.step())).toEqual(["outbox.put"]);
      expect(await writes(() => drain(subscription))).toEqual([]); // a is acknowledged, held; idle
      for (const name of ["b", "c", "d"]) feed.put(`default/${name}`);
      // The stored window goes with a's acknowledgement; the next one is built in memory.
      expect(await writes(() => subscription.step())).toEqual(["outbox.delete", "subscription.setDelivered"]);
      for (let i = 0; i < 3; i++) expect(await writes(() => subscription.step())).toEqual([]); // b, c, d: held
      expect(await writes(() => drain(subscription))).toEqual([]); // idle, within WINDOW_MS of the last store
      expect(subscription.status()).toMatchObject({ cursor: 304, lag: 0 }); // the status counts them
      expect(subscription.store.get()).toMatchObject({ position: { cursor: 301 }, nextSequence: 2 });
      expect(subscription.store.storedOutbox()).toBeUndefined();
      // WINDOW_MS after the last store, the idle step stores them: one UPDATE, of the position with
      // the sequence numbers, the keys and the attempts.
      clock.advance(WINDOW_MS);
      expect(await writes(() => drain(subscription))).toEqual(["subscription.setDelivered"]);
      expect(subscription.store.get()).toMatchObject({ position: { cursor: 304 }, nextSequence: 5 });
      expect(subscription.deliveries(10).items.map((d) => [d.sequence, d.status])).toEqual([
        [4, 204],
        [3, 204],
        [2, 204],
        [1, 204],
      ]);

      // A burst, then events one at a time: one transaction per WINDOW_DELIVERIES acknowledgements, and no outbox.
      const transaction = db.transaction.bind(db);
      let transactions = 0;
      db.transaction = (fn) => {
        transactions++;
        return transaction(fn);
      };
      const stored = await writes(async () => {
        for (let i = 0; i < 3 * WINDOW_DELIVERIES; i++) feed.put(`default/p${i}`);
        await drain(subscription);
        for (let i = 0; i < WINDOW_DELIVERIES; i++) {
          feed.put(`default/q${i}`);
          await drain(subscription);
        }
      });
      expect(endpoint.events.map((e) => e.sequence)).toEqual(Array.from({ length: 4 + 4 * WINDOW_DELIVERIES }, (_, i) => i + 1));
      expect(transactions).toBe(4);
      expect(stored.filter((name) => name.startsWith("outbox."))).toEqual([]);
      expect(subscription.store.get()).toMatchObject({ position: { cursor: feed.tail }, nextSequence: 5 + 4 * WINDOW_DELIVERIES });
    });
  });

  it("resends a window from its first unstored acknowledgement after a crash, as written, then numbers on", async () => {
    await withDb(async (db) => {
      const { feed, endpoint, subscription, make } = setup(db, { replayExisting: false });
      for (const name of ["a", "b", "c", "d", "e"]) feed.put(`default/${name}`);
      for (let i = 0; i < 4; i++) await subscription.step(); // the window, then a, b, c acknowledged in memory
      const revived = make(); // the crash: nothing in memory survives
      await drain(revived);
      const bodies = endpoint.received.map((r) => r.request.body);
      expect(bodies.slice(3, 6)).toEqual(bodies.slice(0, 3)); // a, b, c again, byte for byte
      expect(endpoint.events.map((e) => [e.sequence, e.key])).toEqual([
        [1, "default/a"],
        [2, "default/b"],
        [3, "default/c"],
        [1, "default/a"],
        [2, "default/b"],
        [3, "default/c"],
        [4, "default/d"],
        [5, "default/e"],
      ]);
      expect(revived.status()).toMatchObject({ cursor: 5, lag: 0 });
    });
  });

  it("resends a window kept in memory from the stored position after a crash at any step, byte for byte, then numbers on", async () => {
    const run = (crashAfter: number | null) =>
      withDb(async (db) => {
        const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false, labelSelector: "app=web" }, withHistory(20));
        feed.put("default/a", { app: "web" });
        await storedOne(subscription, feed, clock);
        for (let i = 0; i < 12; i++) feed.put(`default/p${i % 5}`, { app: i % 4 === 3 ? "db" : "web" }); // some filtered out
        let beforeCrash = 0;
        if (crashAfter === null) await drain(subscription);
        else {
          // Windows in memory, acknowledgements held: the crash loses them all.
          for (let i = 0; i < crashAfter; i++) await subscription.step();
          expect(subscription.store.storedOutbox()).toBeUndefined();
          beforeCrash = endpoint.received.length;
          const revived = make();
          await drain(revived);
          expect(revived.status()).toMatchObject({ cursor: feed.tail, lag: 0 });
        }
        return { bodies: endpoint.received.map((r) => r.request.body), beforeCrash, events: endpoint.events };
      });
    const { bodies: reference } = await run(null);
    for (let crashAfter = 1; crashAfter <= 14; crashAfter++) {
      const { bodies, beforeCrash, events } = await run(crashAfter);
      // Keys repeat within the window (p0..p4): what is resent never takes a key back (invariant 10).
      expect(keysGoingBack(events), `crash after ${crashAfter} steps: ${JSON.stringify(versionsByKey(events))}`).toEqual([]);
      // Before the crash, the reference's first requests; after it, the reference from the stored
      // position on: what was sent and not stored goes out again, as it was, and nothing is skipped.
      const after = bodies.slice(beforeCrash);
      const from = reference.length - after.length;
      expect(bodies.slice(0, beforeCrash), `crash after ${crashAfter} steps`).toEqual(reference.slice(0, beforeCrash));
      expect(after, `crash after ${crashAfter} steps`).toEqual(reference.slice(from));
      expect(from).toBeGreaterThanOrEqual(1); // a's acknowledgement was stored
      expect(from).toBeLessThanOrEqual(beforeCrash);
    }
  });

  describe("a key's older event is never resent after its newer one (invariant 10)", () => {
    /** Restarts (a new instance over the same storage) and delivers what follows, answered 204. */
    async function restartAndDrain(make: () => Subscription) {
      const revived = make();
      await drain(revived);
      return revived;
    }
    const expectKeysInOrder = (events: WebhookEvent[]) => expect(keysGoingBack(events), JSON.stringify(versionsByKey(events))).toEqual([]);

    it("after two acknowledged changes of a key held in memory, an idle step and a restart", async () => {
      await withDb(async (db) => {
        const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false }, withHistory(20));
        await storedOne(subscription, feed, clock);
        feed.put("default/x");
        feed.put("default/x");
        expect(await drain(subscription)).toMatchObject({ kind: "idle" }); // both answered 204
        const revived = await restartAndDrain(make);
        expectKeysInOrder(endpoint.events);
        expect(versionsByKey(endpoint.events)["default/x"]!.slice(0, 2)).toEqual(["add@102", "update@103"]);
        expect(revived.status()).toMatchObject({ cursor: feed.tail, lag: 0 });
      });
    });

    it("after a graceful delete (an update, then the delete) and a restart", async () => {
      await withDb(async (db) => {
        const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false }, withHistory(20));
        feed.put("default/x");
        await storedOne(subscription, feed, clock);
        feed.put("default/y");
        feed.put("default/x");
        feed.delete("default/x");
        await drain(subscription);
        await restartAndDrain(make);
        expectKeysInOrder(endpoint.events);
        expect(endpoint.events.at(-1)).toMatchObject({ type: "delete", key: "default/x" });
      });
    });

    it("when the process dies during the POST of a key's newer event", async () => {
      await withDb(async (db) => {
        const { feed, clock, endpoint, make, dying, makeDying } = setup(db, { replayExisting: false }, withHistory(20));
        const crashing = makeDying();
        await storedOne(crashing, feed, clock);
        feed.put("default/x");
        feed.put("default/x");
        await crashing.step(); // the window, in memory
        await crashing.step(); // x@102: held
        dying.now = true;
        await expect(crashing.step()).rejects.toThrow(/process died/); // x@103 was received
        await restartAndDrain(make);
        expectKeysInOrder(endpoint.events);
      });
    });

    it("with a labelSelector, as a key leaves the selection (a delete) and enters it again (an add)", async () => {
      await withDb(async (db) => {
        const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false, labelSelector: "app=web" }, withHistory(20));
        await storedOne(subscription, feed, clock, "default/a", { app: "web" });
        feed.put("default/x", { app: "web" }); // add
        feed.put("default/x", { app: "db" }); // leaves: a delete
        feed.put("default/x", { app: "db" }); // outside: nothing
        feed.put("default/x", { app: "web" }); // enters: an add
        feed.put("default/x", { app: "web" }); // update
        await drain(subscription);
        expect(summary(endpoint.events.slice(1))).toEqual(["add default/x@102", "delete default/x@103", "add default/x@105", "update default/x@106"]);
        await restartAndDrain(make);
        expectKeysInOrder(endpoint.events);
      });
    });

    it("when a resync is due as a restarted instance wakes: what the lost window sent goes again first, with its numbers", async () => {
      await withDb(async (db) => {
        const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false, resyncPeriodSeconds: 20 }, withHistory(20));
        await storedOne(subscription, feed, clock);
        feed.put("default/b");
        await drain(subscription); // b: acknowledged, held in memory
        clock.advance(20_000); // the resync is due
        await drain(make());
        // Anchored at the stored position, the resync took b's number 2 for a's sync, and b went again as 3.
        expect(endpoint.events.map((e) => `${e.sequence} ${e.type} ${e.key}`)).toEqual(["1 add default/a", "2 add default/b", "2 add default/b", "3 sync default/a", "4 sync default/b"]);
        expectKeysInOrder(endpoint.events);
      });
    });

    it("at maxBatchSize 3, when an acknowledged batch is resent after a restart", async () => {
      await withDb(async (db) => {
        const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false, maxBatchSize: 3 }, withHistory(20));
        await storedOne(subscription, feed, clock);
        feed.put("default/x");
        feed.put("default/y");
        feed.put("default/x");
        await drain(subscription);
        await restartAndDrain(make);
        expectKeysInOrder(endpoint.events);
      });
    });

    it("at maxBatchSize 3, when the process dies during a batch's POST", async () => {
      await withDb(async (db) => {
        const { feed, endpoint, make, dying, makeDying } = setup(db, { replayExisting: false, maxBatchSize: 3 });
        const crashing = makeDying();
        dying.now = true;
        feed.put("default/x");
        feed.put("default/x");
        await expect(drain(crashing)).rejects.toThrow(/process died/);
        dying.now = false;
        await restartAndDrain(make);
        expectKeysInOrder(endpoint.events);
        expect(endpoint.events.map((e) => e.sequence)).toEqual([1, 1, 2]); // the first batch again, then the key's next event
      });
    });
  });

  it("resends a window kept in memory when the process dies during a POST, as sent", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, make, dying, makeDying } = setup(db, { replayExisting: false }, withHistory(10));
      const crashing = makeDying();
      await storedOne(crashing, feed, clock);
      for (const name of ["b", "c", "d"]) feed.put(`default/${name}`);
      await crashing.step(); // the window, in memory
      await crashing.step(); // b: held
      expect(crashing.store.storedOutbox()).toBeUndefined();
      dying.now = true;
      await expect(crashing.step()).rejects.toThrow(/process died/); // c was received
      const revived = make();
      await drain(revived);
      const bodies = endpoint.received.map((r) => r.request.body);
      expect(bodies.slice(3, 5)).toEqual(bodies.slice(1, 3)); // b, c again, byte for byte, then d
      expect(endpoint.events.map((e) => [e.sequence, e.key])).toEqual([
        [1, "default/a"],
        [2, "default/b"],
        [3, "default/c"],
        [2, "default/b"],
        [3, "default/c"],
        [4, "default/d"],
      ]);
      expect(revived.status()).toMatchObject({ cursor: 14, lag: 0 });
    });
  });

  it("keeps windows in the outbox while its position is in the older half of the log, where retention could pass it during a crash", async () => {
    await withDb(async (db) => {
      const { feed, clock, subscription } = setup(db, { replayExisting: false });
      await storedOne(subscription, feed, clock);
      for (let i = 0; i < 10; i++) feed.put(`default/p${i}`);
      feed.compact(2); // head 2: the stored position (1) is behind the log's older half
      await subscription.step();
      expect(subscription.store.storedOutbox()).toMatchObject({ outbox: { events: expect.arrayContaining([expect.objectContaining({ key: "default/p0" })]) } });
      await drain(subscription);
      for (let i = 0; i < 4; i++) feed.put(`default/q${i}`);
      clock.advance(WINDOW_MS);
      await drain(subscription); // stored at cursor 11 of 1..15: in the newer half
      for (let i = 0; i < 4; i++) feed.put(`default/r${i}`);
      await subscription.step();
      expect(subscription.store.storedOutbox()).toBeUndefined();
    });
  });

  it("skips the numbers a lost window may have used when a restart finds its position gone from the log, so none is given to two events", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false }, withHistory(10));
      await storedOne(subscription, feed, clock);
      for (const name of ["b", "c", "d"]) feed.put(`default/${name}`);
      for (let i = 0; i < 3; i++) await subscription.step(); // the window in memory, b and c sent
      expect(subscription.store.storedOutbox()).toBeUndefined();
      // The crash, and the subscription stays down while retention passes its stored position.
      feed.put("default/e");
      feed.compact(feed.tail);
      await drain(make());
      const numbers = new Map<number, Set<string>>();
      for (const e of endpoint.events) numbers.set(e.sequence, (numbers.get(e.sequence) ?? new Set()).add(e.id));
      expect([...numbers.values()].filter((ids) => ids.size > 1)).toEqual([]);
      expect(endpoint.events.map((e) => e.sequence)).toEqual([1, 2, 3, ...endpoint.events.slice(3).map((_, i) => 2 + WINDOW_DELIVERIES + i)]);
      expect(summary(endpoint.events.slice(3)).every((s) => s.startsWith("add "))).toBe(true); // the replay
    });
  });

  it("stores a window kept in memory at its first failure: the retries, a restart and the dead letter send it as sent", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false, retryBudgetSeconds: 60 }, withHistory(10));
      await storedOne(subscription, feed, clock);
      for (const name of ["b", "c", "d"]) feed.put(`default/${name}`);
      const send = endpoint.send.bind(endpoint);
      endpoint.send = async (request) => {
        const result = await send(request);
        return request.body.includes('"key":"default/c"') ? { status: 500, durationMs: 1, error: "HTTP 500" } : result;
      };
      await subscription.step(); // the window, in memory
      expect(subscription.store.storedOutbox()).toBeUndefined();
      const waiting = await drain(subscription); // b held, c failed
      expect(waiting.kind).toBe("wait");
      // b's acknowledgement and the window, with b done, in the failure's transaction.
      expect(subscription.store.get()).toMatchObject({ position: { cursor: 12 }, nextSequence: 3, failures: 1 });
      expect(subscription.store.storedOutbox()).toMatchObject({ acked: 1, outbox: { events: [{ key: "default/b" }, { key: "default/c" }, { key: "default/d" }] } });
      let revived = make();
      for (let result = await drain(revived); result.kind === "wait"; result = await drain(revived)) {
        clock.advance(result.until - clock.now());
        revived = make();
      }
      const failed = endpoint.received.slice(2, -1).map((r) => r.request.body);
      expect(new Set(failed).size).toBe(1); // every attempt at c, byte for byte
      expect(revived.deadLetters(10).items.map((d) => [d.key, d.sequence, d.event])).toEqual([["default/c", 3, JSON.parse(failed[0]!)]]);
      expect(endpoint.events.map((e) => e.sequence)).toEqual([1, 2, ...failed.map(() => 3), 4]);
      expect(revived.status()).toMatchObject({ cursor: 14, deadLetters: 1, state: "active" });
    });
  });

  it("stores a window kept in memory when its spec changes: it goes out as begun, the next window under the new spec", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false }, withHistory(10));
      await storedOne(subscription, feed, clock);
      for (const name of ["b", "c", "d"]) feed.put(`default/${name}`, { app: "web" });
      feed.put("default/e", { app: "db" });
      await subscription.step(); // the window of b, c, d, e, in memory
      await subscription.step(); // b: held
      expect(subscription.store.storedOutbox()).toBeUndefined();
      const record = subscription.store.get()!;
      subscription.updateSpec({ ...record.spec, labelSelector: "app=db" }, record.secret);
      expect(subscription.store.storedOutbox()).toMatchObject({ acked: 1, outbox: { events: [{ key: "default/b" }, {}, {}, {}] } });
      feed.put("default/f", { app: "web" }); // not selected any more
      feed.put("default/g", { app: "db" });
      await drain(make()); // a restart: the stored window goes on from c, then the new selection
      expect(summary(endpoint.events)).toEqual([
        "add default/a@101",
        "add default/b@102",
        "add default/c@103",
        "add default/d@104",
        "add default/e@105",
        "add default/g@107",
      ]);
      expect(endpoint.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    });
  });

  it("holds events filtered out with the position, and stores them with the next acknowledgements or WINDOW_MS later", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false, namespace: "team-a" });
      feed.put("team-a/a");
      await storedOne(subscription, feed, clock, "team-a/a");
      for (let i = 0; i < 5; i++) feed.put(`team-b/x${i}`);
      expect(await statementsOf(db, () => drain(subscription), "writes")).toEqual([]);
      expect(subscription.status()).toMatchObject({ cursor: 6, lag: 0 });
      expect(subscription.store.get()!.position.cursor).toBe(1);
      await drain(make()); // a crash: read and filtered out again, nothing sent
      clock.advance(WINDOW_MS);
      expect(await statementsOf(db, () => drain(subscription), "writes")).toEqual(["subscription.setDelivered"]);
      expect(subscription.store.get()).toMatchObject({ position: { cursor: 6 }, nextSequence: 2 });
      expect(summary(endpoint.events)).toEqual(["add team-a/a@101"]);
    });
  });

  it("stores acknowledgements held longer than WINDOW_MS without waiting for the window's end", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false });
      for (const name of ["a", "b", "c", "d"]) feed.put(`default/${name}`);
      const send = endpoint.send.bind(endpoint);
      endpoint.send = async (request) => {
        clock.advance(WINDOW_MS / 2 + 1); // a slow receiver
        return send(request);
      };
      await subscription.step(); // the window
      await subscription.step(); // a: held
      expect(subscription.store.get()!.position.cursor).toBe(0);
      await subscription.step(); // b: a and b stored, a second after the window was
      expect(subscription.store.get()).toMatchObject({ position: { cursor: 2 }, nextSequence: 3 });
      expect(subscription.store.storedOutbox()!.acked).toBe(2);
      await drain(subscription);
      expect(endpoint.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    });
  });

  it("stores a window's acknowledgements before a failure, retries the failed delivery as written, and dead-letters only it", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false, retryBudgetSeconds: 60 });
      for (const name of ["a", "b", "c", "d"]) feed.put(`default/${name}`);
      const send = endpoint.send.bind(endpoint);
      endpoint.send = async (request) => {
        const result = await send(request);
        return request.body.includes('"key":"default/b"') ? { status: 500, durationMs: 1, error: "HTTP 500" } : result;
      };
      const waiting = await drain(subscription);
      expect(waiting.kind).toBe("wait");
      expect(subscription.store.get()).toMatchObject({ position: { cursor: 1 }, nextSequence: 2, failures: 1 });
      expect(subscription.store.storedOutbox()!.acked).toBe(1);
      let revived = make(); // a restart while failing: the window is read back from storage
      for (let result = await drain(revived); result.kind === "wait"; result = await drain(revived)) {
        clock.advance(result.until - clock.now());
        revived = make();
      }
      const failed = endpoint.received.slice(1, -2).map((r) => r.request.body);
      expect(new Set(failed).size).toBe(1); // every retry of b, byte for byte
      expect(summary(endpoint.events.slice(-2))).toEqual(["add default/c@103", "add default/d@104"]);
      expect(endpoint.events.map((e) => e.sequence)).toEqual([1, ...failed.map(() => 2), 3, 4]);
      expect(revived.deadLetters(10).items.map((d) => [d.key, d.sequence])).toEqual([["default/b", 2]]);
      expect(revived.status()).toMatchObject({ cursor: 4, deadLetters: 1, state: "active" });
    });
  });

  it("sends a pending batch exactly as it was written after maxBatchSize is lowered (#7.12)", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false, maxBatchSize: 3 });
      for (let i = 0; i < 4; i++) feed.put(`default/p${i}`);
      endpoint.script = [{ status: 503, durationMs: 1, error: "HTTP 503" }];
      const waiting = await drain(subscription); // a batch of 3 waits for its retry
      const record = subscription.store.get()!;
      subscription.store.updateSpec({ ...record.spec, maxBatchSize: 1 }, record.secret);
      clock.advance((waiting as { until: number }).until - clock.now());
      await drain(subscription);
      const [first, retry] = endpoint.received;
      expect(retry!.request.body).toBe(first!.request.body);
      expect(retry!.request.headers["webhook-id"]).toBe("msg_sub_0123456789_1");
      // After the batch, the new size applies; nothing was skipped.
      expect(endpoint.received.map((r) => r.events.length)).toEqual([3, 3, 1]);
      expect(summary(endpoint.events.slice(3))).toEqual(["add default/p0@101", "add default/p1@102", "add default/p2@103", "add default/p3@104"]);
    });
  });

  it("refuses to redeliver a dead letter while disabled, and a 410 answer to a redelivery disables (#7.14)", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false, retryBudgetSeconds: 60 });
      feed.put("default/a");
      endpoint.script = Array.from({ length: 8 }, () => ({ status: 500, durationMs: 1, error: "HTTP 500" }));
      for (let result = await drain(subscription); result.kind === "wait"; result = await drain(subscription)) {
        clock.advance(result.until - clock.now());
      }
      const [dead] = subscription.deadLetters(10).items;
      const sent = endpoint.received.length;

      endpoint.script = [{ status: 410, durationMs: 1, error: "HTTP 410" }];
      expect(await subscription.redeliver(dead!.eventId)).toMatchObject({ delivered: false, attempt: { status: 410 } });
      expect(subscription.status()).toMatchObject({ state: "disabled", disabledReason: expect.stringMatching(/410 Gone/), deadLetters: 1 });
      await expect(subscription.redeliver(dead!.eventId)).rejects.toMatchObject({ code: "Conflict", message: expect.stringMatching(/disabled/) });
      expect(endpoint.received).toHaveLength(sent + 1);
      subscription.enable();
      expect(await subscription.redeliver(dead!.eventId)).toMatchObject({ delivered: true });
    });
  });

  it("makes progress when a replay cannot finish within the log's retention, sending only what changed (#7.15)", async () => {
    await withDb(async (db) => {
      const feed = new FakeFeed();
      for (let i = 0; i < 20; i++) feed.put(`default/p${String(i).padStart(2, "0")}`, {}, true);
      const { endpoint, subscription } = setup(db, {}, feed); // replay anchored at P = 20
      // Each replayed object the receiver takes changes one of three hot objects, and the log keeps
      // only its last 10 events: the 20-object replay always outlives its anchor.
      let hot = 0;
      let passes = 1;
      const send = endpoint.send.bind(endpoint);
      endpoint.send = async (request) => {
        passes = Math.max(passes, subscription.status()!.marker?.pass ?? 1);
        const result = await send(request);
        if (JSON.parse(request.body).initialList) {
          feed.put(`default/p0${hot++ % 3}`);
          feed.compact(Math.max(feed.head, feed.tail - 9));
        }
        return result;
      };
      expect(await drain(subscription, 2_000)).toMatchObject({ kind: "idle" });
      const replayed = endpoint.events.filter((e) => e.initialList);
      // One full pass, then only the hot objects that changed after they were sent.
      expect(replayed.length).toBeGreaterThanOrEqual(20);
      expect(replayed.length).toBeLessThanOrEqual(26);
      const held = new Map<string, string>();
      for (const event of endpoint.events) {
        const seen = held.get(event.key);
        if (seen !== undefined) expect(Number(event.resourceVersion), event.key).toBeGreaterThanOrEqual(Number(seen));
        held.set(event.key, event.resourceVersion);
      }
      expect(Object.fromEntries(held)).toEqual(Object.fromEntries([...feed.objects].map(([key, o]) => [key, o.rv])));
      expect(passes).toBeGreaterThan(1); // the status said so while it lasted
      expect(subscription.status()).toMatchObject({ expired: false, marker: null, lag: 0 });
    });
  });

  it("says when a replay outlives the log's retention, in its status (#7.15)", async () => {
    await withDb(async (db) => {
      const feed = new FakeFeed();
      for (let i = 0; i < 3; i++) feed.put(`default/p${i}`, {}, true);
      const { subscription } = setup(db, {}, feed);
      while (subscription.status()!.marker !== null) await subscription.step(); // the replay went out
      feed.put("default/p0");
      feed.put("default/p1");
      feed.compact(feed.tail); // the event after the anchor is gone
      await subscription.step();
      expect(subscription.status()).toMatchObject({ expired: true, marker: { kind: "replay", at: 5, pass: 2 } });
      expect(subscription.status()!.lastError).toMatch(/replay took longer than the event log's retention/);
    });
  });

  it("gives up on a feed read that does not answer, and tries again later (#7.16)", async () => {
    await withDb(async (db) => {
      const feed = new FakeFeed();
      const { clock, subscription } = setup(db, { replayExisting: false }, feed, { feedTimeoutMs: 50 });
      feed.read = () => new Promise(() => {}); // an informer RPC that never answers
      const step = await Promise.race([subscription.step(), new Promise((resolve) => setTimeout(() => resolve("hung"), 2_000))]);
      expect(step).toEqual({ kind: "wait", until: clock.now() + 60_000 });
      expect(subscription.status()!.lastError).toMatch(/reading the informer 'pods' failed: no answer within 0.05 s/);
    });
  });

  it("answers its status without counting rows, with the dead-letter count kept as it changes (#7.21)", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false, retryBudgetSeconds: 1 });
      for (const name of ["a", "b", "c"]) feed.put(`default/${name}`);
      endpoint.script = Array.from({ length: 6 }, () => ({ status: 500, durationMs: 1, error: "HTTP 500" }));
      for (let result = await drain(subscription); result.kind === "wait"; result = await drain(subscription)) {
        clock.advance(result.until - clock.now());
      }
      expect(subscription.status()!.deadLetters).toBe(3);
      const [dead] = subscription.deadLetters(1).items;
      await subscription.redeliver(dead!.eventId);
      const statements = await statementsOf(db, () => expect(subscription.status()!.deadLetters).toBe(2));
      expect(statements).toEqual(["subscription.get"]);
    });
  });

  it("pages dead letters and deliveries by count and by bytes, with a continue token (#7.18)", async () => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false, retryBudgetSeconds: 1 });
      const big = "x".repeat(1024 * 1024);
      for (let i = 0; i < 6; i++) feed.put(`default/p${i}`, { big });
      endpoint.script = Array.from({ length: 30 }, () => ({ status: 500, durationMs: 1, error: "HTTP 500" }));
      for (let result = await drain(subscription); result.kind === "wait"; result = await drain(subscription)) {
        clock.advance(result.until - clock.now());
      }
      const first = subscription.deadLetters(100);
      expect(first.items.length).toBeLessThan(6); // about 4 MB of events per answer
      expect(first.continue).toEqual(expect.any(String));
      const rest = subscription.deadLetters(100, first.continue);
      expect([...first.items, ...rest.items].map((d) => d.key)).toEqual(["p0", "p1", "p2", "p3", "p4", "p5"].map((n) => `default/${n}`));
      expect(rest.continue).toBeUndefined();
      const two = subscription.deadLetters(2);
      expect(two.items).toHaveLength(2);
      expect(subscription.deadLetters(100, two.continue).items[0]!.key).toBe("default/p2");

      const newest = subscription.deliveries(3);
      expect(newest.items).toHaveLength(3);
      const older = subscription.deliveries(200, newest.continue);
      expect(older.items[0]!.at <= newest.items[2]!.at).toBe(true);
      expect(newest.items.length + older.items.length).toBe(endpoint.received.length);
      expect(older.continue).toBeUndefined();
      expect(() => subscription.deadLetters(10, "not-a-token")).toThrow(/continue/);
    });
  });
});

describe("dead letters bounded by bytes (review B10b, N5; issue 29 item 2)", () => {
  it("keeps at most DEAD_LETTER_BYTES of dead letters, dropping the oldest, counting the drops in the status and the metrics, and delivers on", async () => {
    expect(DEAD_LETTER_BYTES).toBe(64 * 1024 * 1024);
    await withDb(async (db) => {
      // A bound of 3.5 MiB in this test (the option exists for tests only), 1 MiB events.
      const { feed, clock, endpoint, subscription } = setup(db, { replayExisting: false, retryBudgetSeconds: 1 }, undefined, { deadLetterBytes: 3.5 * 1024 * 1024 });
      const big = "x".repeat(1024 * 1024);
      for (let i = 0; i < 6; i++) feed.put(`default/p${i}`, { big });
      endpoint.script = Array.from({ length: 30 }, () => ({ status: 500, durationMs: 1, error: "HTTP 500" }));
      for (let result = await drain(subscription); result.kind === "wait"; result = await drain(subscription)) {
        clock.advance(result.until - clock.now());
      }
      // Every event was dead-lettered; the newest three fit the bound, the oldest three were dropped.
      const kept = subscription.deadLetters(100).items.map((d) => d.key);
      expect(kept).toEqual(["default/p3", "default/p4", "default/p5"]);
      expect(subscription.status()).toMatchObject({ cursor: 6, state: "active", deadLetters: 3, deadLettersDropped: 3 });
      expect(subscription.metrics()).toMatchObject({ deadLetters: 3, deadLettersDropped: 3 });
      // The subscription goes on delivering.
      endpoint.script = [];
      feed.put("default/after");
      expect(await drain(subscription)).toMatchObject({ kind: "idle" });
      expect(summary(endpoint.events).at(-1)).toBe("add default/after@107");
      // A redelivered dead letter frees its bytes: the count of drops stays.
      await subscription.redeliver(subscription.deadLetters(1).items[0]!.eventId);
      expect(subscription.status()).toMatchObject({ deadLetters: 2, deadLettersDropped: 3 });
    });
  });
});

describe("Subscription at the platform's subrequest limit (review B1)", () => {
  // The runtime's own words when an invocation spent its subrequests (both wordings are in use).
  const LIMIT_ERRORS = ["Too many subrequests.", "Too many subrequests by single Worker invocation."];

  it.each(LIMIT_ERRORS)("never counts the runtime's %j on a delivery against the receiver", async (message) => {
    await withDb(async (db) => {
      const clock = new FakeClock(Date.now());
      const feed = new FakeFeed();
      let calls = 0;
      // The second POST is the one the runtime refuses; the receiver itself answers 204.
      const fetchImpl = (async () => {
        calls++;
        if (calls === 2) throw new Error(message);
        return new Response(null, { status: 204 });
      }) as typeof fetch;
      const subscription = new Subscription(db, clock, fixedRandom(0.5), feed, httpSender(clock, fetchImpl, egressRule({ ALLOW_ANY_EGRESS: "true" }, "WEBHOOK_ALLOWED_HOSTS")));
      const parsed = subscriptionSpecSchema.parse({ url: "https://hooks.example/a", replayExisting: false, maxBatchSize: 2 });
      subscription.create({ id: "sub_limit", cluster: "default", informer: "pods", secret: SECRET, tail: 0, spec: { ...parsed, resyncPeriodSeconds: 0 } });
      feed.put("default/a");
      feed.put("default/b");
      feed.put("default/c");
      await expect(drain(subscription)).rejects.toBeInstanceOf(SubrequestLimitError);
      expect(subscription.status()).toMatchObject({ cursor: 2, state: "active", consecutiveFailures: 0, nextAttemptAt: null, lastError: null });
      expect(subscription.deliveries(10).items.map((d) => d.status)).toEqual([204]); // no failed attempt logged
      // The next invocation (a fresh budget) sends the same batch and goes on.
      expect(await drain(subscription)).toMatchObject({ kind: "idle" });
      expect(subscription.status()).toMatchObject({ cursor: 3, state: "active", consecutiveFailures: 0 });
      expect(calls).toBe(3);
    });
  });

  it("never reports the runtime's limit on a feed read as the informer failing", async () => {
    await withDb(async (db) => {
      const feed = new FakeFeed();
      const { subscription } = setup(db, { replayExisting: false }, feed);
      feed.put("default/a");
      const read = feed.read.bind(feed);
      feed.read = async () => {
        throw new Error("Too many subrequests.");
      };
      await expect(subscription.step()).rejects.toBeInstanceOf(SubrequestLimitError);
      expect(subscription.status()).toMatchObject({ lastError: null, state: "active" });
      feed.read = read;
      expect(await drain(subscription)).toMatchObject({ kind: "idle" });
      expect(subscription.status()).toMatchObject({ cursor: 1 });
    });
  });
});

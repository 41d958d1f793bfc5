/**
 * An informer's storage as the release before segments left it (a row per event, bodies only in the
 * log, objects pointing at their event) is moved on its next start: every readable event with the
 * state it replaced, the objects with their bodies, sequence numbers and counts continuing.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EVENT_LOG_MIGRATIONS, EventLog } from "../../src/cache/event-log.ts";
import { Indexer, INDEXER_MIGRATIONS } from "../../src/cache/indexer.ts";
import { Informer, migrateInformer } from "../../src/cache/informer.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { LOG_COUNTER_MIGRATIONS } from "../../src/cache/log-counters.ts";
import { Db, migrate, stmt } from "../../src/sql.ts";
import { FakeClock } from "../helpers/fakes.ts";

const state = (name: string, rv: string, extra: Record<string, unknown> = {}) => JSON.stringify({ metadata: { name, namespace: "ns", uid: `u-${name}`, resourceVersion: rv }, ...extra });

/** [seq, type, key, rv, body, prev_seq]: what the release before wrote. */
const OLD_EVENTS: [number, string, string, string, string | null, number | null][] = [
  [1, "add", "ns/a", "1", state("a", "1"), null],
  [2, "add", "ns/b", "2", state("b", "2"), null],
  [3, "update", "ns/a", "3", state("a", "3"), 1],
  [4, "sync", "ns/b", "2", null, 2],
  [5, "delete", "ns/a", "5", state("a", "5", { final: true }), 3],
  [6, "add", "ns/c", "6", state("c", "6", { big: "é😀".repeat(10) }), null],
];

describe("event log migration to segments", () => {
  it("moves a per-event log, the objects' bodies and the counts over, and goes on from where it was", async () => {
    const stub = env.INFORMER.getByName(`unit-${crypto.randomUUID()}`);
    await runInDurableObject(stub, (_instance, storage) => {
      const db = new Db(storage.storage);
      // The tables as the release before made them (its migrations are the first ones of each list).
      migrate(db, "event_log", EVENT_LOG_MIGRATIONS.slice(0, 3));
      migrate(db, "indexer", INDEXER_MIGRATIONS.slice(0, 2));
      migrate(db, "informer_metrics", [LOG_COUNTER_MIGRATIONS[0], "ALTER TABLE informer_metrics ADD COLUMN log_bytes INTEGER NOT NULL DEFAULT 0"]);
      const insert = stmt("test.old", "INSERT INTO event_log (seq, type, key, uid, rv, body, prev_seq, flags, at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)");
      // 2–6 one transaction (one time): one segment, which the count up to 3 below ends inside.
      for (const [seq, type, key, rv, body, prev] of OLD_EVENTS) db.run(insert, seq, type, key, `u-${key.slice(3)}`, rv, body, prev, seq === 1 ? 1_000 : 2_000);
      // Event 1 is before the head, kept as the state update 3 replaced; b's state is event 2, c's event 6.
      db.run(stmt("test.head", "UPDATE event_log_state SET head = 2, next_seq = 1"));
      const object = stmt("test.object", "INSERT INTO objects (key, namespace, name, uid, rv, seq) VALUES (?, 'ns', ?, ?, ?, ?)");
      db.run(object, "ns/b", "b", "u-b", "2", 2);
      db.run(object, "ns/c", "c", "u-c", "6", 6);
      // Counted up to 3 by the release before.
      db.run(stmt("test.counted", `UPDATE informer_metrics SET counted_seq = 3, events = '{"add":2,"update":1,"delete":0,"sync":0}'`));

      migrateInformer(db);

      const log = new EventLog(db);
      expect(log.bounds()).toEqual({ head: 2, tail: 6 });
      expect(log.nextSeq()).toBe(7);
      const events = log.read(1, 10).events;
      expect(events.map((e) => [e.seq, e.type, e.key, e.resourceVersion])).toEqual([
        [2, "add", "ns/b", "2"],
        [3, "update", "ns/a", "3"],
        [4, "sync", "ns/b", "2"],
        [5, "delete", "ns/a", "5"],
        [6, "add", "ns/c", "6"],
      ]);
      expect(events.map((e) => [e.object, e.oldObject])).toEqual([
        [state("b", "2"), null],
        [state("a", "3"), state("a", "1")],
        [state("b", "2"), state("b", "2")],
        [state("a", "5", { final: true }), null],
        [state("c", "6", { big: "é😀".repeat(10) }), null],
      ]);
      // A list at position 4 sees a as it was before its delete.
      expect(log.replacedStates([5]).get(5)).toBe(state("a", "3"));
      expect(db.all(stmt("test.segments", "SELECT first_seq, last_seq FROM event_segments"))).toEqual([{ first_seq: 2, last_seq: 6 }]);
      expect(db.all(stmt("test.tables", "SELECT name FROM sqlite_master WHERE name = 'event_log'"))).toEqual([]);

      const indexer = new Indexer(db);
      expect(indexer.list({ limit: 10 }).map((o) => [o.key, o.body, o.seq])).toEqual([
        ["ns/b", state("b", "2"), 2],
        ["ns/c", state("c", "6", { big: "é😀".repeat(10) }), 6],
      ]);

      // The informer goes on: counts continue from 3, the bytes are the segments' once all is counted.
      const informer = new Informer(db, informerSettings(parseInformerSpec({ resource: "pods" }, "moved")), new FakeClock(), () => 0.5);
      const metrics = informer.metrics();
      expect(metrics.events).toEqual({ add: 3, update: 1, delete: 1, sync: 1 });
      const stored = db.first<{ bytes: number }>(stmt("test.bytes", "SELECT sum(octet_length(bodies)) AS bytes FROM event_segments"))!.bytes;
      expect(metrics.logBytes).toBe(stored);
      informer.applyWatch([{ type: "ADDED", object: JSON.parse(state("d", "7")) }], "7");
      expect(log.read(6, 10).events.map((e) => [e.seq, e.key])).toEqual([[7, "ns/d"]]);
    });
  });
});

/**
 * The delivery log (delivery-log.ts) on a subscription's SQLite: attempts stored a row per call,
 * listed one by one, newest first, exactly the newest DELIVERY_LOG_SIZE; trimmed in bulk after the
 * delivery counters counted them; rows of the log's first layout (one attempt a row) kept with
 * their numbers.
 */
import { describe, expect, it } from "vitest";
import { DELIVERY_LOG_SIZE, type DeliveryRecord } from "../../src/delivery/delivery-log.ts";
import { SubscriptionStore } from "../../src/delivery/subscription-store.ts";
import { countDeliveriesInTx } from "../../src/metrics/delivery-counters.ts";
import { type Db, stmt } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";

const ROWS = stmt("test.logRows", "SELECT n, last FROM delivery_log ORDER BY n");

/** Attempt `i`: its sequence is `i`, so a listing shows which attempts it holds. */
const attempt = (i: number): DeliveryRecord => ({ eventIds: [`evt_${i}`], sequence: i, attempt: 1, status: 204, durationMs: 3, at: 1_000 + i, error: null });

function created(db: Db): SubscriptionStore {
  const store = new SubscriptionStore(db);
  store.create({
    id: "sub_log",
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

/** Stores attempts 1..count in calls of `sizes` attempts each (cycling), as windows would. */
function store(db: Db, log: SubscriptionStore, count: number, sizes: number[]): void {
  for (let i = 1, call = 0; i <= count; call++) {
    const size = Math.min(sizes[call % sizes.length]!, count - i + 1);
    db.transaction(() => log.recordAttempts(Array.from({ length: size }, (_, j) => attempt(i + j))));
    i += size;
  }
}

const sequences = (records: DeliveryRecord[]) => records.map((r) => r.sequence);
const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i); // descending

describe("DeliveryLog", () => {
  it("stores the attempts of one call as one row and lists them one by one, newest first", async () => {
    await withDb((db) => {
      const log = created(db);
      store(db, log, 40, [32, 1, 7]);
      expect(db.all(ROWS)).toEqual([
        { n: 1, last: 32 },
        { n: 33, last: 33 },
        { n: 34, last: 40 },
      ]);
      expect(log.deliveries(50).items).toEqual(range(40, 1).map(attempt));
    });
  });

  it("pages by attempt number, inside a row too, with a token that stays valid while the log grows", async () => {
    await withDb((db) => {
      const log = created(db);
      store(db, log, 64, [32]);
      const first = log.deliveries(10);
      expect(sequences(first.items)).toEqual(range(64, 55));
      db.transaction(() => log.recordAttempts([attempt(65), attempt(66)])); // newer attempts meanwhile
      const second = log.deliveries(30, first.after);
      expect(sequences(second.items)).toEqual(range(54, 25));
      const rest = log.deliveries(100, second.after);
      expect(sequences(rest.items)).toEqual(range(24, 1));
      expect(rest.after).toBeUndefined();
    });
  });

  it("lists exactly the newest DELIVERY_LOG_SIZE attempts, and trims whole rows in bulk once they were counted", async () => {
    await withDb((db) => {
      const log = created(db);
      const total = 3 * DELIVERY_LOG_SIZE + 17;
      store(db, log, total, [32, 5, 1]);
      const listed = log.deliveries(DELIVERY_LOG_SIZE);
      expect(sequences(listed.items)).toEqual(range(total, total - DELIVERY_LOG_SIZE + 1));
      expect(listed.after).toBeUndefined();
      // Bounded: no row wholly older than the newest DELIVERY_LOG_SIZE attempts outlives a trim step.
      const rows = db.all<{ n: number; last: number }>(ROWS);
      expect(rows[0]!.n).toBeGreaterThan(total - DELIVERY_LOG_SIZE - 100 - 32);
      // Every attempt trimmed was counted before it went, and none twice.
      const counts = db.transaction(() => countDeliveriesInTx(db));
      expect(counts.attempts["2xx"]).toBe(total);
      expect(counts.eventsDelivered).toBe(total);
    });
  });

  it("keeps the attempts of the log's first layout, one a row, with their numbers", async () => {
    await withDb((db) => {
      // A subscription stored before the log's layout changed: its attempts in `deliveries`, one a
      // row, the newest numbered 9, and the log's migration not run yet.
      created(db);
      for (const sql of [
        "DROP TABLE delivery_log",
        "DELETE FROM schema_migrations WHERE module = 'delivery_log'",
        `CREATE TABLE deliveries (
           n INTEGER PRIMARY KEY AUTOINCREMENT, event_ids TEXT NOT NULL, sequence INTEGER NOT NULL, attempt INTEGER NOT NULL,
           status INTEGER, duration_ms INTEGER NOT NULL, at INTEGER NOT NULL, error TEXT)`,
      ]) {
        db.run(stmt("test.legacy", sql));
      }
      for (const [n, status, error] of [[7, 204, null], [8, 503, "HTTP 503"], [9, 204, null]] as const) {
        db.run(stmt("test.legacy", "INSERT INTO deliveries VALUES (?, ?, ?, ?, ?, ?, ?, ?)"), n, JSON.stringify([`evt_${n}`]), n, 1, status, 3, 1_000 + n, error);
      }
      const log = new SubscriptionStore(db); // as the object wakes: runs the log's migration
      db.transaction(() => log.recordAttempts([attempt(10)]));
      expect(log.deliveries(10).items).toEqual([attempt(10), attempt(9), { ...attempt(8), status: 503, error: "HTTP 503" }, attempt(7)]);
      expect(db.all(ROWS)).toEqual([
        { n: 7, last: 7 },
        { n: 8, last: 8 },
        { n: 9, last: 9 },
        { n: 10, last: 10 },
      ]);
      const counts = db.transaction(() => countDeliveriesInTx(db));
      expect(counts.attempts).toMatchObject({ "2xx": 3, "5xx": 1 });
    });
  });
});

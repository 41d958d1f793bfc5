/**
 * The delivery log (delivery-log.ts) on a subscription's SQLite: the newest attempts in the
 * subscription row, ROW_ATTEMPTS or more moved to a row together; listed one by one, newest first,
 * exactly the newest DELIVERY_LOG_SIZE; trimmed in bulk after the delivery counters counted them;
 * rows of the log's first layout (one attempt a row) kept with their numbers.
 */
import { describe, expect, it } from "vitest";
import { DELIVERY_LOG_SIZE, type DeliveryRecord, ROW_ATTEMPTS } from "../../src/delivery/delivery-log.ts";
import { SubscriptionStore } from "../../src/delivery/subscription-store.ts";
import { type Db, stmt } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { storedSubscription } from "../helpers/stored-subscription.ts";

const ROWS = stmt("test.logRows", "SELECT n, last FROM delivery_log ORDER BY n");
const PENDING = stmt("test.logPending", "SELECT json_array_length(log_pending) AS n FROM subscription");

/** Attempt `i`: its sequence is `i`, so a listing shows which attempts it holds. */
const attempt = (i: number): DeliveryRecord => ({ eventIds: [`evt_${i}`], sequence: i, attempt: 1, status: 204, durationMs: 3, at: 1_000 + i, error: null });

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
  it("keeps the newest attempts in the subscription row, moves them to a row ROW_ATTEMPTS or more at a time, and lists them one by one, newest first", async () => {
    await withDb((db) => {
      const log = storedSubscription(db);
      const total = ROW_ATTEMPTS + 8;
      store(db, log, total, [ROW_ATTEMPTS - 2, 1, 7, 1, 1]);
      expect(db.all(ROWS)).toEqual([{ n: 1, last: ROW_ATTEMPTS + 6 }]); // pending, then 1 more, then 7: one row
      expect(db.first(PENDING)).toEqual({ n: 2 });
      expect(log.deliveries(100).items).toEqual(range(total, 1).map(attempt));
      expect(new SubscriptionStore(db).deliveries(100).items).toEqual(range(total, 1).map(attempt)); // as stored, not as in memory
    });
  });

  it("moves pending attempts to a row sooner when their text is long (a batch's attempt names up to 100 events)", async () => {
    await withDb((db) => {
      const log = storedSubscription(db);
      const batch = (i: number): DeliveryRecord => ({ ...attempt(i), eventIds: Array.from({ length: 100 }, (_, j) => `evt_${String(i * 100 + j).padStart(22, "0")}`) });
      const pendingChars = stmt("test.pendingChars", "SELECT length(log_pending) AS chars FROM subscription");
      for (let i = 1; i <= 40; i++) {
        db.transaction(() => log.recordAttempts([batch(i)]));
        expect(db.first<{ chars: number }>(pendingChars)!.chars).toBeLessThan(64 * 1024);
      }
      expect(db.all(ROWS).length).toBeGreaterThan(0);
      expect(log.deliveries(50).items).toEqual(range(40, 1).map(batch));
    });
  });

  it("pages by attempt number, inside a row too, with a token that stays valid while the log grows", async () => {
    await withDb((db) => {
      const log = storedSubscription(db);
      store(db, log, 70, [32, 5]);
      expect(db.all(ROWS)).toEqual([{ n: 1, last: 69 }]); // and 70 pending: pages cross both
      const first = log.deliveries(10);
      expect(sequences(first.items)).toEqual(range(70, 61));
      db.transaction(() => log.recordAttempts([attempt(71), attempt(72)])); // newer attempts meanwhile
      const second = log.deliveries(30, first.after);
      expect(sequences(second.items)).toEqual(range(60, 31));
      const rest = log.deliveries(100, second.after);
      expect(sequences(rest.items)).toEqual(range(30, 1));
      expect(rest.after).toBeUndefined();
    });
  });

  it("lists exactly the newest DELIVERY_LOG_SIZE attempts, and trims whole rows in bulk once they were counted", async () => {
    await withDb((db) => {
      const log = storedSubscription(db);
      const total = 3 * DELIVERY_LOG_SIZE + 17;
      store(db, log, total, [32, 5, 1]);
      const listed = log.deliveries(DELIVERY_LOG_SIZE);
      expect(sequences(listed.items)).toEqual(range(total, total - DELIVERY_LOG_SIZE + 1));
      expect(listed.after).toBeUndefined();
      // Bounded: no row wholly older than the newest DELIVERY_LOG_SIZE attempts outlives a trim step.
      const rows = db.all<{ n: number; last: number }>(ROWS);
      expect(rows[0]!.n).toBeGreaterThan(total - DELIVERY_LOG_SIZE - 100 - 2 * ROW_ATTEMPTS);
      // Every attempt trimmed was counted before it went, and none twice.
      const counts = log.countDeliveries();
      expect(counts.attempts["2xx"]).toBe(total);
      expect(counts.eventsDelivered).toBe(total);
    });
  });

  it("keeps the attempts of the log's first layout, one a row, with their numbers", async () => {
    await withDb((db) => {
      // A subscription stored before the log's layout changed: its attempts in `deliveries`, one a
      // row, the newest numbered 9, and the log's migration not run yet.
      storedSubscription(db);
      for (const sql of [
        "DROP TABLE delivery_log",
        "ALTER TABLE subscription DROP COLUMN log_pending",
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
      expect(log.countDeliveries().attempts).toMatchObject({ "2xx": 2, "5xx": 1 });
      db.transaction(() => log.recordAttempts([attempt(10)]));
      expect(log.deliveries(10).items).toEqual([attempt(10), attempt(9), { ...attempt(8), status: 503, error: "HTTP 503" }, attempt(7)]);
      expect(db.all(ROWS)).toEqual([
        { n: 7, last: 7 },
        { n: 8, last: 8 },
        { n: 9, last: 9 },
      ]);
      // Counted once each: the pending attempt now, then again after it moved to a row.
      expect(log.countDeliveries().attempts).toMatchObject({ "2xx": 3, "5xx": 1 });
      db.transaction(() => log.recordAttempts(Array.from({ length: ROW_ATTEMPTS }, (_, i) => attempt(11 + i))));
      expect(db.all(ROWS).at(-1)).toEqual({ n: 10, last: 10 + ROW_ATTEMPTS });
      expect(log.countDeliveries().attempts).toMatchObject({ "2xx": 3 + ROW_ATTEMPTS, "5xx": 1 });
    });
  });
});

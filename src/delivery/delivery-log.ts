/**
 * A subscription's delivery log: the attempts `GET /subscriptions/{id}/deliveries` lists, newest
 * first. Attempts are numbered 1, 2, … in the order they are stored, and the attempts stored
 * together (a window's acknowledgements, subscription.ts) are one row: a delivery at
 * `maxBatchSize` 1 pays a share of a row, not a row and its trim (issue 19).
 *
 * Guarantees:
 * - Lists exactly the newest DELIVERY_LOG_SIZE attempts, paged by attempt number, so a `continue`
 *   token stays valid while the log grows (a page may only end sooner when older attempts go).
 * - Bounded in bulk: each time the newest attempt number passes a multiple of TRIM_STEP, the rows
 *   wholly older than the newest DELIVERY_LOG_SIZE attempts are deleted in one statement, after
 *   `beforeTrim` ran (the delivery counters count them, metrics/delivery-counters.ts). The table
 *   holds at most about DELIVERY_LOG_SIZE + TRIM_STEP attempts plus a row, each row deleted once.
 * - Numbers are never reused: the newest row is never trimmed, and numbering goes on from it.
 * - Written inside the caller's transaction, with what the attempts changed.
 */
import { type Db, stmt } from "../sql.ts";
import type { Page } from "./subscription-store.ts";

/** Attempts the log lists. */
export const DELIVERY_LOG_SIZE = 200;
/** The log is trimmed each time this many more attempts were stored. */
const TRIM_STEP = 100;

export interface DeliveryRecord {
  eventIds: string[];
  sequence: number;
  attempt: number;
  status: number | null;
  durationMs: number;
  at: number;
  error: string | null;
}

/** A row's attempts, as stored: `[eventIds, sequence, attempt, status, durationMs, at, error]` each. */
type StoredAttempt = [string[], number, number, number | null, number, number, string | null];

export const DELIVERY_LOG_MIGRATIONS = [
  // `n` is the row's first attempt number, `last` its last. The rows of the log's first layout
  // (subscription-store.ts, one attempt a row with an AUTOINCREMENT number) keep their numbers.
  `CREATE TABLE delivery_log (n INTEGER PRIMARY KEY, last INTEGER NOT NULL, attempts TEXT NOT NULL);
   INSERT INTO delivery_log (n, last, attempts)
     SELECT n, n, json_array(json_array(json(event_ids), sequence, attempt, status, duration_ms, at, error)) FROM deliveries;
   DROP TABLE deliveries`,
] as const;

const NEWEST = stmt("deliveryLog.newest", "SELECT last FROM delivery_log ORDER BY n DESC LIMIT 1");
const INSERT = stmt("deliveryLog.insert", "INSERT INTO delivery_log (n, last, attempts) VALUES (?, ?, ?)");
const TRIM = stmt("deliveryLog.trim", "DELETE FROM delivery_log WHERE last <= ?");
const RECENT = stmt("deliveryLog.recent", "SELECT n, attempts FROM delivery_log WHERE n < ? ORDER BY n DESC LIMIT ?");
const AFTER = stmt("deliveryLog.after", "SELECT n, attempts FROM delivery_log WHERE n > ? ORDER BY n");

/** An attempt with its number. */
export interface NumberedAttempt {
  n: number;
  record: DeliveryRecord;
}

export class DeliveryLog {
  readonly #db: Db;
  readonly #beforeTrim: () => void;

  constructor(db: Db, beforeTrim: () => void) {
    this.#db = db;
    this.#beforeTrim = beforeTrim;
  }

  /** Stores attempts in order, as one row; inside a transaction. */
  appendInTx(records: readonly DeliveryRecord[]): void {
    if (records.length === 0) return;
    const newest = this.#newest();
    const last = newest + records.length;
    const stored = records.map((r): StoredAttempt => [r.eventIds, r.sequence, r.attempt, r.status, r.durationMs, r.at, r.error]);
    this.#db.run(INSERT, newest + 1, last, JSON.stringify(stored));
    if (Math.floor(last / TRIM_STEP) > Math.floor(newest / TRIM_STEP)) {
      this.#beforeTrim();
      this.#db.run(TRIM, last - DELIVERY_LOG_SIZE);
    }
  }

  /** The newest attempts first, before attempt number `before`. */
  page(limit: number, before = Number.MAX_SAFE_INTEGER): Page<DeliveryRecord> {
    const oldest = this.#newest() - DELIVERY_LOG_SIZE + 1;
    // The first row may hold attempts at or after `before`: one row more than the attempts asked for.
    const rows = this.#db.all<{ n: number; attempts: string }>(RECENT, before, limit + 2);
    const numbered = rows.flatMap((row) => numberedAttempts(row).reverse()).filter(({ n }) => n < before && n >= oldest);
    const page = numbered.slice(0, limit);
    // A delivery record is small (its ids, a status, an error of ≤ 200 characters): counted, not sized.
    const items = page.map(({ record }) => record);
    return numbered.length > limit ? { items, after: page.at(-1)!.n } : { items };
  }

  #newest(): number {
    return this.#db.first<{ last: number }>(NEWEST)?.last ?? 0;
  }
}

/** The attempts after attempt number `after`, oldest first, whole rows at a time (what the counters count). */
export function attemptsAfter(db: Db, after: number): NumberedAttempt[] {
  return db.all<{ n: number; attempts: string }>(AFTER, after).flatMap(numberedAttempts);
}

function numberedAttempts(row: { n: number; attempts: string }): NumberedAttempt[] {
  return (JSON.parse(row.attempts) as StoredAttempt[]).map(([eventIds, sequence, attempt, status, durationMs, at, error], i) => ({
    n: row.n + i,
    record: { eventIds, sequence, attempt, status, durationMs, at, error },
  }));
}

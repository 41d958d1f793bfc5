/**
 * A subscription's delivery log: the attempts `GET /subscriptions/{id}/deliveries` lists, newest
 * first. Attempts are numbered 1, 2, … in the order they are stored. The newest (fewer than
 * ROW_ATTEMPTS) are kept in the subscription row (`log_pending`), written by the statement that
 * stores what they did (the position's UPDATE, subscription-row.ts); then they move to a row of
 * `delivery_log` together. A window of acknowledgements (outbox-window.ts) so costs no row of its
 * own, and a delivery at `maxBatchSize` 1 a thirty-second of a row with its trim (issue 19).
 *
 * Guarantees:
 * - Lists exactly the newest DELIVERY_LOG_SIZE attempts, paged by attempt number, so a `continue`
 *   token stays valid while the log grows (a page may only end sooner when older attempts go).
 * - Bounded in bulk: each time the newest number in a row passes a multiple of TRIM_STEP, the rows
 *   wholly older than the newest DELIVERY_LOG_SIZE attempts are deleted in one statement, after
 *   `beforeTrim` ran (the delivery counters count them, delivery/delivery-counters.ts). The table
 *   holds at most about DELIVERY_LOG_SIZE + TRIM_STEP + 2 × ROW_ATTEMPTS attempts; each row is
 *   written once and deleted once.
 * - Numbers are never reused: the newest row is never trimmed, and numbering goes on from it.
 * - Written inside the caller's transaction, with what the attempts changed. The memory copy of
 *   `log_pending` is forgotten when that transaction throws (`forget`).
 */
import { type Db, stmt } from "../sql.ts";

/** Attempts the log lists. */
export const DELIVERY_LOG_SIZE = 200;
/** The log is trimmed each time this many more attempts were moved to rows. */
const TRIM_STEP = 100;
/**
 * Pending attempts move to a row of their own once there are this many (two windows), or once
 * their text is this long (a batch's attempt names up to 100 events): the subscription row, which
 * every window rewrites, stays small.
 */
export const ROW_ATTEMPTS = 64;
const ROW_CHARS = 64 * 1024;

export interface DeliveryRecord {
  eventIds: string[];
  sequence: number;
  attempt: number;
  status: number | null;
  durationMs: number;
  at: number;
  error: string | null;
  /** The start of the receiver's error answer (sender.ts): for admins only. */
  response?: string;
}

/** An attempt as stored: `[eventIds, sequence, attempt, status, durationMs, at, error, response?]`. */
type StoredAttempt = [string[], number, number, number | null, number, number, string | null, string?];

/** An attempt with its number. */
export interface NumberedAttempt {
  n: number;
  record: DeliveryRecord;
}

export const DELIVERY_LOG_MIGRATIONS = [
  // `n` is a row's first attempt number, `last` its last; `log_pending` the attempts after the
  // last row's (in the subscription row, subscription-row.ts). The rows of the log's first layout
  // (one attempt a row with an AUTOINCREMENT number) keep their numbers.
  `CREATE TABLE delivery_log (n INTEGER PRIMARY KEY, last INTEGER NOT NULL, attempts TEXT NOT NULL);
   INSERT INTO delivery_log (n, last, attempts)
     SELECT n, n, json_array(json_array(json(event_ids), sequence, attempt, status, duration_ms, at, error)) FROM deliveries;
   DROP TABLE deliveries;
   ALTER TABLE subscription ADD COLUMN log_pending TEXT NOT NULL DEFAULT '[]'`,
] as const;

const NEWEST = stmt("deliveryLog.newest", "SELECT last FROM delivery_log ORDER BY n DESC LIMIT 1");
const INSERT = stmt("deliveryLog.insert", "INSERT INTO delivery_log (n, last, attempts) VALUES (?, ?, ?)");
const TRIM = stmt("deliveryLog.trim", "DELETE FROM delivery_log WHERE last <= ?");
const RECENT = stmt("deliveryLog.recent", "SELECT n, attempts FROM delivery_log WHERE n < ? ORDER BY n DESC LIMIT ?");
const AFTER = stmt("deliveryLog.after", "SELECT n, attempts FROM delivery_log WHERE last > ? ORDER BY n");
const GET_PENDING = stmt("deliveryLog.getPending", "SELECT log_pending FROM subscription WHERE id = 1");
const SET_PENDING = stmt("deliveryLog.setPending", "UPDATE subscription SET log_pending = ? WHERE id = 1");

export class DeliveryLog {
  readonly #db: Db;
  readonly #beforeTrim: () => void;
  /** `log_pending` as stored, parsed (undefined: read it). */
  #pending: StoredAttempt[] | undefined;

  constructor(db: Db, beforeTrim: () => void) {
    this.#db = db;
    this.#beforeTrim = beforeTrim;
  }

  /** Forgets the memory copy of `log_pending`: a transaction that changed it rolled back. */
  forget(): void {
    this.#pending = undefined;
  }

  /**
   * Adds attempts in order; inside a transaction. Answers `log_pending`'s new text, for the caller
   * to write with its own UPDATE of the subscription row.
   */
  appendInTx(records: readonly DeliveryRecord[]): string {
    const pending = this.#pendingAttempts();
    pending.push(...records.map(storedAttempt));
    const text = JSON.stringify(pending);
    if (pending.length >= ROW_ATTEMPTS || text.length >= ROW_CHARS) {
      const newest = this.#rowsNewest();
      const last = newest + pending.length;
      this.#db.run(INSERT, newest + 1, last, text);
      pending.length = 0;
      if (Math.floor(last / TRIM_STEP) > Math.floor(newest / TRIM_STEP)) {
        this.#beforeTrim();
        this.#db.run(TRIM, last - DELIVERY_LOG_SIZE);
      }
      return "[]";
    }
    return text;
  }

  /** Adds attempts and writes `log_pending`; inside a transaction (for a caller with no UPDATE of its own). */
  recordInTx(records: readonly DeliveryRecord[]): void {
    this.#db.run(SET_PENDING, this.appendInTx(records));
  }

  /**
   * The newest attempts first, before attempt number `before`; `after` is where the next page
   * starts (a SubscriptionStore `Page`, spelled out: the store imports this module, not the reverse).
   */
  page(limit: number, before = Number.MAX_SAFE_INTEGER): { items: DeliveryRecord[]; after?: number } {
    const newest = this.#rowsNewest();
    const pending = numbered(newest + 1, this.#pendingAttempts());
    const oldest = newest + pending.length - DELIVERY_LOG_SIZE + 1;
    // The first row may hold attempts at or after `before`: one row more than the attempts asked for.
    const rows = this.#db.all<{ n: number; attempts: string }>(RECENT, before, limit + 2);
    const newestFirst = [...pending.reverse(), ...rows.flatMap((row) => numberedRow(row).reverse())];
    const listed = newestFirst.filter(({ n }) => n < before && n >= oldest);
    const page = listed.slice(0, limit);
    // A delivery record is small (its ids, a status, a short error, ≤ 200 characters of answer): counted, not sized.
    const items = page.map(({ record }) => record);
    return listed.length > limit ? { items, after: page.at(-1)!.n } : { items };
  }

  /** The attempts after attempt number `after`, oldest first (what the counters count). */
  after(after: number): NumberedAttempt[] {
    const rows = this.#db.all<{ n: number; attempts: string }>(AFTER, after).flatMap(numberedRow);
    const pending = numbered(this.#rowsNewest() + 1, this.#pendingAttempts());
    return [...rows, ...pending].filter(({ n }) => n > after);
  }

  #pendingAttempts(): StoredAttempt[] {
    this.#pending ??= JSON.parse(this.#db.first<{ log_pending: string }>(GET_PENDING)!.log_pending) as StoredAttempt[];
    return this.#pending;
  }

  #rowsNewest(): number {
    return this.#db.first<{ last: number }>(NEWEST)?.last ?? 0;
  }
}

function numberedRow(row: { n: number; attempts: string }): NumberedAttempt[] {
  return numbered(row.n, JSON.parse(row.attempts) as StoredAttempt[]);
}

function storedAttempt(r: DeliveryRecord): StoredAttempt {
  const stored: StoredAttempt = [r.eventIds, r.sequence, r.attempt, r.status, r.durationMs, r.at, r.error];
  if (r.response !== undefined) stored.push(r.response);
  return stored;
}

function numbered(first: number, attempts: readonly StoredAttempt[]): NumberedAttempt[] {
  return attempts.map(([eventIds, sequence, attempt, status, durationMs, at, error, response], i) => ({
    n: first + i,
    record: { eventIds, sequence, attempt, status, durationMs, at, error, ...(response === undefined ? {} : { response }) },
  }));
}

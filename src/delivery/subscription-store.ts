/**
 * A subscription's durable state, in its own Durable Object's SQLite: configuration and secret,
 * the position in the informer's event log, the retry state of the batch in flight, the outbox
 * (that batch, exactly as it will be sent again), the delivery log and dead letters. Each table is
 * its concept's module; this store creates them, runs their transactions, and is what the delivery
 * logic holds:
 * - subscription-row.ts: configuration, position, sequence numbers, retry state (the row);
 * - outbox-store.ts and stored-texts.ts: the outbox and the event texts, in chunks;
 * - dead-letters.ts, delivery-log.ts, held-keys.ts: dead letters, attempts, the receiver's keys.
 *
 * Guarantees:
 * - Nothing is stored until `create`: the tables are created then (lazily), so touching an
 *   unknown subscription's object leaves no storage behind (#7.17).
 * - This store is the only writer of its tables (one instance per object), so it keeps the
 *   subscription row in memory between writes: any statement it runs forgets it, and so does a
 *   transaction that throws (subscription-row.ts).
 *
 * Layering note: dead-letters.ts and this store import src/delivery/delivery-counters.ts at run time
 * (the counters are columns and tables of this storage, written in its transactions), as
 * log-lines.ts imports log-identity.ts; moving them into src/delivery is left to the
 * dependency-rules work.
 */
import { DEFAULT_CLUSTER } from "../clusters/cluster.ts";
import { type Db, migrate, stmt } from "../sql.ts";
import { countDeliveriesInTx, DELIVERY_COUNTER_MIGRATIONS, type DeliveryCounts } from "./delivery-counters.ts";
import { DELIVERY_LOG_MIGRATIONS, DeliveryLog, type DeliveryRecord } from "./delivery-log.ts";
import { type DeliveredKey, HELD_KEYS_MIGRATIONS, HeldKeys } from "./held-keys.ts";
import type { Position } from "./position.ts";
import type { SubscriptionSpec } from "./subscription-spec.ts";
import { type SubscriptionRecord, SubscriptionRow } from "./subscription-row.ts";
import { StoredTexts } from "./stored-texts.ts";
import { type OutboxEvent, OutboxStore, type StoredOutbox } from "./outbox-store.ts";
import { DeadLetters } from "./dead-letters.ts";

/**
 * The tables' history, one list for all: `migrate` numbers its entries, so the stored schema of
 * every existing subscription names them by their place here.
 */
const MIGRATIONS = [
  `CREATE TABLE subscription (
     id INTEGER PRIMARY KEY CHECK (id = 1), sub_id TEXT NOT NULL, informer TEXT NOT NULL, spec TEXT NOT NULL,
     secret TEXT NOT NULL, declared INTEGER NOT NULL, created_at INTEGER NOT NULL, position TEXT NOT NULL, disabled_reason TEXT,
     expired INTEGER NOT NULL, next_sequence INTEGER NOT NULL, generation INTEGER NOT NULL, next_resync_at INTEGER,
     failures INTEGER NOT NULL, first_failure_at INTEGER, next_attempt_at INTEGER, last_delivery_at INTEGER, last_error TEXT);
   CREATE TABLE outbox (
     id INTEGER PRIMARY KEY CHECK (id = 1), webhook_id TEXT NOT NULL, events TEXT NOT NULL, advance TEXT NOT NULL,
     created_at INTEGER NOT NULL);
   CREATE TABLE texts (name TEXT NOT NULL, part INTEGER NOT NULL, chunk TEXT NOT NULL, PRIMARY KEY (name, part)) WITHOUT ROWID;
   CREATE TABLE deliveries (
     n INTEGER PRIMARY KEY AUTOINCREMENT, event_ids TEXT NOT NULL, sequence INTEGER NOT NULL, attempt INTEGER NOT NULL,
     status INTEGER, duration_ms INTEGER NOT NULL, at INTEGER NOT NULL, error TEXT);
   CREATE TABLE dead_letters (
     event_id TEXT PRIMARY KEY, sequence INTEGER NOT NULL, type TEXT NOT NULL, key TEXT NOT NULL, uid TEXT NOT NULL, rv TEXT NOT NULL,
     attempts INTEGER NOT NULL, last_error TEXT, at INTEGER NOT NULL);
   CREATE INDEX dead_letters_by_at ON dead_letters (at);
   CREATE TABLE delivered_keys (key TEXT PRIMARY KEY, uid TEXT NOT NULL, rv TEXT NOT NULL, gen INTEGER NOT NULL) WITHOUT ROWID;
   CREATE INDEX delivered_keys_by_gen ON delivered_keys (gen, key)`,
  // An outbox written before this migration was a batch exactly when its id is a `msg_` id.
  `ALTER TABLE outbox ADD COLUMN batched INTEGER NOT NULL DEFAULT 0;
   UPDATE outbox SET batched = (substr(webhook_id, 1, 4) = 'msg_');
   ALTER TABLE subscription ADD COLUMN dead_letters INTEGER NOT NULL DEFAULT 0;
   UPDATE subscription SET dead_letters = (SELECT count(*) FROM dead_letters);
   CREATE INDEX dead_letters_by_sequence ON dead_letters (sequence)`,
  // Texts of a batch that fits one chunk: concatenated, with their lengths (JSON); NULL when chunked.
  `ALTER TABLE outbox ADD COLUMN inline_texts TEXT;
   ALTER TABLE outbox ADD COLUMN inline_lengths TEXT`,
  // A rotated secret, still signed with until its grace period ends (issue 10).
  `ALTER TABLE subscription ADD COLUMN previous_secret TEXT;
   ALTER TABLE subscription ADD COLUMN previous_secret_until INTEGER`,
  // A window of single deliveries: each one's position (JSON; NULL for one batch, as every row
  // written before windows is) and how many at the front are acknowledged durably.
  `ALTER TABLE outbox ADD COLUMN advances TEXT;
   ALTER TABLE outbox ADD COLUMN acked INTEGER NOT NULL DEFAULT 0`,
  // Issue 12: the informer's cluster.
  `ALTER TABLE subscription ADD COLUMN cluster TEXT NOT NULL DEFAULT '${DEFAULT_CLUSTER}'`,
  // Issue 29: dead letters bounded by bytes (dead-letters.ts), and the oldest dropped past a bound, counted.
  `ALTER TABLE subscription ADD COLUMN dead_letter_bytes INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE subscription ADD COLUMN dead_letters_dropped INTEGER NOT NULL DEFAULT 0;
   UPDATE subscription SET dead_letter_bytes = (SELECT coalesce(sum(octet_length(chunk)), 0) FROM texts WHERE substr(name, 1, 5) = 'dead:')`,
] as const;

const TABLE_EXISTS = stmt("subscription.exists", "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'subscription'");

import type { Page } from "./position.ts";
export type { Page };

export class SubscriptionStore {
  readonly #db: Db;
  /** The subscription row's writes (read it with `get`, which knows whether it exists). */
  readonly row: SubscriptionRow;
  readonly outbox: OutboxStore;
  readonly deadLetters: DeadLetters;
  readonly #log: DeliveryLog;
  readonly #heldKeys: HeldKeys;
  /** The tables exist: this object holds (or held) a subscription. */
  #created: boolean;

  /** `deadLetterBytes`: dead-letters.ts DEAD_LETTER_BYTES unless a test lowers it. */
  constructor(db: Db, deadLetterBytes?: number) {
    this.#db = db;
    this.row = new SubscriptionRow(db);
    const texts = new StoredTexts(db, this.row.run);
    this.outbox = new OutboxStore(db, this.row.run, texts);
    this.deadLetters = new DeadLetters(db, this.row.run, texts, this.row, deadLetterBytes);
    this.#log = new DeliveryLog(db, () => countDeliveriesInTx(db, this.#log)); // the counters count attempts before they are trimmed
    this.#heldKeys = new HeldKeys(db);
    this.#created = db.first(TABLE_EXISTS) !== undefined;
    if (this.#created) this.#migrate();
  }

  #migrate(): void {
    migrate(this.#db, "subscription", MIGRATIONS);
    // After the store's: each replaces a table of the store's first layout.
    migrate(this.#db, "delivery_log", DELIVERY_LOG_MIGRATIONS);
    migrate(this.#db, "held_keys", HELD_KEYS_MIGRATIONS);
    migrate(this.#db, "delivery_metrics", DELIVERY_COUNTER_MIGRATIONS);
  }

  transaction<T>(fn: () => T): T {
    try {
      return this.#db.transaction(fn);
    } catch (error) {
      // A row read or changes applied inside the rolled-back transaction are not the stored ones.
      this.row.forget();
      this.#heldKeys.forget();
      this.#log.forget();
      throw error;
    }
  }

  get(): SubscriptionRecord | undefined {
    return this.#created ? this.row.get() : undefined;
  }

  create(init: Parameters<SubscriptionRow["create"]>[0]): void {
    this.#migrate();
    this.#created = true;
    this.row.create(init);
  }

  /** A declared subscription's new configuration; its position, outbox and retry state stay. */
  updateSpec(spec: SubscriptionSpec, secret: string): void {
    this.row.updateSpec(spec, secret);
  }

  /** The outbox and its texts, as written. */
  storedOutbox(): StoredOutbox | undefined {
    return this.outbox.stored();
  }

  /**
   * Deliveries of `events` acknowledged by `attempts` (`lastSequence` the last event's, and the
   * last attempt `at`; null: none, only events filtered out): moves to `position`, takes their
   * sequence numbers, notes the keys they changed, logs the attempts and ends any failure streak,
   * in one statement.
   */
  recordDeliveredInTx(
    delivered: { at: number | null; lastSequence: number | null; events: readonly OutboxEvent[]; attempts: readonly DeliveryRecord[] },
    position: Position,
    gen: number,
  ): void {
    this.row.recordDeliveredInTx(delivered, position, this.#heldKeys.applyInTx(delivered.events, gen), this.#log.appendInTx(delivered.attempts));
  }

  // --- the keys the receiver holds ----------------------------------------------------------------

  /** Dead-lettered events change what the receiver holds too (it may get them by redelivery). */
  applyDeliveredInTx(events: readonly OutboxEvent[], gen: number): void {
    this.#heldKeys.recordInTx(events, gen);
  }

  /** Keys a replay skips because their newer events follow: still held, not to be swept. */
  touchKeys(keys: readonly string[], gen: number): void {
    this.transaction(() => this.#heldKeys.touch(keys, gen));
  }

  /** The keys of `objects` the receiver was sent in generation `since` or later, in that very state. */
  heldSince(objects: readonly DeliveredKey[], since: number): Set<string> {
    return this.transaction(() => this.#heldKeys.heldSince(objects, since));
  }

  /** Keys sent before generation `gen` and not touched since, in key order after `after`. */
  staleKeys(gen: number, after: string | null, limit: number): DeliveredKey[] {
    return this.transaction(() => this.#heldKeys.stale(gen, after, limit));
  }

  // --- the delivery log -----------------------------------------------------------------------

  /** Records attempts in order (an acknowledgement's are recorded by `recordDeliveredInTx`). */
  recordAttempts(records: readonly DeliveryRecord[]): void {
    this.#log.recordInTx(records);
  }

  /** The delivery counters, brought up to date (delivery/delivery-counters.ts). */
  countDeliveries(): DeliveryCounts {
    return this.transaction(() => countDeliveriesInTx(this.#db, this.#log));
  }

  /** The newest attempts first, before attempt number `before`. */
  deliveries(limit: number, before?: number): Page<DeliveryRecord> {
    return this.#log.page(limit, before);
  }
}

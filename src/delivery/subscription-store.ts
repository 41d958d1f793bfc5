/**
 * A subscription's durable state, in its own Durable Object's SQLite: configuration and secret,
 * the position in the informer's event log, the retry state of the batch in flight, the outbox
 * (that batch, exactly as it will be sent again), the delivery log and dead letters.
 *
 * Guarantees:
 * - The outbox holds at most one batch. Its events keep their ids and sequence numbers across
 *   retries, evictions and restarts, and the position to move to once the batch is acknowledged
 *   (or dead-lettered) is stored with it, so the cursor never moves ahead of an unacknowledged
 *   event (DESIGN invariant 4).
 * - Event texts are stored in chunks below SQLite's 2 MB row limit (an update carries two
 *   objects of up to 1.5 MB each).
 * - The delivery log keeps the newest DELIVERY_LOG_SIZE attempts (trimmed every TRIM_EVERY
 *   inserts, so it holds up to that many more for a moment); dead letters the newest
 *   DEAD_LETTER_LIMIT events.
 */
import { type Db, migrate, stmt } from "../sql.ts";
import type { LogEventType } from "../cache/event-log.ts";
import type { SubscriptionSpec } from "./subscription-spec.ts";

export const DELIVERY_LOG_SIZE = 200;
export const DEAD_LETTER_LIMIT = 10_000;
/** Text chunk size: well under the 2 MB row limit. */
const CHUNK_CHARS = 512 * 1024;

/**
 * A replay (every cached object as an `add` with `initialList`) or a resync (every cached object
 * as a `sync`) anchored at log position `at`; `after` is the last key already expanded. A replay
 * then sweeps: keys the receiver was sent before the replay (`gen` older than the replay's) that
 * the replay did not touch are gone, and are sent as deletes with `finalStateUnknown`.
 */
export interface Marker {
  kind: "replay" | "sync";
  at: number;
  after: string | null;
  /** Replays: the generation the replay marks the receiver's keys with. */
  gen?: number;
  /** Replays: expanding done, sweeping the keys it did not touch. */
  sweep?: boolean;
}

/** A key the receiver holds, as last sent to it. */
export interface DeliveredKey {
  key: string;
  uid: string;
  resourceVersion: string;
}

/** Where the subscription is: events up to `cursor` are handled; `marker` is pending or expanding. */
export interface Position {
  cursor: number;
  marker: Marker | null;
}

export interface SubscriptionRecord {
  id: string;
  informer: string;
  spec: SubscriptionSpec;
  secret: string;
  /** Declared in INFORMERS: changed and removed only there. */
  declared: boolean;
  createdAt: number;
  position: Position;
  disabledReason: string | null;
  expired: boolean;
  nextSequence: number;
  /** The newest replay's generation (see Marker). */
  generation: number;
  nextResyncAt: number | null;
  failures: number;
  firstFailureAt: number | null;
  nextAttemptAt: number | null;
  lastDeliveryAt: number | null;
  lastError: string | null;
}

/** What a dead letter and the delivery log say about one event of a batch. */
export interface OutboxEvent {
  eventId: string;
  sequence: number;
  type: LogEventType;
  key: string;
  uid: string;
  resourceVersion: string;
}

export interface Outbox {
  webhookId: string;
  events: OutboxEvent[];
  /** The position once this batch is acknowledged or dead-lettered. */
  advance: Position;
  createdAt: number;
}

export interface DeliveryRecord {
  eventIds: string[];
  sequence: number;
  attempt: number;
  status: number | null;
  durationMs: number;
  at: number;
  error: string | null;
}

export interface DeadLetterRecord extends OutboxEvent {
  attempts: number;
  lastError: string | null;
  deadLetteredAt: number;
}

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
] as const;

const GET = stmt("subscription.get", "SELECT * FROM subscription WHERE id = 1");
const INSERT = stmt(
  "subscription.insert",
  `INSERT INTO subscription (id, sub_id, informer, spec, secret, declared, created_at, position, disabled_reason, expired,
     next_sequence, generation, next_resync_at, failures, first_failure_at, next_attempt_at, last_delivery_at, last_error)
   VALUES (1, ?, ?, ?, ?, ?, ?, ?, NULL, 0, 1, ?, ?, 0, NULL, NULL, NULL, NULL)`,
);
const NEXT_GENERATION = stmt("subscription.nextGeneration", "UPDATE subscription SET generation = generation + 1 WHERE id = 1");
const UPSERT_KEY = stmt(
  "deliveredKeys.upsert",
  "INSERT INTO delivered_keys (key, uid, rv, gen) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET uid = excluded.uid, rv = excluded.rv, gen = excluded.gen",
);
const DELETE_KEY = stmt("deliveredKeys.delete", "DELETE FROM delivered_keys WHERE key = ?");
const TOUCH_KEY = stmt("deliveredKeys.touch", "UPDATE delivered_keys SET gen = ? WHERE key = ?");
const STALE_KEYS = stmt(
  "deliveredKeys.stale",
  "SELECT key, uid, rv FROM delivered_keys WHERE gen < ? AND key > ? ORDER BY key LIMIT ?",
);
const UPDATE_SPEC = stmt("subscription.updateSpec", "UPDATE subscription SET spec = ?, secret = ? WHERE id = 1");
const SET_POSITION = stmt("subscription.setPosition", "UPDATE subscription SET position = ? WHERE id = 1");
const SET_EXPIRED = stmt("subscription.setExpired", "UPDATE subscription SET expired = ? WHERE id = 1");
const SET_NEXT_RESYNC = stmt("subscription.setNextResync", "UPDATE subscription SET next_resync_at = ? WHERE id = 1");
const TAKE_SEQUENCES = stmt("subscription.takeSequences", "UPDATE subscription SET next_sequence = next_sequence + ? WHERE id = 1");
const SET_DISABLED = stmt("subscription.setDisabled", "UPDATE subscription SET disabled_reason = ?, next_attempt_at = NULL WHERE id = 1");
const SET_LAST_ERROR = stmt("subscription.setLastError", "UPDATE subscription SET last_error = ? WHERE id = 1");
const SET_FAILING = stmt(
  "subscription.setFailing",
  "UPDATE subscription SET failures = failures + 1, first_failure_at = coalesce(first_failure_at, ?), next_attempt_at = ?, last_error = ? WHERE id = 1",
);
const CLEAR_FAILURES = stmt(
  "subscription.clearFailures",
  "UPDATE subscription SET failures = 0, first_failure_at = NULL, next_attempt_at = NULL WHERE id = 1",
);
const SET_DELIVERED = stmt(
  "subscription.setDelivered",
  `UPDATE subscription SET last_delivery_at = ?, last_error = NULL, failures = 0, first_failure_at = NULL, next_attempt_at = NULL
   WHERE id = 1`,
);

const GET_OUTBOX = stmt("outbox.get", "SELECT webhook_id, events, advance, created_at FROM outbox WHERE id = 1");
const PUT_OUTBOX = stmt("outbox.put", "INSERT INTO outbox (id, webhook_id, events, advance, created_at) VALUES (1, ?, ?, ?, ?)");
const DELETE_OUTBOX = stmt("outbox.delete", "DELETE FROM outbox WHERE id = 1");

const TEXT_PARTS = stmt("texts.get", "SELECT chunk FROM texts WHERE name = ? ORDER BY part");
const PUT_TEXT_PART = stmt("texts.put", "INSERT OR REPLACE INTO texts (name, part, chunk) VALUES (?, ?, ?)");
const DELETE_TEXT = stmt("texts.delete", "DELETE FROM texts WHERE name = ?");
const DELETE_OUTBOX_TEXTS = stmt("texts.deleteOutbox", "DELETE FROM texts WHERE name >= 'out:' AND name < 'out;'");
const RENAME_TEXT = stmt("texts.rename", "UPDATE texts SET name = ? WHERE name = ?");

const INSERT_DELIVERY = stmt(
  "deliveries.insert",
  "INSERT INTO deliveries (event_ids, sequence, attempt, status, duration_ms, at, error) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING n",
);
/** The delivery log is trimmed every this many attempts (a statement per attempt is what costs). */
const TRIM_EVERY = 20;
const TRIM_DELIVERIES = stmt(
  "deliveries.trim",
  "DELETE FROM deliveries WHERE n <= (SELECT max(n) FROM deliveries) - ?",
);
const RECENT_DELIVERIES = stmt("deliveries.recent", "SELECT * FROM deliveries ORDER BY n DESC LIMIT ?");

const INSERT_DEAD_LETTER = stmt(
  "deadLetters.insert",
  "INSERT OR REPLACE INTO dead_letters (event_id, sequence, type, key, uid, rv, attempts, last_error, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
);
const DEAD_LETTERS = stmt("deadLetters.list", "SELECT * FROM dead_letters ORDER BY sequence LIMIT ?");
const DEAD_LETTER = stmt("deadLetters.get", "SELECT * FROM dead_letters WHERE event_id = ?");
const DELETE_DEAD_LETTER = stmt("deadLetters.delete", "DELETE FROM dead_letters WHERE event_id = ?");
const COUNT_DEAD_LETTERS = stmt("deadLetters.count", "SELECT count(*) AS n FROM dead_letters");
const OLDEST_DEAD_LETTERS = stmt("deadLetters.oldest", "SELECT event_id FROM dead_letters ORDER BY at, sequence LIMIT ?");

type SubscriptionRow = {
  sub_id: string;
  informer: string;
  spec: string;
  secret: string;
  declared: number;
  created_at: number;
  position: string;
  disabled_reason: string | null;
  expired: number;
  next_sequence: number;
  generation: number;
  next_resync_at: number | null;
  failures: number;
  first_failure_at: number | null;
  next_attempt_at: number | null;
  last_delivery_at: number | null;
  last_error: string | null;
};

type DeadLetterRow = {
  event_id: string;
  sequence: number;
  type: LogEventType;
  key: string;
  uid: string;
  rv: string;
  attempts: number;
  last_error: string | null;
  at: number;
};

const outboxText = (index: number) => `out:${index}`;
const deadLetterText = (eventId: string) => `dead:${eventId}`;

export class SubscriptionStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    migrate(db, "subscription", MIGRATIONS);
  }

  transaction<T>(fn: () => T): T {
    return this.#db.transaction(fn);
  }

  get(): SubscriptionRecord | undefined {
    const row = this.#db.first<SubscriptionRow>(GET);
    if (!row) return undefined;
    return {
      id: row.sub_id,
      informer: row.informer,
      spec: JSON.parse(row.spec),
      secret: row.secret,
      declared: row.declared === 1,
      createdAt: row.created_at,
      position: JSON.parse(row.position),
      disabledReason: row.disabled_reason,
      expired: row.expired === 1,
      nextSequence: row.next_sequence,
      generation: row.generation,
      nextResyncAt: row.next_resync_at,
      failures: row.failures,
      firstFailureAt: row.first_failure_at,
      nextAttemptAt: row.next_attempt_at,
      lastDeliveryAt: row.last_delivery_at,
      lastError: row.last_error,
    };
  }

  create(init: {
    id: string;
    informer: string;
    spec: SubscriptionSpec;
    secret: string;
    declared: boolean;
    now: number;
    position: Position;
    generation: number;
    nextResyncAt: number | null;
  }): void {
    this.#db.run(
      INSERT,
      init.id,
      init.informer,
      JSON.stringify(init.spec),
      init.secret,
      init.declared ? 1 : 0,
      init.now,
      JSON.stringify(init.position),
      init.generation,
      init.nextResyncAt,
    );
  }

  /** A declared subscription's new configuration; its position and retry state stay. */
  updateSpec(spec: SubscriptionSpec, secret: string): void {
    this.#db.run(UPDATE_SPEC, JSON.stringify(spec), secret);
  }

  setPosition(position: Position): void {
    this.#db.run(SET_POSITION, JSON.stringify(position));
  }

  setExpired(expired: boolean): void {
    this.#db.run(SET_EXPIRED, expired ? 1 : 0);
  }

  setNextResync(at: number | null): void {
    this.#db.run(SET_NEXT_RESYNC, at);
  }

  /** Reserves `count` sequence numbers (from `nextSequence`). */
  takeSequencesInTx(count: number): void {
    this.#db.run(TAKE_SEQUENCES, count);
  }

  setDisabled(reason: string | null): void {
    this.#db.run(SET_DISABLED, reason);
  }

  setLastError(message: string | null): void {
    this.#db.run(SET_LAST_ERROR, message);
  }

  recordFailure(now: number, retryAt: number, error: string): void {
    this.#db.run(SET_FAILING, now, retryAt, error);
  }

  clearFailures(): void {
    this.#db.run(CLEAR_FAILURES);
  }

  /** An acknowledged batch: also ends any failure streak. */
  recordDelivered(now: number): void {
    this.#db.run(SET_DELIVERED, now);
  }

  // --- outbox ---------------------------------------------------------------------------------

  outbox(): Outbox | undefined {
    const row = this.#db.first<{ webhook_id: string; events: string; advance: string; created_at: number }>(GET_OUTBOX);
    return row && { webhookId: row.webhook_id, events: JSON.parse(row.events), advance: JSON.parse(row.advance), createdAt: row.created_at };
  }

  /** Stores a batch and its event texts (the outbox is empty); inside a transaction. */
  putOutboxInTx(outbox: Outbox, texts: readonly string[]): void {
    this.#db.run(PUT_OUTBOX, outbox.webhookId, JSON.stringify(outbox.events), JSON.stringify(outbox.advance), outbox.createdAt);
    texts.forEach((text, i) => this.#putText(outboxText(i), text));
  }

  outboxTexts(outbox: Outbox): string[] {
    return outbox.events.map((_, i) => this.#text(outboxText(i)) ?? "");
  }

  deleteOutboxInTx(): void {
    this.#db.run(DELETE_OUTBOX);
    this.#db.run(DELETE_OUTBOX_TEXTS);
  }

  /** Moves the outbox's events to the dead letters; inside a transaction. */
  deadLetterOutboxInTx(now: number, attempts: number, lastError: string | null): void {
    const outbox = this.outbox();
    if (!outbox) return;
    outbox.events.forEach((event, i) => {
      this.#db.run(DELETE_TEXT, deadLetterText(event.eventId));
      this.#db.run(RENAME_TEXT, deadLetterText(event.eventId), outboxText(i));
      this.#db.run(
        INSERT_DEAD_LETTER,
        event.eventId,
        event.sequence,
        event.type,
        event.key,
        event.uid,
        event.resourceVersion,
        attempts,
        lastError,
        now,
      );
    });
    this.deleteOutboxInTx();
    const excess = this.deadLetterCount() - DEAD_LETTER_LIMIT;
    if (excess > 0) {
      for (const row of this.#db.all<{ event_id: string }>(OLDEST_DEAD_LETTERS, excess)) this.deleteDeadLetterInTx(row.event_id);
    }
  }

  // --- the keys the receiver holds ----------------------------------------------------------------

  /** Starts a replay: answers its generation. */
  nextGenerationInTx(): number {
    this.#db.run(NEXT_GENERATION);
    return this.get()!.generation;
  }

  /** Acknowledged (or dead-lettered) events change what the receiver holds. */
  applyDeliveredInTx(events: readonly OutboxEvent[], gen: number): void {
    for (const event of events) {
      if (event.type === "delete") this.#db.run(DELETE_KEY, event.key);
      else this.#db.run(UPSERT_KEY, event.key, event.uid, event.resourceVersion, gen);
    }
  }

  /** Keys a replay skips because their newer events follow: still held, not to be swept. */
  touchKeys(keys: readonly string[], gen: number): void {
    for (const key of keys) this.#db.run(TOUCH_KEY, gen, key);
  }

  /** Keys sent before generation `gen` and not touched since, in key order after `after`. */
  staleKeys(gen: number, after: string | null, limit: number): DeliveredKey[] {
    return this.#db
      .all<{ key: string; uid: string; rv: string }>(STALE_KEYS, gen, after ?? "", limit)
      .map((row) => ({ key: row.key, uid: row.uid, resourceVersion: row.rv }));
  }

  // --- delivery log and dead letters -----------------------------------------------------------

  recordAttempt(record: DeliveryRecord): void {
    const { n } = this.#db.first<{ n: number }>(
      INSERT_DELIVERY,
      JSON.stringify(record.eventIds),
      record.sequence,
      record.attempt,
      record.status,
      record.durationMs,
      record.at,
      record.error,
    )!;
    if (n % TRIM_EVERY === 0) this.#db.run(TRIM_DELIVERIES, DELIVERY_LOG_SIZE);
  }

  deliveries(limit: number): DeliveryRecord[] {
    return this.#db
      .all<{ event_ids: string; sequence: number; attempt: number; status: number | null; duration_ms: number; at: number; error: string | null }>(
        RECENT_DELIVERIES,
        limit,
      )
      .map((row) => ({
        eventIds: JSON.parse(row.event_ids),
        sequence: row.sequence,
        attempt: row.attempt,
        status: row.status,
        durationMs: row.duration_ms,
        at: row.at,
        error: row.error,
      }));
  }

  deadLetters(limit: number): DeadLetterRecord[] {
    return this.#db.all<DeadLetterRow>(DEAD_LETTERS, limit).map(deadLetterRecord);
  }

  deadLetter(eventId: string): { record: DeadLetterRecord; text: string } | undefined {
    const row = this.#db.first<DeadLetterRow>(DEAD_LETTER, eventId);
    return row && { record: deadLetterRecord(row), text: this.#text(deadLetterText(eventId)) ?? "" };
  }

  deleteDeadLetterInTx(eventId: string): void {
    this.#db.run(DELETE_DEAD_LETTER, eventId);
    this.#db.run(DELETE_TEXT, deadLetterText(eventId));
  }

  deadLetterCount(): number {
    return this.#db.first<{ n: number }>(COUNT_DEAD_LETTERS)!.n;
  }

  // --- chunked texts ----------------------------------------------------------------------------

  /** Writes a text under a name that is free (outbox texts are cleared with their batch). */
  #putText(name: string, text: string): void {
    for (let part = 0, start = 0; part === 0 || start < text.length; part++, start += CHUNK_CHARS) {
      this.#db.run(PUT_TEXT_PART, name, part, text.slice(start, start + CHUNK_CHARS));
    }
  }

  #text(name: string): string | undefined {
    const parts = this.#db.all<{ chunk: string }>(TEXT_PARTS, name);
    return parts.length === 0 ? undefined : parts.map((p) => p.chunk).join("");
  }
}

function deadLetterRecord(row: DeadLetterRow): DeadLetterRecord {
  return {
    eventId: row.event_id,
    sequence: row.sequence,
    type: row.type,
    key: row.key,
    uid: row.uid,
    resourceVersion: row.rv,
    attempts: row.attempts,
    lastError: row.last_error,
    deadLetteredAt: row.at,
  };
}

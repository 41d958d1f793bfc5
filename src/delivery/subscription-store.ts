/**
 * A subscription's durable state, in its own Durable Object's SQLite: configuration and secret,
 * the position in the informer's event log, the retry state of the batch in flight, the outbox
 * (that batch, exactly as it will be sent again), the delivery log and dead letters.
 *
 * Guarantees:
 * - The outbox holds either one batch (`maxBatchSize` > 1, or a row from before windows) or a
 *   window: up to WINDOW_DELIVERIES single-event deliveries, sent in order, each with the position
 *   to move to once it is acknowledged (or dead-lettered). Events keep their ids, sequence numbers
 *   and bodies across retries, evictions and restarts, and `acked` counts the deliveries at the
 *   front whose acknowledgement is durable, so the cursor never moves ahead of an unacknowledged
 *   event (DESIGN invariant 4), and whatever may have been sent is sent again as written. (Most
 *   windows of log events are never written here: subscription.ts rebuilds them from the position.)
 * - Event texts are stored in chunks below SQLite's 2 MB row limit (an update carries two
 *   objects of up to 1.5 MB each).
 * - A batch whose texts fit one chunk is one row (texts inline): writing the outbox is one
 *   statement, removing it another. Larger batches keep their texts in chunks (`texts`).
 * - Sequence numbers are taken when a batch leaves the outbox (acknowledged or dead-lettered), in
 *   the same statement that moves the position: a batch in the outbox numbers its events from
 *   `nextSequence`, and nothing else consumes sequence numbers (but an expiry that skips those a
 *   lost window may have used, subscription.ts).
 * - The outbox records whether it is a batch (`{"events": [...]}`) or one event: a retry sends the
 *   body that was written, whatever `maxBatchSize` says now (#7.12).
 * - The delivery log (delivery-log.ts) lists the newest DELIVERY_LOG_SIZE attempts; dead letters
 *   are the newest DEAD_LETTER_LIMIT events, their count kept in the subscription row, changed in
 *   the same transaction as the rows, so a status never counts rows (#7.21).
 * - The keys the receiver holds (held-keys.ts) change with each acknowledged event, in the
 *   statement that moves the position.
 * - Nothing is stored until `create`: the tables are created then (lazily), so touching an
 *   unknown subscription's object leaves no storage behind (#7.17).
 * - This store is the only writer of its tables (one instance per object), so it keeps the
 *   subscription row in memory between writes: any statement it runs forgets it, and so does a
 *   transaction that throws. A step reads the row once; an extra read outside a transaction is a
 *   SQLite transaction of its own (BENCHMARKS.md "Cost per delivery").
 */
import { DEFAULT_CLUSTER } from "../clusters/cluster.ts";
import { type Db, migrate, type Statement, stmt } from "../sql.ts";
import type { LogEventType } from "../cache/event-log.ts";
import type { SubscriptionSpec } from "./subscription-spec.ts";
import { countDeadLettersInTx, countDeliveriesInTx, DELIVERY_COUNTER_MIGRATIONS, type DeliveryCounts } from "../metrics/delivery-counters.ts";
import { DELIVERY_LOG_MIGRATIONS, DeliveryLog, type DeliveryRecord } from "./delivery-log.ts";
import { type DeliveredKey, HELD_KEYS_MIGRATIONS, HeldKeys } from "./held-keys.ts";

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
  /**
   * Replays after the first pass (the replay outlived the log's retention): the generation the
   * replay began in. Keys this replay already sent (gen ≥ since) in their current state are skipped.
   */
  since?: number;
  /** Replays: 1 for the first pass (absent), 2 and up for later passes. */
  pass?: number;
}

/** Where the subscription is: events up to `cursor` are handled; `marker` is pending or expanding. */
export interface Position {
  cursor: number;
  marker: Marker | null;
  /**
   * A replay just ended at `cursor`, its anchor: kept until a log event after it is handled, so a
   * read that finds those events gone knows the replay itself outlived retention (#7.15).
   */
  replayed?: { since: number; pass: number };
}

export interface SubscriptionRecord {
  id: string;
  /** The informer's cluster (clusters/cluster.ts); subscriptions made before clusters are the default one's. */
  cluster: string;
  informer: string;
  spec: SubscriptionSpec;
  secret: string;
  /** The secret a rotation replaced, and until when deliveries are signed with it too (ms). */
  previousSecret: { secret: string; until: number } | null;
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
  /** How many dead letters are kept (counted as they change). */
  deadLetters: number;
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
  /** Sent as `{"events": [...]}` (written under `maxBatchSize` > 1), else as its one event. */
  batched: boolean;
  /** The position once this batch (or the window's last delivery) is acknowledged or dead-lettered. */
  advance: Position;
  /**
   * A window: every event is its own delivery (`webhook-id` its event id), and `advances[i]` the
   * position once event i is acknowledged. Absent: the outbox is one delivery.
   */
  advances?: Position[];
  createdAt: number;
}

/** An outbox with its event texts, exactly as stored. */
export interface StoredOutbox {
  outbox: Outbox;
  texts: string[];
  /** The texts are in the outbox's row (else in chunks in `texts`). */
  inline: boolean;
  /** Deliveries at the front whose acknowledgement (or dead letter) is stored. */
  acked: number;
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
] as const;

/** Bodies one page of dead letters carries at most (at least one dead letter, however large). */
export const MAX_PAGE_CHARS = 4 * 1024 * 1024;

const TABLE_EXISTS = stmt("subscription.exists", "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'subscription'");

const GET = stmt(
  "subscription.get",
  `SELECT sub_id, cluster, informer, spec, secret, previous_secret, previous_secret_until, declared, created_at, position,
     disabled_reason, expired, next_sequence, generation, next_resync_at, failures, first_failure_at, next_attempt_at,
     last_delivery_at, last_error, dead_letters
   FROM subscription WHERE id = 1`,
);
const INSERT = stmt(
  "subscription.insert",
  `INSERT INTO subscription (id, sub_id, cluster, informer, spec, secret, declared, created_at, position, disabled_reason, expired,
     next_sequence, generation, next_resync_at, failures, first_failure_at, next_attempt_at, last_delivery_at, last_error)
   VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0, 1, ?, ?, 0, NULL, NULL, NULL, NULL)`,
);
const NEXT_GENERATION = stmt("subscription.nextGeneration", "UPDATE subscription SET generation = generation + 1 WHERE id = 1");
const UPDATE_SPEC = stmt("subscription.updateSpec", "UPDATE subscription SET spec = ?, secret = ? WHERE id = 1");
/** The secret columns sealed anew (delivery/stored-secrets.ts), only if they still hold what was read (?3, ?4). */
const RESEAL_SECRETS = stmt(
  "subscription.resealSecrets",
  `UPDATE subscription SET secret = ?1, previous_secret = ?2, previous_secret_until = CASE WHEN ?2 IS NULL THEN NULL ELSE previous_secret_until END
   WHERE id = 1 AND secret = ?3 AND previous_secret IS ?4`,
);
/** The current secret becomes the previous one, signed with until `?1`; `?2` is the new secret. */
const ROTATE_SECRET = stmt(
  "subscription.rotateSecret",
  "UPDATE subscription SET previous_secret = secret, previous_secret_until = ?1, secret = ?2 WHERE id = 1",
);
const SET_POSITION = stmt("subscription.setPosition", "UPDATE subscription SET position = ? WHERE id = 1");
const SET_EXPIRED = stmt("subscription.setExpired", "UPDATE subscription SET expired = ? WHERE id = 1");
const SET_NEXT_RESYNC = stmt("subscription.setNextResync", "UPDATE subscription SET next_resync_at = ? WHERE id = 1");
const TAKE_SEQUENCES = stmt("subscription.takeSequences", "UPDATE subscription SET next_sequence = max(next_sequence, ?) WHERE id = 1");
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
const ADD_DEAD_LETTERS = stmt("subscription.addDeadLetters", "UPDATE subscription SET dead_letters = dead_letters + ? WHERE id = 1");
/**
 * Acknowledged deliveries, in one statement: the position, their sequence numbers taken, the keys
 * they changed (held_changes), their attempts (log_pending, delivery-log.ts), the failure streak over.
 */
const SET_DELIVERED = stmt(
  "subscription.setDelivered",
  `UPDATE subscription SET position = ?, next_sequence = max(next_sequence, coalesce(?, 0)), last_delivery_at = coalesce(?, last_delivery_at),
     held_changes = ?, log_pending = ?, last_error = NULL,
     failures = 0, first_failure_at = NULL, next_attempt_at = NULL
   WHERE id = 1`,
);

const GET_OUTBOX = stmt(
  "outbox.get",
  "SELECT webhook_id, events, advance, batched, created_at, inline_texts, inline_lengths, advances, acked FROM outbox WHERE id = 1",
);
const PUT_OUTBOX = stmt(
  "outbox.put",
  `INSERT INTO outbox (id, webhook_id, events, advance, batched, created_at, inline_texts, inline_lengths, advances, acked)
   VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const SET_OUTBOX_ACKED = stmt("outbox.setAcked", "UPDATE outbox SET acked = ? WHERE id = 1");
const DELETE_OUTBOX = stmt("outbox.delete", "DELETE FROM outbox WHERE id = 1");

const TEXT_PARTS = stmt("texts.get", "SELECT chunk FROM texts WHERE name = ? ORDER BY part");
const PUT_TEXT_PART = stmt("texts.put", "INSERT OR REPLACE INTO texts (name, part, chunk) VALUES (?, ?, ?)");
const DELETE_TEXT = stmt("texts.delete", "DELETE FROM texts WHERE name = ?");
const DELETE_OUTBOX_TEXTS = stmt("texts.deleteOutbox", "DELETE FROM texts WHERE name >= 'out:' AND name < 'out;'");
const RENAME_TEXT = stmt("texts.rename", "UPDATE texts SET name = ? WHERE name = ?");

const INSERT_DEAD_LETTER = stmt(
  "deadLetters.insert",
  "INSERT OR REPLACE INTO dead_letters (event_id, sequence, type, key, uid, rv, attempts, last_error, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
);
const DEAD_LETTERS = stmt(
  "deadLetters.list",
  `SELECT d.*, (SELECT sum(length(chunk)) FROM texts WHERE name = 'dead:' || d.event_id) AS chars
   FROM dead_letters d WHERE d.sequence > ? ORDER BY d.sequence LIMIT ?`,
);
const DEAD_LETTER = stmt("deadLetters.get", "SELECT * FROM dead_letters WHERE event_id = ?");
const DELETE_DEAD_LETTER = stmt("deadLetters.delete", "DELETE FROM dead_letters WHERE event_id = ?");
const OLDEST_DEAD_LETTERS = stmt("deadLetters.oldest", "SELECT event_id FROM dead_letters ORDER BY at, sequence LIMIT ?");

type SubscriptionRow = {
  sub_id: string;
  cluster: string;
  informer: string;
  spec: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
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
  dead_letters: number;
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

/** A page of a list: `after` is where the next page starts (undefined: this was the last). */
export interface Page<T> {
  items: T[];
  after?: number;
}

export class SubscriptionStore {
  readonly #db: Db;
  readonly #log: DeliveryLog;
  readonly #heldKeys: HeldKeys;
  /** The tables exist: this object holds (or held) a subscription. */
  #created: boolean;
  /** The last spec and position texts read, parsed (a step reads the row twice per delivery). */
  #parsedSpec: { text: string; spec: SubscriptionSpec } | undefined;
  #parsedPosition: { text: string; position: Position } | undefined;
  /** The subscription row as last read, until this store writes (see the guarantees above). */
  #record: SubscriptionRecord | undefined;

  constructor(db: Db) {
    this.#db = db;
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
      this.#record = undefined;
      this.#heldKeys.forget();
      this.#log.forget();
      throw error;
    }
  }

  /** Runs a write: the row kept in memory is read again afterwards. */
  #run(s: Statement, ...bindings: unknown[]): number {
    this.#record = undefined;
    return this.#db.run(s, ...bindings);
  }

  get(): SubscriptionRecord | undefined {
    if (!this.#created) return undefined;
    if (this.#record) return this.#record;
    const row = this.#db.first<SubscriptionRow>(GET);
    if (!row) return undefined;
    this.#record = Object.freeze({
      id: row.sub_id,
      cluster: row.cluster,
      informer: row.informer,
      spec: this.#spec(row.spec),
      secret: row.secret,
      previousSecret:
        row.previous_secret === null || row.previous_secret_until === null ? null : { secret: row.previous_secret, until: row.previous_secret_until },
      declared: row.declared === 1,
      createdAt: row.created_at,
      position: this.#position(row.position),
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
      deadLetters: row.dead_letters,
    });
    return this.#record;
  }

  /** Parsed once per distinct text; frozen, since the same object is handed out again. */
  #spec(text: string): SubscriptionSpec {
    if (this.#parsedSpec?.text !== text) this.#parsedSpec = { text, spec: deepFreeze(JSON.parse(text) as SubscriptionSpec) };
    return this.#parsedSpec.spec;
  }

  #position(text: string): Position {
    if (this.#parsedPosition?.text !== text) this.#parsedPosition = { text, position: deepFreeze(JSON.parse(text) as Position) };
    return this.#parsedPosition.position;
  }

  create(init: {
    id: string;
    cluster: string;
    informer: string;
    spec: SubscriptionSpec;
    secret: string;
    declared: boolean;
    now: number;
    position: Position;
    generation: number;
    nextResyncAt: number | null;
  }): void {
    this.#migrate();
    this.#created = true;
    this.#run(
      INSERT,
      init.id,
      init.cluster,
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

  /** A declared subscription's new configuration; its position, outbox and retry state stay. */
  updateSpec(spec: SubscriptionSpec, secret: string): void {
    this.#run(UPDATE_SPEC, JSON.stringify(spec), secret);
  }

  /** A new secret; the one it replaces is still signed with until `previousUntil` (ms). */
  rotateSecret(secret: string, previousUntil: number): void {
    this.#run(ROTATE_SECRET, previousUntil, secret);
  }

  /**
   * Replaces the stored secrets with their re-sealed forms (or drops an expired previous one),
   * unless a rotation or update changed them since `read`: that one wrote them sealed already.
   */
  resealSecrets(read: { secret: string; previousSecret: string | null }, next: { secret: string; previousSecret: string | null }): void {
    this.#run(RESEAL_SECRETS, next.secret, next.previousSecret, read.secret, read.previousSecret);
  }

  setPosition(position: Position): void {
    this.#run(SET_POSITION, JSON.stringify(position));
  }

  setExpired(expired: boolean): void {
    this.#run(SET_EXPIRED, expired ? 1 : 0);
  }

  setNextResync(at: number | null): void {
    this.#run(SET_NEXT_RESYNC, at);
  }

  setDisabled(reason: string | null): void {
    this.#run(SET_DISABLED, reason);
  }

  setLastError(message: string | null): void {
    this.#run(SET_LAST_ERROR, message);
  }

  recordFailure(now: number, retryAt: number, error: string): void {
    this.#run(SET_FAILING, now, retryAt, error);
  }

  clearFailures(): void {
    this.#run(CLEAR_FAILURES);
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
    const { at, lastSequence, events, attempts } = delivered;
    const next = lastSequence === null ? null : lastSequence + 1;
    this.#run(SET_DELIVERED, JSON.stringify(position), next, at, this.#heldKeys.applyInTx(events, gen), this.#log.appendInTx(attempts));
  }

  /** Takes the sequence numbers up to `lastSequence` (a batch leaving the outbox otherwise). */
  takeSequencesInTx(lastSequence: number): void {
    this.#run(TAKE_SEQUENCES, lastSequence + 1);
  }

  // --- outbox ---------------------------------------------------------------------------------

  outbox(): Outbox | undefined {
    return this.storedOutbox()?.outbox;
  }

  /** The outbox and its texts, as written. */
  storedOutbox(): StoredOutbox | undefined {
    const row = this.#db.first<{
      webhook_id: string;
      events: string;
      advance: string;
      batched: number;
      created_at: number;
      inline_texts: string | null;
      inline_lengths: string | null;
      advances: string | null;
      acked: number;
    }>(GET_OUTBOX);
    if (!row) return undefined;
    const outbox: Outbox = {
      webhookId: row.webhook_id,
      events: JSON.parse(row.events),
      advance: JSON.parse(row.advance),
      batched: row.batched === 1,
      ...(row.advances === null ? {} : { advances: JSON.parse(row.advances) as Position[] }),
      createdAt: row.created_at,
    };
    if (row.inline_texts !== null && row.inline_lengths !== null) {
      let start = 0;
      const texts = (JSON.parse(row.inline_lengths) as number[]).map((length) => row.inline_texts!.slice(start, (start += length)));
      return { outbox, texts, inline: true, acked: row.acked };
    }
    return { outbox, texts: outbox.events.map((_, i) => this.#text(outboxText(i)) ?? ""), inline: false, acked: row.acked };
  }

  /**
   * Stores a batch and its event texts (the outbox is empty), the first `acked` deliveries done;
   * inside a transaction. One statement when the texts fit one chunk together.
   */
  putOutboxInTx(outbox: Outbox, texts: readonly string[], acked = 0): StoredOutbox {
    const chars = texts.reduce((sum, text) => sum + text.length, 0);
    const inline = chars <= CHUNK_CHARS;
    this.#run(
      PUT_OUTBOX,
      outbox.webhookId,
      JSON.stringify(outbox.events),
      JSON.stringify(outbox.advance),
      outbox.batched ? 1 : 0,
      outbox.createdAt,
      inline ? texts.join("") : null,
      inline ? JSON.stringify(texts.map((text) => text.length)) : null,
      outbox.advances === undefined ? null : JSON.stringify(outbox.advances),
      acked,
    );
    if (!inline) texts.forEach((text, i) => this.#putText(outboxText(i), text));
    return { outbox, texts: [...texts], inline, acked };
  }

  /** The first `acked` deliveries of the window are acknowledged (or dead-lettered). */
  setOutboxAckedInTx(acked: number): void {
    this.#run(SET_OUTBOX_ACKED, acked);
  }

  outboxTexts(outbox: Outbox): string[] {
    const stored = this.storedOutbox();
    return stored && stored.outbox.webhookId === outbox.webhookId ? stored.texts : outbox.events.map(() => "");
  }

  /** Removes the outbox and its chunked texts (one statement for an outbox written inline). */
  deleteOutboxInTx(inline = false): void {
    this.#run(DELETE_OUTBOX);
    if (!inline) this.#run(DELETE_OUTBOX_TEXTS);
  }

  /** Moves the outbox's events to the dead letters; inside a transaction. */
  deadLetterOutboxInTx(now: number, attempts: number, lastError: string | null): void {
    const stored = this.storedOutbox();
    if (!stored) return;
    this.deadLetterEventsInTx(stored, stored.outbox.events.map((_, i) => i), now, attempts, lastError);
    this.deleteOutboxInTx(stored.inline);
  }

  /**
   * Moves events `indices` of the stored outbox to the dead letters and takes their sequence
   * numbers; inside a transaction. The outbox row itself is the caller's.
   */
  deadLetterEventsInTx(stored: StoredOutbox, indices: readonly number[], now: number, attempts: number, lastError: string | null): void {
    let added = 0;
    for (const i of indices) {
      const event = stored.outbox.events[i]!;
      // The same event id can die twice (a resync of an unchanged object repeats its id): replace it.
      added += 1 - this.deleteDeadLetterInTx(event.eventId);
      if (stored.inline) this.#putText(deadLetterText(event.eventId), stored.texts[i]!);
      else this.#run(RENAME_TEXT, deadLetterText(event.eventId), outboxText(i));
      this.#run(
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
    }
    this.takeSequencesInTx(stored.outbox.events[indices.at(-1)!]!.sequence);
    this.#run(ADD_DEAD_LETTERS, added);
    countDeadLettersInTx(this.#db, indices.length);
    const excess = this.get()!.deadLetters - DEAD_LETTER_LIMIT;
    if (excess > 0) {
      for (const row of this.#db.all<{ event_id: string }>(OLDEST_DEAD_LETTERS, excess)) this.removeDeadLetterInTx(row.event_id);
    }
  }

  // --- the keys the receiver holds ----------------------------------------------------------------

  /** Starts a replay: answers its generation. */
  nextGenerationInTx(): number {
    this.#run(NEXT_GENERATION);
    return this.get()!.generation;
  }

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

  // --- delivery log and dead letters -----------------------------------------------------------

  /** Records attempts in order (an acknowledgement's are recorded by `recordDeliveredInTx`). */
  recordAttempts(records: readonly DeliveryRecord[]): void {
    this.#log.recordInTx(records);
  }

  /** The delivery counters, brought up to date (metrics/delivery-counters.ts). */
  countDeliveries(): DeliveryCounts {
    return this.transaction(() => countDeliveriesInTx(this.#db, this.#log));
  }

  /** The newest attempts first, before attempt number `before`. */
  deliveries(limit: number, before?: number): Page<DeliveryRecord> {
    return this.#log.page(limit, before);
  }

  /**
   * Dead letters in sequence order after sequence `after`, with their event texts: at most `limit`
   * and about MAX_PAGE_CHARS of text (at least one, however large).
   */
  deadLetters(limit: number, after = 0): Page<{ record: DeadLetterRecord; text: string }> {
    const rows = this.#db.all<DeadLetterRow & { chars: number | null }>(DEAD_LETTERS, after, limit + 1);
    let chars = 0;
    let taken = 0;
    for (; taken < Math.min(rows.length, limit); taken++) {
      chars += rows[taken]!.chars ?? 0;
      if (chars > MAX_PAGE_CHARS && taken > 0) break;
    }
    const items = rows.slice(0, taken).map((row) => ({ record: deadLetterRecord(row), text: this.#text(deadLetterText(row.event_id)) ?? "" }));
    return taken < rows.length ? { items, after: rows[taken - 1]!.sequence } : { items };
  }

  deadLetter(eventId: string): { record: DeadLetterRecord; text: string } | undefined {
    const row = this.#db.first<DeadLetterRow>(DEAD_LETTER, eventId);
    return row && { record: deadLetterRecord(row), text: this.#text(deadLetterText(eventId)) ?? "" };
  }

  /** Deletes a dead letter and its text; answers how many rows it removed (0 or 1), uncounted. */
  deleteDeadLetterInTx(eventId: string): number {
    const deleted = this.#run(DELETE_DEAD_LETTER, eventId);
    this.#run(DELETE_TEXT, deadLetterText(eventId));
    return deleted;
  }

  /** Removes a dead letter (redelivered) and counts it out. */
  removeDeadLetterInTx(eventId: string): void {
    this.#run(ADD_DEAD_LETTERS, -this.deleteDeadLetterInTx(eventId));
  }

  // --- chunked texts ----------------------------------------------------------------------------

  /** Writes a text under a name that is free (outbox texts are cleared with their batch). */
  #putText(name: string, text: string): void {
    for (let part = 0, start = 0; part === 0 || start < text.length; part++, start += CHUNK_CHARS) {
      this.#run(PUT_TEXT_PART, name, part, text.slice(start, start + CHUNK_CHARS));
    }
  }

  #text(name: string): string | undefined {
    const parts = this.#db.all<{ chunk: string }>(TEXT_PARTS, name);
    return parts.length === 0 ? undefined : parts.map((p) => p.chunk).join("");
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
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

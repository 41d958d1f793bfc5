/**
 * The subscription row: a subscription's configuration and secret, its position in the informer's
 * event log, the sequence numbers it has given, its retry state and its counts. One row (id 1).
 *
 * Guarantees:
 * - Sequence numbers are taken when a batch leaves the outbox (acknowledged or dead-lettered), in
 *   the same statement that moves the position: a batch in the outbox numbers its events from
 *   `nextSequence`, and nothing else consumes sequence numbers (but an expiry that skips those a
 *   lost window may have used, markers.ts `expireInTx`).
 * - The keys the receiver holds (held-keys.ts) and the newest attempts (delivery-log.ts) change with
 *   each acknowledged event, in the statement that moves the position.
 * - Only this object writes the row, so it is kept in memory between writes: every statement run
 *   through `run` (by this or any other table of the subscription) forgets it, and so does a
 *   transaction that throws (subscription-store.ts). A step reads the row once; an extra read outside
 *   a transaction is a SQLite transaction of its own (BENCHMARKS.md "Cost per delivery").
 */
import { type Db, type Statement, stmt } from "../sql.ts";
import type { Position } from "./position.ts";
import type { SubscriptionSpec } from "./subscription-spec.ts";

/** Runs a write of any of the subscription's tables: the row kept in memory is read again afterwards. */
export type Run = (s: Statement, ...bindings: unknown[]) => number;

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
  /** The newest replay's generation (see position.ts Marker). */
  generation: number;
  nextResyncAt: number | null;
  failures: number;
  firstFailureAt: number | null;
  nextAttemptAt: number | null;
  lastDeliveryAt: number | null;
  lastError: string | null;
  /** How many dead letters are kept (counted as they change). */
  deadLetters: number;
  /** The bytes of their texts (dead-letters.ts DEAD_LETTER_BYTES bounds it). */
  deadLetterBytes: number;
  /** Dead letters dropped, oldest first, past a bound (a counter: never reset). */
  deadLettersDropped: number;
}

const GET = stmt(
  "subscription.get",
  `SELECT sub_id, cluster, informer, spec, secret, previous_secret, previous_secret_until, declared, created_at, position,
     disabled_reason, expired, next_sequence, generation, next_resync_at, failures, first_failure_at, next_attempt_at,
     last_delivery_at, last_error, dead_letters, dead_letter_bytes, dead_letters_dropped
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

type StoredRow = {
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
  dead_letter_bytes: number;
  dead_letters_dropped: number;
};

export class SubscriptionRow {
  readonly #db: Db;
  /** The last spec and position texts read, parsed (a step reads the row twice per delivery). */
  #parsedSpec: { text: string; spec: SubscriptionSpec } | undefined;
  #parsedPosition: { text: string; position: Position } | undefined;
  /** The row as last read, until a write (see the guarantees above). */
  #record: SubscriptionRecord | undefined;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Runs a write: the row kept in memory is read again afterwards. */
  readonly run: Run = (s, ...bindings) => {
    this.#record = undefined;
    return this.#db.run(s, ...bindings);
  };

  /** Forgets the row kept in memory (a transaction that read or wrote it rolled back). */
  forget(): void {
    this.#record = undefined;
  }

  /** The row, read once per write; undefined until `create` (the caller knows whether the table exists). */
  get(): SubscriptionRecord | undefined {
    if (this.#record) return this.#record;
    const row = this.#db.first<StoredRow>(GET);
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
      deadLetterBytes: row.dead_letter_bytes,
      deadLettersDropped: row.dead_letters_dropped,
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
    this.run(
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
    this.run(UPDATE_SPEC, JSON.stringify(spec), secret);
  }

  /** A new secret; the one it replaces is still signed with until `previousUntil` (ms). */
  rotateSecret(secret: string, previousUntil: number): void {
    this.run(ROTATE_SECRET, previousUntil, secret);
  }

  /**
   * Replaces the stored secrets with their re-sealed forms (or drops an expired previous one),
   * unless a rotation or update changed them since `read`: that one wrote them sealed already.
   */
  resealSecrets(read: { secret: string; previousSecret: string | null }, next: { secret: string; previousSecret: string | null }): void {
    this.run(RESEAL_SECRETS, next.secret, next.previousSecret, read.secret, read.previousSecret);
  }

  setPosition(position: Position): void {
    this.run(SET_POSITION, JSON.stringify(position));
  }

  setExpired(expired: boolean): void {
    this.run(SET_EXPIRED, expired ? 1 : 0);
  }

  setNextResync(at: number | null): void {
    this.run(SET_NEXT_RESYNC, at);
  }

  setDisabled(reason: string | null): void {
    this.run(SET_DISABLED, reason);
  }

  setLastError(message: string | null): void {
    this.run(SET_LAST_ERROR, message);
  }

  recordFailure(now: number, retryAt: number, error: string): void {
    this.run(SET_FAILING, now, retryAt, error);
  }

  clearFailures(): void {
    this.run(CLEAR_FAILURES);
  }

  /**
   * Deliveries of `events` acknowledged by `attempts` (`lastSequence` the last event's, and the
   * last attempt `at`; null: none, only events filtered out): moves to `position`, takes their
   * sequence numbers, stores the keys they changed (`heldChanges`, held-keys.ts) and the attempts
   * (`logPending`, delivery-log.ts) and ends any failure streak, in one statement.
   */
  recordDeliveredInTx(
    delivered: { at: number | null; lastSequence: number | null },
    position: Position,
    heldChanges: string,
    logPending: string,
  ): void {
    const { at, lastSequence } = delivered;
    const next = lastSequence === null ? null : lastSequence + 1;
    this.run(SET_DELIVERED, JSON.stringify(position), next, at, heldChanges, logPending);
  }

  /** Takes the sequence numbers up to `lastSequence` (a batch leaving the outbox otherwise). */
  takeSequencesInTx(lastSequence: number): void {
    this.run(TAKE_SEQUENCES, lastSequence + 1);
  }

  /** Starts a replay: answers its generation. */
  nextGenerationInTx(): number {
    this.run(NEXT_GENERATION);
    return this.get()!.generation;
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

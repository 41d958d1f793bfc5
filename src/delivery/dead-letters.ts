/**
 * A subscription's dead letters: events whose delivery used up its retry budget, kept with their
 * texts for `GET /subscriptions/{id}/dead-letters` and redelivery.
 *
 * Guarantees:
 * - The newest dead letters are kept, at most DEAD_LETTER_LIMIT of them and DEAD_LETTER_BYTES of
 *   their texts (review B10b: 10,000 events of up to ~3 MB each could fill the object's 10 GB):
 *   past either bound the oldest are dropped, and counted (`deadLettersDropped`, durable, never
 *   reset), never failing the subscription; the newest is kept whatever its size. Their count and
 *   bytes are kept in the subscription row, changed in the same transaction as the rows, so a
 *   status never counts rows (#7.21).
 * - An event leaves the outbox for the dead letters with its text moved, not copied, and its
 *   sequence numbers taken, in the caller's transaction.
 * - A page carries at most about MAX_PAGE_CHARS of event texts (at least one dead letter, however
 *   large).
 */
import { type Db, stmt } from "../sql.ts";
import type { LogEventType } from "../cache/event-log.ts";
// A run-time import of src/metrics (the dead-letter counter); the layering note is in subscription-store.ts.
import { countDeadLettersInTx } from "./delivery-counters.ts";
import type { OutboxEvent, StoredOutbox } from "./outbox-store.ts";
import type { Page } from "./position.ts";
import type { Run, SubscriptionRow } from "./subscription-row.ts";
import { deadLetterText, outboxText, type StoredTexts } from "./stored-texts.ts";

export const DEAD_LETTER_LIMIT = 10_000;
/** Bytes of event texts a subscription's dead letters keep at most (64 MiB: 10,000 events of 4 KB fit in 40 MB; of 3 MB events, the newest ~20). */
export const DEAD_LETTER_BYTES = 64 * 1024 * 1024;
/** Bodies one page of dead letters carries at most (at least one dead letter, however large). */
export const MAX_PAGE_CHARS = 4 * 1024 * 1024;

export interface DeadLetterRecord extends OutboxEvent {
  attempts: number;
  lastError: string | null;
  deadLetteredAt: number;
}

const ADD_DEAD_LETTERS = stmt("subscription.addDeadLetters", "UPDATE subscription SET dead_letters = dead_letters + ? WHERE id = 1");
const ADD_DEAD_LETTER_BYTES = stmt("subscription.addDeadLetterBytes", "UPDATE subscription SET dead_letter_bytes = dead_letter_bytes + ? WHERE id = 1");
const ADD_DROPPED = stmt("subscription.addDeadLettersDropped", "UPDATE subscription SET dead_letters_dropped = dead_letters_dropped + ? WHERE id = 1");
const TEXT_BYTES = stmt("deadLetters.textBytes", "SELECT coalesce(sum(octet_length(chunk)), 0) AS bytes FROM texts WHERE name = ?");
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

export class DeadLetters {
  readonly #db: Db;
  readonly #run: Run;
  readonly #texts: StoredTexts;
  /** The row keeps the count and takes the sequence numbers. */
  readonly #row: Pick<SubscriptionRow, "get" | "takeSequencesInTx">;
  /** DEAD_LETTER_BYTES, lower in tests. */
  readonly #maxBytes: number;

  constructor(db: Db, run: Run, texts: StoredTexts, row: Pick<SubscriptionRow, "get" | "takeSequencesInTx">, maxBytes = DEAD_LETTER_BYTES) {
    this.#db = db;
    this.#run = run;
    this.#texts = texts;
    this.#row = row;
    this.#maxBytes = maxBytes;
  }

  /**
   * Moves events `indices` of the stored outbox to the dead letters and takes their sequence
   * numbers; inside a transaction. The outbox row itself is the caller's.
   */
  addInTx(stored: StoredOutbox, indices: readonly number[], now: number, attempts: number, lastError: string | null): void {
    let added = 0;
    for (const i of indices) {
      const event = stored.outbox.events[i]!;
      // The same event id can die twice (a resync of an unchanged object repeats its id): replace it.
      added += 1 - this.deleteInTx(event.eventId);
      if (stored.inline) this.#texts.put(deadLetterText(event.eventId), stored.texts[i]!);
      else this.#texts.rename(outboxText(i), deadLetterText(event.eventId));
      this.#run(ADD_DEAD_LETTER_BYTES, this.#textBytes(event.eventId));
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
    this.#row.takeSequencesInTx(stored.outbox.events[indices.at(-1)!]!.sequence);
    this.#run(ADD_DEAD_LETTERS, added);
    countDeadLettersInTx(this.#db, indices.length);
    this.#dropOldestInTx();
  }

  /** Drops the oldest dead letters past DEAD_LETTER_LIMIT or the byte bound (keeping the newest), and counts them. */
  #dropOldestInTx(): void {
    let dropped = 0;
    for (;;) {
      const { deadLetters, deadLetterBytes } = this.#row.get()!;
      const excess = Math.max(deadLetters - DEAD_LETTER_LIMIT, deadLetterBytes > this.#maxBytes ? 1 : 0);
      if (excess <= 0 || deadLetters <= 1) break;
      for (const row of this.#db.all<{ event_id: string }>(OLDEST_DEAD_LETTERS, Math.min(excess, deadLetters - 1))) this.removeInTx(row.event_id);
      dropped += Math.min(excess, deadLetters - 1);
    }
    if (dropped > 0) this.#run(ADD_DROPPED, dropped);
  }

  #textBytes(eventId: string): number {
    return this.#db.first<{ bytes: number }>(TEXT_BYTES, deadLetterText(eventId))!.bytes;
  }

  /**
   * Dead letters in sequence order after sequence `after`, with their event texts: at most `limit`
   * and about MAX_PAGE_CHARS of text (at least one, however large).
   */
  page(limit: number, after = 0): Page<{ record: DeadLetterRecord; text: string }> {
    const rows = this.#db.all<DeadLetterRow & { chars: number | null }>(DEAD_LETTERS, after, limit + 1);
    let chars = 0;
    let taken = 0;
    for (; taken < Math.min(rows.length, limit); taken++) {
      chars += rows[taken]!.chars ?? 0;
      if (chars > MAX_PAGE_CHARS && taken > 0) break;
    }
    const items = rows.slice(0, taken).map((row) => ({ record: deadLetterRecord(row), text: this.#texts.get(deadLetterText(row.event_id)) ?? "" }));
    return taken < rows.length ? { items, after: rows[taken - 1]!.sequence } : { items };
  }

  get(eventId: string): { record: DeadLetterRecord; text: string } | undefined {
    const row = this.#db.first<DeadLetterRow>(DEAD_LETTER, eventId);
    return row && { record: deadLetterRecord(row), text: this.#texts.get(deadLetterText(eventId)) ?? "" };
  }

  /** Deletes a dead letter and its text (its bytes counted out); answers how many rows it removed (0 or 1), uncounted. */
  deleteInTx(eventId: string): number {
    const bytes = this.#textBytes(eventId);
    const deleted = this.#run(DELETE_DEAD_LETTER, eventId);
    this.#texts.delete(deadLetterText(eventId));
    if (bytes > 0) this.#run(ADD_DEAD_LETTER_BYTES, -bytes);
    return deleted;
  }

  /** Removes a dead letter (redelivered) and counts it out. */
  removeInTx(eventId: string): void {
    this.#run(ADD_DEAD_LETTERS, -this.deleteInTx(eventId));
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

/**
 * A subscription's outbox: what is being delivered, exactly as it will be sent again.
 *
 * Guarantees:
 * - The outbox holds either one batch (`maxBatchSize` > 1, or a row from before windows) or a
 *   window: up to WINDOW_DELIVERIES single-event deliveries, sent in order, each with the position
 *   to move to once it is acknowledged (or dead-lettered). Events keep their ids, sequence numbers
 *   and bodies across retries, evictions and restarts, and `acked` counts the deliveries at the
 *   front whose acknowledgement is durable, so the cursor never moves ahead of an unacknowledged
 *   event (DESIGN invariant 4), and whatever may have been sent is sent again as written. (Most
 *   windows of log events are never written here: fill.ts rebuilds them from the position.)
 * - A batch whose texts fit one chunk is one row (texts inline): writing the outbox is one
 *   statement, removing it another. Larger batches keep their texts in chunks (stored-texts.ts).
 * - A batch in the outbox numbers its events from the subscription's `nextSequence`; the numbers
 *   are taken only when it leaves (subscription-row.ts).
 * - The outbox records whether it is a batch (`{"events": [...]}`) or one event: a retry sends the
 *   body that was written, whatever `maxBatchSize` says now (#7.12).
 */
import { type Db, stmt } from "../sql.ts";
import type { LogEventType } from "../cache/event-log.ts";
import type { Position } from "./position.ts";
import type { Run } from "./subscription-row.ts";
import { CHUNK_CHARS, outboxText, type StoredTexts } from "./stored-texts.ts";

/** What a dead letter and the delivery log say about one event of a batch. */
export interface OutboxEvent {
  eventId: string;
  sequence: number;
  type: LogEventType;
  key: string;
  uid: string;
  resourceVersion: string;
  /**
   * When the informer logged the change (ms; the log event's `at`): a CloudEvent's `time`
   * (cloudevents.ts), the same when a window is rebuilt from the log. Absent for a replay's or
   * resync's objects, whose outbox is always stored (its `createdAt` stands in), and in a dead letter.
   */
  at?: number;
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

export class OutboxStore {
  readonly #db: Db;
  readonly #run: Run;
  readonly #texts: StoredTexts;

  constructor(db: Db, run: Run, texts: StoredTexts) {
    this.#db = db;
    this.#run = run;
    this.#texts = texts;
  }

  /** The outbox and its texts, as written. */
  stored(): StoredOutbox | undefined {
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
    return { outbox, texts: outbox.events.map((_, i) => this.#texts.get(outboxText(i)) ?? ""), inline: false, acked: row.acked };
  }

  /**
   * Stores a batch and its event texts (the outbox is empty), the first `acked` deliveries done;
   * inside a transaction. One statement when the texts fit one chunk together.
   */
  putInTx(outbox: Outbox, texts: readonly string[], acked = 0): StoredOutbox {
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
    if (!inline) texts.forEach((text, i) => this.#texts.put(outboxText(i), text));
    return { outbox, texts: [...texts], inline, acked };
  }

  /** The first `acked` deliveries of the window are acknowledged (or dead-lettered). */
  setAckedInTx(acked: number): void {
    this.#run(SET_OUTBOX_ACKED, acked);
  }

  /** Removes the outbox and its chunked texts (one statement for an outbox written inline). */
  deleteInTx(inline = false): void {
    this.#run(DELETE_OUTBOX);
    if (!inline) this.#texts.deleteOutboxTexts();
  }
}

/**
 * The outbox as this instance knows it (written, read back, or a window of log events built in
 * memory), and the progress it holds in memory until a transaction stores it. Every write of the
 * position goes through `transaction`, so none overtakes or loses held progress.
 *
 * Guarantees:
 * - Anything sent is sent again exactly as it was (id, sequence number, body). A body is in the
 *   durable outbox before it is sent (a batch, a page of a replay or resync, an instance's first
 *   window), or it is one of a window of log events at `maxBatchSize` 1 kept in memory: the stored
 *   position and next sequence number rebuild that window byte for byte after a crash, since ids
 *   and texts come from the log's immutable events, the spec and the sequence number. What would
 *   build it otherwise stores it first: a spec update, and anything stored about it other than an
 *   acknowledgement (a failure, a dead letter, a 410), so retries and restarts send it as sent.
 *   Only while the stored position is in the newer half of the retained log (fill.ts `rebuildable`)
 *   is a window kept in memory: retention must not remove its events before a restart reads them.
 *   Should it still (an outage while half the log turns over), an instance that expires from the
 *   position it woke at skips WINDOW_DELIVERIES sequence numbers, so that no number names two
 *   events (markers.ts); the keys such a lost window sent are not known to a later sweep
 *   (architecture.md "Windows").
 * - At `maxBatchSize` 1 acknowledgements (and events filtered out) are held in memory and stored
 *   together: after WINDOW_DELIVERIES of them, WINDOW_MS after the last store (the idle step's
 *   alarm comes back for it), and before a failure or any other write of the position. A window's
 *   bookkeeping is then one delivery-log row and one UPDATE (issue 19). A crash loses only the
 *   memory: what was not stored is sent again from the stored position. A window read back from
 *   storage stores each acknowledgement as it comes, and an instance stores its windows in the
 *   outbox until it has stored an acknowledgement, so repeated crashes still progress.
 * - What is held names each key once (DESIGN invariant 10): before a delivery of a key that is held
 *   is sent, what is held is stored (`holdsKeyOf`, deliver.ts). So what a crash sends again, from
 *   the stored position up to the delivery in flight, holds at most one event of each key, and
 *   that is the key's newest event sent: a resend repeats it, never an older one after it. One more
 *   write only where a key repeats within what is held (a graceful delete's update, then delete).
 */
import type { Clock } from "../clock.ts";
import { batchBody } from "./cloudevents.ts";
import type { DeliveryRecord } from "./delivery-log.ts";
import type { OutboxEvent, StoredOutbox } from "./outbox-store.ts";
import type { Position } from "./position.ts";
import type { SubscriptionRecord } from "./subscription-row.ts";
import type { SubscriptionStore } from "./subscription-store.ts";

/**
 * At `maxBatchSize` 1 a window is up to this many deliveries, and acknowledgements are stored this
 * many at a time at most: one commit and one UPDATE per window instead of per delivery (BENCHMARKS.md
 * "Cost per delivery", "Cost"). A crash resends at most this many acknowledged deliveries, as sent.
 */
export const WINDOW_DELIVERIES = 32;
/**
 * Acknowledgements held in memory are stored once this long has passed since the last store (at
 * the next acknowledgement, or at the idle step its alarm brings): how old a delivery sent again
 * after a crash can be. (At 1 s, 99 subscriptions sharing one thread stored every ~10 deliveries
 * instead of 32.)
 */
export const WINDOW_MS = 5_000;

/** Progress not stored yet, in order (see OutboxWindow.held). */
export interface Held {
  /** The attempts that acknowledged them, for the delivery log. */
  records: DeliveryRecord[];
  /** The events acknowledged: their sequence numbers are taken and their keys held when stored. */
  events: OutboxEvent[];
  /** The position they reach. */
  advance: Position;
}

/** One request of an outbox: the whole batch, or one event of a window. */
export interface Delivery {
  webhookId: string;
  events: OutboxEvent[];
  /** The events' indices in the outbox. */
  indices: number[];
  body: string;
  /** The events' texts, in order (a queue sends one message each: queue-sender.ts). */
  texts: readonly string[];
  /** The position once it is acknowledged or dead-lettered. */
  advance: Position;
}

/** How many requests an outbox is: a window's events, or one. */
export function deliveryCount(stored: StoredOutbox): number {
  return stored.outbox.advances ? stored.outbox.events.length : 1;
}

export function deliveryAt(stored: StoredOutbox, i: number): Delivery {
  const { outbox, texts } = stored;
  if (!outbox.advances) {
    const body = outbox.batched ? batchBody(texts) : texts[0]!;
    return { webhookId: outbox.webhookId, events: outbox.events, indices: outbox.events.map((_, j) => j), body, texts, advance: outbox.advance };
  }
  const event = outbox.events[i]!;
  return { webhookId: event.eventId, events: [event], indices: [i], body: texts[i]!, texts: [texts[i]!], advance: outbox.advances[i]! };
}

export class OutboxWindow {
  readonly #store: SubscriptionStore;
  readonly #clock: Clock;
  /**
   * The outbox (a batch, or a window of single deliveries) as this object wrote, read or built it
   * (memory only; null: none; undefined: not known, read it). Only this object writes the outbox:
   * it is set after the transaction that wrote it committed, and forgotten before any transaction
   * that changes it. Not `#durable`: a window built from the log and kept in memory only.
   */
  #outbox: StoredOutbox | null | undefined;
  #durable = true;
  /** Deliveries of `#outbox` acknowledged so far, stored or held (≥ its stored `acked`; memory only). */
  #acked = 0;
  /** This instance wrote or built `#outbox`, so it knows what was sent of it and may hold acknowledgements. */
  #windowed = false;
  /** Progress made since the position was stored, held in memory until `transaction` stores it. */
  #held: Held | null = null;
  /** When progress was last stored (or an outbox written or read). */
  #settledAt = 0;
  /** This instance stored an acknowledgement: its windows of log events may stay in memory. */
  #proven = false;
  /**
   * This instance moved the position (held or stored): what was sent before the position it
   * expires from, it sent itself or sent again with the same numbers.
   */
  #progressed = false;

  constructor(store: SubscriptionStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /** The outbox as last written, read or built (undefined: not known; see `stored`). */
  get current(): StoredOutbox | null | undefined {
    return this.#outbox;
  }

  /** The current outbox is stored (not a window kept in memory). */
  get durable(): boolean {
    return this.#durable;
  }

  get acked(): number {
    return this.#acked;
  }

  get windowed(): boolean {
    return this.#windowed;
  }

  get held(): Held | null {
    return this.#held;
  }

  get settledAt(): number {
    return this.#settledAt;
  }

  get progressed(): boolean {
    return this.#progressed;
  }

  /** Windows of log events may stay in memory: this instance stored, or holds, an acknowledgement. */
  get mayKeepInMemory(): boolean {
    return this.#proven || (this.#held?.records.length ?? 0) > 0;
  }

  /**
   * The stored record, with the progress held in memory applied: the position and sequence numbers
   * it reaches (a failure is never held, so the retry state is the stored one).
   */
  record(): SubscriptionRecord | undefined {
    const record = this.#store.get();
    const held = this.#held;
    if (!record || !held) return record;
    const replayEnded = record.position.marker?.kind === "replay" && held.advance.marker === null;
    const last = held.events.at(-1);
    return {
      ...record,
      position: held.advance,
      nextSequence: last ? Math.max(record.nextSequence, last.sequence + 1) : record.nextSequence,
      lastDeliveryAt: held.records.at(-1)?.at ?? record.lastDeliveryAt,
      expired: record.expired && !replayEnded,
    };
  }

  /**
   * A transaction that first stores the progress held in memory. Every write of the position goes
   * through here, so none overtakes or loses it. `record` is as `record()` gave it.
   */
  transaction<T>(record: SubscriptionRecord, fn: () => T): T {
    const held = this.#held;
    if (!held) return this.#store.transaction(fn);
    const stored = this.#outbox;
    const acked = this.#acked;
    // A stored outbox moves with its held acknowledgements (a window in memory has nothing stored).
    const moved = stored && this.#durable && acked > stored.acked ? stored : null;
    const before = this.#store.get()!.position;
    const result = this.#store.transaction(() => {
      if (moved && acked === deliveryCount(moved)) this.#store.outbox.deleteInTx(moved.inline);
      else if (moved) this.#store.outbox.setAckedInTx(acked);
      // The position, the sequence numbers, keys and attempts of what was delivered, the end of any failure streak: one statement.
      const delivered = { at: held.records.at(-1)?.at ?? null, lastSequence: held.events.at(-1)?.sequence ?? null, events: held.events, attempts: held.records };
      this.#store.recordDeliveredInTx(delivered, held.advance, record.generation);
      if (before.marker?.kind === "replay" && held.advance.marker === null) this.#store.row.setExpired(false);
      return fn();
    });
    // Memory follows only once the transaction committed (a thrown one leaves it held).
    this.#held = null;
    this.#settledAt = this.#clock.now();
    if (held.records.length > 0) this.#proven = true;
    if (moved) this.#outbox = acked === deliveryCount(moved) ? null : { ...moved, acked };
    return result;
  }

  /** Stores the progress held in memory now: for a reader of what is stored (the delivery log, the counters). */
  flush(): void {
    const record = this.record();
    if (record && this.#held) this.transaction(record, () => undefined);
  }

  /** Holds progress: `events` acknowledged by `attempt` (none: filtered out), reaching `advance`. */
  hold(advance: Position, events: readonly OutboxEvent[], attempt?: DeliveryRecord): Held {
    this.#progressed = true;
    const held = (this.#held ??= { records: [], events: [], advance });
    held.advance = advance;
    held.events.push(...events);
    if (attempt) held.records.push(attempt);
    return held;
  }

  /** An acknowledgement of `stored` may be held in memory: this instance wrote or built it, and it is still the outbox. */
  mayHoldAcknowledgementOf(stored: StoredOutbox): boolean {
    return this.#windowed && this.#outbox === stored;
  }

  /**
   * Holds the acknowledgement of delivery `index` (see `mayHoldAcknowledgementOf`): stored with a
   * later write, at the latest after WINDOW_DELIVERIES or WINDOW_MS.
   */
  holdAcknowledgement(record: SubscriptionRecord, index: number, delivery: Delivery, attempt: DeliveryRecord, now: number): void {
    this.#acked = index + 1;
    const held = this.hold(delivery.advance, delivery.events, attempt);
    if (held.records.length >= WINDOW_DELIVERIES || now - this.#settledAt >= WINDOW_MS) this.transaction(record, () => undefined);
  }

  /**
   * Some of `events`' keys have an acknowledgement held in memory: one that a crash would lose, so
   * that the restart would send that key's older event again after these (invariant 10). The
   * caller stores what is held before it sends them.
   */
  holdsKeyOf(events: readonly OutboxEvent[]): boolean {
    const held = this.#held?.events;
    if (!held || held.length === 0) return false;
    return events.some((event) => held.some((h) => h.key === event.key));
  }

  /** A delivery moved the position in storage (acknowledged or dead-lettered). */
  markMoved(): void {
    this.#proven = this.#progressed = true;
  }

  /** A window kept in memory, not yet all acknowledged (null: none): what a spec update stores as it is. */
  unsentInMemory(): StoredOutbox | null {
    return this.#outbox && !this.#durable && this.#acked < deliveryCount(this.#outbox) ? this.#outbox : null;
  }

  /** The outbox as stored now (null: none), or a window built in memory (`durable` false); `windowed` when this instance wrote or built it. */
  set(outbox: StoredOutbox | null, windowed: boolean, durable = true): void {
    this.#outbox = outbox;
    this.#durable = durable;
    this.#acked = outbox?.acked ?? 0;
    this.#windowed = windowed;
    if (durable) this.#settledAt = this.#clock.now();
  }

  /** The outbox, read from storage if this instance does not know it. */
  stored(): StoredOutbox | null {
    // Read back from storage: what of it was sent before is unknown, so each acknowledgement is stored.
    if (this.#outbox === undefined) this.set(this.#store.storedOutbox() ?? null, false);
    return this.#outbox!;
  }
}

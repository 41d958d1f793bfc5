/**
 * The delivery step: signs and POSTs one request of the outbox (or sends its events to the
 * subscription's queue: queue-sender.ts), decides from the answer
 * (retry-schedule.ts) and records what it decided, with what it moved, in one transaction.
 *
 * Guarantees:
 * - Invariant 4: the cursor moves past an event only when the endpoint answered 2xx for it, or it
 *   was dead-lettered after the retry budget. Delivery is at least once; ids are stable.
 * - A request's body is the outbox's as written: a 2xx applies every event in it (#7.12), and a
 *   retry, a dead letter or a restart sends it as it was sent (outbox-window.ts).
 * - Invariant 10: a delivery of a key whose earlier event is acknowledged in memory only is sent
 *   after that acknowledgement is stored, so a crash never resends a key's older event after a
 *   newer one (outbox-window.ts `holdsKeyOf`).
 * - A 410 disables the subscription, on the stream and on a redelivery alike; nothing is sent
 *   until it is enabled.
 * - The body goes in the subscription's `format` (cloudevents.ts), built from the stored texts at
 *   each attempt; CloudEvents' `time` comes with the events (the log's time, else the outbox's
 *   creation), so a retry or a rebuilt window sends the same body.
 * - A secret that cannot be opened (a missing or wrong ENCRYPTION_KEY) is a failed attempt,
 *   retried with backoff, never an alarm failing in a tight loop.
 */
import type { Clock, Random } from "../clock.ts";
import { ApiError } from "../errors.ts";
import type { DeliveryRecord } from "./delivery-log.ts";
import { logDelivery } from "./log-lines.ts";
import { advanceInTx } from "./markers.ts";
import { DEFAULT_FORMAT, type EventToSend, shapeBody, type ShapedBody } from "./cloudevents.ts";
import { deliveryAt, deliveryCount, type OutboxWindow } from "./outbox-window.ts";
import type { OutboxEvent, StoredOutbox } from "./outbox-store.ts";
import type { QueueSend } from "./queue-sender.ts";
import { decide } from "./retry-schedule.ts";
import { CLUSTER_HEADER, type Send, type SendResult } from "./sender.ts";
import { DeliverySigner } from "./sign.ts";
import type { SubscriptionSecrets } from "./stored-secrets.ts";
import type { SubscriptionRecord } from "./subscription-row.ts";
import type { SubscriptionStore } from "./subscription-store.ts";
import { type DeliveryAttempt, deliveryAttempt } from "./subscription-views.ts";

export class Deliverer {
  readonly #store: SubscriptionStore;
  readonly #window: OutboxWindow;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #send: Send;
  readonly #sendToQueue: QueueSend;
  readonly #secrets: SubscriptionSecrets;
  /** The secret's HMAC or Ed25519 key, imported once. */
  readonly #signer = new DeliverySigner();

  constructor(deps: { store: SubscriptionStore; window: OutboxWindow; clock: Clock; random: Random; send: Send; sendToQueue: QueueSend; secrets: SubscriptionSecrets }) {
    this.#store = deps.store;
    this.#window = deps.window;
    this.#clock = deps.clock;
    this.#random = deps.random;
    this.#send = deps.send;
    this.#sendToQueue = deps.sendToQueue;
    this.#secrets = deps.secrets;
  }

  /** Sends the outbox's next unacknowledged request and records the decision. */
  async deliver(record: SubscriptionRecord, stored: StoredOutbox): Promise<void> {
    const window = this.#window;
    // The body as the outbox was written: a 2xx applies every event in it (#7.12).
    const index = window.acked;
    const delivery = deliveryAt(stored, index);
    const count = deliveryCount(stored);
    if (window.holdsKeyOf(delivery.events)) {
      // A key's earlier event is acknowledged in memory only: a crash after this send would send
      // it again after this one (invariant 10). Store what is held first; the outbox, if stored,
      // goes on as the one the transaction left (still this instance's to hold acknowledgements of).
      window.transaction(record, () => undefined);
      stored = window.current!;
    }
    const result = await this.#attempt(record, delivery.webhookId, delivery.texts, () => {
      const format = record.spec.format ?? DEFAULT_FORMAT;
      return format === DEFAULT_FORMAT
        ? { body: delivery.body, contentType: "application/json", headers: {} }
        : shapeBody(format, record, delivery.indices.map((i) => toSend(stored.outbox.events[i]!, stored.texts[i]!, stored.outbox.createdAt)), stored.outbox.batched);
    });
    const now = this.#clock.now();
    const retry = record.failures > 0 ? { failures: record.failures, firstFailureAt: record.firstFailureAt ?? now } : undefined;
    const decision = decide(result, retry, now, this.#random, record.spec.retryBudgetSeconds * 1000);
    const eventIds = delivery.events.map((e) => e.eventId);
    const attempt = record.failures + 1;
    const attempted = attemptRecord(eventIds, delivery.events[0]!.sequence, attempt, result, now);
    if (decision.kind === "delivered" && record.failures === 0 && window.mayHoldAcknowledgementOf(stored)) {
      window.holdAcknowledgement(record, index, delivery, attempted, now);
      return;
    }
    // Read after the await: a spec update meanwhile may have stored the window kept in memory.
    const current = window.current ?? stored;
    const durable = window.durable;
    const windowed = window.windowed;
    const store = this.#store;
    let written = current;
    window.transaction(record, () => {
      // Anything but a held acknowledgement is stored with its window: a retry, a dead letter or a
      // restart sends it as it was sent.
      if (!durable) written = store.outbox.putInTx(current.outbox, current.texts, index);
      if (decision.kind !== "delivered") store.recordAttempts([attempted]);
      switch (decision.kind) {
        case "delivered":
          if (index + 1 === count) store.outbox.deleteInTx(written.inline);
          else store.outbox.setAckedInTx(index + 1);
          // The position, the delivery's sequence numbers, keys and attempt, the end of any failure streak: one statement.
          store.recordDeliveredInTx(
            { at: now, lastSequence: delivery.events.at(-1)!.sequence, events: delivery.events, attempts: [attempted] },
            delivery.advance,
            record.generation,
          );
          if (record.position.marker?.kind === "replay" && delivery.advance.marker === null) store.row.setExpired(false);
          return;
        case "retry":
          store.row.recordFailure(now, decision.at, result.error ?? "failed");
          return;
        case "dead-letter":
          // The receiver may get these by redelivery: count them as sent, so a later replay's
          // sweep can retract them.
          store.applyDeliveredInTx(delivery.events, record.generation);
          store.deadLetters.addInTx(written, delivery.indices, now, attempt, result.error ?? null);
          if (index + 1 === count) store.outbox.deleteInTx(written.inline);
          else store.outbox.setAckedInTx(index + 1);
          store.row.clearFailures();
          store.row.setLastError(`dead-lettered ${eventIds.length} event(s) after ${attempt} attempts: ${result.error ?? "failed"}`);
          advanceInTx(store, record.position, delivery.advance);
          return;
        case "disable":
          this.#disableInTx(now, result);
          return;
      }
    });
    logDelivery(record, decision.kind, result, attempt, eventIds.length);
    const moved = decision.kind === "delivered" || decision.kind === "dead-letter";
    const acked = moved ? index + 1 : index;
    if (moved) window.markMoved();
    window.set(acked === count ? null : { ...written, acked }, windowed);
  }

  /**
   * One attempt to deliver a dead letter again, now; it leaves the dead letters on a 2xx. A
   * disabled subscription sends nothing (enable it first), and a 410 answer disables it, as it
   * would on the stream.
   */
  async redeliver(id: string): Promise<{ delivered: boolean; attempt: DeliveryAttempt }> {
    const store = this.#store;
    const record = store.get();
    const dead = store.deadLetters.get(id);
    if (!record || !dead) throw new ApiError("NotFound", `no dead letter '${id}'`);
    if (record.disabledReason !== null) {
      throw new ApiError("Conflict", `the subscription is disabled (${record.disabledReason}): enable it before redelivering`);
    }
    const result = await this.#attempt(record, id, [dead.text], () =>
      shapeBody(record.spec.format ?? DEFAULT_FORMAT, record, [toSend(dead.record, dead.text, this.#clock.now())], record.spec.maxBatchSize > 1),
    );
    const now = this.#clock.now();
    const attempt: DeliveryRecord = attemptRecord([id], dead.record.sequence, dead.record.attempts + 1, result, now);
    const delivered = result.status !== undefined && result.status >= 200 && result.status < 300;
    store.transaction(() => {
      store.recordAttempts([attempt]);
      if (delivered) store.deadLetters.removeInTx(id);
      if (result.status === 410) this.#disableInTx(now, result);
    });
    return { delivered, attempt: deliveryAttempt(attempt) };
  }

  #disableInTx(now: number, result: SendResult): void {
    this.#store.row.clearFailures();
    this.#store.row.setLastError(result.error ?? "HTTP 410");
    this.#store.row.setDisabled(`the endpoint answered 410 Gone at ${new Date(now).toISOString()}`);
  }

  /** One attempt to send the request `shape` builds (to the URL), or `texts` (to the queue, one message each). */
  async #attempt(record: SubscriptionRecord, webhookId: string, texts: readonly string[], shape: () => ShapedBody): Promise<SendResult> {
    const { url, queue } = record.spec;
    const timeoutMs = record.spec.timeoutSeconds * 1000;
    // Not signed nor shaped: only Workers of the account produce to and consume from a queue.
    if (url === undefined) return this.#sendToQueue({ queue: queue!, subscription: record.id, texts, timeoutMs });
    const { body, contentType, headers: extra } = shape();
    const now = this.#clock.now();
    let secrets: { current: string; previous?: string };
    try {
      secrets = await this.#secrets.signing(record, now);
    } catch (error) {
      // A missing or wrong ENCRYPTION_KEY: retried with backoff like an unreachable endpoint, and
      // the status's lastError says why, rather than an alarm failing in a tight loop.
      return { durationMs: 0, error: `cannot sign the delivery: ${error instanceof Error ? error.message : String(error)}` };
    }
    const headers = await this.#signer.sign(secrets.current, webhookId, Math.floor(now / 1000), body, secrets.previous, contentType);
    return this.#send({ url, headers: { ...extra, ...headers, [CLUSTER_HEADER]: record.cluster }, body, timeoutMs });
  }
}

/** `otherwise`: the time of an event the log did not time (a marker's object, a dead letter). */
const toSend = (event: OutboxEvent, text: string, otherwise: number): EventToSend => ({
  eventId: event.eventId,
  type: event.type,
  key: event.key,
  time: event.at ?? otherwise,
  text,
});

function attemptRecord(eventIds: string[], sequence: number, attempt: number, result: SendResult, at: number): DeliveryRecord {
  return {
    eventIds,
    sequence,
    attempt,
    status: result.status ?? null,
    durationMs: result.durationMs,
    at,
    error: result.error ?? null,
    ...(result.response === undefined ? {} : { response: result.response }),
  };
}

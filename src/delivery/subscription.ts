/**
 * A webhook subscription: client-go's per-listener `processorListener`, made durable and remote.
 * It follows the informer's event log with its own cursor, filters, signs and POSTs, one batch at
 * a time, and runs as a step function over durable state (subscription-store.ts), driven by its
 * Durable Object's alarm. Each step is one of:
 * - deliver the outbox's next request (deliver.ts; invariant 4: the cursor moves past an event only
 *   once it was acknowledged or dead-lettered, so delivery is at least once, with stable ids);
 * - start a due resync (markers.ts);
 * - fill the outbox from the log or a marker's expansion (fill.ts, markers.ts; invariant 3: log
 *   order, one batch in flight, no key ever goes back to an older state).
 * What was sent is sent again exactly as it was, and acknowledgements at `maxBatchSize` 1 are held
 * in memory and stored a window at a time (outbox-window.ts).
 *
 * Guarantees:
 * - The platform's subrequest limit (net/subrequest-budget.ts) is nobody's failure: a step that
 *   meets it throws a SubrequestLimitError having changed nothing (no attempt, failure or error
 *   recorded), and the object's loop ends the slice and steps again in a fresh invocation.
 * - An informer that cannot be read is the subscription's `lastError`, looked at again after
 *   IDLE_POLL_MS, never in a tight loop.
 *
 * Where this differs from client-go: a listener there gets the informer's in-memory notifications
 * and, on resync, the whole cache; here every step can be interrupted by an eviction and resumes
 * from the stored position, and a resync never copies the cache into the log.
 */
import type { Clock, Random } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { isSubrequestLimit, SubrequestLimitError } from "../net/subrequest-budget.ts";
import { SecretSealer } from "../secrets/secret-sealer.ts";
import type { Db } from "../sql.ts";
import { Deliverer } from "./deliver.ts";
import { type Feed, FEED_TIMEOUT_MS } from "./feed.ts";
import { Filler, IDLE_POLL_MS } from "./fill.ts";
import { initialPosition, nextResync, startResyncInTx } from "./markers.ts";
import { deliveryCount, OutboxWindow } from "./outbox-window.ts";
import type { QueueSend } from "./queue-sender.ts";
import type { Send } from "./sender.ts";
import { SubscriptionSecrets } from "./stored-secrets.ts";
import type { SigningKind, SubscriptionSpec } from "./subscription-spec.ts";
import { SubscriptionStore } from "./subscription-store.ts";
import type { StepResult } from "./step-result.ts";
import {
  type DeadLetter,
  deadLetter,
  type DeliveryAttempt,
  deliveryAttempt,
  type DeliveryMetrics,
  deliveryMetricsOf,
  type ListAnswer,
  listAnswer,
  pageAfter,
  type SubscriptionStatus,
  statusOf,
} from "./subscription-views.ts";

export interface SubscriptionOptions {
  feedTimeoutMs?: number;
  /**
   * Seals and opens the stored secrets (delivery/stored-secrets.ts), asked at each use. The default
   * has no key: it opens only plain text, as tests store it; a SubscriptionObject passes the
   * deployment's sealer.
   */
  sealer?: () => SecretSealer;
  /** The dead letters' byte bound (dead-letters.ts DEAD_LETTER_BYTES): lower in tests. */
  deadLetterBytes?: number;
  /**
   * Sends a subscription's events to its `queue` (queue-sender.ts); a SubscriptionObject passes the
   * Worker's queue bindings. The default has none: every attempt fails, saying so.
   */
  sendToQueue?: QueueSend;
}

const noQueues: QueueSend = async ({ queue }) => ({ durationMs: 0, error: `not sent: no queue '${queue}' here` });

export type { StepResult };

export class Subscription {
  readonly store: SubscriptionStore;
  /** Seals and opens the stored secrets. */
  readonly secrets: SubscriptionSecrets;
  readonly #clock: Clock;
  readonly #window: OutboxWindow;
  readonly #deliverer: Deliverer;
  readonly #filler: Filler;
  /** The log's tail as last seen (see noteTail). */
  #knownTail = 0;
  /**
   * This instance read the log (memory only): its tail is then at or past every event a predecessor
   * may have sent without storing the acknowledgement (a window kept in memory, outbox-window.ts).
   */
  #readLog = false;

  constructor(db: Db, clock: Clock, random: Random, feed: Feed, send: Send, options: SubscriptionOptions = {}) {
    this.store = new SubscriptionStore(db, options.deadLetterBytes);
    this.#clock = clock;
    const plaintextOnly = new SecretSealer({ allowPlaintext: true });
    this.secrets = new SubscriptionSecrets(options.sealer ?? (() => plaintextOnly));
    const store = this.store;
    const window = (this.#window = new OutboxWindow(store, clock));
    this.#deliverer = new Deliverer({ store, window, clock, random, send, sendToQueue: options.sendToQueue ?? noQueues, secrets: this.secrets });
    const feedTimeoutMs = options.feedTimeoutMs ?? FEED_TIMEOUT_MS;
    const noteRead = (tail: number) => {
      this.#readLog = true;
      this.noteTail(tail);
    };
    this.#filler = new Filler({ store, window, clock, feed, feedTimeoutMs, noteTail: noteRead });
  }

  /**
   * Seals stale stored secrets under the current key, and drops a previous secret whose grace
   * period ended (delivery/stored-secrets.ts): called as the object wakes, a cheap occasion that
   * comes after every deployment, so a key rotation reaches idle subscriptions too.
   */
  async resealSecrets(): Promise<void> {
    const record = this.store.get();
    if (!record) return;
    const next = await this.secrets.resealed(record, this.#clock.now());
    if (next === undefined) return;
    this.store.row.resealSecrets(
      { secret: record.secret, previousSecret: record.previousSecret?.secret ?? null },
      { secret: next.secret, previousSecret: next.previousSecret?.secret ?? null },
    );
  }

  /** Starts following the log at `tail`, with a replay of the cache first if the spec asks for it. */
  create(init: { id: string; cluster: string; informer: string; spec: SubscriptionSpec; secret: string; tail: number; declared?: boolean }): void {
    const now = this.#clock.now();
    this.noteTail(init.tail);
    this.store.create({
      ...init,
      declared: init.declared ?? false,
      now,
      position: initialPosition(init.tail, init.spec),
      generation: 1,
      nextResyncAt: nextResync(now, init.spec),
    });
  }

  /**
   * A declared subscription's new spec and secret; its position, outbox and retry state stay. A
   * changed resync period applies from now: 0 stops resyncing, N resyncs N seconds from now.
   */
  updateSpec(spec: SubscriptionSpec, secret: string): void {
    const record = this.#window.record();
    if (!record) throw new ApiError("NotFound", "subscription not found");
    // A window kept in memory was built under the old spec, and would be built under the new one
    // after a restart: it is stored as it is, so it goes out as it was begun (the new spec applies
    // to the next window).
    const window = this.#window.unsentInMemory();
    const acked = this.#window.acked;
    const written = this.#window.transaction(record, () => {
      this.store.updateSpec(spec, secret);
      if (spec.resyncPeriodSeconds !== record.spec.resyncPeriodSeconds) this.store.row.setNextResync(nextResync(this.#clock.now(), spec));
      return window && this.store.outbox.putInTx(window.outbox, window.texts, acked);
    });
    if (written) this.#window.set(written, this.#window.windowed);
  }

  /** Stores the progress held in memory now: for a reader of what is stored (the delivery log, the counters). */
  flush(): void {
    this.#window.flush();
  }

  /** Runs one step: deliver the outbox, start a due resync, or fill the outbox from the feed. */
  async step(): Promise<StepResult> {
    const window = this.#window;
    const record = window.record();
    if (!record) return { kind: "idle", until: null };
    if (record.disabledReason !== null) {
      // Disabled by a redelivery's 410 meanwhile: what was acknowledged before is stored, not held.
      window.transaction(record, () => undefined);
      return { kind: "idle", until: null };
    }
    const now = this.#clock.now();
    const outbox = window.stored();
    if (outbox && window.acked < deliveryCount(outbox)) {
      if (record.nextAttemptAt !== null && record.nextAttemptAt > now) return { kind: "wait", until: record.nextAttemptAt };
      await this.#deliverer.deliver(record, outbox);
      return { kind: "progress" };
    }
    // A resync's marker goes at the log's tail, after what a predecessor may have sent from the
    // stored position and lost the acknowledgement of: anchored before it, the resync would take the
    // sequence numbers those events went out with (and they would go out again under new ones). So
    // after a restart, the log is read first (fill) to learn its tail.
    if (record.nextResyncAt !== null && now >= record.nextResyncAt && record.position.marker === null && this.#readLog) {
      window.transaction(record, () => startResyncInTx(this.store, record, this.#knownTail, now));
      return { kind: "progress" };
    }
    try {
      return await this.#filler.fill(record);
    } catch (error) {
      if (isSubrequestLimit(error)) throw error instanceof SubrequestLimitError ? error : new SubrequestLimitError(String(error), { cause: error });
      // The informer is unreachable or gone: say so and look again later, never in a tight loop.
      const message = `reading the informer '${record.informer}' failed: ${error instanceof Error ? error.message : String(error)}`;
      window.transaction(record, () => this.store.row.setLastError(message));
      return { kind: "wait", until: now + IDLE_POLL_MS };
    }
  }

  /** When the alarm should next run if nothing else happens (after a nudge: as soon as allowed). */
  wakeAt(): number | null {
    const record = this.#window.record();
    if (!record || record.disabledReason !== null) return null;
    const now = this.#clock.now();
    return this.#window.stored() ? Math.max(now, record.nextAttemptAt ?? now) : now;
  }

  /**
   * The informer's log reached `tail` (a nudge, a status, a read). Memory only: it feeds `lag` and
   * the next resync marker, where a lower value after an eviction is still correct (the marker
   * just skips more keys, whose events follow).
   */
  noteTail(tail: number): void {
    this.#knownTail = Math.max(this.#knownTail, tail);
  }

  /**
   * Replaces the secret with one of kind `signing` (`whsec_` or `whsk_`, sealed); deliveries are
   * signed with the old one too for `graceMs` (a declared
   * subscription's secret is a Worker secret: rotate it there). Answers when the old one stops.
   */
  rotateSecret(secret: string, graceMs: number, signing: SigningKind): { previousSecretExpiresAt: number } {
    const record = this.store.get();
    if (!record) throw new ApiError("NotFound", "subscription not found");
    if (record.declared) {
      throw new ApiError("Conflict", "this subscription is declared in INFORMERS: its secret is the Worker secret its secretBinding names (wrangler secret put)");
    }
    const until = this.#clock.now() + graceMs;
    // A change of kind (HMAC to Ed25519) is the spec's `signing` too, in the same transaction; the
    // bodies do not depend on it, so an outbox or window under way goes out as it is.
    const { signing: _, ...rest } = record.spec;
    const spec = signing === "hmac" ? rest : { ...rest, signing };
    this.store.transaction(() => {
      this.store.row.rotateSecret(secret, until);
      if ((record.spec.signing ?? "hmac") !== signing) this.store.row.updateSpec(spec, secret);
    });
    return { previousSecretExpiresAt: until };
  }

  /**
   * Re-enables a subscription disabled by a 410, or ends a failing one's backoff: either way its
   * pending batch is retried at once, with a fresh retry budget (an operator's "the endpoint is
   * fixed, go").
   */
  enable(): void {
    this.store.transaction(() => {
      this.store.row.setDisabled(null);
      this.store.row.clearFailures();
      this.store.row.setLastError(null);
    });
  }

  /** The delivery's metrics, its counters brought up to date first (delivery/delivery-counters.ts). */
  metrics(): DeliveryMetrics {
    this.flush(); // what the counters count is the delivery log, which held acknowledgements join
    const counts = this.store.countDeliveries();
    return deliveryMetricsOf(this.store.get()!, counts);
  }

  status(): SubscriptionStatus | undefined {
    const record = this.#window.record();
    return record && statusOf(record, this.#knownTail);
  }

  /** The delivery log, newest first: at most `limit` attempts, after the page `token` ended. */
  deliveries(limit: number, token?: string): ListAnswer<DeliveryAttempt> {
    this.flush(); // the acknowledgements held in memory are attempts too
    return listAnswer(this.store.deliveries(limit, pageAfter(token)), deliveryAttempt);
  }

  /** Dead letters, oldest first: at most `limit` and about 4 MB of events, after the page `token` ended. */
  deadLetters(limit: number, token?: string): ListAnswer<DeadLetter> {
    return listAnswer(this.store.deadLetters.page(limit, pageAfter(token)), ({ record, text }) => deadLetter(record, text));
  }

  /** One attempt to deliver a dead letter again, now (deliver.ts). */
  redeliver(id: string): Promise<{ delivered: boolean; attempt: DeliveryAttempt }> {
    return this.#deliverer.redeliver(id);
  }
}

/**
 * A webhook subscription: client-go's per-listener `processorListener`, made durable and remote.
 * It follows the informer's event log with its own cursor, filters, signs and POSTs, one batch at
 * a time, and runs as a step function over durable state (subscription-store.ts), driven by its
 * Durable Object's alarm.
 *
 * Guarantees:
 * - Invariant 4: the cursor moves past an event only when the endpoint answered 2xx for it, or it
 *   was dead-lettered after the retry budget. Delivery is at least once; ids are stable.
 * - Anything sent is sent again exactly as it was (id, sequence number, body). A body is in the
 *   durable outbox before it is sent (a batch, a page of a replay or resync, an instance's first
 *   window), or it is one of a window of log events at `maxBatchSize` 1 kept in memory: the stored
 *   position and next sequence number rebuild that window byte for byte after a crash, since ids
 *   and texts come from the log's immutable events, the spec and the sequence number. What would
 *   build it otherwise stores it first: a spec update, and anything stored about it other than an
 *   acknowledgement (a failure, a dead letter, a 410), so retries and restarts send it as sent.
 *   Only while the stored position is in the newer half of the retained log (`rebuildable`) is a
 *   window kept in memory: retention must not remove its events before a restart reads them. Should
 *   it still (an outage while half the log turns over), an instance that expires from the position
 *   it woke at skips WINDOW_DELIVERIES sequence numbers, so that no number names two events; the
 *   keys such a lost window sent are not known to a later sweep (architecture.md "Windows").
 * - At `maxBatchSize` 1 acknowledgements (and events filtered out) are held in memory and stored
 *   together: after WINDOW_DELIVERIES of them, WINDOW_MS after the last store (the idle step's
 *   alarm comes back for it), and before a failure or any other write of the position. A window's
 *   bookkeeping is then one delivery-log row and one UPDATE (issue 19). A crash loses only the
 *   memory: what was not stored is sent again from the stored position. A window read back from
 *   storage stores each acknowledgement as it comes, and an instance stores its windows in the
 *   outbox until it has stored an acknowledgement, so repeated crashes still progress.
 * - Invariant 3: events go out in log order, one batch in flight; a replay or resync is a marker
 *   at log position P, expanded only after every event up to P went out, from the objects whose
 *   last change is at or before P (DESIGN "Resync and replay as log markers"). An object changed
 *   after P is skipped there: its own newer event follows. So no key ever goes back to an older
 *   state.
 * - A cursor that fell behind the log's retention is never a silent gap: the subscription is marked
 *   expired and replays the cache (`add` with `initialList`) from the log's current end.
 * - A subscription created with `replayExisting` starts with a replay marker at the log's end.
 * - A replay that outlives the log's retention (its anchor's successors are gone when it ends) is
 *   not restarted from scratch: the next pass, anchored at the log's new end, sends only the
 *   objects this replay has not sent in their current state, so each pass costs what changed
 *   during the last one (#7.15; docs/architecture.md "Expiry").
 * - A feed read that does not answer within `feedTimeoutMs` fails the step (retried later), so a
 *   hung informer cannot hold the alarm.
 * - The platform's subrequest limit (net/subrequest-budget.ts) is nobody's failure: a step that
 *   meets it throws a SubrequestLimitError having changed nothing (no attempt, failure or error
 *   recorded), and the object's loop ends the slice and steps again in a fresh invocation.
 *
 * Where this differs from client-go: a listener there gets the informer's in-memory notifications
 * and, on resync, the whole cache; here every step can be interrupted by an eviction and resumes
 * from the stored position, and a resync never copies the cache into the log.
 */
import type { Clock, Random } from "../clock.ts";
import type { LogBounds, LogEvent, LogEventType, ReadResult } from "../cache/event-log.ts";
import { ApiError, ValidationError } from "../errors.ts";
import { isSubrequestLimit, SubrequestLimitError } from "../net/subrequest-budget.ts";
import { splitKey } from "../cache/keys.ts";
import { decodeContinue, encodeContinue } from "../cache/lister.ts";
import { eventId } from "./event-id.ts";
import { informerObjectName } from "../clusters/cluster.ts";
import { EventFilter, type Filtered } from "./filter.ts";
import { decide } from "./retry-schedule.ts";
import { CLUSTER_HEADER, type Send, type SendResult } from "./sender.ts";
import { DeliverySigner } from "./sign.ts";
import { SubscriptionSecrets } from "./stored-secrets.ts";
import { SecretSealer } from "../secrets/secret-sealer.ts";
import { logDelivery } from "./log-lines.ts";
import type { SubscriptionSpec } from "./subscription-spec.ts";
import { type Page, SubscriptionStore } from "./subscription-store.ts";
import type { SubscriptionRecord } from "./subscription-row.ts";
import type { Marker, Position } from "./position.ts";
import type { OutboxEvent, StoredOutbox } from "./outbox-store.ts";
import type { DeadLetterRecord } from "./dead-letters.ts";
import type { Db } from "../sql.ts";
import type { DeliveryRecord } from "./delivery-log.ts";
import type { DeliveredKey } from "./held-keys.ts";

/** How many log events or cached objects one read brings in. */
export const FEED_PAGE = 200;
/** A caught-up subscription still looks at the log this often, in case a nudge was lost. */
export const IDLE_POLL_MS = 60_000;
/** A feed read (an RPC to the informer) that takes longer has failed: a healthy one takes milliseconds. */
export const FEED_TIMEOUT_MS = 30_000;
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
/** A window's texts stay within one inline row (subscription-store.ts chunks above 512 Ki characters). */
const WINDOW_CHARS = 512 * 1024;
/**
 * A batch's events stop here, whatever `maxBatchSize` allows (at least one event): 100 events of
 * 1–2 MB objects made a body of hundreds of MB, and the stored outbox rebuilt it on every retry, so
 * the memory limit killed each attempt the same way (issue 20; review B5).
 */
export const BATCH_CHARS = 4 * 1024 * 1024;

export interface SubscriptionOptions {
  feedTimeoutMs?: number;
  /**
   * Seals and opens the stored secrets (delivery/stored-secrets.ts), asked at each use. The default
   * has no key: it opens only plain text, as tests store it; a SubscriptionObject passes the
   * deployment's sealer.
   */
  sealer?: () => SecretSealer;
}

export interface SnapshotObject {
  key: string;
  uid: string;
  resourceVersion: string;
  body: string;
}

export interface SnapshotPage {
  /** Objects last changed at or before the marker, in key order. */
  objects: SnapshotObject[];
  /** Keys in the same range changed after the marker (their newer events follow in the log). */
  skipped: string[];
  /** The last key of the range this page covered (the next page starts after it). */
  last: string | null;
  /** True when no key follows `last`. */
  done: boolean;
}

/** The informer, as a subscription reads it (RPC to its Durable Object). */
export interface Feed {
  read(after: number, limit: number): Promise<ReadResult>;
  /** A page of the cache in key order after `after`, split at log position `at` (SnapshotPage). */
  snapshot(at: number, after: string | null, limit: number, namespace?: string): Promise<SnapshotPage>;
}

export type SubscriptionState = "active" | "failing" | "disabled";

export interface SubscriptionStatus {
  id: string;
  cluster: string;
  informer: string;
  url: string;
  events: LogEventType[];
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resyncPeriodSeconds: number;
  replayExisting: boolean;
  maxBatchSize: number;
  retryBudgetSeconds: number;
  timeoutSeconds: number;
  state: SubscriptionState;
  /** Declared in INFORMERS (wrangler.toml): change or remove it there. */
  declared: boolean;
  disabledReason: string | null;
  /** The last log position handled. */
  cursor: number;
  /** Log events after the cursor (as of the last look at the log). */
  lag: number;
  /**
   * A replay or resync in progress; `pass` > 1 when a replay outlived the log's retention and
   * continues from the log's newer end (see `lastError`).
   */
  marker: { kind: Marker["kind"]; at: number; pass?: number } | null;
  expired: boolean;
  lastDeliveryAt: string | null;
  consecutiveFailures: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  deadLetters: number;
  createdAt: string;
}

export interface DeliveryAttempt {
  /** The (first) event of the attempt, as API.md lists it. */
  eventId: string;
  /** Every event of the attempt (more than one with batching). */
  eventIds: string[];
  sequence: number;
  attempt: number;
  status: number | null;
  durationMs: number;
  at: string;
  error?: string;
}

export interface DeadLetter {
  eventId: string;
  sequence: number;
  type: LogEventType;
  key: string;
  resourceVersion: string;
  attempts: number;
  lastError: string | null;
  deadLetteredAt: string;
  event: unknown;
}

/** What the alarm should do next: step again, wait until a time, or sleep (null: no alarm at all). */
export type StepResult = { kind: "progress" } | { kind: "wait"; until: number } | { kind: "idle"; until: number | null };

/** A list answer: `continue` (present when more follow) is passed back for the next page. */
export interface ListAnswer<T> {
  items: T[];
  continue?: string;
}

/** One log event or marker object, with the position reached once it is handled. */
type Candidate = Omit<LogEvent, "seq" | "at"> & {
  advance: Position;
  /** A delete inferred by a replay's sweep, not read from the log. */
  inferred?: boolean;
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const positionKey = (p: Position) => JSON.stringify(p);

export class Subscription {
  readonly store: SubscriptionStore;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #feed: Feed;
  readonly #send: Send;
  /** Candidates `items[start..]` already read from the feed, from position `from` (memory only: a cache). */
  #ahead: { from: string; items: Candidate[]; start: number; log?: LogBounds } | undefined;
  #filter: { spec: string; filter: EventFilter } | undefined;
  /** The log's tail as last seen (see noteTail). */
  #knownTail = 0;
  readonly #feedTimeoutMs: number;
  /**
   * The outbox (a batch, or a window of single deliveries) as this object wrote, read or built it
   * (memory only; null: none; undefined: not known, read it). Only this object writes the outbox:
   * it is set after the transaction that wrote it committed, and forgotten before any transaction
   * that changes it. Not `#durable`: a window built from the log and kept in memory only.
   */
  #outbox: StoredOutbox | null | undefined;
  #durable = true;
  /** The secret's HMAC key, imported once. */
  readonly #signer = new DeliverySigner();
  /** Seals and opens the stored secrets. */
  readonly secrets: SubscriptionSecrets;
  /** Deliveries of `#outbox` acknowledged so far, stored or held (≥ its stored `acked`; memory only). */
  #acked = 0;
  /** This instance wrote or built `#outbox`, so it knows what was sent of it and may hold acknowledgements. */
  #windowed = false;
  /** Progress made since the position was stored, held in memory until `#transaction` stores it. */
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

  constructor(db: Db, clock: Clock, random: Random, feed: Feed, send: Send, options: SubscriptionOptions = {}) {
    this.store = new SubscriptionStore(db);
    this.#clock = clock;
    this.#random = random;
    this.#feed = feed;
    this.#send = send;
    this.#feedTimeoutMs = options.feedTimeoutMs ?? FEED_TIMEOUT_MS;
    const plaintextOnly = new SecretSealer({ allowPlaintext: true });
    this.secrets = new SubscriptionSecrets(options.sealer ?? (() => plaintextOnly));
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
      position: { cursor: init.tail, marker: init.spec.replayExisting ? { kind: "replay", at: init.tail, after: null, gen: 1 } : null },
      generation: 1,
      nextResyncAt: nextResync(now, init.spec),
    });
  }

  /**
   * A declared subscription's new spec and secret; its position, outbox and retry state stay. A
   * changed resync period applies from now: 0 stops resyncing, N resyncs N seconds from now.
   */
  updateSpec(spec: SubscriptionSpec, secret: string): void {
    const record = this.#record();
    if (!record) throw new ApiError("NotFound", "subscription not found");
    // A window kept in memory was built under the old spec, and would be built under the new one
    // after a restart: it is stored as it is, so it goes out as it was begun (the new spec applies
    // to the next window).
    const window = this.#outbox && !this.#durable && this.#acked < deliveryCount(this.#outbox) ? this.#outbox : null;
    const acked = this.#acked;
    const written = this.#transaction(record, () => {
      this.store.updateSpec(spec, secret);
      if (spec.resyncPeriodSeconds !== record.spec.resyncPeriodSeconds) this.store.row.setNextResync(nextResync(this.#clock.now(), spec));
      return window && this.store.outbox.putInTx(window.outbox, window.texts, acked);
    });
    if (written) this.#setOutbox(written, this.#windowed);
  }

  /** Stores the progress held in memory now: for a reader of what is stored (the delivery log, the counters). */
  flush(): void {
    const record = this.#record();
    if (record && this.#held) this.#transaction(record, () => undefined);
  }

  /** Runs one step: deliver the outbox, start a due resync, or fill the outbox from the feed. */
  async step(): Promise<StepResult> {
    const record = this.#record();
    if (!record) return { kind: "idle", until: null };
    if (record.disabledReason !== null) {
      // Disabled by a redelivery's 410 meanwhile: what was acknowledged before is stored, not held.
      this.#transaction(record, () => undefined);
      return { kind: "idle", until: null };
    }
    const now = this.#clock.now();
    const outbox = this.#storedOutbox();
    if (outbox && this.#acked < deliveryCount(outbox)) {
      if (record.nextAttemptAt !== null && record.nextAttemptAt > now) return { kind: "wait", until: record.nextAttemptAt };
      await this.#deliver(record, outbox);
      return { kind: "progress" };
    }
    if (record.nextResyncAt !== null && now >= record.nextResyncAt && record.position.marker === null) {
      this.#transaction(record, () => {
        const at = Math.max(this.#knownTail, record.position.cursor);
        // A period of 0 never resyncs (a row scheduled before its period was set to 0 stops here).
        // `replayed` stays: the anchor of a replay just finished must still be checked (#7.15).
        if (record.spec.resyncPeriodSeconds > 0) this.store.row.setPosition({ ...record.position, marker: { kind: "sync", at, after: null } });
        this.store.row.setNextResync(nextResync(now, record.spec));
      });
      return { kind: "progress" };
    }
    try {
      return await this.#fill(record);
    } catch (error) {
      if (isSubrequestLimit(error)) throw error instanceof SubrequestLimitError ? error : new SubrequestLimitError(String(error), { cause: error });
      // The informer is unreachable or gone: say so and look again later, never in a tight loop.
      const message = `reading the informer '${record.informer}' failed: ${error instanceof Error ? error.message : String(error)}`;
      this.#transaction(record, () => this.store.row.setLastError(message));
      return { kind: "wait", until: now + IDLE_POLL_MS };
    }
  }

  /**
   * The stored record, with the progress held in memory applied: the position and sequence numbers
   * it reaches (a failure is never held, so the retry state is the stored one).
   */
  #record(): SubscriptionRecord | undefined {
    const record = this.store.get();
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
   * through here, so none overtakes or loses it. `record` is as `#record` gave it.
   */
  #transaction<T>(record: SubscriptionRecord, fn: () => T): T {
    const held = this.#held;
    if (!held) return this.store.transaction(fn);
    const stored = this.#outbox;
    const acked = this.#acked;
    // A stored outbox moves with its held acknowledgements (a window in memory has nothing stored).
    const moved = stored && this.#durable && acked > stored.acked ? stored : null;
    const before = this.store.get()!.position;
    const result = this.store.transaction(() => {
      if (moved && acked === deliveryCount(moved)) this.store.outbox.deleteInTx(moved.inline);
      else if (moved) this.store.outbox.setAckedInTx(acked);
      // The position, the sequence numbers, keys and attempts of what was delivered, the end of any failure streak: one statement.
      const delivered = { at: held.records.at(-1)?.at ?? null, lastSequence: held.events.at(-1)?.sequence ?? null, events: held.events, attempts: held.records };
      this.store.recordDeliveredInTx(delivered, held.advance, record.generation);
      if (before.marker?.kind === "replay" && held.advance.marker === null) this.store.row.setExpired(false);
      return fn();
    });
    // Memory follows only once the transaction committed (a thrown one leaves it held).
    this.#held = null;
    this.#settledAt = this.#clock.now();
    if (held.records.length > 0) this.#proven = true;
    if (moved) this.#outbox = acked === deliveryCount(moved) ? null : { ...moved, acked };
    return result;
  }

  /** Holds progress: `events` acknowledged by `attempt` (none: filtered out), reaching `advance`. */
  #hold(advance: Position, events: readonly OutboxEvent[], attempt?: DeliveryRecord): Held {
    this.#progressed = true;
    const held = (this.#held ??= { records: [], events: [], advance });
    held.advance = advance;
    held.events.push(...events);
    if (attempt) held.records.push(attempt);
    return held;
  }

  /** The outbox as stored now (null: none), or a window built in memory (`durable` false); `windowed` when this instance wrote or built it. */
  #setOutbox(outbox: StoredOutbox | null, windowed: boolean, durable = true): void {
    this.#outbox = outbox;
    this.#durable = durable;
    this.#acked = outbox?.acked ?? 0;
    this.#windowed = windowed;
    if (durable) this.#settledAt = this.#clock.now();
  }

  /** When the alarm should next run if nothing else happens (after a nudge: as soon as allowed). */
  wakeAt(): number | null {
    const record = this.#record();
    if (!record || record.disabledReason !== null) return null;
    const now = this.#clock.now();
    return this.#storedOutbox() ? Math.max(now, record.nextAttemptAt ?? now) : now;
  }

  #storedOutbox(): StoredOutbox | null {
    // Read back from storage: what of it was sent before is unknown, so each acknowledgement is stored.
    if (this.#outbox === undefined) this.#setOutbox(this.store.storedOutbox() ?? null, false);
    return this.#outbox!;
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
   * Re-enables a subscription disabled by a 410, or ends a failing one's backoff: either way its
   * pending batch is retried at once, with a fresh retry budget (an operator's "the endpoint is
   * fixed, go").
   */
  /**
   * Replaces the secret; deliveries are signed with the old one too for `graceMs` (a declared
   * subscription's secret is a Worker secret: rotate it there). Answers when the old one stops.
   */
  rotateSecret(secret: string, graceMs: number): { previousSecretExpiresAt: number } {
    const record = this.store.get();
    if (!record) throw new ApiError("NotFound", "subscription not found");
    if (record.declared) {
      throw new ApiError("Conflict", "this subscription is declared in INFORMERS: its secret is the Worker secret its secretBinding names (wrangler secret put)");
    }
    const until = this.#clock.now() + graceMs;
    this.store.row.rotateSecret(secret, until);
    return { previousSecretExpiresAt: until };
  }

  enable(): void {
    this.store.transaction(() => {
      this.store.row.setDisabled(null);
      this.store.row.clearFailures();
      this.store.row.setLastError(null);
    });
  }

  status(): SubscriptionStatus | undefined {
    const record = this.#record();
    if (!record) return undefined;
    const { spec, position } = record;
    return {
      id: record.id,
      cluster: record.cluster,
      informer: record.informer,
      url: spec.url,
      events: spec.events,
      ...(spec.namespace === undefined ? {} : { namespace: spec.namespace }),
      ...(spec.labelSelector === undefined ? {} : { labelSelector: spec.labelSelector }),
      ...(spec.fieldSelector === undefined ? {} : { fieldSelector: spec.fieldSelector }),
      resyncPeriodSeconds: spec.resyncPeriodSeconds,
      replayExisting: spec.replayExisting,
      maxBatchSize: spec.maxBatchSize,
      retryBudgetSeconds: spec.retryBudgetSeconds,
      timeoutSeconds: spec.timeoutSeconds,
      state: record.disabledReason !== null ? "disabled" : record.failures > 0 ? "failing" : "active",
      declared: record.declared,
      disabledReason: record.disabledReason,
      cursor: position.cursor,
      lag: Math.max(0, this.#knownTail - position.cursor),
      marker: position.marker && {
        kind: position.marker.kind,
        at: position.marker.at,
        ...(position.marker.pass === undefined ? {} : { pass: position.marker.pass }),
      },
      expired: record.expired,
      lastDeliveryAt: iso(record.lastDeliveryAt),
      consecutiveFailures: record.failures,
      nextAttemptAt: iso(record.nextAttemptAt),
      lastError: record.lastError,
      deadLetters: record.deadLetters,
      createdAt: new Date(record.createdAt).toISOString(),
    };
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

  /**
   * One attempt to deliver a dead letter again, now; it leaves the dead letters on a 2xx. A
   * disabled subscription sends nothing (enable it first), and a 410 answer disables it, as it
   * would on the stream.
   */
  async redeliver(id: string): Promise<{ delivered: boolean; attempt: DeliveryAttempt }> {
    const record = this.store.get();
    const dead = this.store.deadLetters.get(id);
    if (!record || !dead) throw new ApiError("NotFound", `no dead letter '${id}'`);
    if (record.disabledReason !== null) {
      throw new ApiError("Conflict", `the subscription is disabled (${record.disabledReason}): enable it before redelivering`);
    }
    const body = record.spec.maxBatchSize > 1 ? batchBody([dead.text]) : dead.text;
    const result = await this.#attempt(record, id, body);
    const now = this.#clock.now();
    const attempt: DeliveryRecord = attemptRecord([id], dead.record.sequence, dead.record.attempts + 1, result, now);
    const delivered = result.status !== undefined && result.status >= 200 && result.status < 300;
    this.store.transaction(() => {
      this.store.recordAttempts([attempt]);
      if (delivered) this.store.deadLetters.removeInTx(id);
      if (result.status === 410) this.#disableInTx(now, result);
    });
    return { delivered, attempt: deliveryAttempt(attempt) };
  }

  // --- delivering -------------------------------------------------------------------------------

  async #deliver(record: SubscriptionRecord, stored: StoredOutbox): Promise<void> {
    // The body as the outbox was written: a 2xx applies every event in it (#7.12).
    const index = this.#acked;
    const delivery = deliveryAt(stored, index);
    const count = deliveryCount(stored);
    const result = await this.#attempt(record, delivery.webhookId, delivery.body);
    const now = this.#clock.now();
    const retry = record.failures > 0 ? { failures: record.failures, firstFailureAt: record.firstFailureAt ?? now } : undefined;
    const decision = decide(result, retry, now, this.#random, record.spec.retryBudgetSeconds * 1000);
    const eventIds = delivery.events.map((e) => e.eventId);
    const attempt = record.failures + 1;
    const attempted = attemptRecord(eventIds, delivery.events[0]!.sequence, attempt, result, now);
    if (decision.kind === "delivered" && record.failures === 0 && this.#windowed && this.#outbox === stored) {
      // Held in memory: stored with a later write, at the latest after WINDOW_DELIVERIES or WINDOW_MS.
      this.#acked = index + 1;
      const held = this.#hold(delivery.advance, delivery.events, attempted);
      if (held.records.length >= WINDOW_DELIVERIES || now - this.#settledAt >= WINDOW_MS) this.#transaction(record, () => undefined);
      return;
    }
    // Read after the await: a spec update meanwhile may have stored the window kept in memory.
    const current = this.#outbox ?? stored;
    const durable = this.#durable;
    const windowed = this.#windowed;
    let written = current;
    this.#transaction(record, () => {
      // Anything but a held acknowledgement is stored with its window: a retry, a dead letter or a
      // restart sends it as it was sent.
      if (!durable) written = this.store.outbox.putInTx(current.outbox, current.texts, index);
      if (decision.kind !== "delivered") this.store.recordAttempts([attempted]);
      switch (decision.kind) {
        case "delivered":
          if (index + 1 === count) this.store.outbox.deleteInTx(written.inline);
          else this.store.outbox.setAckedInTx(index + 1);
          // The position, the delivery's sequence numbers, keys and attempt, the end of any failure streak: one statement.
          this.store.recordDeliveredInTx(
            { at: now, lastSequence: delivery.events.at(-1)!.sequence, events: delivery.events, attempts: [attempted] },
            delivery.advance,
            record.generation,
          );
          if (record.position.marker?.kind === "replay" && delivery.advance.marker === null) this.store.row.setExpired(false);
          return;
        case "retry":
          this.store.row.recordFailure(now, decision.at, result.error ?? "failed");
          return;
        case "dead-letter":
          // The receiver may get these by redelivery: count them as sent, so a later replay's
          // sweep can retract them.
          this.store.applyDeliveredInTx(delivery.events, record.generation);
          this.store.deadLetters.addInTx(written, delivery.indices, now, attempt, result.error ?? null);
          if (index + 1 === count) this.store.outbox.deleteInTx(written.inline);
          else this.store.outbox.setAckedInTx(index + 1);
          this.store.row.clearFailures();
          this.store.row.setLastError(`dead-lettered ${eventIds.length} event(s) after ${attempt} attempts: ${result.error ?? "failed"}`);
          this.#advanceInTx(record.position, delivery.advance);
          return;
        case "disable":
          this.#disableInTx(now, result);
          return;
      }
    });
    logDelivery(record, decision.kind, result, attempt, eventIds.length);
    const moved = decision.kind === "delivered" || decision.kind === "dead-letter";
    const acked = moved ? index + 1 : index;
    if (moved) this.#proven = this.#progressed = true;
    this.#setOutbox(acked === count ? null : { ...written, acked }, windowed);
  }

  #disableInTx(now: number, result: SendResult): void {
    this.store.row.clearFailures();
    this.store.row.setLastError(result.error ?? "HTTP 410");
    this.store.row.setDisabled(`the endpoint answered 410 Gone at ${new Date(now).toISOString()}`);
  }

  async #attempt(record: SubscriptionRecord, webhookId: string, body: string): Promise<SendResult> {
    const now = this.#clock.now();
    let secrets: { current: string; previous?: string };
    try {
      secrets = await this.secrets.signing(record, now);
    } catch (error) {
      // A missing or wrong ENCRYPTION_KEY: retried with backoff like an unreachable endpoint, and
      // the status's lastError says why, rather than an alarm failing in a tight loop.
      return { durationMs: 0, error: `cannot sign the delivery: ${error instanceof Error ? error.message : String(error)}` };
    }
    const headers = await this.#signer.sign(secrets.current, webhookId, Math.floor(now / 1000), body, secrets.previous);
    return this.#send({ url: record.spec.url, headers: { ...headers, [CLUSTER_HEADER]: record.cluster }, body, timeoutMs: record.spec.timeoutSeconds * 1000 });
  }

  #advanceInTx(from: Position, to: Position): void {
    this.store.row.setPosition(to);
    // A finished replay is the fresh start an expired subscription was waiting for.
    if (from.marker?.kind === "replay" && to.marker === null) this.store.row.setExpired(false);
  }

  // --- filling the outbox -----------------------------------------------------------------------

  async #fill(record: SubscriptionRecord): Promise<StepResult> {
    const read = await this.#candidates(record);
    if (read.kind === "expired") {
      // At the anchor of a replay that just ended, the replay itself outlived retention: go on
      // with its next pass (same `since`), which sends only what this replay has not sent as it is.
      const replayed = record.position.replayed;
      this.#transaction(record, () => {
        this.store.row.setExpired(true);
        // Expiring from the position it woke at, an instance does not know what a predecessor sent
        // from a window kept in memory (numbered from the stored next sequence, and now gone from
        // the log): it skips those numbers, so that none is given to two events.
        if (!this.#progressed) this.store.row.takeSequencesInTx(record.nextSequence + WINDOW_DELIVERIES - 1);
        const gen = this.store.row.nextGenerationInTx();
        const pass = replayed ? { since: replayed.since, pass: replayed.pass + 1 } : {};
        this.store.row.setPosition({ cursor: read.tail, marker: { kind: "replay", at: read.tail, after: null, gen, ...pass } });
        this.store.row.setLastError(
          replayed
            ? `the replay took longer than the event log's retention (the events after its position ${record.position.cursor} are gone): ` +
                `pass ${replayed.pass + 1} replays from position ${read.tail}, sending only objects changed since this replay sent them`
            : `fell behind the event log's retention at position ${record.position.cursor}: replaying the cache`,
        );
      });
      return { kind: "progress" };
    }
    if (read.kind === "move") {
      this.#transaction(record, () => this.#advanceInTx(record.position, read.to));
      return { kind: "progress" };
    }
    const items = read.items;
    const start = read.start ?? 0;
    if (items.length === start) return this.#idle(record);
    const filter = this.#eventFilter(record.spec);
    // One batch of up to maxBatchSize events, or at maxBatchSize 1 a window of single deliveries.
    const windowed = record.spec.maxBatchSize === 1;
    const limit = windowed ? WINDOW_DELIVERIES : record.spec.maxBatchSize;
    const picked: { candidate: Candidate; filtered: Filtered }[] = [];
    let consumed = start;
    let chars = 0;
    for (let i = start; i < items.length; i++) {
      const candidate = items[i]!;
      if (picked.length === limit) break;
      if (picked.length > 0 && chars + candidateChars(candidate) > (windowed ? WINDOW_CHARS : BATCH_CHARS)) break;
      consumed++;
      // An inferred delete is for a key the receiver was sent: only the event types apply.
      const filtered = candidate.inferred ? filter.applyTypes(candidate) : filter.apply(candidate);
      if (filtered) {
        picked.push({ candidate, filtered });
        chars += candidateChars(candidate);
      }
    }
    const advance = items[consumed - 1]!.advance;
    this.#ahead = { from: positionKey(advance), items, start: consumed, ...(read.log ? { log: read.log } : {}) };
    // Log events may be held in memory (see the contract): read again from the stored position after
    // a crash. Not before this instance stores an acknowledgement (held ones are stored first).
    const mayHold = windowed && read.log !== undefined && (this.#proven || (this.#held?.records.length ?? 0) > 0);
    const inMemory = mayHold && rebuildable(this.store.get()!.position.cursor, read.log!);
    if (picked.length === 0) {
      if (mayHold) this.#hold(advance, []);
      else this.#transaction(record, () => this.#advanceInTx(record.position, advance));
      return { kind: "progress" };
    }
    const events = await Promise.all(
      picked.map(async ({ candidate, filtered }, i) => {
        const id = await eventId({ informer: informerObjectName({ cluster: record.cluster, name: record.informer }), key: candidate.key, uid: candidate.uid, resourceVersion: candidate.resourceVersion, type: filtered.type });
        const sequence = record.nextSequence + i;
        return {
          meta: { eventId: id, sequence, type: filtered.type, key: candidate.key, uid: candidate.uid, resourceVersion: candidate.resourceVersion },
          text: eventText(record, id, sequence, candidate, filtered),
        };
      }),
    );
    const first = events[0]!.meta;
    const batched = !windowed;
    const webhookId = batched ? `msg_${record.id}_${first.sequence}` : first.eventId;
    // Each delivery of a window moves to its own event; the last also past the filtered-out ones after it.
    const advances = windowed ? picked.map((p, i) => (i === picked.length - 1 ? advance : p.candidate.advance)) : undefined;
    // Sequence numbers are taken when a delivery leaves the outbox (subscription-store.ts).
    const outbox = { webhookId, events: events.map((e) => e.meta), batched, advance, ...(advances ? { advances } : {}), createdAt: this.#clock.now() };
    const texts = events.map((e) => e.text);
    // In memory, unless the spec changed while the window was built (an update during the awaits):
    // a restart would build it under the new one.
    if (inMemory && this.store.get()?.spec === record.spec) {
      // A stored outbox still here is done: it goes with the acknowledgements it holds.
      if (this.#outbox && this.#durable) this.#transaction(record, () => undefined);
      this.#setOutbox({ outbox, texts, inline: true, acked: 0 }, true, false);
      return { kind: "progress" };
    }
    const written = this.#transaction(record, () => this.store.outbox.putInTx(outbox, texts));
    this.#setOutbox(written, true);
    return { kind: "progress" };
  }

  #idle(record: SubscriptionRecord): StepResult {
    // Nothing more to send: what is held is stored once WINDOW_MS after the last store, so that
    // events arriving one at a time share a window's bookkeeping; the alarm comes back for it.
    const now = this.#clock.now();
    if (this.#held && now - this.#settledAt >= WINDOW_MS) this.#transaction(record, () => undefined);
    const poll = now + IDLE_POLL_MS;
    const until = Math.min(poll, record.nextResyncAt ?? poll, this.#held ? this.#settledAt + WINDOW_MS : poll);
    return { kind: "idle", until };
  }

  async #candidates(
    record: SubscriptionRecord,
  ): Promise<{ kind: "items"; items: Candidate[]; start?: number; log?: LogBounds } | { kind: "expired"; tail: number } | { kind: "move"; to: Position }> {
    const position = record.position;
    if (this.#ahead?.from === positionKey(position) && this.#ahead.items.length > this.#ahead.start) {
      return { kind: "items", items: this.#ahead.items, start: this.#ahead.start, ...(this.#ahead.log ? { log: this.#ahead.log } : {}) };
    }
    this.#ahead = undefined;
    const marker = position.marker;
    if (marker && position.cursor >= marker.at) {
      // A marker's pages read the keys the receiver holds (held-keys.ts): store what is held first.
      this.#transaction(record, () => undefined);
      return marker.sweep ? this.#sweep(position.cursor, marker) : this.#expand(record, marker);
    }
    const read = await this.#fromFeed(this.#feed.read(position.cursor, FEED_PAGE));
    this.noteTail(read.bounds.tail);
    // A log that restarted below our cursor (the informer was recreated) is a gap like expiry.
    if (read.expired || position.cursor > read.bounds.tail) return { kind: "expired", tail: read.bounds.tail };
    const upTo = marker?.at ?? Number.POSITIVE_INFINITY;
    const items = read.events
      .filter((event) => event.seq <= upTo)
      .map((event): Candidate => ({ ...event, advance: { cursor: event.seq, marker } }));
    return { kind: "items", items, log: read.bounds };
  }

  /** A page of a marker's expansion: the cached objects last changed at or before the marker. */
  async #expand(record: SubscriptionRecord, marker: Marker): Promise<{ kind: "items"; items: Candidate[] } | { kind: "move"; to: Position }> {
    const cursor = record.position.cursor;
    const page = await this.#fromFeed(this.#feed.snapshot(marker.at, marker.after, FEED_PAGE, this.#eventFilter(record.spec).namespace));
    const replay = marker.kind === "replay";
    // A later pass of a replay skips what an earlier pass sent and the receiver still holds as it is.
    const sent = marker.since === undefined ? new Set<string>() : this.store.heldSince(page.objects, marker.since);
    // Keys changed after the marker are skipped (their events follow), but the receiver keeps them.
    const touched = [...page.skipped, ...sent];
    if (replay && touched.length > 0) this.store.transaction(() => this.store.touchKeys(touched, marker.gen ?? 0));
    const next: Marker | null = !page.done ? { ...marker, after: page.last } : replay ? { ...marker, after: null, sweep: true } : null;
    const objects = page.objects.filter((object) => !sent.has(object.key));
    if (objects.length === 0) return { kind: "move", to: { cursor, marker: next } };
    const items = objects.map(
      (object, i): Candidate => ({
        type: replay ? "add" : "sync",
        key: object.key,
        uid: object.uid,
        resourceVersion: object.resourceVersion,
        object: object.body,
        oldObject: replay ? null : object.body,
        initialList: replay,
        finalStateUnknown: false,
        advance: { cursor, marker: i === objects.length - 1 ? next : { ...marker, after: object.key } },
      }),
    );
    return { kind: "items", items };
  }

  /**
   * A page of a replay's sweep: keys the receiver was sent before the replay that the replay did
   * not touch no longer exist (they were deleted while the log that said so expired). Each goes out
   * as a delete with `finalStateUnknown`, client-go's answer to a delete it could not observe; its
   * `object` holds the identity only, the last state having gone with the log.
   */
  #sweep(cursor: number, marker: Marker): { kind: "items"; items: Candidate[] } | { kind: "move"; to: Position } {
    const stale = this.store.staleKeys(marker.gen ?? 0, marker.after, FEED_PAGE);
    // The replay is over; its anchor is remembered until the log after it is read (see #fill).
    const end: Position = { cursor, marker: null, replayed: { since: marker.since ?? marker.gen ?? 0, pass: marker.pass ?? 1 } };
    if (stale.length === 0) return { kind: "move", to: end };
    const done = stale.length < FEED_PAGE;
    const items = stale.map(
      (held, i): Candidate => ({
        type: "delete",
        key: held.key,
        uid: held.uid,
        resourceVersion: held.resourceVersion,
        object: identityOnly(held),
        oldObject: null,
        initialList: false,
        finalStateUnknown: true,
        inferred: true,
        advance: done && i === stale.length - 1 ? end : { cursor, marker: { ...marker, after: held.key } },
      }),
    );
    return { kind: "items", items };
  }

  /** A feed call that fails after `feedTimeoutMs` without an answer (a hung informer RPC). */
  async #fromFeed<T>(call: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.#feedTimeoutMs / 1000} s`)), this.#feedTimeoutMs);
    });
    try {
      return await Promise.race([call, timeout]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  #eventFilter(spec: SubscriptionSpec): EventFilter {
    const key = JSON.stringify([spec.events, spec.namespace, spec.labelSelector, spec.fieldSelector]);
    if (this.#filter?.spec !== key) this.#filter = { spec: key, filter: new EventFilter(spec) };
    return this.#filter.filter;
  }
}

/** The event's JSON text, built around the stored object texts so they are never re-encoded. */
function eventText(informer: { cluster: string; informer: string }, id: string, sequence: number, candidate: Candidate, filtered: Filtered): string {
  const translated = filtered.type !== candidate.type;
  return (
    `{"id":${JSON.stringify(id)},"type":"${filtered.type}","cluster":${JSON.stringify(informer.cluster)},"informer":${JSON.stringify(informer.informer)},` +
    `"key":${JSON.stringify(candidate.key)},"object":${filtered.object}` +
    (filtered.oldObject === null ? "" : `,"oldObject":${filtered.oldObject}`) +
    `,"initialList":${!translated && candidate.initialList},"finalStateUnknown":${!translated && candidate.finalStateUnknown}` +
    `,"resourceVersion":${JSON.stringify(candidate.resourceVersion)},"sequence":${sequence}}`
  );
}

/** The object of an inferred delete: what the subscription still knows of it. */
function identityOnly(held: DeliveredKey): string {
  const { namespace, name } = splitKey(held.key);
  return JSON.stringify({ metadata: { name, ...(namespace ? { namespace } : {}), uid: held.uid, resourceVersion: held.resourceVersion } });
}

const batchBody = (texts: readonly string[]) => `{"events":[${texts.join(",")}]}`;

/** Progress not stored yet, in order (see Subscription.#held). */
interface Held {
  /** The attempts that acknowledged them, for the delivery log. */
  records: DeliveryRecord[];
  /** The events acknowledged: their sequence numbers are taken and their keys held when stored. */
  events: OutboxEvent[];
  /** The position they reach. */
  advance: Position;
}

/** One request of an outbox: the whole batch, or one event of a window. */
interface Delivery {
  webhookId: string;
  events: OutboxEvent[];
  /** The events' indices in the outbox. */
  indices: number[];
  body: string;
  /** The position once it is acknowledged or dead-lettered. */
  advance: Position;
}

/** How many requests an outbox is: a window's events, or one. */
function deliveryCount(stored: StoredOutbox): number {
  return stored.outbox.advances ? stored.outbox.events.length : 1;
}

function deliveryAt(stored: StoredOutbox, i: number): Delivery {
  const { outbox, texts } = stored;
  if (!outbox.advances) {
    const body = outbox.batched ? batchBody(texts) : texts[0]!;
    return { webhookId: outbox.webhookId, events: outbox.events, indices: outbox.events.map((_, j) => j), body, advance: outbox.advance };
  }
  const event = outbox.events[i]!;
  return { webhookId: event.eventId, events: [event], indices: [i], body: texts[i]!, advance: outbox.advances[i]! };
}

/**
 * A window of log events may be kept in memory only while the stored position is in the newer half
 * of the retained log: rebuilding it after a crash needs the events after that position, and for
 * retention to remove them first, the subscription's object would have to stay down while half of
 * the log turned over (half of `maxEvents` new events, each batch of which nudges it awake, or half
 * of `maxAgeSeconds`). A subscription further behind stores its windows in the outbox.
 */
function rebuildable(stored: number, log: LogBounds): boolean {
  return stored - log.head >= (log.tail - log.head) / 2;
}

/** Roughly the characters an event's text will take. */
const candidateChars = (candidate: Candidate) => (candidate.object?.length ?? 0) + (candidate.oldObject?.length ?? 0) + 300;

const nextResync = (now: number, spec: SubscriptionSpec) => (spec.resyncPeriodSeconds > 0 ? now + spec.resyncPeriodSeconds * 1000 : null);

/** Where a page starts, from the `continue` token the previous page ended with. */
function pageAfter(token: string | undefined): number | undefined {
  if (token === undefined) return undefined;
  const after = Number(decodeContinue(token));
  if (!Number.isSafeInteger(after) || after < 0) throw new ValidationError("continue: not a continue token from this API");
  return after;
}

function listAnswer<R, T>(page: Page<R>, map: (record: R) => T): ListAnswer<T> {
  const items = page.items.map(map);
  return page.after === undefined ? { items } : { items, continue: encodeContinue(String(page.after)) };
}

function attemptRecord(eventIds: string[], sequence: number, attempt: number, result: SendResult, at: number): DeliveryRecord {
  return { eventIds, sequence, attempt, status: result.status ?? null, durationMs: result.durationMs, at, error: result.error ?? null };
}

function deliveryAttempt(record: DeliveryRecord): DeliveryAttempt {
  return {
    eventId: record.eventIds[0]!,
    eventIds: record.eventIds,
    sequence: record.sequence,
    attempt: record.attempt,
    status: record.status,
    durationMs: record.durationMs,
    at: new Date(record.at).toISOString(),
    ...(record.error === null ? {} : { error: record.error }),
  };
}

function deadLetter(record: DeadLetterRecord, text: string): DeadLetter {
  return {
    eventId: record.eventId,
    sequence: record.sequence,
    type: record.type,
    key: record.key,
    resourceVersion: record.resourceVersion,
    attempts: record.attempts,
    lastError: record.lastError,
    deadLetteredAt: new Date(record.deadLetteredAt).toISOString(),
    event: text === "" ? null : JSON.parse(text),
  };
}

/**
 * What the API shows of a subscription: its status, its delivery log and its dead letters, as
 * API.md lists them, and what /metrics reads of it, built from the stored records (subscription-row.ts, delivery-log.ts,
 * dead-letters.ts). Pure: nothing here reads or writes storage.
 *
 * Guarantees:
 * - Times are ISO strings; a status never shows the secret.
 * - List pages end with a `continue` token that names where the next page starts, so a token stays
 *   valid while the list grows; a token not made by this API is a ValidationError.
 */
import type { LogEventType } from "../cache/event-log.ts";
import { decodeContinue, encodeContinue } from "../cache/lister.ts";
import { ValidationError } from "../errors.ts";
import type { DeliveryCounts } from "./delivery-counters.ts";
import type { DeadLetterRecord } from "./dead-letters.ts";
import type { DeliveryRecord } from "./delivery-log.ts";
import type { Marker } from "./position.ts";
import type { SubscriptionRecord } from "./subscription-row.ts";
import type { Page } from "./subscription-store.ts";
import type { SigningKind } from "./subscription-spec.ts";
import { DEFAULT_FORMAT, type DeliveryFormat } from "./cloudevents.ts";

export type SubscriptionState = "active" | "failing" | "disabled";

export interface SubscriptionStatus {
  id: string;
  cluster: string;
  informer: string;
  /** The endpoint, or the queue producer binding: exactly one. */
  url?: string;
  queue?: string;
  events: LogEventType[];
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resyncPeriodSeconds: number;
  replayExisting: boolean;
  maxBatchSize: number;
  retryBudgetSeconds: number;
  timeoutSeconds: number;
  /** How deliveries are signed: `hmac` (a `whsec_` secret) or `ed25519` (GET …/signing-key answers the public key). */
  signing: SigningKind;
  /** The body's format (delivery/cloudevents.ts). */
  format: DeliveryFormat;
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
  /** Dead letters dropped, oldest first, past DEAD_LETTER_LIMIT or DEAD_LETTER_BYTES (dead-letters.ts). */
  deadLettersDropped: number;
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
  /** The start of the receiver's error answer: admins see it, readers do not (review N8). */
  response?: string;
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

/** A list answer: `continue` (present when more follow) is passed back for the next page. */
export interface ListAnswer<T> {
  items: T[];
  continue?: string;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Disabled (by a 410), failing (retrying), or active. */
export function stateOf(record: Pick<SubscriptionRecord, "disabledReason" | "failures">): SubscriptionState {
  return record.disabledReason !== null ? "disabled" : record.failures > 0 ? "failing" : "active";
}

/** A subscription's status; `knownTail` is the informer's log tail as last seen (for `lag`). */
export function statusOf(record: SubscriptionRecord, knownTail: number): SubscriptionStatus {
  const { spec, position } = record;
  return {
    id: record.id,
    cluster: record.cluster,
    informer: record.informer,
    ...(spec.url === undefined ? {} : { url: spec.url }),
    ...(spec.queue === undefined ? {} : { queue: spec.queue }),
    events: spec.events,
    ...(spec.namespace === undefined ? {} : { namespace: spec.namespace }),
    ...(spec.labelSelector === undefined ? {} : { labelSelector: spec.labelSelector }),
    ...(spec.fieldSelector === undefined ? {} : { fieldSelector: spec.fieldSelector }),
    resyncPeriodSeconds: spec.resyncPeriodSeconds,
    replayExisting: spec.replayExisting,
    maxBatchSize: spec.maxBatchSize,
    retryBudgetSeconds: spec.retryBudgetSeconds,
    timeoutSeconds: spec.timeoutSeconds,
    signing: spec.signing ?? "hmac",
    format: spec.format ?? DEFAULT_FORMAT,
    state: stateOf(record),
    declared: record.declared,
    disabledReason: record.disabledReason,
    cursor: position.cursor,
    lag: Math.max(0, knownTail - position.cursor),
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
    deadLettersDropped: record.deadLettersDropped,
    createdAt: new Date(record.createdAt).toISOString(),
  };
}

/** What /metrics and the status page read of a subscription's delivery (src/metrics); never its secret or URL. */
export interface DeliveryMetrics {
  id: string;
  /** Its informer's cluster and name. */
  cluster: string;
  informer: string;
  state: SubscriptionState;
  /** The receiver's host (the status page shows it; a URL's path or query may hold a token), or `queue NAME`. */
  host: string;
  cursor: number;
  /** A replay or resync being sent (its events are not in the log's lag). */
  marker: Marker["kind"] | null;
  expired: boolean;
  consecutiveFailures: number;
  lastDeliveryAt: number | null;
  nextAttemptAt: number | null;
  lastError: string | null;
  /** Dead letters kept now (a gauge; `counts.deadLettered` is the counter). */
  deadLetters: number;
  /** Dead letters dropped past a bound (a counter). */
  deadLettersDropped: number;
  counts: DeliveryCounts;
}

export function deliveryMetricsOf(record: SubscriptionRecord, counts: DeliveryCounts): DeliveryMetrics {
  return {
    id: record.id,
    cluster: record.cluster,
    informer: record.informer,
    state: stateOf(record),
    host: record.spec.url === undefined ? `queue ${record.spec.queue}` : new URL(record.spec.url).host,
    cursor: record.position.cursor,
    marker: record.position.marker?.kind ?? null,
    expired: record.expired,
    consecutiveFailures: record.failures,
    lastDeliveryAt: record.lastDeliveryAt,
    nextAttemptAt: record.nextAttemptAt,
    lastError: record.lastError,
    deadLetters: record.deadLetters,
    deadLettersDropped: record.deadLettersDropped,
    counts,
  };
}

/** Where a page starts, from the `continue` token the previous page ended with. */
export function pageAfter(token: string | undefined): number | undefined {
  if (token === undefined) return undefined;
  const after = Number(decodeContinue(token));
  if (!Number.isSafeInteger(after) || after < 0) throw new ValidationError("continue: not a continue token from this API");
  return after;
}

export function listAnswer<R, T>(page: Page<R>, map: (record: R) => T): ListAnswer<T> {
  const items = page.items.map(map);
  return page.after === undefined ? { items } : { items, continue: encodeContinue(String(page.after)) };
}

export function deliveryAttempt(record: DeliveryRecord): DeliveryAttempt {
  return {
    eventId: record.eventIds[0]!,
    eventIds: record.eventIds,
    sequence: record.sequence,
    attempt: record.attempt,
    status: record.status,
    durationMs: record.durationMs,
    at: new Date(record.at).toISOString(),
    ...(record.error === null ? {} : { error: record.error }),
    ...(record.response === undefined ? {} : { response: record.response }),
  };
}

export function deadLetter(record: DeadLetterRecord, text: string): DeadLetter {
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

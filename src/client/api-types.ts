/**
 * The shapes the edge-informer HTTP API takes and answers (../shared/API.md, docs/api.md), for the
 * typed client in api.ts. Types only, and declared here rather than imported from the server's
 * modules: a type import of src/objects or src/config would pull the whole Worker (Durable Objects,
 * `cloudflare:workers`, zod) into the type check of every program using the client, which then fails
 * outside Workers. test/client/api.test.ts checks at compile time that these match the server's types.
 */
import type { KubernetesObject, WebhookEvent, WebhookEventType } from "./types.ts";

/**
 * The body of `PUT /informers/{name}` (and an entry of `INFORMERS`). Only `resource` is required;
 * the server fills in the defaults and refuses unknown fields.
 */
export interface InformerSpec {
  /** A lower-case DNS label; when present it must match the URL's name. */
  name?: string;
  /** The cluster to watch (default `default`, i.e. KUBE_API_URL); when present it must match the URL's. */
  cluster?: string;
  /** kubectl-style: "pods", "deployments.apps", "widgets.example.com". */
  resource: string;
  /** Needed for custom resources ("example.com/v1"); optional for built-ins. */
  apiVersion?: string;
  /** Watch one namespace only. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Default resync period of this informer's subscriptions; 0 (the default) = never. */
  resyncPeriodSeconds?: number;
  /** Index name → field path, e.g. `{ byNode: "spec.nodeName" }`. The `namespace` index always exists. */
  indexers?: Record<string, string>;
  transform?: {
    /** Default true. */
    dropManagedFields?: boolean;
    /** Field paths removed before storing, e.g. `metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']`. */
    dropFields?: string[];
    /** Informers of `secrets`: keep their `data` and `stringData` (dropped by default). */
    keepSecretData?: boolean;
  };
  /** Required (true) for an informer of `secrets`, whose objects are credentials. */
  allowSensitive?: boolean;
  /** Bounds of the event log (defaults: 100,000 events, 2 days). */
  retention?: { maxEvents?: number; maxAgeSeconds?: number };
  /** Server-side watch timeout; default random in 300–600 s, like client-go. */
  watchTimeoutSeconds?: number;
  /**
   * How late a change may reach the cache, 0–3600 s (default 0: always watching). Above 0 the
   * informer watches in windows and sleeps between them, so its Durable Object can hibernate.
   */
  maxLagSeconds?: number;
  /** List page size (default 500). */
  pageSize?: number;
}

/** `GET /informers/{name}`. */
export interface InformerStatus {
  name: string;
  /** The cluster it watches (`default`: KUBE_API_URL). */
  cluster: string;
  resource: string;
  /** client-go's HasSynced: the first full list has been processed into the cache. */
  synced: boolean;
  lastSyncResourceVersion: string;
  /**
   * The resourceVersion the cache is complete up to: what queries read and report in
   * `X-Resource-Version`. Behind lastSyncResourceVersion while a relist's Replace is processed;
   * "" after the listing changed (selectors, transform) until the relist is applied.
   */
  cacheResourceVersion: string;
  /** How many objects the cache holds. */
  objects: number;
  /** How many keys wait in the DeltaFIFO. */
  queueDepth: number;
  /** Objects from the API server the cache could not hold (no name, too large), skipped; and why the last was. */
  skippedObjects: number;
  lastSkipped: string | null;
  /**
   * `state` is "idle", "listing", "watching", "sleeping" (between watch windows, `maxLagSeconds` > 0;
   * `wakesAt` says when the next opens) or "backoff" (waiting after an error, see lastError).
   */
  watch: { state: string; since: string | null; restarts: number; wakesAt?: string };
  relists: number;
  lastError: string | null;
  /** The oldest readable and the newest event sequence numbers. */
  eventLog: { head: number; tail: number };
  /**
   * The informer's SQLite database (`bytes`, what `sql.databaseSize` reports) against the ceiling
   * past which the event log's retention shrinks (70% of the platform's 10 GB per object);
   * `maxEvents` the retention in force; `retentionShrunk` why it is below the configured one, null
   * while under the ceiling; `retentionCutPast` the readers (a subscription, the `/k8s` watchers)
   * the shrink moves the log's head past (only past halfway from the ceiling to the limit).
   */
  storage: { bytes: number; ceilingBytes: number; maxEvents: number; retentionShrunk: string | null; retentionCutPast: string[] };
  subscriptions: number;
  /**
   * Alarm slices killed before their end (CPU or memory limit; a deploy's reset is not counted),
   * seen by the next slice; `lastAt` is when the last killed one started. After kills in a row
   * `listsInPages` turns on: lists go at RV "" in pages, each a killed slice resumes at, until three
   * slices in a row finish.
   */
  sliceKills: { count: number; lastAt: string | null; listsInPages: boolean };
}

/** The answer of `PUT /informers/{name}`: 201 (created) or 200 (updated). */
export interface PutInformerResult {
  created: boolean;
  status: InformerStatus;
}

/** Pagination of list answers: `limit` 1–5000 (default 5000), `continue` from the previous page. */
export interface PageQuery {
  limit?: number;
  continue?: string;
}

/** `GET /informers/{name}/objects` query. Selectors use Kubernetes syntax (`app=web,tier!=db`). */
export interface ObjectQuery extends PageQuery {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** One page of objects, in key order. */
export interface ObjectList<T = KubernetesObject> {
  /** The cache's lastSyncResourceVersion when the page was read. */
  resourceVersion: string;
  items: T[];
  /** Present only when more items follow: pass it back as `continue`. */
  continue?: string;
  /** From the `X-Synced` header: whether the informer's first full list had been processed (HasSynced). */
  synced: boolean;
}

/** What a subscription delivers; `sync` events come from the resync period. */
export type SubscriptionEventType = WebhookEventType;

/** The body of `POST /informers/{name}/subscriptions`. */
export interface SubscriptionSpec {
  /** Where events are POSTed; or, instead, `queue`. */
  url?: string;
  /** A queue producer binding of the Worker (listed in WEBHOOK_QUEUES) the events are sent to instead: one message each. */
  queue?: string;
  /** Default: every type. */
  events?: SubscriptionEventType[];
  /** Only objects of this namespace. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Default: the informer's `resyncPeriodSeconds`; 0 = never. */
  resyncPeriodSeconds?: number;
  /** Deliver the current objects as `add` events (`initialList: true`) first. Default true. */
  replayExisting?: boolean;
  /** 1–100 (default 1); above 1, bodies are `{"events": [...]}`. */
  maxBatchSize?: number;
  /** How long an event is retried before it is dead-lettered. */
  retryBudgetSeconds?: number;
  /** How long the endpoint has to answer, 1–15 (default 15). */
  timeoutSeconds?: number;
  /** `hmac` (default: a shared `whsec_` secret) or `ed25519` (receivers hold only a `whpk_` public key). */
  signing?: SubscriptionSigning;
  /** The body: `edge-informer` (default), or CloudEvents 1.0 in binary (one event a request) or structured mode. */
  format?: SubscriptionFormat;
}

export type SubscriptionSigning = "hmac" | "ed25519";
export type SubscriptionFormat = "edge-informer" | "cloudevents-binary" | "cloudevents-structured";

export type SubscriptionState = "active" | "failing" | "disabled";

/** `GET /subscriptions/{id}`. Times are ISO 8601 strings. */
export interface SubscriptionStatus {
  id: string;
  /** The informer's cluster. */
  cluster: string;
  informer: string;
  /** The endpoint (readers see its origin and `/…`); absent for a queue subscription. */
  url?: string;
  /** The queue producer binding; absent for a URL subscription. */
  queue?: string;
  events: SubscriptionEventType[];
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resyncPeriodSeconds: number;
  replayExisting: boolean;
  maxBatchSize: number;
  retryBudgetSeconds: number;
  timeoutSeconds: number;
  signing: SubscriptionSigning;
  format: SubscriptionFormat;
  state: SubscriptionState;
  /** Declared in INFORMERS (wrangler.toml): change or remove it there. */
  declared: boolean;
  /** Why it is disabled (a 410 from the endpoint); null otherwise. */
  disabledReason: string | null;
  /** Delivery position in the informer's event log. */
  cursor: number;
  /** How far delivery is behind the event log. */
  lag: number;
  /**
   * A replay or resync in progress, anchored at log position `at`. `pass` (2 and up) when a replay
   * took longer than the log's retention and goes on from a newer position, sending only what changed.
   */
  marker: { kind: "replay" | "sync"; at: number; pass?: number } | null;
  lastDeliveryAt: string | null;
  consecutiveFailures: number;
  deadLetters: number;
  /** Dead letters dropped, oldest first, past 10,000 or 64 MiB of event texts. */
  deadLettersDropped: number;
  expired: boolean;
  nextAttemptAt: string | null;
  lastError: string | null;
  createdAt: string;
}

/**
 * The answer of `POST /informers/{name}/subscriptions`: the status plus, for `hmac`, the signing
 * secret (shown once), for `ed25519` the public key (also at `GET /subscriptions/{id}/signing-key`).
 */
export type CreatedSubscription = SubscriptionStatus & {
  /** `whsec_` + base64: give it to `verifyWebhook`. */
  secret?: string;
  /** `whpk_` + base64: give it to `verifyWebhook`. */
  publicKey?: string;
};

/** `GET /subscriptions/{id}/signing-key` of an `ed25519` subscription. */
export interface SigningKey {
  id: string;
  signing: "ed25519";
  /** `whpk_` + base64 of the raw 32-byte Ed25519 public key. */
  publicKey: string;
  /** During a rotation from another Ed25519 key: the key deliveries are also signed with, until `expiresAt`. */
  previous?: { publicKey: string; expiresAt: string };
}

/** One delivery attempt (`GET /subscriptions/{id}/deliveries`). */
export interface DeliveryAttempt {
  /** The (first) event of the attempt. */
  eventId: string;
  /** Every event of the attempt (more than one with batching). */
  eventIds: string[];
  sequence: number;
  attempt: number;
  /** The endpoint's HTTP status; null when it did not answer. */
  status: number | null;
  durationMs: number;
  at: string;
  /** Why it failed, in edge-informer's words (`HTTP 500`, `no answer within 15 s`, …). */
  error?: string;
  /** The start of the endpoint's error answer (≤ 200 characters): shown to admin credentials only. */
  response?: string;
}

/** An event that ran out of retries (`GET /subscriptions/{id}/dead-letters`). */
export interface DeadLetter<T = KubernetesObject> {
  eventId: string;
  sequence: number;
  type: WebhookEventType;
  key: string;
  resourceVersion: string;
  attempts: number;
  lastError: string | null;
  deadLetteredAt: string;
  event: WebhookEvent<T>;
}

/** The answer of a successful redelivery; a failed one throws (502, the attempt in the error's `details`). */
export interface RedeliverResult {
  delivered: true;
  attempt: DeliveryAttempt;
}

/** The body of `PUT /clusters/{name}`: an http(s) URL and an optional token, stored write-only. */
export interface ClusterSpec {
  server: string;
  token?: string;
  /** How reads are authorized: `scopes` (default) or `rbac` (docs/api.md "Authorization"). */
  authorization?: "scopes" | "rbac";
}

/** `GET /clusters/{name}`: never the token. */
export interface Cluster {
  name: string;
  server: string;
  /** `environment`: the default cluster (KUBE_API_URL); `config`: CLUSTERS; `api`: PUT /clusters. */
  source: "environment" | "config" | "api";
  /** Which credentials exist (`token`, `secret:<NAME>`), never their values. */
  credentials: string[];
  informers: number;
  authorization: "scopes" | "rbac";
  health: { reachable: boolean; version?: string; error?: string };
}

/** The query of `GET /search/{resource}`. */
export interface SearchQuery extends ObjectQuery {
  /** Clusters to search; absent: every cluster with an informer of the resource. */
  clusters?: string[];
}

/** `GET /search/{resource}`: one page across clusters, items annotated `edge-informer/cluster`. */
export interface SearchPage<T = KubernetesObject> {
  items: T[];
  /** Per cluster read, the resourceVersion its items were read at (the same on every page of one search). */
  resourceVersions: Record<string, string>;
  continue?: string;
  /** Clusters that did not answer in time (or failed, or are not synced): follow `continue` to try them again. */
  partial?: string[];
}

/**
 * The metrics /metrics serves: the catalogue of families, the samples of each cluster, and those
 * of one informer and of one subscription, each built from its identity (log-identity.ts), so
 * every informer and subscription series carries `cluster` (`default` included) first.
 *
 * Cardinality is bounded: labels are the identity (cluster, informer, subscription) and values from
 * closed sets (event type, relist cause, error reason, watch and subscription state, delivery
 * outcome, cluster source); never an object's key, a URL, a token, or an error's text. Clusters are
 * bounded by configuration and by MAX_CLUSTERS (objects/informer-factory.ts), informers and
 * subscriptions by what is configured in them. Counters are durable (they live in the
 * objects' SQLite and survive evictions and restarts) and reset only when their informer or
 * subscription is deleted, which Prometheus reads as a counter reset. The SQL row counters are the
 * exception: they live in each object's memory (sql-rows.ts; storing them would cost rows of its
 * own), so an eviction or restart resets them too, and rate() and increase() handle that.
 */
import { RELIST_CAUSES } from "../cache/reflector-counters.ts";
import type { ClusterSnapshot, InformerSnapshot, MetricsSnapshot, SubscriptionSnapshot } from "./collect.ts";
import { DELIVERY_OUTCOMES, LATENCY_BUCKETS_SECONDS } from "../delivery/delivery-counters.ts";
import { Exposition, type Labels, type MetricFamily, type MetricType } from "./exposition.ts";
import { identityLabels } from "../log-identity.ts";

const family = (name: string, type: MetricType, help: string, prefix = "edge_informer_"): MetricFamily => ({ name: `${prefix}${name}`, type, help });
/** Rows billed for a Durable Object's SQLite, read or written: counted in its memory (sql-rows.ts). */
const sqlRows = (prefix: string, what: "read" | "written", whose: string): MetricFamily =>
  family(
    `sql_rows_${what}_total`,
    "counter",
    `Rows the ${whose}'s Durable Object SQLite statements ${what}${what === "written" ? " (each index entry a row)" : ""}, as the platform bills them; in memory, so reset when the object is evicted or restarted.`,
    prefix,
  );

export const WATCH_STATES = ["idle", "listing", "watching", "sleeping", "backoff"] as const;
export const SUBSCRIPTION_STATES = ["active", "failing", "disabled"] as const;

/** Every family, in the order written (docs/monitoring.md lists them). */
export const FAMILIES = {
  clusterInfo: family("cluster_info", "gauge", "A cluster and where it is configured: environment (KUBE_API_URL), config (CLUSTERS) or api (PUT /clusters) (always 1)."),
  clusterInformers: family("cluster_informers", "gauge", "Informers registered in the cluster."),
  info: family("info", "gauge", "An informer and the resource it watches (always 1)."),
  synced: family("synced", "gauge", "1 once the cache holds a complete list (client-go HasSynced), else 0."),
  objects: family("objects", "gauge", "Objects in the cache."),
  queueDepth: family("queue_depth", "gauge", "Keys queued in the DeltaFIFO, not yet applied to the cache."),
  events: family("events_total", "counter", "Events appended to the event log (applied to the cache), by type."),
  relists: family("relists_total", "counter", "Lists after the first sync, by cause: expired (410), too_large_rv, short_watch, error, config."),
  listPages: family("list_pages_total", "counter", "List pages received from the API server."),
  watchStarts: family("watch_starts_total", "counter", "Watches opened."),
  watchDrops: family("watch_drops_total", "counter", "Watches that ended in an error after opening (broke, went silent, ERROR event, very short, malformed line)."),
  watchState: family("watch_state", "gauge", "The reflector's state (1 for the current one)."),
  skipped: family("skipped_objects_total", "counter", "Objects the cache could not hold and skipped."),
  logHead: family("log_head", "gauge", "Oldest event log sequence number still readable."),
  logTail: family("log_tail", "gauge", "Newest event log sequence number."),
  logBytes: family("log_retained_bytes", "gauge", "Bytes the event log's segments store: each retained event's state and the state it replaced."),
  storageBytes: family("storage_bytes", "gauge", "Size of the informer's Durable Object SQLite database."),
  storageCeiling: family("storage_ceiling_bytes", "gauge", "Size of the informer's database past which the event log's retention shrinks (70% of the 10 GB per-object limit)."),
  retentionShrunk: family("retention_shrunk", "gauge", "1 while the database is over its ceiling and the event log keeps fewer events than configured, else 0."),
  retentionCutPast: family("retention_cut_past_readers", "gauge", "Readers (the oldest subscription, the /k8s watchers) a shrunk retention moves the event log's head past: they start over."),
  retentionMaxEvents: family("retention_max_events", "gauge", "Events the event log's retention keeps: the configured maxEvents, or fewer while retention is shrunk."),
  lastEventAge: family("last_event_age_seconds", "gauge", "Seconds since the newest event was appended (sync lag on a busy resource)."),
  lastError: family("last_error_info", "gauge", "The reflector's last error, while it stands, by a bounded reason (always 1)."),
  lastErrorTime: family("last_error_timestamp_seconds", "gauge", "When the last error that still stands happened (unix seconds)."),
  sqlRowsWritten: sqlRows("edge_informer_", "written", "informer"),
  sqlRowsRead: sqlRows("edge_informer_", "read", "informer"),
  sliceKills: family("slice_kills_total", "counter", "Alarm slices killed before their end (CPU or memory limit; a deploy's reset is not counted), counted by the next slice."),
  subscriptionCount: family("subscriptions", "gauge", "Webhook subscriptions of the informer."),
  deliveries: family("subscription_deliveries_total", "counter", "Delivery attempts by outcome: 2xx, 3xx, 4xx, 5xx, network, timeout."),
  attempts: family("subscription_attempts_total", "counter", "Delivery attempts (every outcome)."),
  retries: family("subscription_retries_total", "counter", "Delivery attempts after a batch's first (redeliveries included)."),
  delivered: family("subscription_events_delivered_total", "counter", "Events acknowledged with a 2xx."),
  deadLettered: family("subscription_dead_letters_total", "counter", "Events dead-lettered after the retry budget."),
  deadLetters: family("subscription_dead_letters_kept", "gauge", "Dead letters kept now (redelivery removes them)."),
  deadLettersDropped: family("subscription_dead_letters_dropped_total", "counter", "Dead letters dropped, oldest first, past 10,000 or 64 MiB of event texts per subscription."),
  lagEvents: family("subscription_lag_events", "gauge", "Log events after the subscription's cursor."),
  lagSeconds: family("subscription_lag_seconds", "gauge", "Age of the oldest event the subscription has not handled (0 when caught up)."),
  subscriptionState: family("subscription_state", "gauge", "The subscription's state (1 for the current one)."),
  failures: family("subscription_consecutive_failures", "gauge", "Failed attempts since the last success."),
  lastDelivery: family("subscription_last_delivery_timestamp_seconds", "gauge", "When the endpoint last acknowledged a batch (unix seconds)."),
  latency: family("subscription_delivery_duration_seconds", "histogram", "Duration of delivery attempts."),
  subscriptionSliceKills: family("subscription_slice_kills_total", "counter", "The subscription's alarm slices killed before their end (CPU or memory limit, a deploy's reset), counted by the next slice."),
  subscriptionSqlRowsWritten: sqlRows("edge_subscription_", "written", "subscription"),
  subscriptionSqlRowsRead: sqlRows("edge_subscription_", "read", "subscription"),
  scrapeErrors: family("metrics_read_errors", "gauge", "Informers or subscriptions that could not be read for this scrape."),
} as const;

/** The samples of one cluster (no probe of its API server: collect.ts says why). */
export function clusterSamples(out: Exposition, cluster: ClusterSnapshot): void {
  out.sample(FAMILIES.clusterInfo, { cluster: cluster.name, source: cluster.source }, 1);
  out.sample(FAMILIES.clusterInformers, { cluster: cluster.name }, cluster.informers);
}

/** The samples of one informer. */
export function informerSamples(out: Exposition, snapshot: InformerSnapshot, at: number): void {
  const labels = identityLabels(snapshot.identity);
  const m = snapshot.metrics;
  const p = m.progress;
  const F = FAMILIES;
  out.sample(F.info, { ...labels, resource: m.resource }, 1);
  out.sample(F.synced, labels, p.synced ? 1 : 0);
  out.sample(F.objects, labels, p.objects);
  out.sample(F.queueDepth, labels, p.queueDepth);
  for (const [type, n] of Object.entries(m.events)) out.sample(F.events, { ...labels, type }, n);
  for (const cause of RELIST_CAUSES) out.sample(F.relists, { ...labels, cause }, m.counters.relists[cause]);
  out.sample(F.listPages, labels, m.counters.listPages);
  out.sample(F.watchStarts, labels, m.counters.watchStarts);
  out.sample(F.watchDrops, labels, m.counters.watchDrops);
  for (const state of WATCH_STATES) out.sample(F.watchState, { ...labels, state }, p.watch.state === state ? 1 : 0);
  out.sample(F.skipped, labels, p.skippedObjects);
  out.sample(F.logHead, labels, p.eventLog.head);
  out.sample(F.logTail, labels, p.eventLog.tail);
  out.sample(F.logBytes, labels, m.logBytes);
  out.sample(F.storageBytes, labels, m.storageBytes);
  out.sample(F.storageCeiling, labels, m.storage.ceilingBytes);
  out.sample(F.retentionShrunk, labels, m.storage.shrunk === null ? 0 : 1);
  out.sample(F.retentionMaxEvents, labels, m.storage.retention.maxEvents);
  out.sample(F.retentionCutPast, labels, m.storage.cutPast.length);
  out.sample(F.sqlRowsWritten, labels, m.sqlRows.written);
  out.sample(F.sqlRowsRead, labels, m.sqlRows.read);
  if (m.lastEventAt !== null) out.sample(F.lastEventAge, labels, Math.max(0, (at - m.lastEventAt) / 1000));
  if (m.lastErrorReason !== null) {
    out.sample(F.lastError, { ...labels, reason: m.lastErrorReason }, 1);
    if (m.lastErrorAt !== null) out.sample(F.lastErrorTime, labels, m.lastErrorAt / 1000);
  }
  out.sample(F.sliceKills, labels, m.sliceKills);
  out.sample(F.subscriptionCount, labels, m.subscriptions.length);
}

/** The samples of one subscription. */
export function subscriptionSamples(out: Exposition, snapshot: SubscriptionSnapshot): void {
  const labels: Labels = identityLabels(snapshot.identity);
  const { counts, ...m } = snapshot.metrics;
  const F = FAMILIES;
  for (const outcome of DELIVERY_OUTCOMES) out.sample(F.deliveries, { ...labels, outcome }, counts.attempts[outcome]);
  out.sample(F.attempts, labels, Object.values(counts.attempts).reduce((a, b) => a + b, 0));
  out.sample(F.retries, labels, counts.retries);
  out.sample(F.delivered, labels, counts.eventsDelivered);
  out.sample(F.deadLettered, labels, counts.deadLettered);
  out.sample(F.deadLetters, labels, m.deadLetters);
  out.sample(F.deadLettersDropped, labels, m.deadLettersDropped);
  out.sample(F.lagEvents, labels, snapshot.lagEvents);
  if (snapshot.lagSeconds !== null) out.sample(F.lagSeconds, labels, snapshot.lagSeconds);
  for (const state of SUBSCRIPTION_STATES) out.sample(F.subscriptionState, { ...labels, state }, m.state === state ? 1 : 0);
  out.sample(F.failures, labels, m.consecutiveFailures);
  if (m.lastDeliveryAt !== null) out.sample(F.lastDelivery, labels, m.lastDeliveryAt / 1000);
  out.histogram(F.latency, labels, LATENCY_BUCKETS_SECONDS, counts.latencyBuckets, counts.latencySumSeconds);
  out.sample(F.subscriptionSliceKills, labels, m.sliceKills);
  out.sample(F.subscriptionSqlRowsWritten, labels, m.sqlRows.written);
  out.sample(F.subscriptionSqlRowsRead, labels, m.sqlRows.read);
}

/** The whole exposition of a snapshot. */
export function renderMetrics(snapshot: MetricsSnapshot): string {
  const out = new Exposition(Object.values(FAMILIES));
  for (const cluster of snapshot.clusters) clusterSamples(out, cluster);
  for (const informer of snapshot.informers) {
    informerSamples(out, informer, snapshot.at);
    for (const subscription of informer.subscriptions) subscriptionSamples(out, subscription);
  }
  out.sample(FAMILIES.scrapeErrors, {}, snapshot.errors);
  return out.text();
}

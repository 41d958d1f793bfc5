/**
 * GET /metrics through the Worker's front door, read with a real Prometheus text parser, following a
 * scripted scenario: N events of known types, one relist caused by a 410, a healthy subscription and
 * one whose endpoint always fails. No secret or token appears in the answer.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unwrap } from "../../src/errors.ts";
import { createApp } from "../../src/http/app.ts";
import { pod } from "../fake-apiserver/builders.ts";
import { newCluster, startInformer, status, waitFor, waitSleeping, waitSynced } from "../helpers/informer.ts";
import { subscribe } from "../helpers/webhooks.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";
import { histogram, parseMetrics, samples, value } from "../metrics/prometheus-parse.ts";
import { addCluster, createSynced, send, unique } from "../helpers/clusters.ts";
import { FakeCluster } from "../fake-apiserver/client.ts";

const base = "http://localhost";
const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";

async function scrape(): Promise<{ text: string; metrics: ReturnType<typeof parseMetrics> }> {
  const response = await exports.default.fetch(new Request(`${base}/metrics`));
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const text = await response.text();
  return { text, metrics: parseMetrics(text) };
}

describe("GET /metrics", () => {
  it("follows a scripted scenario: events by type, a 410 relist, a healthy and a failing subscription", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 2, podsPerNamespace: 3 }); // 6 pods
    const { name, stub } = await startInformer(cluster);
    await waitSynced(stub);
    const pods = (await cluster.state("pods")).items;
    await cluster.create("pods", pod({ name: "extra-1", namespace: "ns-0" }));
    await cluster.create("pods", pod({ name: "extra-2", namespace: "ns-1" }));
    await cluster.update("pods", { ...pods[0]!, metadata: { ...pods[0]!.metadata, labels: { changed: "yes" }, resourceVersion: undefined } });
    await cluster.delete("pods", pods[1]!);
    await waitFor("10 events in the log", async () => (await status(stub)).eventLog.tail === 10);

    // The next watch is answered with ERROR 410: one relist at the last RV, which changes nothing.
    await cluster.fault({ kind: "errorEvent", code: 410, resource: "pods" });
    await waitFor("the 410 relist", async () => {
      const s = await status(stub);
      return s.relists === 1 && s.synced && s.watch.state === "watching" && s;
    });

    const healthy = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 200 } });
    const broken = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 500 } });
    const ok = await subscribe(name, healthy);
    const failing = await subscribe(name, broken, { retryBudgetSeconds: 1, maxBatchSize: 10 });
    await waitFor("the healthy subscription to get the replay", async () => unwrap(await ok.stub().status()).cursor >= 10, 30_000);
    await waitFor("the failing subscription to dead-letter the replay", async () => unwrap(await failing.stub().status()).deadLetters === 7, 30_000);

    const { text, metrics } = await scrape();
    // Every informer and subscription series names its cluster, the default one included (issue 12).
    const informer = { cluster: "default", informer: name };
    expect(value(metrics, "edge_informer_info", { ...informer, resource: "pods" })).toBe(1);
    expect(value(metrics, "edge_informer_synced", informer)).toBe(1);
    expect(value(metrics, "edge_informer_objects", informer)).toBe(7);
    expect(value(metrics, "edge_informer_queue_depth", informer)).toBe(0);
    expect(value(metrics, "edge_informer_events_total", { ...informer, type: "add" })).toBe(8);
    expect(value(metrics, "edge_informer_events_total", { ...informer, type: "update" })).toBe(1);
    expect(value(metrics, "edge_informer_events_total", { ...informer, type: "delete" })).toBe(1);
    expect(value(metrics, "edge_informer_events_total", { ...informer, type: "sync" })).toBe(0);
    expect(value(metrics, "edge_informer_relists_total", { ...informer, cause: "expired" })).toBe(1);
    for (const cause of ["too_large_rv", "short_watch", "error", "config"]) {
      expect(value(metrics, "edge_informer_relists_total", { ...informer, cause })).toBe(0);
    }
    expect(value(metrics, "edge_informer_list_pages_total", informer)).toBe(2); // the initial list and the relist
    expect(value(metrics, "edge_informer_watch_drops_total", informer)).toBeGreaterThanOrEqual(1); // the 410
    expect(value(metrics, "edge_informer_watch_starts_total", informer)).toBeGreaterThanOrEqual(2);
    expect(value(metrics, "edge_informer_log_tail", informer)).toBe(10);
    expect(value(metrics, "edge_informer_log_head", informer)).toBe(1);
    expect(value(metrics, "edge_informer_log_retained_bytes", informer)).toBeGreaterThan(0);
    expect(value(metrics, "edge_informer_storage_bytes", informer)).toBeGreaterThan(0);
    expect(value(metrics, "edge_informer_storage_ceiling_bytes", informer)).toBe(7_000_000_000);
    expect(value(metrics, "edge_informer_retention_shrunk", informer)).toBe(0);
    expect(value(metrics, "edge_informer_retention_max_events", informer)).toBe(100_000);
    expect(value(metrics, "edge_informer_last_event_age_seconds", informer)).toBeGreaterThanOrEqual(0);
    expect(value(metrics, "edge_informer_subscriptions", informer)).toBe(2);
    expect(value(metrics, "edge_informer_watch_state", { ...informer, state: "watching" })).toBe(1);

    const good = { ...informer, subscription: ok.id };
    expect(value(metrics, "edge_informer_subscription_deliveries_total", { ...good, outcome: "2xx" })).toBe(7); // the replay, one event a request
    expect(value(metrics, "edge_informer_subscription_deliveries_total", { ...good, outcome: "5xx" })).toBe(0);
    expect(value(metrics, "edge_informer_subscription_events_delivered_total", good)).toBe(7);
    expect(value(metrics, "edge_informer_subscription_attempts_total", good)).toBe(7);
    expect(value(metrics, "edge_informer_subscription_retries_total", good)).toBe(0);
    expect(value(metrics, "edge_informer_subscription_lag_events", good)).toBe(0);
    expect(value(metrics, "edge_informer_subscription_lag_seconds", good)).toBe(0);
    expect(value(metrics, "edge_informer_subscription_state", { ...good, state: "active" })).toBe(1);
    expect(value(metrics, "edge_informer_subscription_last_delivery_timestamp_seconds", good)).toBeGreaterThan(Date.now() / 1000 - 60);
    const latency = histogram(text, "edge_informer_subscription_delivery_duration_seconds", good)!;
    expect([Number(latency.count), latency.buckets!["+Inf"]]).toEqual([7, "7"]);

    const bad = { ...informer, subscription: failing.id };
    const attempts = value(metrics, "edge_informer_subscription_attempts_total", bad)!;
    expect(attempts).toBeGreaterThanOrEqual(2); // a first attempt and at least one retry before the budget ran out
    expect(value(metrics, "edge_informer_subscription_deliveries_total", { ...bad, outcome: "5xx" })).toBe(attempts);
    expect(value(metrics, "edge_informer_subscription_deliveries_total", { ...bad, outcome: "2xx" })).toBe(0);
    expect(value(metrics, "edge_informer_subscription_retries_total", bad)).toBe(attempts - 1); // one batch
    expect(value(metrics, "edge_informer_subscription_dead_letters_total", bad)).toBe(7);
    expect(value(metrics, "edge_informer_subscription_dead_letters_kept", bad)).toBe(7);
    expect(value(metrics, "edge_informer_subscription_events_delivered_total", bad)).toBe(0);
    expect(Number(histogram(text, "edge_informer_subscription_delivery_duration_seconds", bad)!.count)).toBe(attempts);

    // Bounded labels: nothing names an object, a URL or an error text.
    for (const family of metrics.values()) {
      for (const sample of family.metrics) {
        for (const label of Object.keys(sample.labels ?? {})) {
          expect(["cluster", "source", "informer", "subscription", "resource", "type", "cause", "state", "outcome", "reason", "le"]).toContain(label);
        }
        if (sample.labels?.informer !== undefined) expect(Object.keys(sample.labels)[0], family.name).toBe("cluster");
      }
    }
    expect(value(metrics, "edge_informer_cluster_info", { cluster: "default", source: "environment" })).toBe(1);
    // No secret and no token in the answer.
    for (const secret of [ok.secret, failing.secret, ok.secret.slice("whsec_".length), ADMIN_TOKEN, healthy.url, broken.url]) {
      expect(text).not.toContain(secret);
    }

    // The rows the objects' SQLite statements billed (issue 19), counters in each object's memory.
    for (const [family, labels] of [
      ["edge_informer_sql_rows_written_total", informer],
      ["edge_informer_sql_rows_read_total", informer],
      ["edge_subscription_sql_rows_written_total", good],
      ["edge_subscription_sql_rows_read_total", good],
    ] as const) {
      expect(metrics.get(family)?.type, family).toBe("COUNTER");
      expect(value(metrics, family, labels), family).toBeGreaterThan(0);
    }
    const written = value(metrics, "edge_informer_sql_rows_written_total", informer)!;

    // Counters are durable: a second scrape after more events only adds.
    const more = 3;
    for (let i = 0; i < more; i++) await cluster.create("pods", pod({ name: `more-${i}`, namespace: "ns-0" }));
    await waitFor(`${more} more events`, async () => (await status(stub)).eventLog.tail === 10 + more);
    const again = (await scrape()).metrics;
    expect(value(again, "edge_informer_events_total", { ...informer, type: "add" })).toBe(8 + more);
    expect(value(again, "edge_informer_relists_total", { ...informer, cause: "expired" })).toBe(1);
    // Each event is at least its row in the event log (the cache's rows and index entries come on top).
    expect(value(again, "edge_informer_sql_rows_written_total", informer)! - written).toBeGreaterThanOrEqual(more);
  });

  it("gives two clusters' informers of one name two series, lists the clusters, and never shows a cluster's token or URL", async () => {
    const token = `tok-${crypto.randomUUID()}`;
    const east = await FakeCluster.create(env.FAKE_APISERVER_URL, { token });
    const west = await newCluster();
    await east.seed({ namespaces: 1, podsPerNamespace: 2 });
    await west.seed({ namespaces: 1, podsPerNamespace: 3 });
    const [a, b] = [unique("east"), unique("west")];
    await addCluster(a, east, token);
    await addCluster(b, west);
    for (const cluster of [a, b]) await createSynced(`/clusters/${cluster}/informers/pods`);
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 200 } });
    const subscriptions = { [a]: await subscribe("pods", hook, {}, a), [b]: await subscribe("pods", hook, {}, b) };
    const { text, metrics } = await waitFor(
      "both replays delivered",
      async () => {
        const scraped = await scrape();
        const delivered = (cluster: string) =>
          value(scraped.metrics, "edge_informer_subscription_events_delivered_total", { cluster, subscription: subscriptions[cluster]!.id });
        return delivered(a) === 2 && delivered(b) === 3 && scraped;
      },
      30_000,
    );
    expect(value(metrics, "edge_informer_objects", { cluster: a, informer: "pods" })).toBe(2);
    expect(value(metrics, "edge_informer_objects", { cluster: b, informer: "pods" })).toBe(3);
    expect(value(metrics, "edge_informer_events_total", { cluster: b, informer: "pods", type: "add" })).toBe(3);
    for (const [cluster, n] of [[a, 2], [b, 3]] as const) {
      const subscription = { cluster, informer: "pods", subscription: subscriptions[cluster]!.id };
      expect(value(metrics, "edge_informer_subscription_attempts_total", subscription)).toBe(n);
      expect(value(metrics, "edge_informer_cluster_info", { cluster, source: "api" })).toBe(1);
      expect(value(metrics, "edge_informer_cluster_informers", { cluster })).toBe(1);
    }
    // One series per (cluster, informer): the same name in two clusters is two series, not a clash.
    expect(samples(metrics, "edge_informer_synced", { informer: "pods" }).map((s) => s.labels!.cluster).filter((c) => c === a || c === b).sort()).toEqual([a, b].sort());
    for (const secret of [token, east.url, west.url, subscriptions[a]!.secret]) expect(text).not.toContain(secret);

    for (const cluster of [a, b]) expect((await send("DELETE", `/clusters/${cluster}?cascade=true`)).status).toBe(204);
    const after = (await scrape()).metrics;
    expect(samples(after, "edge_informer_cluster_info", { cluster: a })).toEqual([]);
    expect(samples(after, "edge_informer_synced", { cluster: a })).toEqual([]);
  });

  it("keeps counting across a reconfiguration, which counts as a config relist", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 2 });
    const { name, stub } = await startInformer(cluster);
    await waitSynced(stub);
    await startInformer(cluster, { labelSelector: "app!=nothing" }, name); // what is listed changed
    await waitFor("the config relist", async () => {
      const s = await status(stub);
      return s.synced && s.watch.state === "watching" && s;
    });
    const { metrics } = await scrape();
    expect(value(metrics, "edge_informer_relists_total", { cluster: "default", informer: name, cause: "config" })).toBe(1);
    expect(value(metrics, "edge_informer_list_pages_total", { informer: name })).toBe(2);
    expect(value(metrics, "edge_informer_events_total", { informer: name, type: "add" })).toBe(2);
  });

  it("is guarded by READ_TOKEN when it is set, accepting the admin token too", async () => {
    const app = createApp();
    const withReadToken = { ...env, READ_TOKEN: "reader-secret-0123456789abcdefghijk" };
    const get = (headers: Record<string, string>) => app.request(`${base}/metrics`, { headers }, withReadToken);
    expect((await get({})).status).toBe(401);
    expect((await get({ authorization: "Bearer nope" })).status).toBe(401);
    const allowed = await get({ authorization: "Bearer reader-secret-0123456789abcdefghijk" });
    expect(allowed.status).toBe(200);
    const text = await allowed.text();
    expect(parseMetrics(text).has("edge_informer_metrics_read_errors")).toBe(true);
    expect(text).not.toContain("reader-secret-0123456789abcdefghijk");
    expect((await get({ authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(200);
  });

  it("shows an informer sleeping between watch windows (maxLagSeconds) in watch_state", async () => {
    const cluster = await newCluster();
    const { name, stub } = await startInformer(cluster, { maxLagSeconds: 60 });
    await waitSynced(stub);
    await waitSleeping(stub);
    const { metrics } = await scrape();
    const informer = { cluster: "default", informer: name };
    expect(Object.fromEntries(["idle", "listing", "watching", "sleeping", "backoff"].map((state) => [state, value(metrics, "edge_informer_watch_state", { ...informer, state })]))).toEqual({
      idle: 0,
      listing: 0,
      watching: 0,
      sleeping: 1,
      backoff: 0,
    });
  });
});

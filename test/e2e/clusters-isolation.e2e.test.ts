/**
 * Two clusters in one deployment (issue 12), end to end: a real `wrangler dev` Worker mirroring two
 * fake API servers, `default` (KUBE_API_URL, reached directly) and `beta` (declared in CLUSTERS,
 * reached through a proxy that can refuse connections), with a pods and a deployments informer on each.
 *
 * - Each cache equals its own server's state under pod churn on both at once (distinct object names
 *   per cluster, so equality also rules out leaks from one to the other).
 * - kill -9 of the runtime (wrangler and both workerd), with changes on both servers meanwhile: after
 *   the restart every informer resumes on its own from its stored resourceVersion: watches only, no
 *   list request reaches either server, and the caches catch up.
 * - Isolation: `beta` refuses connections, then comes back with a storm of 410 Expired answers
 *   (which make its pods informer relist, again and again), one of its relists held mid-body by its
 *   server. Meanwhile nothing of it reaches `default`'s path: no list or watch request reaches
 *   default's server, default's informers open no watch, drop none, read no list page, count no
 *   relist; their logs gain exactly the probe changes made on default's server, which a /k8s watch
 *   from before the outage returns in order; and each probe change reaches default's cache while
 *   beta's relist is still held (default's loop never waits on beta). beta's informers come back
 *   watching, with no error left standing, and mirror their server again.
 *   How fast default's events arrive meanwhile is a benchmark's figure, not an assertion here:
 *   `npm run bench -- --only isolation` (bench/isolation.mjs, BENCHMARKS.md "Cluster isolation").
 *
 * This file runs its own Worker and fake API server (it kills and restarts the runtime, which the
 * shared one of global-setup.ts must survive); the e2e project runs files one at a time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { startFakeApiServer, type FakeApiServer } from "../fake-apiserver/server.ts";
import type { Fault, RecordedRequest } from "../fake-apiserver/types.ts";
import type { InformerStatus } from "../../src/client/api-types.ts";
import { churnNamespace } from "./churn.ts";
import { versions, type KubeObject } from "./objects.ts";
import { waitFor } from "./wait.ts";
import { startWatchProxy, type WatchProxy } from "./watch-proxy.ts";
import { startWorker, type RunningWorker } from "./worker.ts";

const ADMIN_TOKEN = "iso-admin-token-0123456789abcdefghij";
const CLUSTERS = ["default", "beta"] as const;
type ClusterName = (typeof CLUSTERS)[number];
/** Informer name → the fake server's resource, the same on both clusters. */
const INFORMERS = { pods: "pods", deployments: "deployments" } as const;
type InformerName = keyof typeof INFORMERS;
const INFORMER_NAMES = Object.keys(INFORMERS) as InformerName[];
/** Where each cluster's churn writes; the seed puts 100 pods of ~3 KB in each of ns-0 and ns-1. */
const CHURN_NAMESPACE = "ns-0";
const PROBE_NAMESPACE = "ns-1";
/** Probe changes on `default` in each phase (beta refusing, beta's relist held, the storm). */
const PROBES = 10;
/**
 * How long beta's server holds the relist it stalls: far longer than default needs for its PROBES
 * changes (a second or two on a busy machine), and under the client's 60 s body idle timeout
 * (src/kube/client.ts), so the list then completes as a slow one, not as an error.
 */
const STALL_MS = 30_000;
/**
 * 410 Expired answers to the recovering cluster, of each kind (a watch request's status, an ERROR
 * event on a watch stream): each one makes it relist, after a backoff that keeps growing as
 * client-go's (src/cache/backoff.ts: no reset before 2 minutes without errors), so after the outage
 * each costs 12-60 s of waiting: more would only make the test longer.
 */
const STORM = 1;

let server: FakeApiServer;
let proxy: WatchProxy;
let worker: RunningWorker;
const fake = {} as Record<ClusterName, FakeCluster>;

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${worker.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const status = (cluster: ClusterName, informer: InformerName = "pods") => api<InformerStatus>(`/clusters/${cluster}/informers/${informer}`);

/** Every informer's status in the cluster, by informer name. */
async function statuses(cluster: ClusterName): Promise<Record<InformerName, InformerStatus>> {
  return Object.fromEntries(await Promise.all(INFORMER_NAMES.map(async (informer) => [informer, await status(cluster, informer)]))) as Record<InformerName, InformerStatus>;
}

async function cached(cluster: ClusterName, informer: InformerName = "pods"): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let token: string | undefined;
  do {
    const query = new URLSearchParams({ limit: "1000", ...(token ? { continue: token } : {}) });
    const page = await api<{ items: KubeObject[]; continue?: string }>(`/clusters/${cluster}/informers/${informer}/objects?${query}`);
    items.push(...page.items);
    token = page.continue;
  } while (token);
  return items;
}

/** Waits until each of the cluster's caches holds exactly its server's objects (keys and resourceVersions). */
async function expectMirrored(cluster: ClusterName, timeoutMs = 30_000): Promise<void> {
  for (const informer of INFORMER_NAMES) {
    let expected: Record<string, string> = {};
    let actual: Record<string, string> = {};
    await waitFor(
      async () => {
        expected = versions((await fake[cluster].state(INFORMERS[informer])).items as KubeObject[]);
        actual = versions(await cached(cluster, informer));
        return JSON.stringify(actual) === JSON.stringify(expected);
      },
      { timeoutMs, intervalMs: 250, what: `cluster ${cluster}'s ${informer} cache to equal its server` },
    ).catch(() => undefined);
    expect(actual, `${cluster}/${informer}`).toEqual(expected);
  }
}

/** The list (or watch) requests among `requests`, of one resource or of any. */
const lists = (requests: RecordedRequest[], resource?: string) => requests.filter((r) => r.verb === "list" && (resource === undefined || r.resource === resource));
const watches = (requests: RecordedRequest[], resource?: string) => requests.filter((r) => r.verb === "watch" && (resource === undefined || r.resource === resource));

let probeStep = 0;

/**
 * One change on `default`'s server (the probe pod's label), awaited until default's cache is complete
 * up to it (its cacheResourceVersion); answers the change's resourceVersion. The deadline only
 * catches a path that is stuck: the change normally arrives within a second.
 */
async function probeOnce(): Promise<string> {
  const probe = await fake.default.upsert("pods", {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "probe", namespace: PROBE_NAMESPACE, labels: { step: String(probeStep++) } },
    spec: { containers: [{ name: "main", image: "nginx:1.27" }], nodeName: "node-a" },
  });
  const rv = probe.metadata.resourceVersion!;
  await waitFor(async () => BigInt((await status("default")).cacheResourceVersion || "0") >= BigInt(rv), {
    timeoutMs: 20_000,
    intervalMs: 20,
    what: `the probe change ${rv} in the default cluster's cache`,
  });
  return rv;
}

/** `count` probe changes, one after the other, and more while `until()` (if given) is false; their resourceVersions. */
async function probe(count: number, until?: () => boolean): Promise<string[]> {
  const rvs: string[] = [];
  while (rvs.length < count || (until && !until())) rvs.push(await probeOnce());
  return rvs;
}

/**
 * default's counters in /metrics (edge_informer_*_total{cluster="default",…}), by series: family and
 * labels as written, e.g. `edge_informer_watch_starts_total{cluster="default",informer="pods"}`. The
 * SQL row counters are left out: every status read of this test moves them.
 */
async function defaultCounters(): Promise<Record<string, number>> {
  const response = await fetch(`${worker.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`GET /metrics: ${response.status}`);
  const counters: Record<string, number> = {};
  for (const line of (await response.text()).split("\n")) {
    const sample = /^(edge_informer_\w+_total\{cluster="default",[^}]*\}) (\S+)$/.exec(line);
    if (sample && !sample[1]!.startsWith("edge_informer_sql_rows_")) counters[sample[1]!] = Number(sample[2]);
  }
  return counters;
}

/** The series of `counters` whose values differ in `after`, with the difference. */
function moved(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const series = new Set([...Object.keys(before), ...Object.keys(after)]);
  return Object.fromEntries([...series].map((s) => [s, (after[s] ?? 0) - (before[s] ?? 0)] as const).filter(([, d]) => d !== 0));
}

/**
 * The events of a /k8s watch of default's PROBE_NAMESPACE pods from `resourceVersion`, read until
 * `count` have come (or 30 s, for a stream that stops short): type, name and resourceVersion each.
 */
async function watchedSince(resourceVersion: string, count: number): Promise<string[]> {
  const query = new URLSearchParams({ watch: "1", resourceVersion, timeoutSeconds: "60" });
  const response = await fetch(`${worker.url}/k8s/api/v1/namespaces/${PROBE_NAMESPACE}/pods?${query}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    signal: AbortSignal.timeout(30_000),
  });
  expect(response.status).toBe(200);
  const events: string[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  try {
    while (events.length < count) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += chunk.value;
      const lines = text.split("\n");
      text = lines.pop()!;
      for (const line of lines.filter((l) => l.trim())) {
        const event = JSON.parse(line) as { type: string; object: KubeObject };
        events.push(`${event.type} ${event.object.metadata.name} ${event.object.metadata.resourceVersion}`);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return events;
}

beforeAll(async () => {
  server = await startFakeApiServer({ port: 0 });
  fake.default = await FakeCluster.create(server.url, { id: "alpha" });
  fake.beta = await FakeCluster.create(server.url, { id: "beta" });
  // Different seeds: no object name is the same in both clusters.
  await fake.default.seed({ namespaces: 2, podsPerNamespace: 100, seed: 1 });
  await fake.beta.seed({ namespaces: 2, podsPerNamespace: 100, seed: 2 });
  proxy = await startWatchProxy(fake.beta.url);
  worker = await startWorker({
    vars: {
      KUBE_API_URL: fake.default.url,
      CLUSTERS: JSON.stringify({ beta: { server: proxy.url } }),
      INFORMERS: JSON.stringify([
        ...CLUSTERS.flatMap((cluster) => [
          { name: "pods", resource: "pods", cluster, watchTimeoutSeconds: 900 },
          { name: "deployments", resource: "deployments.apps", cluster, watchTimeoutSeconds: 900 },
        ]),
      ]),
      ADMIN_TOKEN,
      ALLOW_UNAUTHENTICATED: "false",
    },
  });
  for (const cluster of CLUSTERS) {
    for (const informer of INFORMER_NAMES) {
      await waitFor(async () => (await status(cluster, informer)).synced, { timeoutMs: 60_000, intervalMs: 200, what: `cluster ${cluster}'s ${informer} informer to sync` });
    }
  }
}, 180_000);

afterAll(async () => {
  await worker?.stop();
  await proxy?.close();
  await server?.close();
});

describe("two clusters in one deployment", () => {
  it("keeps each cluster's cache equal to its own server under churn on both", async () => {
    await Promise.all(
      CLUSTERS.map((cluster, i) => churnNamespace(fake[cluster], { namespace: CHURN_NAMESPACE, seed: 100 + i, operations: 300, batch: 3 })),
    );
    for (const cluster of CLUSTERS) await expectMirrored(cluster);
    const names = await Promise.all(CLUSTERS.map(async (cluster) => new Set((await cached(cluster)).map((o) => o.metadata.name))));
    expect(names[0]!.size).toBeGreaterThan(200);
    expect([...names[0]!].filter((name) => names[1]!.has(name)), "no object of one cluster in the other's cache").toEqual([]);
  }, 120_000);

  it("resumes both clusters after a kill -9 of the runtime from their stored resourceVersions, without a relist", async () => {
    for (const cluster of CLUSTERS) await expectMirrored(cluster);
    const before = Object.fromEntries(await Promise.all(CLUSTERS.map(async (c) => [c, await statuses(c)] as const))) as Record<ClusterName, Record<InformerName, InformerStatus>>;
    for (const cluster of CLUSTERS) await fake[cluster].clearRequests();

    await worker.kill9();
    // Changes while the runtime is down: the watches from the stored resourceVersions must bring them.
    await Promise.all(CLUSTERS.map((cluster, i) => churnNamespace(fake[cluster], { namespace: CHURN_NAMESPACE, seed: 200 + i, operations: 60, batch: 3 })));
    await worker.restart();

    // Nothing but /healthz has asked the new runtime anything: the informers' stored alarms resume them.
    for (const cluster of CLUSTERS) {
      for (const informer of INFORMER_NAMES) {
        await waitFor(async () => watches(await fake[cluster].requests(), INFORMERS[informer]).length > 0, {
          timeoutMs: 30_000,
          intervalMs: 200,
          what: `cluster ${cluster}'s ${informer} informer to watch again after the restart`,
        });
      }
    }
    for (const cluster of CLUSTERS) await expectMirrored(cluster);
    for (const cluster of CLUSTERS) {
      const requests = await fake[cluster].requests();
      expect(lists(requests), `${cluster}: list requests after the restart`).toEqual([]);
      const after = await statuses(cluster);
      for (const informer of INFORMER_NAMES) {
        const where = `${cluster}/${informer}`;
        expect(watches(requests, INFORMERS[informer])[0]?.query.resourceVersion, `${where}: the first watch resumes where the cache was`).toBe(before[cluster][informer].lastSyncResourceVersion);
        expect(after[informer].relists, `${where}: relists`).toBe(before[cluster][informer].relists);
        expect(after[informer].synced, `${where}: synced from storage`).toBe(true);
      }
    }
  }, 180_000);

  it("keeps the default cluster's path untouched while beta refuses connections, stalls a relist and answers a 410 storm", async () => {
    for (const cluster of CLUSTERS) await expectMirrored(cluster);
    // The probe pod is created before the baseline: from here on each probe change is one update.
    await probe(1);
    const healthy = await statuses("default");
    const countersBefore = await defaultCounters();
    const betaBefore = await status("beta");
    await fake.default.clearRequests();
    await fake.beta.clearRequests();

    await proxy.refuse();
    await waitFor(async () => (await status("beta")).lastError, { timeoutMs: 30_000, intervalMs: 200, what: "beta's informer to report the refused connection" });
    const probed = await probe(PROBES);
    const betaDown = await status("beta");
    expect(betaDown.lastError).toMatch(/refused|connect/i);

    // The storm: every watch beta's pods informer opens answers 410 Expired (as a status or as an
    // ERROR event on the stream), so it relists each time, until the faults are used up; and its
    // server holds one of those relists mid-body for STALL_MS.
    const storm: Fault[] = [
      { kind: "status", on: "watch", resource: "pods", code: 410, reason: "Expired", message: "too old resource version", count: STORM },
      { kind: "errorEvent", resource: "pods", code: 410, reason: "Expired", message: "too old resource version", afterEvents: 0, count: STORM },
      { kind: "stallList", resource: "pods", afterItems: 10, ms: STALL_MS },
    ];
    await fake.beta.fault(storm);
    await proxy.accept();
    let stormOver = false;
    const watchStorm = waitFor(
      async () => {
        const pending = await fake.beta.faults();
        const all = Object.values(await statuses("beta"));
        if (pending.length === 0 && all.every((s) => s.synced && s.watch.state === "watching" && s.lastError === null)) return true;
        throw new Error(`faults pending: ${JSON.stringify(pending)}, statuses: ${JSON.stringify(all)}`);
      },
      { timeoutMs: 240_000, intervalMs: 250, what: "beta to come through the 410 storm" },
    ).finally(() => (stormOver = true));

    // default's loop never waits on beta: while beta's relist is held mid-body, every probe change
    // reaches default's cache, and beta is still in that same list afterwards.
    const stalledAt = await waitFor(
      async () => {
        const requests = lists(await fake.beta.requests(), "pods");
        const stalled = requests.findIndex((r) => r.faults?.includes("stallList"));
        return stalled >= 0 ? stalled : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100, what: "beta's relist to be held by its server" },
    );
    probed.push(...(await probe(PROBES)));
    expect(lists(await fake.beta.requests(), "pods").length, "beta's lists since the held one began").toBe(stalledAt + 1);
    expect((await status("beta")).watch.state, "beta after default's probes: still in its held relist").toBe("listing");

    probed.push(...(await probe(1, () => stormOver)));
    await watchStorm;

    // beta went through the storm: every 410 was answered, each one made it relist, and it mirrors again.
    const betaRequests = await fake.beta.requests();
    expect(watches(betaRequests, "pods").filter((r) => r.status === 410 || r.faults?.includes("errorEvent")).length).toBeGreaterThanOrEqual(2 * STORM);
    expect((await status("beta")).relists).toBeGreaterThanOrEqual(betaBefore.relists + 2 * STORM);
    await expectMirrored("beta", 60_000);

    // Nothing of beta's reached default's path: no request to its server but the probe changes'
    // own; its informers opened no watch, dropped none, read no list page and counted no relist; its
    // logs gained exactly the probe changes, which a watch from before the outage returns in order.
    const after = await statuses("default");
    for (const informer of INFORMER_NAMES) {
      expect(after[informer].watch.restarts, `default/${informer}: watch restarts`).toBe(healthy[informer].watch.restarts);
      expect(after[informer].relists, `default/${informer}: relists`).toBe(healthy[informer].relists);
    }
    const defaultRequests = await fake.default.requests();
    expect([...lists(defaultRequests), ...watches(defaultRequests)], "default: list or watch requests during beta's outage").toEqual([]);
    expect(moved(countersBefore, await defaultCounters()), "default's counters that moved").toEqual({
      'edge_informer_events_total{cluster="default",informer="pods",type="update"}': probed.length,
    });
    expect(await watchedSince(healthy.pods.cacheResourceVersion, probed.length), "default's events since the outage began").toEqual(
      probed.map((rv) => `MODIFIED probe ${rv}`),
    );
    await expectMirrored("default");
  }, 480_000);
});

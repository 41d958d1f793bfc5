/**
 * `@kubernetes/client-node`'s informer (`makeInformer`) on /k8s (issue 8): it mirrors the pods through
 * a churn and ends equal to the fake API server's state (key → resourceVersion); then, forced back to
 * an expired resourceVersion, it gets 410 from the Worker, relists, and is equal again after more
 * churn. Its requests go through a recording proxy (watch-proxy.ts) that forces the 410. Needs /k8s
 * list and watch: until they land these tests fail.
 */
import { CoreV1Api, KubeConfig, makeInformer, type Informer, type ObjectCache, type V1Pod } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { churnNamespace } from "./churn.ts";
import { e2e, fakeCluster } from "./context.ts";
import { CHURN_INFORMER_NAMESPACE } from "./fixtures.ts";
import { versions, type KubeObject } from "./objects.ts";
import { waitFor } from "./wait.ts";
import { startWatchProxy, type WatchProxy } from "./watch-proxy.ts";

const CONVERGE_MS = 20_000;
const RESTART_DELAY_MS = 300;

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

interface Mirror {
  informer: Informer<V1Pod> & ObjectCache<V1Pod>;
  proxy: WatchProxy;
  errors: unknown[];
}

/** A pods informer for all namespaces on /k8s, through a proxy; it restarts itself after an error, as its docs advise. */
async function startMirror(): Promise<Mirror> {
  const proxy = await startWatchProxy(e2e().workerUrl);
  cleanups.push(() => proxy.close());
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "edge", server: `${proxy.url}/k8s`, skipTLSVerify: true }],
    users: [{ name: "edge", token: e2e().readToken }],
    contexts: [{ name: "edge", cluster: "edge", user: "edge" }],
    currentContext: "edge",
  });
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, "/api/v1/pods", () => api.listPodForAllNamespaces());
  const errors: unknown[] = [];
  let stopped = false;
  informer.on("error", (error: unknown) => {
    errors.push(error);
    if (!stopped) setTimeout(() => void informer.start().catch(() => undefined), RESTART_DELAY_MS);
  });
  cleanups.push(async () => {
    stopped = true;
    await informer.stop();
  });
  await informer.start();
  return { informer, proxy, errors };
}

/** Waits until the informer holds exactly the fake cluster's pods, at the same resourceVersions. */
async function expectMirrors(mirror: Mirror, what: string): Promise<void> {
  const cluster = fakeCluster();
  let expected: Record<string, string> = {};
  let actual: Record<string, string> = {};
  try {
    await waitFor(
      async () => {
        expected = versions((await cluster.state("pods")).items as KubeObject[]);
        actual = versions(mirror.informer.list() as KubeObject[]);
        return JSON.stringify(actual) === JSON.stringify(expected);
      },
      { timeoutMs: CONVERGE_MS, intervalMs: 100, what },
    );
  } catch (error) {
    // Show the difference, and the informer's errors, rather than only the timeout.
    expect({ actual, errors: mirror.errors.map(String) }, String(error)).toEqual({ actual: expected, errors: mirror.errors.map(String) });
  }
}

describe("@kubernetes/client-node makeInformer on /k8s", () => {
  it("mirrors the pods through a churn and ends equal to the API server's state", async () => {
    const mirror = await startMirror();
    await expectMirrors(mirror, "the initial list");
    await churnNamespace(fakeCluster(), { namespace: CHURN_INFORMER_NAMESPACE, seed: 21, operations: 80 });
    await expectMirrors(mirror, "the churn to arrive");
    expect(mirror.proxy.requests.filter((r) => r.watch).length, "it watched").toBeGreaterThan(0);
  });

  it("relists after a forced 410 Expired and recovers", async () => {
    const mirror = await startMirror();
    await expectMirrors(mirror, "the initial list");
    await churnNamespace(fakeCluster(), { namespace: CHURN_INFORMER_NAMESPACE, seed: 22, operations: 30 });
    await expectMirrors(mirror, "the first churn to arrive");

    const forcedAt = Date.now();
    mirror.proxy.expireNextWatch();
    await waitFor(() => mirror.proxy.requests.find((r) => r.rewritten && r.status !== 0), { timeoutMs: CONVERGE_MS, what: "the watch from an expired resourceVersion" });
    await churnNamespace(fakeCluster(), { namespace: CHURN_INFORMER_NAMESPACE, seed: 23, operations: 30 });
    await expectMirrors(mirror, "the informer to relist and catch up");

    const rewritten = mirror.proxy.requests.find((r) => r.rewritten)!;
    expect(rewritten, "the Worker answered 410 Expired (HTTP or ERROR event)").toMatchObject({ expired: true });
    const relists = mirror.proxy.requests.filter((r) => !r.watch && r.method === "GET" && r.path.endsWith("/api/v1/pods") && r.time >= forcedAt);
    expect(relists.length, "it listed again after the 410").toBeGreaterThan(0);
  });
});

/**
 * client-go's reflector in watch-list mode (the `WatchListClient` gate, on by default from client-go
 * 0.35; issue 18 F6) reading /k8s through a crash of the Worker and a 410, with the real kubectl 1.32
 * and `KUBE_FEATURE_WatchListClient=true`. `kubectl get -w` does not use a reflector in 1.32 (it
 * lists, then watches at the list's RV), so `kubectl wait` is the client: its reflector streams the
 * initial state with `sendInitialEvents=true` and waits for the initial-events-end bookmark before
 * its condition is tested.
 *
 * - The first watch-list (no resourceVersion) ends in the bookmark.
 * - kill -9 of the Worker: while it is down the reflector's watches fail, so it relists with a
 *   watch-list at its last resourceVersion, which the restarted Worker must answer with the initial
 *   events and the bookmark (before F6 it sent neither, and the reflector never synced again).
 * - A watch at an expired resourceVersion gets ERROR 410; the reflector relists with a watch-list.
 * - The condition met afterwards ends kubectl with the same output as against the fake API server.
 *
 * This file runs its own Worker (it kills and restarts it) behind a proxy that keeps its address
 * across the restart and records kubectl's requests; the e2e project runs files one at a time.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pod } from "../fake-apiserver/builders.ts";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { startFakeApiServer, type FakeApiServer } from "../fake-apiserver/server.ts";
import { e2e } from "./context.ts";
import { writeKubeconfig } from "./kubeconfig.ts";
import { KUBECTL_MISSING, kubectl, kubectlStream, kubectlSuite } from "./kubectl.ts";
import { waitFor } from "./wait.ts";
import { startWatchProxy, type ProxiedRequest, type WatchProxy } from "./watch-proxy.ts";
import { startWorker, type RunningWorker } from "./worker.ts";

const NAMESPACE = "watch-list";
const POD = "target";
/** client-go logs this (at -v=6) when the bookmark of a watch-list arrives (reflector.go). */
const INITIAL_EVENTS_END = "received the bookmark that marks the end of initial events stream";
const WATCH_LIST_ENV = { KUBE_FEATURE_WatchListClient: "true" };
const STEP_MS = 60_000;

let server: FakeApiServer;
let cluster: FakeCluster;
let worker: RunningWorker;
let proxy: WatchProxy;

/** The pod kubectl waits for, in `phase`. */
const targetPod = (phase: string) => pod({ name: POD, namespace: NAMESPACE, phase });

const isWatchList = (r: ProxiedRequest) => r.watch && r.query.sendInitialEvents === "true" && r.query.resourceVersionMatch === "NotOlderThan";

beforeAll(async () => {
  server = await startFakeApiServer({ port: 0 });
  cluster = await FakeCluster.create(server.url, { id: "watch-list" });
  await cluster.create("pods", targetPod("Pending"));
  worker = await startWorker({
    vars: {
      KUBE_API_URL: cluster.url,
      INFORMERS: JSON.stringify([{ name: "pods", resource: "pods", watchTimeoutSeconds: 900 }]),
      // kubectl sends a token only over https; this Worker is reached on loopback only.
      ALLOW_UNAUTHENTICATED: "true",
    },
  });
  proxy = await startWatchProxy(worker.url);
  await waitFor(async () => (await fetch(`${worker.url}/k8s/api/v1/namespaces/${NAMESPACE}/pods/${POD}`)).ok, { timeoutMs: STEP_MS, what: "the Worker's pods cache to sync" });
}, 180_000);

afterAll(async () => {
  await proxy?.close();
  await worker?.stop();
  await server?.close();
});

/** `kubectl wait` until the pod runs, with client-go's reflector in watch-list mode, logging its requests. */
const WAIT_ARGS = ["wait", "-n", NAMESPACE, `pod/${POD}`, "--for=jsonpath={.status.phase}=Running", "--timeout=240s", "-v=6"];

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl 1.32 with WatchListClient on /k8s"), () => {
  it("syncs by watch-list, again after a kill -9 of the Worker (at its last resourceVersion) and after a 410, and ends as against the API server", async () => {
    const { scratchDir } = e2e();
    const edgeConfig = writeKubeconfig(join(scratchDir, "watch-list-edge.kubeconfig"), { server: `${proxy.url}/k8s` });
    const fakeConfig = writeKubeconfig(join(scratchDir, "watch-list-fake.kubeconfig"), { server: cluster.url });
    const edge = kubectlStream(WAIT_ARGS, { config: { kubeconfig: edgeConfig }, env: WATCH_LIST_ENV, timeoutMs: 250_000 });
    const reference = kubectl(WAIT_ARGS, { config: { kubeconfig: fakeConfig }, env: WATCH_LIST_ENV, timeoutMs: 250_000 });
    try {
      const watchLists = () => proxy.requests.filter(isWatchList);
      /** Syncs the reflector completed: each ends in the initial-events-end bookmark. */
      const syncs = () => edge.stderr().split(INITIAL_EVENTS_END).length - 1;
      const progress = () => `${JSON.stringify(proxy.requests.slice(-6).map((r) => [r.status, r.query]))}\n${edge.stderr().slice(-2000)}`;

      await waitFor(() => syncs() >= 1, { timeoutMs: STEP_MS, what: `kubectl's first watch-list to end in the bookmark (${progress()})` });
      expect(watchLists()[0]!.query.resourceVersion ?? "").toBe("");

      // A crash: the reflector's watches fail while the Worker is down, so it relists by watch-list
      // at its last resourceVersion, and must get the initial events and the bookmark again.
      const beforeCrash = proxy.requests.length;
      await worker.kill9();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await worker.restart();
      proxy.retarget(worker.url);
      await waitFor(() => syncs() >= 2, { timeoutMs: STEP_MS * 2, what: `a sync by watch-list after the restart (${progress()})` });
      const resumed = proxy.requests.slice(beforeCrash).filter((r) => isWatchList(r) && r.status === 200);
      expect(resumed.map((r) => r.query.resourceVersion).filter((rv) => /^\d+$/.test(rv ?? "")), progress()).not.toEqual([]);

      // A 410: the next plain watch is sent to an expired resourceVersion; the reflector syncs again.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const beforeExpiry = proxy.requests.length;
      proxy.expireNextWatch();
      await waitFor(() => proxy.requests.slice(beforeExpiry).some((r) => r.expired), { timeoutMs: STEP_MS, what: `the 410 (${progress()})` });
      await waitFor(() => syncs() >= 3, { timeoutMs: STEP_MS * 2, what: `a sync by watch-list after the 410 (${progress()})` });

      await cluster.update("pods", targetPod("Running"));
      const theirs = await reference;
      expect(theirs.stdout.trim()).toBe(`pod/${POD} condition met`);
      await waitFor(() => edge.stdout() === theirs.stdout, { timeoutMs: STEP_MS, what: `kubectl's output to equal the API server's (${progress()})` });
      // -v=6 shows the requests: every watch-list the reflector sent, as the proxy saw them.
      const logged = edge.stderr().split("\n").filter((line) => /GET \S*sendInitialEvents=true/.test(line));
      expect(logged.length).toBe(watchLists().length);
    } finally {
      await edge.stop();
    }
  }, 400_000);
});

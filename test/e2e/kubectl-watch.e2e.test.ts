/**
 * `kubectl get pods -w` on /k8s while the fake cluster churns (issue 8): every change arrives, in the
 * order the cluster made it, with its type and resourceVersion. The expected sequence comes from the
 * churn itself (each write's answer), and the same command against the fake API server must see it
 * too, which checks the harness. Needs /k8s watch support: until it lands these tests fail.
 */
import { describe, expect, it } from "vitest";
import { churnNamespace, type WatchedChange } from "./churn.ts";
import { fakeCluster } from "./context.ts";
import { CHURN_WATCH_NAMESPACE } from "./fixtures.ts";
import { KUBECTL_MISSING, kubectlStream, kubectlSuite, parseJsonStream, type KubectlStream } from "./kubectl.ts";
import type { KubeObject } from "./objects.ts";
import { waitFor } from "./wait.ts";

const OPERATIONS = 60;
const WAIT_MS = 20_000;

function watchEvents(stream: KubectlStream): WatchedChange[] {
  return (parseJsonStream(stream.stdout()) as { type: WatchedChange["type"]; object: KubeObject }[]).map(({ type, object }) => ({
    type,
    name: object.metadata.name!,
    resourceVersion: object.metadata.resourceVersion!,
    phase: String((object.status as { phase?: string } | undefined)?.phase),
  }));
}

function describeStream(label: string, stream: KubectlStream): string {
  return `${label}: stdout ${stream.stdout().slice(-1500)}\nstderr ${stream.stderr().slice(-1500)}`;
}

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl get -w on /k8s during churn"), () => {
  it("receives every change in order (-o json --output-watch-events), as from the API server", async () => {
    const cluster = fakeCluster();
    const initial = (await cluster.state("pods", CHURN_WATCH_NAMESPACE)).items.length;
    const args = ["get", "pods", "-n", CHURN_WATCH_NAMESPACE, "-w", "--output-watch-events", "-o", "json"];
    const streams = { edge: kubectlStream(args, { config: "edge" }), fake: kubectlStream(args, { config: "fake" }) };
    let changes: WatchedChange[] = [];
    let before = "";
    try {
      // Both have printed their initial list (as ADDED events) before the churn starts.
      for (const [label, stream] of Object.entries(streams)) {
        await waitFor(() => watchEvents(stream).length >= initial, { timeoutMs: WAIT_MS, what: `the initial list (${describeStream(label, stream)})` });
      }
      before = await cluster.revision();
      changes = await churnNamespace(cluster, { namespace: CHURN_WATCH_NAMESPACE, seed: 8, operations: OPERATIONS });
      const last = changes.at(-1)!.resourceVersion;
      for (const [label, stream] of Object.entries(streams)) {
        await waitFor(() => watchEvents(stream).some((e) => e.resourceVersion === last), { timeoutMs: WAIT_MS, what: `the last change, rv ${last} (${describeStream(label, stream)})` });
      }
    } finally {
      await Promise.all([streams.edge.stop(), streams.fake.stop()]);
    }
    const afterChurnStart = (stream: KubectlStream) => watchEvents(stream).filter((e) => BigInt(e.resourceVersion) > BigInt(before));
    expect(changes).toHaveLength(OPERATIONS);
    expect(afterChurnStart(streams.fake), "reference: the fake API server").toEqual(changes);
    expect(afterChurnStart(streams.edge), "/k8s").toEqual(changes);
  });

  it("prints one table row per change, in order (plain get -w)", async () => {
    const cluster = fakeCluster();
    const initial = (await cluster.state("pods", CHURN_WATCH_NAMESPACE)).items.length;
    const stream = kubectlStream(["get", "pods", "-n", CHURN_WATCH_NAMESPACE, "-w"], { config: "edge" });
    // Rows printed under the header are not aligned to it during a watch: split on whitespace.
    // Cells: NAME READY STATUS RESTARTS AGE; these pods have no container statuses, so STATUS is the phase.
    const rows = () => stream.stdout().split("\n").slice(1).filter((l) => l.trim() !== "").map((l) => l.trim().split(/\s+/));
    let changes: WatchedChange[] = [];
    try {
      await waitFor(() => rows().length >= initial, { timeoutMs: WAIT_MS, what: `the initial rows (${describeStream("edge", stream)})` });
      changes = await churnNamespace(cluster, { namespace: CHURN_WATCH_NAMESPACE, seed: 9, operations: 30 });
      await waitFor(() => rows().length >= initial + changes.length, { timeoutMs: WAIT_MS, what: `a row per change (${describeStream("edge", stream)})` });
    } finally {
      await stream.stop();
    }
    expect(stream.stdout().split("\n")[0]!.trim().split(/\s+/)).toEqual(["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
    const changeRows = rows().slice(initial);
    expect(changeRows.map((cells) => [cells[0], cells[2]])).toEqual(changes.map((c) => [c.name, c.phase]));
  });
});

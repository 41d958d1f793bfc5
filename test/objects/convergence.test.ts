/**
 * Convergence: seeded random churn across namespaces with faults injected between rounds (dropped
 * streams, malformed lines, 5xx, in-stream 410, compaction, expired continue tokens, closes). At
 * the end the query API's full listing equals the fake server's state exactly, and the event log
 * replays to the same state.
 */
import { describe, it } from "vitest";
import type { Fault } from "../fake-apiserver/client.ts";
import {
  clusterVersions,
  expectLogReplaysTo,
  newCluster,
  readWholeLog,
  startInformer,
  waitConverged,
  waitSynced,
} from "../helpers/informer.ts";

/** mulberry32: a small seeded PRNG, so a failing run can be replayed from its seed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FAULTS: ((random: () => number) => Fault | "compact" | "closeWatches")[] = [
  (r) => ({ kind: "dropStream", afterEvents: Math.floor(r() * 5) }),
  (r) => ({ kind: "malformedLine", afterEvents: Math.floor(r() * 5) }),
  () => ({ kind: "status", on: "list", code: 500 }),
  () => ({ kind: "status", on: "watch", code: 503 }),
  () => ({ kind: "status", on: "watch", code: 429, retryAfterSeconds: 1 }),
  (r) => ({ kind: "errorEvent", code: 410, afterEvents: Math.floor(r() * 3) }),
  (r) => ({ kind: "closeAfter", events: 1 + Math.floor(r() * 5) }),
  () => ({ kind: "expireContinue" }),
  () => "compact",
  () => "closeWatches",
];

describe("convergence", () => {
  it.each([1, 2])("converges to the cluster's state under churn and faults (seed %i)", async (seed) => {
    const random = prng(seed);
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 4, podsPerNamespace: 8 });
    const { stub } = await startInformer(cluster, { pageSize: 6 });
    await waitSynced(stub);
    for (let round = 0; round < 12; round++) {
      const fault = FAULTS[Math.floor(random() * FAULTS.length)]!(random);
      if (fault === "compact") await cluster.compact();
      else if (fault === "closeWatches") await cluster.closeWatches();
      else await cluster.fault(fault);
      await cluster.churn({ seed: seed * 1_000 + round, operations: 25 });
      await new Promise((resolve) => setTimeout(resolve, 30 + random() * 150));
    }
    await cluster.clearFaults();
    await waitConverged(stub, cluster, "pods", 60_000);
    expectLogReplaysTo(await readWholeLog(stub), await clusterVersions(cluster));
  });
});
